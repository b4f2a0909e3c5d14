package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyboard is a terminal console fed through a pipe, as keys typed.
type keyboard struct {
	con    *console
	keys   *io.PipeWriter
	screen *watched
	ints   chan os.Signal
}

func newKeyboard(t *testing.T) *keyboard {
	t.Helper()
	r, w := io.Pipe()
	k := &keyboard{keys: w, screen: newWatched(), ints: make(chan os.Signal, 1)}
	con, err := newTerminalConsole(r, k.screen, k.ints, func() int { return 80 })
	require.NoError(t, err)
	k.con = con
	t.Cleanup(func() {
		w.Close()
		con.close()
	})
	return k
}

func (k *keyboard) typeKeys(t *testing.T, s string) {
	t.Helper()
	_, err := io.WriteString(k.keys, s)
	require.NoError(t, err)
}

// TestConsoleTypeAhead: a line typed while no question is shown, and a
// line half typed when the question appears, never answer it; both wait
// at the next task prompts, in the editor, for Enter.
func TestConsoleTypeAhead(t *testing.T) {
	t.Parallel()
	k := newKeyboard(t)
	ctx := context.Background()

	k.con.show("working › ", promptBusy)
	k.typeKeys(t, "y\r")
	k.screen.waitFor(t, "kept for the next prompt, not taken as an answer: y", 1)
	k.typeKeys(t, "half typed")
	k.screen.waitFor(t, "half typed", 1)

	seq := k.con.show("Apply? ", promptQuestion)
	k.screen.waitFor(t, "not taken as an answer: half typed", 1)
	k.typeKeys(t, "n\r")
	got, err := k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "n", got, "only the line typed after the question answers it")
	assert.Equal(t, 2, k.con.keptCount())

	// The kept lines come back one per task prompt, already in the editor.
	seq = k.con.show("> ", promptTask)
	k.typeKeys(t, "\r")
	got, err = k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "y", got)
	seq = k.con.show("> ", promptTask)
	k.typeKeys(t, "!\r")
	got, err = k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "half typed!", got)
	assert.Equal(t, 0, k.con.keptCount())
}

// TestConsoleKeys: Ctrl-C read as a key is sent as an interrupt, a pasted
// block is one input, Ctrl-D at the task prompt ends the input, and
// the history holds tasks, not answers.
func TestConsoleKeys(t *testing.T) {
	t.Parallel()
	k := newKeyboard(t)
	ctx := context.Background()

	seq := k.con.show("> ", promptTask)
	k.typeKeys(t, "\x03")
	_, err := k.con.read(ctx, k.ints, seq)
	assert.ErrorIs(t, err, errInterrupted)

	k.typeKeys(t, "list files\r")
	got, err := k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "list files", got)

	k.typeKeys(t, "\x1b[200~first line\rsecond line\r\x1b[201~third\r")
	got, err = k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "first line\nsecond line\nthird", got)

	seq = k.con.show("Apply? ", promptQuestion)
	k.typeKeys(t, "yes\r")
	got, err = k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "yes", got)

	seq = k.con.show("> ", promptTask)
	k.typeKeys(t, "\x1b[A\r") // up: the last typed task, not the answer or the paste
	got, err = k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "list files", got)

	seq = k.con.show("> ", promptTask)
	k.typeKeys(t, "\x04")
	_, err = k.con.read(ctx, nil, seq)
	assert.ErrorIs(t, err, io.EOF)

	// End of stdin ends every read.
	require.NoError(t, k.keys.Close())
	_, err = k.con.read(ctx, nil, k.con.show("> ", promptTask))
	assert.ErrorIs(t, err, io.EOF)
}

