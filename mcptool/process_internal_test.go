package mcptool

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", stderrTail/16) // exactly stderrTail bytes
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "empty", want: ""},
		{name: "short", writes: []string{"Error: ", "no such directory\n"}, want: "Error: no such directory"},
		{name: "exactly full", writes: []string{long}, want: long},
		{name: "one large write", writes: []string{"dropped\n" + long}, want: "..." + long},
		{name: "many writes", writes: []string{"dropped\n", long[:100], long[100:]}, want: "..." + long},
		{name: "overflow by one", writes: []string{long, "!"}, want: "..." + long[1:] + "!"},
		{name: "rune cut in half", writes: []string{"é" + long[:stderrTail-1]}, want: "..." + long[:stderrTail-1]},
		{name: "terminal escapes are shown, not sent",
			writes: []string{"\x1b[2Kline\r\nbell\a\tok\n\u202eevil\xff"},
			want:   `\x1b[2Kline\r` + "\nbell" + `\a` + "\tok\n" + `\u202eevil\xff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b tailBuffer
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				assert.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.LessOrEqual(t, len(b.buf), stderrTail, "bounded")
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestInheritedVar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		goos, name string
		want       bool
	}{
		{"linux", "PATH", true},
		{"linux", "HOME", true},
		{"linux", "LANG", true},
		{"linux", "LC_ALL", true},
		{"linux", "LC_CTYPE", true},
		{"darwin", "USER", true},
		{"linux", "Path", false},
		{"linux", "OPENAI_API_KEY", false},
		{"linux", "AWS_SECRET_ACCESS_KEY", false},
		{"linux", "SSH_AUTH_SOCK", false},
		{"linux", "SYSTEMROOT", false},
		{"windows", "Path", true},
		{"windows", "SystemRoot", true},
		{"windows", "USERPROFILE", true},
		{"windows", "HOME", false},
		{"windows", "LANG", false},
		{"windows", "GITHUB_TOKEN", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, inheritedVar(tt.goos, tt.name), "%s on %s", tt.name, tt.goos)
	}
}
