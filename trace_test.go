package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// traceRecords returns the trace records of a session in a MemoryStore,
// decoded and flattened: the model calls and tool calls of the turn
// records (and of the run record's last turn), each with its "turn", and
// the run record.
func traceRecords(t *testing.T, s *agentrt.MemoryStore, id string) (model, tool []map[string]any, run map[string]any) {
	t.Helper()
	turn := func(m map[string]any) {
		n := m["turn"]
		if mc, ok := m["model_call"].(map[string]any); ok {
			mc["turn"] = n
			model = append(model, mc)
		}
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			c.(map[string]any)["turn"] = n
			tool = append(tool, c.(map[string]any))
		}
	}
	for _, r := range allRecords(t, s, id) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.Data, &m), "%s: %s", r.Kind, r.Data)
		switch r.Kind {
		case agentrt.RecordTurn:
			require.Nil(t, run, "no turn record after the run record")
			turn(m)
		case agentrt.RecordRun:
			require.Nil(t, run, "one run record")
			run = m
			if lt, ok := m["last_turn"].(map[string]any); ok {
				turn(lt)
			}
		}
	}
	return model, tool, run
}

type slowIn struct {
	N int `json:"n"`
}

func TestTraceRecords(t *testing.T) {
	t.Parallel()
	slow := agentrt.NewTool("slow", "Waits.", func(ctx context.Context, _ slowIn) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly(), agentrt.WithTimeout(time.Millisecond))
	boom := agentrt.NewTool("boom", "Panics.", func(context.Context, slowIn) (string, error) { panic("kaboom") }, agentrt.ReadOnly())
	spans := agentrt.Hooks{
		OnRunStart: func(ctx context.Context, _ *agentrt.RunInfo) context.Context {
			return agentrt.WithTraceSpan(ctx, "trace1", "run")
		},
		BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			return agentrt.WithTraceSpan(ctx, "trace1", "plan"), nil
		},
		BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
			return agentrt.WithTraceSpan(ctx, "trace1", "tool-"+call.ToolUseID), nil
		},
	}
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{addTool(), slow, boom}, Store: store, Hooks: []agentrt.Hooks{spans},
		MaxParallelTools: 1,
		Planner: agenttest.Script(
			agenttest.CallTools(
				agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("boom", `{"n":1}`),
				agenttest.ToolUse("slow", `{"n":1}`), agenttest.ToolUse("nope", `{}`), agenttest.ToolUse("add", `{"a":"x"}`),
			).WithUsage(agentrt.Usage{InputTokens: 10, OutputTokens: 3}),
			agenttest.StreamReply("do", "ne"),
		),
	}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	model, tool, run := traceRecords(t, store, "s")

	require.Len(t, model, 2)
	assert.EqualValues(t, 1, model[0]["turn"])
	assert.EqualValues(t, 1, model[0]["messages"])
	assert.Positive(t, model[0]["tokens"])
	assert.Equal(t, "tool_use", model[0]["finish"])
	assert.Equal(t, map[string]any{"input_tokens": 10.0, "output_tokens": 3.0}, model[0]["usage"])
	assert.Equal(t, "plan", model[0]["span_id"])
	assert.Nil(t, model[0]["ttft_ms"], "not streamed")
	assert.NotNil(t, model[1]["ttft_ms"], "streamed")
	assert.EqualValues(t, 7, model[1]["messages"])
	start, err := time.Parse(time.RFC3339Nano, model[0]["start"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), start, time.Minute)

	outcomes := map[string]string{}
	for _, c := range tool {
		outcomes[c["tool"].(string)+" "+c["tool_use_id"].(string)] = c["outcome"].(string)
	}
	assert.Equal(t, map[string]string{
		"add call_1": "ok", "boom call_2": "panic", "slow call_3": "timeout", "nope call_4": "invalid_input", "add call_5": "invalid_input",
	}, outcomes)
	byID := map[string]map[string]any{}
	for _, c := range tool {
		byID[c["tool_use_id"].(string)] = c
	}
	assert.Equal(t, "tool-call_1", byID["call_1"]["span_id"])
	assert.Nil(t, byID["call_4"]["start"], "a call that did not run has no start")
	assert.Positive(t, byID["call_3"]["duration_ms"], "the slow call ran until its timeout: %v", byID["call_3"])

	assert.Equal(t, "complete", run["reason"])
	assert.Nil(t, run["layer"])
	assert.EqualValues(t, 2, run["turns"])
	assert.Equal(t, "run", run["span_id"])
	assert.Nil(t, run["error"])
}