// TestConsolePasteNeverAnswers: a bracketed paste, made while the model
// works or at the question, never answers it, with or without its own
// Enter; the pasted text is kept for the next task prompt.
func TestConsolePasteNeverAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before string // pasted while a turn runs, before the question
		at     string // keys at the question, before the answer
		kept   []string
	}{
		{name: "paste y and Enter during a turn, then Enter", before: "\x1b[200~y\r\x1b[201~", at: "\r", kept: []string{"y"}},
		{name: "paste a and Enter during a turn, then Enter", before: "\x1b[200~a\r\x1b[201~", at: "\r", kept: []string{"a"}},
		{name: "paste y at the question, then Enter", at: "\x1b[200~y\x1b[201~\r", kept: []string{"y"}},
		{name: "paste y and Enter at the question", at: "\x1b[200~y\r\x1b[201~", kept: []string{"y"}},
		{name: "paste y and Enter at the question, then Enter", at: "\x1b[200~y\r\x1b[201~\r", kept: []string{"y"}},
		{name: "paste two lines at the question, then Enter", at: "\x1b[200~x\ry\x1b[201~\r", kept: []string{"x", "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := newKeyboard(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // fail, not hang, if "n" is lost
			defer cancel()
			if tc.before != "" {
				k.con.show("working › ", promptBusy)
				k.typeKeys(t, tc.before)
				k.screen.waitFor(t, "working › "+tc.before[6:7], 1) // the editor has it
			}
			seq := k.con.show("Apply? ", promptQuestion)
			k.typeKeys(t, tc.at)
			k.typeKeys(t, "n\r")
			var answers []string
			for {
				got, err := k.con.read(ctx, nil, seq)
				require.NoError(t, err)
				if got == "n" {
					break
				}
				answers = append(answers, got)
			}
			for _, a := range answers {
				assert.Empty(t, strings.TrimSpace(a), "a line read before the typed n answers nothing")
			}
			for _, l := range tc.kept {
				k.screen.waitFor(t, "not taken as an answer: "+l+")", 1)
			}
			assert.Equal(t, len(tc.kept), k.con.keptCount(), "the paste is kept for the next prompt")
		})
	}
}

func TestHomeEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want    string
		inPaste, endPaste bool
	}{
		{name: "tmux and Linux console", in: "a\x1b[1~b\x1b[4~c", want: "a\x1b[Hb\x1b[Fc"},
		{name: "rxvt", in: "\x1b[7~\x1b[8~", want: "\x1b[H\x1b[F"},
		{name: "application mode", in: "\x1bOH\x1bOF", want: "\x1b[H\x1b[F"},
		{name: "what the editor knows is left", in: "\x1b[H\x1b[F\x1b[A\x1b[3~", want: "\x1b[H\x1b[F\x1b[A\x1b[3~"},
		{name: "not in a paste", in: "\x1b[200~\x1b[1~\x1b[201~\x1b[1~", want: "\x1b[200~\x1b[1~\x1b[201~\x1b[H"},
		{name: "a paste that goes on", in: "x\x1b[200~\x1b[4~", want: "x\x1b[200~\x1b[4~", endPaste: true},
		{name: "the end of a paste", in: "\x1b[4~\x1b[201~\x1b[4~", want: "\x1b[4~\x1b[201~\x1b[F", inPaste: true},
	} {
		got, inPaste := homeEnd([]byte(tc.in), tc.inPaste)
		assert.Equal(t, tc.want, string(got), tc.name)
		assert.Equal(t, tc.endPaste, inPaste, tc.name)
	}
}

func TestCutSplitKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, keys, split string }{
		{in: "abc", keys: "abc"},
		{in: "abc\x1b[20", keys: "abc", split: "\x1b[20"},
		{in: "abc\x1b[201", keys: "abc", split: "\x1b[201"},
		{in: "y\x1b", keys: "y", split: "\x1b"},
		{in: "x\x1b[1", keys: "x", split: "\x1b[1"},
		{in: "x\x1bO", keys: "x", split: "\x1bO"},
		{in: "x\x1b[200~", keys: "x\x1b[200~"},
		{in: "x\x1b[A", keys: "x\x1b[A"},
		{in: "x\x1b[3", keys: "x\x1b[3"},
	} {
		keys, split := cutSplitKey([]byte(tc.in))
		assert.Equal(t, tc.keys, string(keys), "%q", tc.in)
		assert.Equal(t, tc.split, string(split), "%q", tc.in)
	}
}

// TestConsolePasteSplitAcrossReads: a paste whose start marker arrives
// in two reads is still a paste, and does not answer the question.
func TestConsolePasteSplitAcrossReads(t *testing.T) {
	t.Parallel()
	k := newKeyboard(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seq := k.con.show("Apply? ", promptQuestion)
	k.typeKeys(t, "\x1b[20")
	k.typeKeys(t, "0~y\x1b[201~\r")
	k.screen.waitFor(t, "not taken as an answer: y)", 1)
	k.typeKeys(t, "n\r")
	got, err := k.con.read(ctx, nil, seq)
	require.NoError(t, err)
	assert.Equal(t, "n", got)
}
