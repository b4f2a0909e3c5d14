package main

import (
	"context"
	"io"
	"os"
	"testing"

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