func TestTraceRecordsOfFailures(t *testing.T) {
	t.Parallel()
	overloaded := &agentrt.ProviderError{Provider: "p", StatusCode: 529, Kind: agentrt.ErrOverloaded}
	for _, tc := range []struct {
		name   string
		ag     *agentrt.Agent
		layer  string
		reason string
		check  func(t *testing.T, model, tool []map[string]any)
	}{
		{name: "provider", layer: "provider", reason: "error", ag: &agentrt.Agent{
			Planner: agenttest.Script(agenttest.Fail(overloaded), agenttest.Fail(overloaded)),
			Retry:   agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond},
		}, check: func(t *testing.T, model, _ []map[string]any) {
			require.Len(t, model, 1)
			assert.Equal(t, "provider", model[0]["layer"])
			assert.Contains(t, model[0]["error"], "529")
			retries := model[0]["retries"].([]any)
			require.Len(t, retries, 1)
			assert.EqualValues(t, 1, retries[0].(map[string]any)["attempt"])
			assert.Equal(t, "provider", retries[0].(map[string]any)["layer"])
		}},
		{name: "hook", layer: "hook", reason: "error", ag: &agentrt.Agent{
			Planner: agenttest.Script(agenttest.Reply("x")),
			Hooks: []agentrt.Hooks{{BeforePlan: func(ctx context.Context, _ *agentrt.ModelRequest) (context.Context, error) {
				return ctx, context.DeadlineExceeded
			}}},
		}, check: func(t *testing.T, model, _ []map[string]any) {
			require.Len(t, model, 1)
			assert.Equal(t, "hook", model[0]["layer"])
		}},
		{name: "denied and max turns", layer: "limit", reason: "max_turns", ag: &agentrt.Agent{
			Tools: []agentrt.Tool{agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) { return "ok", nil })}, MaxTurns: 1, NoFinalAnswer: true,
			Planner: agenttest.Script(agenttest.CallTool("write", `{"path":"a"}`)),
		}, check: func(t *testing.T, _, tool []map[string]any) {
			require.Len(t, tool, 1)
			assert.Equal(t, "denied", tool[0]["outcome"])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &agentrt.MemoryStore{}
			tc.ag.Store = store
			_, _ = agenttest.Collect(tc.ag.Run(context.Background(), "s", "go"))
			model, tool, run := traceRecords(t, store, "s")
			require.NotNil(t, run)
			assert.Equal(t, tc.layer, run["layer"])
			assert.Equal(t, tc.reason, run["reason"])
			tc.check(t, model, tool)
		})
	}
}

// A long run's records, which share the run's arena, stay intact: each
// decodes, and they name every turn once, in order.
func TestTraceRecordsOfALongRun(t *testing.T) {
	t.Parallel()
	var steps []agenttest.Step
	for i := range 60 {
		steps = append(steps, agenttest.CallTools(
			agenttest.ToolUse("add", fmt.Sprintf(`{"a":%d,"b":1}`, i+1)),
			agenttest.ToolUse("add", fmt.Sprintf(`{"a":%d,"b":2}`, i+1)),
		))
	}
	steps = append(steps, agenttest.Reply("done"))
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Store: store, MaxTurns: 100, Planner: agenttest.Script(steps...)}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	model, tool, run := traceRecords(t, store, "s")
	require.Len(t, model, 61)
	require.Len(t, tool, 120)
	for i, m := range model {
		assert.EqualValues(t, i+1, m["turn"])
	}
	for i, c := range tool {
		assert.EqualValues(t, i/2+1, c["turn"])
		assert.Equal(t, "ok", c["outcome"])
	}
	assert.Nil(t, run["layer"])
}

// tracedCall is an entry of a turn record's tool_calls
// (docs/jsonl-format.md).
type tracedCall struct {
	ToolUseID  string   `json:"tool_use_id"`
	Tool       string   `json:"tool"`
	Start      string   `json:"start"`
	DurationMS *float64 `json:"duration_ms"`
	Outcome    string   `json:"outcome"`
}

// tracedCalls returns the tool_calls of the session's turn records
// and of its run records' last_turn, in order.
func tracedCalls(t *testing.T, store agentrt.RecordStore, id string) []tracedCall {
	t.Helper()
	recs, err := store.LoadRecords(context.Background(), id)
	require.NoError(t, err)
	type turn struct {
		ToolCalls []tracedCall `json:"tool_calls"`
	}
	var calls []tracedCall
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

// TestTraceOutcomeCancelledDuringATool shows docs/jsonl-format.md's
// tool_calls outcome "cancelled" for a call the caller's context cancelled
// while it ran (the tool returns ctx.Err()): the run's record (last_turn)
// lists it with its start and duration, as a call that ran. In both stores
// that keep records: a MemoryStore and a JSONLStore.
func TestTraceOutcomeCancelledDuringATool(t *testing.T) {
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
				Tools:   []agentrt.Tool{addTool(), cancellerTool(&cancel)},
				Store:   store,
			}
			events, err := agenttest.Collect(ag.Run(ctx, "s1", "go"))
			require.ErrorIs(t, err, context.Canceled)
			done, _ := agenttest.Done(events)
			require.Equal(t, agentrt.StopCancelled, done.Reason)
			res := lastResults(events)
			require.Len(t, res, 2)
			assert.Contains(t, res[1].Message.Content, `cancelled: the run was stopped while tool "cancel" was running`)

			calls := tracedCalls(t, store.(agentrt.RecordStore), "s1")
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

// TestTraceOutcomeCancelledBeforeATool shows the outcome "cancelled"
// of a call that did not run because the run was cancelled before it: the
// caller cancels on the call's ToolCall event. The call has no start or
// duration ("absent for a call that did not run"). Alone, and in a group of
// read-only calls run together.
func TestTraceOutcomeCancelledBeforeATool(t *testing.T) {
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
			calls := tracedCalls(t, store, "s1")
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

// TestTraceOutcomeCancelledAfterACancellingTool looks at the calls of
// a turn that follow a call during which the caller cancelled the run: they
// are not run, and each gets a "cancelled ... before tool ran" result.
// docs/jsonl-format.md says a turn record's tool_calls are "the turn's tool
// calls, in order", with the outcome "cancelled": the calls the run's stop
// answered are traced too.
func TestTraceOutcomeCancelledAfterACancellingTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("cancel", `{}`), agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":4}`)),
		agenttest.Reply("never"))
	ag, store := newAgent(script, addTool(), cancellerTool(&cancel))
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

	calls := tracedCalls(t, store, "s1")
	var traced []string
	for _, c := range calls {
		traced = append(traced, c.ToolUseID+":"+c.Outcome)
	}
	assert.Equal(t, []string{"call_1:cancelled", "call_2:cancelled", "call_3:cancelled"}, traced)
}

