package agentrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentslog"
	"github.com/agentrt/agentrt/agenttest"
)

// recordingHooks appends "name:stage" to log for every hook call.
func recordingHooks(name string, log *[]string, mu *sync.Mutex) agentrt.Hooks {
	add := func(s string) { mu.Lock(); *log = append(*log, name+":"+s); mu.Unlock() }
	return agentrt.Hooks{
		OnRunStart:  func(ctx context.Context, _ *agentrt.RunInfo) context.Context { add("run-start"); return ctx },
		OnRunEnd:    func(context.Context, *agentrt.RunInfo, agentrt.Done, error) { add("run-end") },
		OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, _ int) context.Context { add("turn-start"); return ctx },
		OnTurnEnd:   func(context.Context, *agentrt.RunInfo, int) { add("turn-end") },
		BeforePlan: func(ctx context.Context, _ *agentrt.ModelRequest) (context.Context, error) {
			add("before-plan")
			return ctx, nil
		},
		AfterPlan: func(context.Context, *agentrt.ModelRequest, *agentrt.ModelResponse, error) { add("after-plan") },
		BeforeTool: func(ctx context.Context, _ *agentrt.ToolCall) (context.Context, error) {
			add("before-tool")
			return ctx, nil
		},
		AfterTool: func(context.Context, *agentrt.ToolCall, *agentrt.ToolResult) { add("after-tool") },
	}
}

func TestHooksOrderAndComposition(t *testing.T) {
	t.Parallel()
	var log []string
	var mu sync.Mutex
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("3"))
	ag, store := newAgent(script, addTool())
	ag.Hooks = []agentrt.Hooks{recordingHooks("A", &log, &mu), recordingHooks("B", &log, &mu)}
	_, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"A:run-start", "B:run-start",
		"A:turn-start", "B:turn-start", "A:before-plan", "B:before-plan", "B:after-plan", "A:after-plan",
		"A:before-tool", "B:before-tool", "B:after-tool", "A:after-tool", "B:turn-end", "A:turn-end",
		"A:turn-start", "B:turn-start", "A:before-plan", "B:before-plan", "B:after-plan", "A:after-plan", "B:turn-end", "A:turn-end",
		"B:run-end", "A:run-end",
	}, log)
}

type ctxKey struct{}

func TestHooksChangeRequestInputOutputAndContext(t *testing.T) {
	t.Parallel()
	var seenCtx any
	tool := agentrt.NewTool("add", "Add.", func(ctx context.Context, in AddIn) (int, error) {
		seenCtx = ctx.Value(ctxKey{})
		return in.A + in.B, nil
	}, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("done"))
	ag, store := newAgent(script, tool)
	ag.Hooks = []agentrt.Hooks{{
		BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			req.System += " (audited)"
			return ctx, nil
		},
		BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
			in := call.Input.(AddIn)
			in.B = 100
			call.Input = in
			return context.WithValue(ctx, ctxKey{}, "from hook"), nil
		},
		AfterTool: func(_ context.Context, _ *agentrt.ToolCall, out *agentrt.ToolResult) {
			out.Message.Content = "result: " + out.Message.Content
		},
	}}
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.Equal(t, "test (audited)", script.Requests()[0].System)
	assert.Equal(t, "from hook", seenCtx, "the hook's context reaches the tool")
	assert.Equal(t, "result: 101", msgs[2].Content)
	assert.Equal(t, "result: 101", lastResults(events)[0].Message.Content)
}

func TestHookBlocksToolCall(t *testing.T) {
	t.Parallel()
	var ran bool
	tool := agentrt.NewTool("add", "Add.", func(ctx context.Context, in AddIn) (int, error) { ran = true; return 0, nil }, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("ok"))
	ag, store := newAgent(script, tool)
	ag.Hooks = []agentrt.Hooks{{BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
		return ctx, errors.New("additions are paused for maintenance")
	}}}
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.False(t, ran)
	assert.Equal(t, agentrt.NewToolMessage("call_1", "additions are paused for maintenance", true), msgs[2])
	decisions := agenttest.Filter[agentrt.PermissionDecision](events)
	require.Len(t, decisions, 2)
	assert.Equal(t, "hook", decisions[1].Decision.Source)
	assert.False(t, decisions[1].Decision.Allow)
	var found bool
	for _, r := range allRecords(t, store, "s1") {
		if r.Kind == agentrt.RecordPermission && strings.Contains(string(r.Data), `"source":"hook"`) {
			found = true
		}
	}
	assert.True(t, found, "the block is recorded like a permission denial")
	assert.Empty(t, agenttest.Filter[agentrt.HookFailed](events), "a block is the hook's answer, not its failure")
}

