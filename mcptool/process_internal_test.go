package mcptool

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
)

// TestConnCloseDoesNotWait closes the connection to a server that ignores
// the end of its stdin. The go-sdk may call Close in a goroutine that
// must not wait for the process (holding the connection's lock, in a call
// that was just cancelled): Close returns before the server is stopped,
// and stop waits for it, giving it stopGrace to exit by itself first.
func TestConnCloseDoesNotWait(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs sleep(1)")
	}
	tr := &commandTransport{newCmd: func() *exec.Cmd { return exec.Command("sleep", "60") }}
	conn, err := tr.Connect(t.Context())
	require.NoError(t, err)
	p := tr.proc
	start := time.Now()
	require.NoError(t, conn.Close())
	select {
	case <-p.exited:
		t.Fatalf("Close waited %v for the server", time.Since(start))
	default:
	}
	p.stop()
	took := time.Since(start)
	t.Logf("stopping a server that ignores its stdin took %v", took)
	select {
	case <-p.exited:
	default:
		t.Fatal("stop returned before the server was reaped")
	}
	assert.GreaterOrEqual(t, took, stopGrace, "the server had its grace period")
	assert.True(t, p.signalled)
	assert.Empty(t, p.report(), "a server mcptool stopped, with nothing on stderr: nothing to report")
}

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

// TestTailBufferHostile: what a server writes on stderr hides nothing.
func TestTailBufferHostile(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Hostile() {
		var b tailBuffer
		_, err := b.Write([]byte(c.In))
		require.NoError(t, err)
		termtexttest.Check(t, c, b.String(), '\n', '\t')
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
