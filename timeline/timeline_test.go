package timeline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/timeline"
)

// A file written before the trace records existed (the example of
// docs/jsonl-format.md, then a run that died during a tool call) renders:
// runs split at the user's inputs, times from the lines, outcomes and the
// stop inferred from the messages.
func TestOldFile(t *testing.T) {
	t.Parallel()
	s, err := timeline.Open(context.Background(), "testdata/old.jsonl")
	require.NoError(t, err)
	assert.False(t, s.Traced)
	require.Len(t, s.Runs, 2)

	r := s.Runs[0]
	assert.Equal(t, "What is in main.go? Then delete old.go.", r.Input)
	assert.Equal(t, timeline.LayerNone, r.Layer)
	assert.Equal(t, "complete", r.Reason)
	require.Len(t, r.Turns, 2)
	assert.Equal(t, agentrt.Usage{InputTokens: 412, OutputTokens: 38}, r.Turns[0].Model.Usage)
	assert.Equal(t, 1234567*time.Microsecond, r.Turns[0].Model.Duration, "from the line before to the message")
	calls := r.Turns[0].Calls
	require.Len(t, calls, 2)
	assert.Equal(t, timeline.OutcomeOK, calls[0].Outcome)
	assert.Equal(t, timeline.OutcomeDenied, calls[1].Outcome)
	require.NotNil(t, calls[1].Decision)
	assert.Equal(t, "policy", calls[1].Decision.Source)
	assert.Equal(t, timeline.LayerPermission, r.FailingLayer())
	assert.Equal(t, agentrt.Usage{InputTokens: 942, OutputTokens: 55}, r.Usage)

	r = s.Runs[1]
	assert.Equal(t, timeline.LayerCrash, r.Layer, "a call without a result, and no process holds the session")
	assert.Equal(t, timeline.OutcomePending, r.Turns[0].Calls[0].Outcome)
	assert.Equal(t, timeline.LayerCrash, s.FailingLayer())

	// It marshals, for a program's own UI.
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"outcome":"denied"`)

	fs, err := timeline.Verify(context.Background(), "testdata", "old", nil)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	assert.True(t, fs[0].Warning, "a crash mid-tool is a warning: %v", fs[0])
	assert.Equal(t, 11, fs[0].Line)
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"testdata/old.jsonl", "testdata/old"} {
		dir, id, err := timeline.Resolve(arg)
		require.NoError(t, err, arg)
		assert.Equal(t, "testdata", dir)
		assert.Equal(t, "old", id)
	}
	for _, arg := range []string{"testdata/nope", "testdata", "timeline_test.go"} {
		_, _, err := timeline.Resolve(arg)
		assert.Error(t, err, arg)
	}
}

// A traced session read back: the record of each call and the run's end,
// and List's order.
func TestTracedSessionAndList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	type in struct {
		N int `json:"n"`
	}
	boom := agentrt.NewTool("boom", "Panics.", func(context.Context, in) (string, error) { panic("no") }, agentrt.ReadOnly())
	for _, id := range []string{"first", "second"} {
		ag := &agentrt.Agent{Tools: []agentrt.Tool{boom}, Store: store, MaxTurns: 1, NoFinalAnswer: true,
			Planner: agenttest.Script(agenttest.CallTool("boom", `{"n":1}`))}
		_, _ = agenttest.Collect(ag.Run(context.Background(), id, "go"))
	}
	s := agenttest.Timeline(t, store, "second")
	assert.True(t, s.Traced)
	agenttest.AssertStoppedAt(t, s, timeline.LayerLimit)
	agenttest.AssertFailingLayer(t, s, timeline.LayerLimit)
	agenttest.AssertCallOutcome(t, s, "call_1", timeline.OutcomePanic)
	c := s.LastRun().Turns[0].Calls[0]
	assert.True(t, c.Traced)
	assert.Equal(t, timeline.LayerTool, c.Layer())
	assert.Equal(t, "max_turns", s.LastRun().Reason)

	list, err := timeline.List(context.Background(), dir)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "second", list[0].ID, "most recent first")

	// A damaged last line is dropped and reported.
	f, err := os.OpenFile(filepath.Join(dir, "second.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"mess`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s, err = timeline.Load(context.Background(), dir, "second")
	require.NoError(t, err)
	require.NotNil(t, s.Tail)
	assert.Equal(t, timeline.LayerLimit, s.LastRun().Layer)
}

// The helpers of agenttest fail a test when the timeline disagrees.
func TestAssertionsFail(t *testing.T) {
	t.Parallel()
	s, err := timeline.Open(context.Background(), "testdata/old.jsonl")
	require.NoError(t, err)
	for name, check := range map[string]func(agenttest.TB){
		"stopped at":    func(tb agenttest.TB) { agenttest.AssertStoppedAt(tb, s, timeline.LayerNone) },
		"failing layer": func(tb agenttest.TB) { agenttest.AssertFailingLayer(tb, s, timeline.LayerTool) },
		"call outcome":  func(tb agenttest.TB) { agenttest.AssertCallOutcome(tb, s, "call_2", timeline.OutcomeOK) },
		"no such call":  func(tb agenttest.TB) { agenttest.AssertCallOutcome(tb, s, "call_9", timeline.OutcomeOK) },
	} {
		rec := &recorder{}
		check(rec)
		assert.True(t, rec.failed, name)
	}
	rec := &recorder{}
	agenttest.AssertStoppedAt(rec, s, timeline.LayerCrash)
	agenttest.AssertCallOutcome(rec, s, "call_2", timeline.OutcomeDenied)
	assert.False(t, rec.failed, rec.msg)
}

type recorder struct {
	failed bool
	msg    string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(format string, a ...any) { r.failed = true; r.msg = format }
func (r *recorder) FailNow()                       { r.failed = true }