func TestPanickingHooksAreContained(t *testing.T) {
	t.Parallel()
	var ran bool
	tool := agentrt.NewTool("add", "Add.", func(ctx context.Context, in AddIn) (int, error) { ran = true; return 3, nil }, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("ok"))
	ag, store := newAgent(script, tool)
	ag.Hooks = []agentrt.Hooks{{
		OnRunStart: func(context.Context, *agentrt.RunInfo) context.Context { panic("start") },
		AfterPlan:  func(context.Context, *agentrt.ModelRequest, *agentrt.ModelResponse, error) { panic("after plan") },
		BeforeTool: func(context.Context, *agentrt.ToolCall) (context.Context, error) { panic("before tool") },
		AfterTool:  func(context.Context, *agentrt.ToolCall, *agentrt.ToolResult) { panic("after tool") },
		OnRunEnd:   func(context.Context, *agentrt.RunInfo, agentrt.Done, error) { panic("end") },
	}}
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err, "a panicking hook does not end the run")
	assert.False(t, ran, "a failing BeforeTool blocks its call")
	assert.Contains(t, msgs[2].Content, "blocked: a hook failed: panic: before tool")
	var stages []string
	for _, f := range agenttest.Filter[agentrt.HookFailed](events) {
		stages = append(stages, f.Stage)
		var pe *agentrt.PanicError
		assert.ErrorAs(t, f.Err, &pe)
	}
	assert.Equal(t, []string{"OnRunStart", "AfterPlan", "BeforeTool", "AfterPlan", "OnRunEnd"}, stages)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
}

func TestBeforePlanErrorEndsRun(t *testing.T) {
	t.Parallel()
	guard := errors.New("input refused by the content filter")
	script := agenttest.Script(agenttest.Reply("never"))
	ag, store := newAgent(script)
	ag.Hooks = []agentrt.Hooks{{BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) { return ctx, guard }}}
	_, _, err := runAgent(t, ag, store, "go")
	require.ErrorIs(t, err, guard)
	assert.Equal(t, 1, script.Remaining())
}

// TestWrapProvider wraps a provider the way the README says: a
// PlannerFunc that calls the next one.
func TestWrapProvider(t *testing.T) {
	t.Parallel()
	var order []string
	mw := func(name string) func(agentrt.Planner) agentrt.Planner {
		return func(next agentrt.Planner) agentrt.Planner {
			return agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				order = append(order, name)
				return next.Plan(ctx, req)
			})
		}
	}
	p := mw("outer")(mw("inner")(agenttest.Script(agenttest.Reply("hi"))))
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{})
	require.NoError(t, err)
	assert.Equal(t, "hi", resp.Message.Text())
	assert.Equal(t, []string{"outer", "inner"}, order)
}

func TestSlogHooks(t *testing.T) {
	t.Parallel()
	run := func(level slog.Level) []map[string]any {
		var buf bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))
		fail := agentrt.NewTool("fail", "Fails.", func(context.Context, struct{}) (string, error) { return "", errors.New("disk full") }, agentrt.ReadOnly())
		script := agenttest.Script(
			agenttest.CallTools(agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("fail", `{}`)).WithUsage(agentrt.Usage{InputTokens: 11, OutputTokens: 7}),
			agenttest.Reply("secret answer 42"))
		ag, store := newAgent(script, addTool(), fail)
		ag.Name = "calc"
		ag.Hooks = []agentrt.Hooks{agentslog.Hooks(logger)}
		_, _, err := runAgent(t, ag, store, "my private question")
		require.NoError(t, err)
		var recs []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			recs = append(recs, m)
		}
		return recs
	}
	recs := run(slog.LevelInfo)
	require.Len(t, recs, 5)
	assert.Equal(t, "agentrt: planner call", recs[0]["msg"])
	assert.Equal(t, "INFO", recs[0]["level"])
	assert.Equal(t, "s1", recs[0]["session"])
	assert.EqualValues(t, 1, recs[0]["turn"])
	assert.EqualValues(t, 11, recs[0]["input_tokens"])
	assert.EqualValues(t, 2, recs[0]["tool_calls"])
	// The two tools ran concurrently: their records come in either order.
	tools := map[string]map[string]any{}
	for _, r := range recs[1:3] {
		assert.Equal(t, "agentrt: tool call", r["msg"])
		tools[r["tool"].(string)] = r
	}
	require.Len(t, tools, 2)
	assert.Equal(t, "INFO", tools["add"]["level"])
	assert.Contains(t, tools["add"], "duration")
	assert.Equal(t, "WARN", tools["fail"]["level"])
	assert.Contains(t, tools["fail"]["error"], "disk full")
	assert.Equal(t, "agentrt: run", recs[4]["msg"])
	assert.Equal(t, "complete", recs[4]["reason"])
	assert.Equal(t, "calc", recs[4]["agent"])
	for _, r := range recs {
		line, _ := json.Marshal(r)
		assert.NotContains(t, string(line), "secret answer", "no content at Info")
		assert.NotContains(t, string(line), "private question")
	}
	debug := run(slog.LevelDebug)
	assert.Greater(t, len(debug), len(recs))
	all, _ := json.Marshal(debug)
	assert.Contains(t, string(all), "secret answer 42", "content at Debug")
}

