package timeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstToolDiff(t *testing.T) {
	t.Parallel()
	r, w, g := ToolHash{"read", "00000001"}, ToolHash{"write", "00000002"}, ToolHash{"grep", "00000003"}
	w2 := ToolHash{"write", "000000ff"}
	for _, tc := range []struct {
		name string
		a, b []ToolHash
		want string
	}{
		{"added at the end", []ToolHash{r}, []ToolHash{r, w}, "write"},
		{"added in front", []ToolHash{r, w}, []ToolHash{g, r, w}, "grep"},
		{"removed from the end", []ToolHash{r, w}, []ToolHash{r}, "write"},
		{"removed in front", []ToolHash{r, w}, []ToolHash{w}, "read"},
		{"spec changed", []ToolHash{r, w}, []ToolHash{r, w2}, "write"},
		{"reordered", []ToolHash{r, w}, []ToolHash{w, r}, "read"},
		{"same", []ToolHash{r, w}, []ToolHash{r, w}, ""},
		{"unknown list", nil, []ToolHash{r}, ""},
	} {
		assert.Equal(t, tc.want, firstToolDiff(tc.a, tc.b), tc.name)
	}
}

func TestValidHashAndChange(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]bool{"c0ffee12": true, "00000000": true, "C0FFEE12": false, "c0ffee1": false, "c0ffee123": false, "c0ffeeg2": false, "": false} {
		assert.Equal(t, want, validHash(h), h)
	}
	for v, want := range map[string]bool{"hook 0": true, "hook 12": true, "compaction": true, "runtime": true, "hook": false, "hook -1": false, "hook 01": false, "hook x": false, "Compaction": false, "": false} {
		assert.Equal(t, want, validChange(v), v)
	}
}
