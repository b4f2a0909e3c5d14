package agentrt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	durableloop "github.com/agentrt/agentrt/internal/durable/loop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runDurable is a tiny durable runtime: it drives a durableLoop synchronously,
// each step where an engine would record it, and returns the session.
func runDurable(ctx context.Context, ag *agentrt.Agent, sessionID string, history []agentrt.Message, input string) ([]agentrt.Message, agentrt.Done, error) {
	lp, err := durableloop.New(ag, sessionID, nil)
	if err != nil {
		return nil, agentrt.Done{}, err
	}
	session, err := lp.Begin(history, input)
	if err != nil {
		return nil, agentrt.Done{}, err
	}
	session = append(history, session...)
	var compaction *agentrt.Compaction
	for {
		// The planner call: an activity of a workflow engine.
		req := lp.Request()
		var out durableloop.PlanOutcome
		force := false
		for attempt := 1; ; attempt++ {
			step, _ := durableloop.New(ag, sessionID, nil)
			out = step.Plan(ctx, req, compaction, force, attempt, nil)
			if out.Compaction != nil {
				compaction = out.Compaction
			}
			if out.Compact {
				force, attempt = true, attempt-1
				continue
			}
			if !out.Retry {
				break
			}
		}
		if out.Err != nil {
			msgs, done := lp.Stop(agentrt.StopError, out.Layer, out.Err)
			return append(session, msgs...), done, out.Err
		}
		msg, calls := lp.Accept(out.Response)
		session = append(session, msg)
		for i := 0; i < len(calls); {
			j := lp.Batch(i)
			for k := i; k < j; k++ {
				var res agentrt.ToolResult
				ran := false
				if lp.Runs(k) {
					step, _ := durableloop.New(ag, sessionID, nil)
					input, denied := step.Decide(ctx, calls[k].Turn, useOf(calls[k]), nil)
					if denied != nil {
						res = *denied
					} else {
						res, ran = step.Execute(ctx, calls[k].Turn, useOf(calls[k]), input, nil)
					}
				}
				session = append(session, lp.Settle(k, res, ran).Message)
			}
			i = j
		}
		more, done, err := lp.Next()
		session = append(session, more...)
		if done != nil {
			return session, *done, err
		}
	}
}

// useOf returns the tool_use block of a call.
func useOf(c agentrt.ToolCall) agentrt.Block {
	return agentrt.ToolUseBlock(c.ToolUseID, c.Tool.Name, c.RawInput)
}

// TestDurableInAPage drives the durable loop synchronously in a page, as a
// durable runtime does with each step in its place.
func TestDurableInAPage(t *testing.T) {
	t.Parallel()
	type CityIn struct {
		City string `json:"city"`
	}
	weather := agentrt.NewTool("weather", "Today's weather in a city.",
		func(ctx context.Context, in CityIn) (string, error) { return "sunny in " + in.City, nil },
		agentrt.ReadOnly())
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{weather},
		Planner: agenttest.Script(
			agenttest.CallTool("weather", `{"city":"Paris"}`),
			agenttest.Reply("It is sunny in Paris."),
		),
	}
	ctx := context.Background()
	var lines []string
	// The loop side, deterministic: a workflow engine runs it in its
	// workflow and replays it after a crash.
	lp, err := durableloop.New(ag, "s1", nil)
	require.NoError(t, err)
	session, err := lp.Begin(nil, "Weather in Paris?")
	require.NoError(t, err)
	for {
		// The step side, with side effects: an engine runs each step as an
		// activity and records its result. Here they run in place.
		step, err := durableloop.New(ag, "s1", nil)
		require.NoError(t, err)
		out := step.Plan(ctx, lp.Request(), nil, false, 1, nil)
		if out.Err != nil {
			msgs, done := lp.Stop(agentrt.StopError, out.Layer, out.Err)
			session = append(session, msgs...)
			lines = append(lines, string(done.Reason))
			break
		}
		msg, calls := lp.Accept(out.Response)
		session = append(session, msg)
		for i, c := range calls { // one call at a time: Batch groups them
			var res agentrt.ToolResult
			ran := false
			if lp.Runs(i) {
				input, denied := step.Decide(ctx, c.Turn, useOf(c), nil)
				if denied != nil {
					res = *denied
				} else {
					res, ran = step.Execute(ctx, c.Turn, useOf(c), input, nil)
				}
			}
			session = append(session, lp.Settle(i, res, ran).Message)
		}
		if _, done, _ := lp.Next(); done != nil {
			lines = append(lines, fmt.Sprint(done.Reason, " ", done.Turns))
			break
		}
	}
	for _, m := range session {
		lines = append(lines, m.String())
	}
	assert.Equal(t, []string{
		"complete 2",
		"user: Weather in Paris?",
		`assistant: [tool_use call_1 weather {"city":"Paris"}]`,
		"tool call_1: sunny in Paris",
		"assistant: It is sunny in Paris.",
	}, lines)
}