// RunInfo.Start is when the run started, also on a store that keeps no
// records (the runtime then writes no trace, which also reads the clock).
func TestRunInfoStartWithoutRecords(t *testing.T) {
	t.Parallel()
	for _, st := range []agentrt.SessionStore{&agentrt.MemoryStore{}, untracedStore{&agentrt.MemoryStore{}}} {
		var start time.Time
		ag := &agentrt.Agent{Store: st, Planner: agenttest.Script(agenttest.Reply("hi")),
			Hooks: []agentrt.Hooks{{OnRunStart: func(ctx context.Context, run *agentrt.RunInfo) context.Context {
				start = run.Start
				return ctx
			}}}}
		before := time.Now()
		_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.NoError(t, err)
		assert.False(t, start.Before(before), "%T: RunInfo.Start %v is before the run started (%v)", st, start, before)
		assert.False(t, start.After(time.Now()), "%T: RunInfo.Start %v is in the future", st, start)
	}
}

// hookLog records hook calls as "name:stage".
type hookLog struct {
	mu  sync.Mutex
	log []string
}

func (l *hookLog) add(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *hookLog) entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

// hooks returns a Hooks that records its BeforePlan, AfterPlan, BeforeTool
// and AfterTool calls; failPlan and failTool, when set, make its
// BeforePlan or BeforeTool fail with them. An AfterPlan records whether it
// saw an error, an AfterTool the outcome it saw.
func (l *hookLog) hooks(name string, failPlan, failTool func() error) agentrt.Hooks {
	return agentrt.Hooks{
		BeforePlan: func(ctx context.Context, _ *agentrt.ModelRequest) (context.Context, error) {
			l.add(name + ":before-plan")
			if failPlan != nil {
				return ctx, failPlan()
			}
			return ctx, nil
		},
		AfterPlan: func(_ context.Context, _ *agentrt.ModelRequest, _ *agentrt.ModelResponse, err error) {
			l.add(fmt.Sprintf("%s:after-plan(err=%v)", name, err != nil))
		},
		BeforeTool: func(ctx context.Context, _ *agentrt.ToolCall) (context.Context, error) {
			l.add(name + ":before-tool")
			if failTool != nil {
				return ctx, failTool()
			}
			return ctx, nil
		},
		AfterTool: func(_ context.Context, _ *agentrt.ToolCall, out *agentrt.ToolResult) {
			l.add(fmt.Sprintf("%s:after-tool(%q,%v)", name, out.Message.Content, out.Message.IsError))
			out.Message.Content = "changed by " + name // dropped for a blocked call
		},
	}
}

// TestAfterPlanRunsWhenALaterBeforePlanFails shows Hooks.AfterPlan's
// "When the BeforePlan of Agent.Hooks[i] fails, the AfterPlan of each Hooks
// before i is still called (in reverse order, with the failure)": with hooks A, B, C, D
// where C's BeforePlan fails (an error or a panic), A and B see the failure
// in their AfterPlan, B first; C's own AfterPlan is not called (its
// BeforePlan failed), nor is anything of D's; the run ends with an error
// naming the hook.
func TestAfterPlanRunsWhenALaterBeforePlanFails(t *testing.T) {
	t.Parallel()
	refusal := errors.New("refused")
	for name, fail := range map[string]func() error{
		"error": func() error { return refusal },
		"panic": func() error { panic("before plan bug") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var l hookLog
			script := agenttest.Script(agenttest.Reply("never"))
			ag, store := newAgent(script)
			ag.Hooks = []agentrt.Hooks{l.hooks("A", nil, nil), l.hooks("B", nil, nil), l.hooks("C", fail, nil), l.hooks("D", nil, nil)}
			events, _, err := runAgent(t, ag, store, "go")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "hook 2 BeforePlan")
			if name == "error" {
				assert.ErrorIs(t, err, refusal)
			} else {
				var pe *agentrt.PanicError
				assert.ErrorAs(t, err, &pe)
			}
			assert.Equal(t, 1, script.Remaining(), "no planner call")
			done, _ := agenttest.Done(events)
			assert.Equal(t, agentrt.LayerHook, done.Layer)
			assert.Equal(t, []string{
				"A:before-plan", "B:before-plan", "C:before-plan",
				"B:after-plan(err=true)", "A:after-plan(err=true)",
			}, l.entries())
		})
	}
}

