package agentrt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonl"
	"github.com/agentrt/agentrt/jsonplanner"
	"github.com/agentrt/agentrt/summarize"
)

// assertOnePrefix checks that err's text starts with "agentrt: " and says it
// once, however many layers wrapped it.
func assertOnePrefix(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "agentrt: "), "no prefix: %s", msg)
	assert.Equal(t, 1, strings.Count(msg, "agentrt:"), "prefix doubled: %s", msg)
}

func runErr(t *testing.T, store agentrt.SessionStore, id string) error {
	t.Helper()
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("hi")), Store: store}
	_, err := agenttest.Collect(ag.Run(context.Background(), id, "hi"))
	return err
}

func TestErrorsHaveOnePrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()

	t.Run("invalid session id", func(t *testing.T) {
		for _, s := range []agentrt.SessionStore{store, &agentrt.MemoryStore{}} {
			err := runErr(t, s, "../etc")
			require.ErrorIs(t, err, agentrt.ErrInvalidSessionID)
			assertOnePrefix(t, err)
			assert.Equal(t, `agentrt: lock session "../etc": invalid session id "../etc": starts with "."`, err.Error())
		}
	})
	t.Run("busy session", func(t *testing.T) {
		unlock, err := store.Lock(ctx, "busy")
		require.NoError(t, err)
		defer unlock()
		err = runErr(t, store, "busy")
		require.ErrorIs(t, err, agentrt.ErrSessionBusy)
		assertOnePrefix(t, err)
		err = store.Delete(ctx, "busy")
		require.ErrorIs(t, err, agentrt.ErrSessionBusy)
		assertOnePrefix(t, err)
	})
	t.Run("damaged session file", func(t *testing.T) {
		require.NoError(t, runErr(t, store, "damaged"))
		path := filepath.Join(dir, "damaged.jsonl")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(b), "\n")
		require.Greater(t, len(lines), 2)
		damaged := lines[0] + "{not json\n" + strings.Join(lines[1:], "")
		require.NoError(t, os.WriteFile(path, []byte(damaged), 0o600))
		err = runErr(t, store, "damaged")
		var corrupt *jsonl.LineError
		require.True(t, errors.As(err, &corrupt) && !corrupt.Tail, "%v", err)
		assertOnePrefix(t, err)
	})
	t.Run("fork of a missing session", func(t *testing.T) {
		assertOnePrefix(t, store.Fork(ctx, "missing", "copy", 0))
	})
	t.Run("planner errors", func(t *testing.T) {
		prose := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("no JSON here"))}, nil
		})
		ag := &agentrt.Agent{Planner: jsonplanner.New(prose, nil)}
		_, err := agenttest.Collect(ag.Run(ctx, "json", "hi"))
		require.ErrorIs(t, err, jsonplanner.ErrUnparsableDecision)
		assertOnePrefix(t, err)

		failing := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return nil, errors.New("agentrt: no summaries today")
		})
		mem := &agentrt.MemoryStore{}
		for range 3 { // a history to summarize
			ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply(strings.Repeat("answer ", 40))), Store: mem}
			_, err := agenttest.Collect(ag.Run(ctx, "summary", strings.Repeat("question ", 40)))
			require.NoError(t, err)
		}
		ag = &agentrt.Agent{
			Planner:    agenttest.Script(agenttest.Reply("hi")),
			Store:      mem,
			Compressor: &summarize.Compressor{Planner: failing, Threshold: 50, Keep: 20},
		}
		_, err = agenttest.Collect(ag.Run(ctx, "summary", "and now?"))
		assertOnePrefix(t, err)
		assert.Contains(t, err.Error(), "summarize: no summaries today")
	})
	t.Run("closed store", func(t *testing.T) {
		closed, err := agentrt.NewJSONLStore(t.TempDir(), nil)
		require.NoError(t, err)
		require.NoError(t, closed.Close())
		assertOnePrefix(t, runErr(t, closed, "s"))
	})
}

// A second JSONLStore on the same directory is told apart from another
// process: the lock file holds its holder's process id.
func TestJSONLLockHolderWording(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	first, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer first.Close()
	second, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer second.Close()

	unlock, err := first.Lock(ctx, "s")
	require.NoError(t, err)
	defer unlock()

	err = runErr(t, second, "s")
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	assertOnePrefix(t, err)
	assert.Contains(t, err.Error(), `"s" is locked by another JSONLStore on the same directory, in this process`)
	assert.NotContains(t, err.Error(), "another process")

	if runtime.GOOS == "windows" {
		return // a locked file cannot be written there
	}
	// The same lock as another process would leave it: its pid in the file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.lock"), []byte("999999999\n"), 0o600))
	err = second.Delete(ctx, "s")
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	assert.Contains(t, err.Error(), `"s" is locked by another process (pid 999999999)`)
}
