package agentrt_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// claimTracedCall is an entry of a turn record's tool_calls
// (docs/jsonl-format.md).
type claimTracedCall struct {
	ToolUseID  string   `json:"tool_use_id"`
	Tool       string   `json:"tool"`
	Start      string   `json:"start"`
	DurationMS *float64 `json:"duration_ms"`
	Outcome    string   `json:"outcome"`
}

// claimTracedCalls returns the tool_calls of the session's turn records
// and of its run records' last_turn, in order.
func claimTracedCalls(t *testing.T, store agentrt.RecordStore, id string) []claimTracedCall {
	t.Helper()
	recs, err := store.LoadRecords(context.Background(), id)
	require.NoError(t, err)
	type turn struct {
		ToolCalls []claimTracedCall `json:"tool_calls"`
	}
	var calls []claimTracedCall
	for _, r := range recs {
		var tr turn
		switch r.Kind {
		case agentrt.RecordTurn:
			require.NoError(t, json.Unmarshal(r.Data, &tr))
		case agentrt.RecordRun:
			var run struct {
				LastTurn *turn `json:"last_turn"`
			}
			require.NoError(t, json.Unmarshal(r.Data, &run))
			if run.LastTurn != nil {
				tr = *run.LastTurn
			}
		}
		calls = append(calls, tr.ToolCalls...)
	}
	return calls
}

// claimCanceller returns a tool that cancels the run's context (the
// caller's: cancel) and returns its context's error.
func claimCanceller(cancel *context.CancelFunc) agentrt.Tool {
	return agentrt.NewTool("cancel", "Cancels the run.", func(ctx context.Context, _ struct{}) (string, error) {
		(*cancel)()
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly())
}

// TestClaimTraceOutcomeCancelledDuringATool shows docs/jsonl-format.md's
// tool_calls outcome "cancelled" for a call the caller's context cancelled
// while it ran (the tool returns ctx.Err()): the run's record (last_turn)
// lists it with its start and duration, as a call that ran. In both stores
// that keep records: a MemoryStore and a JSONLStore.
func TestClaimTraceOutcomeCancelledDuringATool(t *testing.T) {
	t.Parallel()
	for name, newStore := range map[string]func(t *testing.T) agentrt.SessionStore{
		"memory": func(*testing.T) agentrt.SessionStore { return &agentrt.MemoryStore{} },
		"jsonl":  func(t *testing.T) agentrt.SessionStore { return newJSONLStore(t, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store := newStore(t)
			ag := &agentrt.Agent{
				Planner: agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.CallTool("cancel", `{}`), agenttest.Reply("never")),
				Tools:   []agentrt.Tool{addTool(), claimCanceller(&cancel)},
				Store:   store,
			}
			events, err := agenttest.Collect(ag.Run(ctx, "s1", "go"))
			require.ErrorIs(t, err, context.Canceled)
			done, _ := agenttest.Done(events)
			require.Equal(t, agentrt.StopCancelled, done.Reason)
			res := lastResults(events)
			require.Len(t, res, 2)
			assert.Contains(t, res[1].Message.Content, `cancelled: the run was stopped while tool "cancel" was running`)

			calls := claimTracedCalls(t, store.(agentrt.RecordStore), "s1")
			require.Len(t, calls, 2)
			assert.Equal(t, "call_1", calls[0].ToolUseID)
			assert.Equal(t, "ok", calls[0].Outcome)
			assert.Equal(t, "call_2", calls[1].ToolUseID)
			assert.Equal(t, "cancel", calls[1].Tool)
			assert.Equal(t, "cancelled", calls[1].Outcome)
			assert.NotEmpty(t, calls[1].Start, "it ran: it has a start")
			assert.NotNil(t, calls[1].DurationMS, "and a duration")
		})
	}
}

// TestClaimTraceOutcomeCancelledBeforeATool shows the outcome "cancelled"
// of a call that did not run because the run was cancelled before it: the
// caller cancels on the call's ToolCall event. The call has no start or
// duration ("absent for a call that did not run"). Alone, and in a group of
// read-only calls run together.
func TestClaimTraceOutcomeCancelledBeforeATool(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		step  agenttest.Step
		calls int
	}{
		"alone": {agenttest.CallTool("add", `{"a":1,"b":2}`), 1},
		"group": {agenttest.CallTools(agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":4}`)), 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ran := false
			add := agentrt.NewTool("add", "Add.", func(_ context.Context, in AddIn) (int, error) { ran = true; return in.A + in.B, nil }, agentrt.ReadOnly())
			script := agenttest.Script(tc.step, agenttest.Reply("never"))
			ag, store := newAgent(script, add)
			var runErr error
			var results []agentrt.ToolResult
			for ev, err := range ag.Run(ctx, "s1", "go") {
				switch e := ev.(type) {
				case agentrt.ToolCall:
					cancel()
				case agentrt.ToolResult:
					results = append(results, e)
				}
				if err != nil {
					runErr = err
				}
			}
			require.ErrorIs(t, runErr, context.Canceled)
			assert.False(t, ran, "no call ran")
			require.Len(t, results, tc.calls)
			for _, r := range results {
				assert.Contains(t, r.Message.Content, `cancelled: the run was stopped before tool "add" ran`)
			}
			calls := claimTracedCalls(t, store, "s1")
			require.Len(t, calls, len(results))
			for i, c := range calls {
				assert.Equal(t, results[i].Message.ToolUseID, c.ToolUseID)
				assert.Equal(t, "cancelled", c.Outcome)
				assert.Empty(t, c.Start, "a call that did not run has no start")
				assert.Nil(t, c.DurationMS, "nor a duration")
			}
		})
	}
}

// TestClaimTraceOutcomeCancelledAfterACancellingTool looks at the calls of
// a turn that follow a call during which the caller cancelled the run: they
// are not run, and each gets a "cancelled ... before tool ran" result.
// docs/jsonl-format.md says a turn record's tool_calls are "the turn's tool
// calls, in order", with the outcome "cancelled": the calls the run's stop
// answered are traced too.
func TestClaimTraceOutcomeCancelledAfterACancellingTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("cancel", `{}`), agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":4}`)),
		agenttest.Reply("never"))
	ag, store := newAgent(script, addTool(), claimCanceller(&cancel))
	ag.MaxParallelTools = 1 // one at a time
	events, err := agenttest.Collect(ag.Run(ctx, "s1", "go"))
	require.ErrorIs(t, err, context.Canceled)
	msgs, lerr := store.Load(context.Background(), "s1")
	require.NoError(t, lerr)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5)
	assert.Contains(t, msgs[2].Content, `cancelled: the run was stopped while tool "cancel" was running`)
	assert.Contains(t, msgs[3].Content, `cancelled: the run was stopped before tool "add" ran`)
	assert.Contains(t, msgs[4].Content, `cancelled: the run was stopped before tool "add" ran`)
	assert.Len(t, lastResults(events), 1, "only the first call's result is yielded as a ToolResult")

	calls := claimTracedCalls(t, store, "s1")
	var traced []string
	for _, c := range calls {
		traced = append(traced, c.ToolUseID+":"+c.Outcome)
	}
	assert.Equal(t, []string{"call_1:cancelled", "call_2:cancelled", "call_3:cancelled"}, traced)
}
