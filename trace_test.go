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
		BeforeTool: func(ctx context.Context, call *agentrt.ToolInvocation) (context.Context, error) {
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
	assert.Equal(t, "success", run["layer"])
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
	assert.Equal(t, "success", run["layer"])
}
