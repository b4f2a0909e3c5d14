package agentrt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// claimHookLog records hook calls as "name:stage".
type claimHookLog struct {
	mu  sync.Mutex
	log []string
}

func (l *claimHookLog) add(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *claimHookLog) entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

// hooks returns a Hooks that records its BeforePlan, AfterPlan, BeforeTool
// and AfterTool calls; failPlan and failTool, when set, make its
// BeforePlan or BeforeTool fail with them. An AfterPlan records whether it
// saw an error, an AfterTool the outcome it saw.
func (l *claimHookLog) hooks(name string, failPlan, failTool func() error) agentrt.Hooks {
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
		BeforeTool: func(ctx context.Context, _ *agentrt.ToolInvocation) (context.Context, error) {
			l.add(name + ":before-tool")
			if failTool != nil {
				return ctx, failTool()
			}
			return ctx, nil
		},
		AfterTool: func(_ context.Context, _ *agentrt.ToolInvocation, out *agentrt.ToolOutcome) {
			l.add(fmt.Sprintf("%s:after-tool(%q,%v)", name, out.Content, out.IsError))
			out.Content = "changed by " + name // dropped for a blocked call
		},
	}
}

// TestClaimAfterPlanRunsWhenALaterBeforePlanFails shows Hooks.AfterPlan's
// "When the BeforePlan of Agent.Hooks[i] fails, the AfterPlan of each Hooks
// before i is still called (in reverse order, with the failure)": with hooks A, B, C, D
// where C's BeforePlan fails (an error or a panic), A and B see the failure
// in their AfterPlan, B first; C's own AfterPlan is not called (its
// BeforePlan failed), nor is anything of D's; the run ends with an error
// naming the hook.
func TestClaimAfterPlanRunsWhenALaterBeforePlanFails(t *testing.T) {
	t.Parallel()
	refusal := errors.New("refused")
	for name, fail := range map[string]func() error{
		"error": func() error { return refusal },
		"panic": func() error { panic("before plan bug") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var l claimHookLog
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

// TestClaimAfterToolRunsWhenALaterBeforeToolBlocks shows Hooks.AfterTool's
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
func TestClaimAfterToolRunsWhenALaterBeforeToolBlocks(t *testing.T) {
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
			var l claimHookLog
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

// TestClaimAfterHooksOfAHookWithoutItsBefore: "the AfterPlan (AfterTool) of
// each Hooks before i" includes a Hooks that has an AfterPlan (AfterTool)
// but no BeforePlan (BeforeTool), as on a run where nothing fails.
func TestClaimAfterHooksOfAHookWithoutItsBefore(t *testing.T) {
	t.Parallel()
	var l claimHookLog
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