// TestDurableMatchesRun drives the same scenarios through Run and through
// a durableLoop: the sessions and the Done events are the same.
func TestDurableMatchesRun(t *testing.T) {
	t.Parallel()
	type noteIn struct {
		Text string `json:"text"`
	}
	tools := func() []agentrt.Tool {
		return []agentrt.Tool{
			agentrt.NewTool("echo", "Echo.", func(_ context.Context, in noteIn) (string, error) { return in.Text, nil }, agentrt.ReadOnly()),
			agentrt.NewTool("save", "Save.", func(_ context.Context, in noteIn) (string, error) { return "saved " + in.Text, nil }),
			agentrt.NewTool("boom", "Panic.", func(_ context.Context, in noteIn) (string, error) { panic("boom") }, agentrt.ReadOnly()),
			agentrt.NewTool("shot", "Screenshot.", func(_ context.Context, in noteIn) ([]agentrt.Block, error) {
				return []agentrt.Block{agentrt.TextBlock(in.Text), agentrt.ImageBlock("image/png", agenttest.PNG)}, nil
			}, agentrt.ReadOnly()),
		}
	}
	loopScript := func() []agenttest.Step {
		var steps []agenttest.Step
		for range 8 {
			steps = append(steps, agenttest.CallTool("echo", `{"text":"same"}`))
		}
		return steps
	}
	tests := []struct {
		name  string
		steps func() []agenttest.Step
		agent func(*agentrt.Agent)
	}{
		{name: "parallel reads, adversarial ids", steps: func() []agenttest.Step {
			return []agenttest.Step{
				agenttest.CallTools(
					agenttest.ToolUse("echo", `{"text":"a"}`).WithID("x"),
					agenttest.ToolUse("echo", `{"text":"b"}`).WithID("x"),
					agenttest.ToolUse("echo", `{"text":"c"}`).WithID(""),
					agenttest.ToolUse("nope", `{}`).WithID("agentrt_t1_1"),
					agenttest.ToolUse("echo", `{bad`).WithID("y"),
					agenttest.ToolUse("boom", `{}`).WithID("z"),
				),
				agenttest.CallTool("echo", `{"text":"d"}`).WithUsage(agentrt.Usage{InputTokens: 5}),
				agenttest.Reply("done"),
			}
		}},
		{name: "write denied, then allowed with a rewrite", steps: func() []agenttest.Step {
			return []agenttest.Step{agenttest.CallTool("save", `{"text":"a"}`), agenttest.CallTool("save", `{"text":"b"}`), agenttest.Reply("ok")}
		}, agent: func(ag *agentrt.Agent) {
			n := 0
			ag.Permission = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
				n++
				if n == 1 {
					return agentrt.Decision{Reason: "no"}, nil
				}
				return agentrt.Decision{Allow: true, Input: noteIn{Text: "rewritten"}}, nil
			})
		}},
		{name: "hook blocks", steps: func() []agenttest.Step {
			return []agenttest.Step{agenttest.CallTool("echo", `{"text":"a"}`), agenttest.Reply("ok")}
		}, agent: func(ag *agentrt.Agent) {
			ag.Hooks = []agentrt.Hooks{{BeforeTool: func(ctx context.Context, _ *agentrt.ToolCall) (context.Context, error) {
				return ctx, errors.New("not today")
			}}}
		}},
		{name: "loop guard", steps: loopScript},
		{name: "a tool result with an image", steps: func() []agenttest.Step {
			return []agenttest.Step{agenttest.CallTool("shot", `{"text":"the screen"}`), agenttest.Reply("a pixel")}
		}},
		{name: "max turns final answer", steps: func() []agenttest.Step {
			return append(loopScript()[:2], agenttest.Reply("partial"))
		}, agent: func(ag *agentrt.Agent) { ag.MaxTurns = 2; ag.LoopGuard.Disabled = true }},
		{name: "token budget final answer", steps: func() []agenttest.Step {
			return []agenttest.Step{
				agenttest.CallTool("echo", `{"text":"a"}`).WithUsage(agentrt.Usage{InputTokens: 100}),
				agenttest.Reply("partial"),
			}
		}, agent: func(ag *agentrt.Agent) { ag.Budget.MaxTokens = 50 }},
		{name: "planner fails", steps: func() []agenttest.Step {
			return []agenttest.Step{agenttest.CallTool("echo", `{"text":"a"}`), agenttest.Fail(errors.New("broken"))}
		}},
		{name: "output cap", steps: func() []agenttest.Step {
			return []agenttest.Step{agenttest.CallTool("echo", `{"text":"0123456789"}`), agenttest.Reply("ok")}
		}, agent: func(ag *agentrt.Agent) { ag.MaxToolOutput = 4 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mk := func() *agentrt.Agent {
				ag := &agentrt.Agent{Tools: tools(), Planner: agenttest.Script(tt.steps()...), Store: &agentrt.MemoryStore{}}
				if tt.agent != nil {
					tt.agent(ag)
				}
				return ag
			}
			ctx := context.Background()
			in := mk()
			evs, runErr := agenttest.Collect(in.Run(ctx, "s", "go"))
			want, err := in.Store.Load(ctx, "s")
			require.NoError(t, err)
			wantDone, ok := agenttest.Done(evs)
			require.True(t, ok)

			got, done, err := runDurable(ctx, mk(), "s", nil, "go")
			agenttest.AssertInvariants(t, got)
			assert.Equal(t, want, got)
			assert.Equal(t, wantDone, done)
			if runErr == nil {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, runErr.Error())
			}
		})
	}
}