// TestAfterToolRunsWhenALaterBeforeToolBlocks shows Hooks.AfterTool's
// "When the BeforeTool of Agent.Hooks[i] blocks the call, the AfterTool of
// each Hooks before i is still called (in reverse order) and sees the
// block": with hooks A, B, C, D
// where C's BeforeTool blocks the call (an error) or panics (which blocks
// it too), A and B see the block in their AfterTool, B first; C's own
// AfterTool and D's BeforeTool and AfterTool are not called, and the tool
// does not run.
//
// Hooks.AfterTool's doc: for a blocked call it sees the block but cannot
// change it. The hooks here change the content; the model sees the block's
// reason all the same.
func TestAfterToolRunsWhenALaterBeforeToolBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fail     func() error
		reason   string // what the AfterTool hooks and the model see
		failures int    // HookFailed events
	}{
		{"error", func() error { return errors.New("not today") }, "not today", 0},
		{"panic", func() error { panic("before tool bug") }, "blocked: a hook failed: panic: before tool bug", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var l hookLog
			ran := false
			tool := agentrt.NewTool("add", "Add.", func(_ context.Context, in AddIn) (int, error) { ran = true; return in.A + in.B, nil }, agentrt.ReadOnly())
			script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("ok"))
			ag, store := newAgent(script, tool)
			// Only the tool hooks: the plan hooks are not at issue here.
			hooks := []agentrt.Hooks{l.hooks("A", nil, nil), l.hooks("B", nil, nil), l.hooks("C", nil, tc.fail), l.hooks("D", nil, nil)}
			for i := range hooks {
				hooks[i].BeforePlan, hooks[i].AfterPlan = nil, nil
			}
			ag.Hooks = hooks
			events, msgs, err := runAgent(t, ag, store, "go")
			require.NoError(t, err, "a blocked call does not end the run")
			assert.False(t, ran, "the blocked call did not run")
			block := fmt.Sprintf("(%q,true)", tc.reason)
			assert.Len(t, agenttest.Filter[agentrt.HookFailed](events), tc.failures)
			assert.Equal(t, []string{
				"A:before-tool", "B:before-tool", "C:before-tool",
				"B:after-tool" + block, `A:after-tool("changed by B",true)`, // each sees the change of the one before
			}, l.entries())
			res := lastResults(events)
			require.Len(t, res, 1)
			assert.True(t, res[0].Message.IsError)
			assert.Contains(t, res[0].Message.Content, tc.reason)
			assert.NotContains(t, res[0].Message.Content, "changed by", "the AfterTool hooks' change of a blocked call's outcome is dropped")
			assert.Equal(t, res[0].Message, msgs[2])
		})
	}
}

// TestAfterHooksOfAHookWithoutItsBefore: "the AfterPlan (AfterTool) of
// each Hooks before i" includes a Hooks that has an AfterPlan (AfterTool)
// but no BeforePlan (BeforeTool), as on a run where nothing fails.
func TestAfterHooksOfAHookWithoutItsBefore(t *testing.T) {
	t.Parallel()
	var l hookLog
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("ok"))
	ag, store := newAgent(script, addTool())
	a, b, c := l.hooks("A", nil, nil), l.hooks("B", nil, nil), l.hooks("C", nil, func() error { return errors.New("blocked") })
	a.BeforeTool, a.BeforePlan = nil, nil // A has only After hooks
	ag.Hooks = []agentrt.Hooks{a, b, c}
	_, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	refusal := errors.New("refused")
	script2 := agenttest.Script(agenttest.Reply("never"))
	ag2, store2 := newAgent(script2)
	c2 := l.hooks("C", func() error { return refusal }, nil)
	ag2.Hooks = []agentrt.Hooks{a, b, c2}
	_, _, err = runAgent(t, ag2, store2, "go")
	require.ErrorIs(t, err, refusal)
	assert.Equal(t, []string{
		// The first run: the plan hooks of turn 1, then the blocked call.
		"B:before-plan", "C:before-plan", "C:after-plan(err=false)", "B:after-plan(err=false)", "A:after-plan(err=false)",
		"B:before-tool", "C:before-tool", `B:after-tool("blocked",true)`, `A:after-tool("changed by B",true)`,
		"B:before-plan", "C:before-plan", "C:after-plan(err=false)", "B:after-plan(err=false)", "A:after-plan(err=false)",
		// The second run: C's BeforePlan fails.
		"B:before-plan", "C:before-plan", "B:after-plan(err=true)", "A:after-plan(err=true)",
	}, l.entries())
}
