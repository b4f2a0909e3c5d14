package agentrt_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func repeat(n int, step func(i int) agenttest.Step) []agenttest.Step {
	steps := make([]agenttest.Step, n)
	for i := range steps {
		steps[i] = step(i)
	}
	return steps
}

func TestLoopGuardWarnsThenStops(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(repeat(6, func(int) agenttest.Step { return agenttest.CallTool("add", `{"a":1, "b":2}`) })...)
	ag, store := newAgent(script, addTool())
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 5, "stopped at the 5th identical call")
	assert.Equal(t, "3", res[1].Message.Content, "no note before the 3rd")
	assert.Contains(t, res[2].Message.Content, "this is the 3rd identical call")
	assert.Contains(t, res[4].Message.Content, "5th identical call")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopLoopDetected, done.Reason)
	assert.ErrorIs(t, done.Err(), agentrt.ErrLoopDetected)
	assert.Contains(t, done.Detail, "same result 5 times")
	assert.Equal(t, 1, script.Remaining())
}

func TestLoopGuardPingPong(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(repeat(12, func(i int) agenttest.Step {
		if i%2 == 0 {
			return agenttest.CallTool("add", `{"a":1,"b":2}`)
		}
		return agenttest.CallTool("add", `{"b":4,"a":3}`)
	})...)
	ag, store := newAgent(script, addTool())
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopLoopDetected, done.Reason)
	assert.Equal(t, 9, done.Turns, "A,B,A,B,... stops at the 5th A")
}

func TestLoopGuardNoFalsePositive(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	counter := agentrt.NewTool("next", "Next number.", func(context.Context, struct{}) (int32, error) { return n.Add(1), nil }, agentrt.ReadOnly())
	steps := repeat(10, func(int) agenttest.Step { return agenttest.CallTool("next", `{}`) })
	script := agenttest.Script(append(steps, agenttest.Reply("counted"))...)
	ag, store := newAgent(script, counter)
	events, _, err := runAgent(t, ag, store, "count")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	for _, r := range lastResults(events) {
		assert.NotContains(t, r.Message.Content, "identical call")
	}
	// And the guard can be switched off.
	script = agenttest.Script(append(repeat(6, func(int) agenttest.Step { return agenttest.CallTool("add", `{"a":1,"b":2}`) }), agenttest.Reply("ok"))...)
	ag, store = newAgent(script, addTool())
	ag.LoopGuard.Disabled = true
	events, _, err = runAgent(t, ag, store, "go")
	require.NoError(t, err)
	done, _ = agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
}

func TestToolOutputTruncated(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", 100) // 200 bytes
	tool := agentrt.NewTool("big", "Big output.", func(context.Context, struct{}) (string, error) { return big, nil }, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("big", `{}`), agenttest.Reply("ok"))
	ag, store := newAgent(script, tool)
	ag.MaxToolOutput = 51
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 1)
	assert.Equal(t, strings.Repeat("é", 25)+"\n[agentrt: output truncated: showing the first 50 of 200 bytes]", res[0].Message.Content)
	assert.Equal(t, big, res[0].FullOutput)
	assert.Equal(t, res[0].Message, msgs[2], "the session keeps what the model saw")
}

func rateLimited() error {
	return &agentrt.ProviderError{Provider: "fake", StatusCode: 429, Kind: agentrt.ErrRateLimited, RetryAfter: time.Millisecond}
}

func TestPlannerRetriedOnTransientError(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.Fail(rateLimited()), agenttest.Reply("ok after retry"))
	ag, store := newAgent(script)
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	retries := agenttest.Filter[agentrt.PlannerRetry](events)
	require.Len(t, retries, 1)
	assert.Equal(t, time.Millisecond, retries[0].Delay, "Retry-After is honoured")
	assert.ErrorIs(t, retries[0].Err, agentrt.ErrRateLimited)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "ok after retry", done.FinalText)
}

func TestPlannerErrorNotRetryable(t *testing.T) {
	t.Parallel()
	bad := &agentrt.ProviderError{Provider: "fake", StatusCode: 400, Kind: agentrt.ErrInvalidRequest, Message: "bad schema"}
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Fail(bad), agenttest.Reply("never"))
	ag, store := newAgent(script, addTool())
	events, msgs, err := runAgent(t, ag, store, "go")
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 400, pe.StatusCode)
	assert.Empty(t, agenttest.Filter[agentrt.PlannerRetry](events))
	assert.Len(t, msgs, 3)
	// Retries give up after MaxAttempts.
	script = agenttest.Script(agenttest.Fail(rateLimited()), agenttest.Fail(rateLimited()), agenttest.Reply("never"))
	ag, store = newAgent(script)
	ag.Retry.MaxAttempts = 2
	events, _, err = runAgent(t, ag, store, "go")
	require.ErrorIs(t, err, agentrt.ErrRateLimited)
	assert.Len(t, agenttest.Filter[agentrt.PlannerRetry](events), 1)
}

func TestBudgetTokensWithFinalAnswer(t *testing.T) {
	t.Parallel()
	u := agentrt.Usage{InputTokens: 400, OutputTokens: 100}
	script := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`).WithUsage(u),
		agenttest.CallTool("add", `{"a":3,"b":4}`).WithUsage(u),
		agenttest.Reply("partial answer: 3 and 7").WithUsage(u),
	)
	ag, store := newAgent(script, addTool())
	ag.Budget = agentrt.Budget{MaxTokens: 1000}
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopBudgetExceeded, done.Reason)
	assert.ErrorIs(t, done.Err(), agentrt.ErrBudgetExceeded)
	assert.Equal(t, "partial answer: 3 and 7", done.FinalText)
	assert.Equal(t, 1500, done.Usage.Total())
	script.AssertDone(t)
}

func TestBudgetCostFinalAnswerMayNotCallTools(t *testing.T) {
	t.Parallel()
	u := agentrt.Usage{InputTokens: 1_000_000}
	script := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`).WithUsage(u),
		agenttest.CallTool("add", `{"a":3,"b":4}`), // ignores the instruction
	)
	ag, store := newAgent(script, addTool())
	ag.Budget = agentrt.Budget{MaxCost: 2, Prices: agentrt.Prices{Input: 2.5}}
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopBudgetExceeded, done.Reason)
	assert.Contains(t, done.Detail, "cost budget (2.5000 of 2.0000 spent)")
	assert.Equal(t, "not run: the run reached a limit and is over", msgs[len(msgs)-1].Content)
}

func TestBudgetTime(t *testing.T) {
	t.Parallel()
	hang := agentrt.NewTool("hang", "Hangs.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("hang", `{}`), agenttest.Reply("never"))
	ag, store := newAgent(script, hang)
	ag.Budget.MaxDuration = time.Millisecond
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err, "a budget stop is not an error of the run")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopBudgetExceeded, done.Reason)
	assert.Contains(t, done.Detail, "time budget of 1ms")
	assert.Len(t, msgs, 3)
	assert.True(t, msgs[2].IsError)
}

func TestPricesCost(t *testing.T) {
	t.Parallel()
	p := agentrt.Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	c := p.Cost(agentrt.Usage{InputTokens: 11000, OutputTokens: 200, CacheReadTokens: 10000, CacheWriteTokens: 0})
	assert.InDelta(t, 0.003+0.003+0.003, c, 1e-12)
}