// Each planner call's record fingerprints its request, part by part, so
// that the timeline can say which part broke the prompt cache: a call
// that only appended lists the new messages' hashes; a hook that changes
// the system prompt is named; the runtime's last-turn note is a tail; a
// new run lists every message again, with the same hashes.
func TestTraceFingerprintsTheRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &agentrt.MemoryStore{}
	script := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":1}`),
		agenttest.CallTool("add", `{"a":2,"b":1}`),
		agenttest.Reply("3"),
		agenttest.Reply("again"),
	)
	stamp := 0
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: script, Store: store, Instructions: "Be brief.", MaxTurns: 2,
		Budget: agentrt.Budget{Prices: agentrt.Prices{Input: 1, Output: 2}},
		Hooks: []agentrt.Hooks{{}, {BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			stamp++
			if stamp == 2 { // a bad hook: the time in the system prompt
				req.System += " It is 10:02."
			}
			return ctx, nil
		}}},
	}
	_, err := agenttest.Collect(ag.Run(ctx, "s", "add"))
	require.NoError(t, err)
	_, err = agenttest.Collect(ag.Run(ctx, "s", "more"))
	require.NoError(t, err)

	var model []map[string]any // the model calls of both runs
	for _, r := range allRecords(t, store, "s") {
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.Data, &m))
		if lt, ok := m["last_turn"].(map[string]any); ok {
			m = lt
		}
		if mc, ok := m["model_call"].(map[string]any); ok {
			model = append(model, mc)
		}
	}
	require.Len(t, model, 4)
	prefix := make([]map[string]any, len(model))
	for i, mc := range model {
		prefix[i] = mc["prefix"].(map[string]any)
		assert.Regexp(t, `^[0-9a-f]{8}$`, prefix[i]["system"])
		assert.Contains(t, mc, "cost")
	}
	hashes := func(p map[string]any) []string {
		var hs []string
		for _, h := range p["hashes"].([]any) {
			hs = append(hs, h.(string))
		}
		return hs
	}
	// Run 1, call 1: everything is new.
	assert.EqualValues(t, 1, prefix[0]["messages"])
	assert.EqualValues(t, 0, prefix[0]["from"])
	assert.Len(t, hashes(prefix[0]), 1)
	assert.NotEmpty(t, prefix[0]["tool_list"], "a run's first call lists its tools")
	// Call 2: appended the call and its result; hook 1 changed the system prompt.
	assert.EqualValues(t, 3, prefix[1]["messages"])
	assert.EqualValues(t, 1, prefix[1]["from"])
	assert.Len(t, hashes(prefix[1]), 2)
	assert.NotEqual(t, prefix[0]["system"], prefix[1]["system"])
	assert.Equal(t, map[string]any{"system": "hook 1"}, prefix[1]["changed"])
	assert.Equal(t, prefix[0]["tools"], prefix[1]["tools"])
	assert.NotContains(t, prefix[1], "tool_list", "the same tools are not listed again")
	// Call 3: the final answer after MaxTurns: the note is a tail, the
	// system prompt is the agent's again.
	assert.EqualValues(t, 6, prefix[2]["messages"])
	assert.EqualValues(t, 3, prefix[2]["from"])
	assert.EqualValues(t, 1, prefix[2]["tail"])
	assert.Len(t, hashes(prefix[2]), 3, "two new messages and the tail")
	assert.Equal(t, prefix[0]["system"], prefix[2]["system"])
	// Run 2: a new run lists every message, and they hash as before.
	assert.EqualValues(t, 0, prefix[3]["from"])
	h3 := hashes(prefix[3])
	require.Len(t, h3, 7, "the session's 5 first messages, the answer and the new input")
	assert.Equal(t, hashes(prefix[0])[0], h3[0])
	assert.Equal(t, hashes(prefix[1]), h3[1:3])
	assert.Equal(t, hashes(prefix[2])[:2], h3[3:5])
}