func TestDurableResumeAndErrors(t *testing.T) {
	t.Parallel()
	_, err := durableloop.New(&agentrt.Agent{}, "s", nil)
	require.ErrorIs(t, err, agentrt.ErrNoPlanner)
	_, err = durableloop.New(&agentrt.Agent{Planner: agenttest.Script(), Tools: []agentrt.Tool{nil}}, "s", nil)
	require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
	// A setting that cannot hold is refused here as by Run.
	_, err = durableloop.New(&agentrt.Agent{Planner: agenttest.Script(), Budget: agentrt.Budget{MaxCost: 1}}, "s", nil)
	require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
	assert.ErrorContains(t, err, "Budget.Prices is zero")

	lp, err := durableloop.New(&agentrt.Agent{Planner: agenttest.Script()}, "s", nil)
	require.NoError(t, err)
	_, err = lp.Begin(nil, "")
	require.ErrorIs(t, err, agentrt.ErrEmptyInput)

	// A session a crash left with an open tool_use is repaired first.
	open := []agentrt.Message{agentrt.NewUserMessage("hi"), {Role: agentrt.RoleAssistant, Blocks: []agentrt.Block{agentrt.ToolUseBlock("a", "x", nil)}}}
	lp, err = durableloop.New(&agentrt.Agent{Planner: agenttest.Script()}, "s", nil)
	require.NoError(t, err)
	msgs, err := lp.Begin(open, "")
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.True(t, msgs[0].IsError)
	assert.Equal(t, "a", msgs[0].ToolUseID)

	// Stop answers the open calls of the turn.
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.CallTools(agenttest.ToolUse("x", `{}`), agenttest.ToolUse("y", `{}`)))}
	lp, err = durableloop.New(ag, "s", nil)
	require.NoError(t, err)
	_, err = lp.Begin(nil, "go")
	require.NoError(t, err)
	step, _ := durableloop.New(ag, "s", nil)
	out := step.Plan(context.Background(), lp.Request(), nil, false, 1, nil)
	require.NoError(t, out.Err)
	_, calls := lp.Accept(out.Response)
	require.Len(t, calls, 2)
	lp.Settle(0, agentrt.ToolResult{}, false)
	cause := fmt.Errorf("agentrt: run cancelled: %w", context.Canceled)
	rest, done := lp.Stop(agentrt.StopCancelled, agentrt.LayerCancellation, cause)
	require.Len(t, rest, 1)
	assert.Equal(t, calls[1].ToolUseID, rest[0].ToolUseID)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	assert.Equal(t, "The run stopped: "+cause.Error(), done.Detail)
}
