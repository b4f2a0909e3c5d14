package agentrt_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// claimTexts returns the messages of a request as "role:text".
func claimTexts(req agentrt.ModelRequest) []string {
	var out []string
	for _, m := range req.Messages {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return out
}

// TestClaimNilStoreKeepsSessionsInMemory shows Agent.Store's "Nil means an
// in-memory store owned by this Agent (sessions live as long as the Agent
// value)": a second Run on the same session id continues the first run's
// conversation, and another session id starts afresh.
func TestClaimNilStoreKeepsSessionsInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	script := agenttest.Script(agenttest.Reply("one"), agenttest.Reply("two"), agenttest.Reply("three"))
	ag := &agentrt.Agent{Planner: script}
	for _, run := range []struct{ session, input string }{{"s1", "first"}, {"s1", "second"}, {"s2", "other"}} {
		_, err := agenttest.Collect(ag.Run(ctx, run.session, run.input))
		require.NoError(t, err)
	}
	reqs := script.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"user:first"}, claimTexts(reqs[0]))
	assert.Equal(t, []string{"user:first", "assistant:one", "user:second"}, claimTexts(reqs[1]), "the second run sees the first run's messages")
	assert.Equal(t, []string{"user:other"}, claimTexts(reqs[2]), "another session starts empty")
	// An empty input continues the session, which the Agent still holds.
	script2 := agenttest.Script(agenttest.Reply("again"))
	ag2 := &agentrt.Agent{Planner: script2}
	_, err := agenttest.Collect(ag2.Run(ctx, "s1", "hello"))
	require.NoError(t, err)
	_, err = agenttest.Collect(ag2.Run(ctx, "s1", ""))
	require.ErrorIs(t, err, agenttest.ErrScriptExhausted, "the empty input did not fail with ErrEmptyInput: the session exists")
}

// TestClaimAgentFieldsFrozenAtTheFirstRun shows Agent's "Every field is
// frozen at the first Run": after it, a change to the Planner, Name,
// Retry, Instructions, Tools or MaxTurns is not seen.
func TestClaimAgentFieldsFrozenAtTheFirstRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var names []string
	first := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("one"),
		agenttest.Fail(rateLimited()), agenttest.CallTool("add", `{"a":3,"b":4}`), agenttest.CallTool("add", `{"a":5,"b":6}`), agenttest.Reply("done"))
	ag := &agentrt.Agent{Name: "first", Instructions: "original", Planner: first, Tools: []agentrt.Tool{addTool()}, MaxTurns: 5,
		Retry: agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond},
		Hooks: []agentrt.Hooks{{OnRunStart: func(ctx context.Context, run *agentrt.RunInfo) context.Context {
			names = append(names, run.Agent)
			return ctx
		}}}}
	_, err := agenttest.Collect(ag.Run(ctx, "s1", "first"))
	require.NoError(t, err)

	second := agenttest.Script(agenttest.Reply("never"))
	ag.Planner = second
	ag.Name = "renamed"
	ag.Retry = agentrt.RetryPolicy{MaxAttempts: 1} // no retry
	ag.Instructions = "changed"
	ag.Tools = []agentrt.Tool{agentrt.NewTool("other", "Other.", func(context.Context, struct{}) (string, error) { return "", nil }, agentrt.ReadOnly())}
	ag.MaxTurns = 1
	events, err := agenttest.Collect(ag.Run(ctx, "s1", "second"))
	require.NoError(t, err, "the frozen Retry (2 attempts) retried the rate limit")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason, "the frozen MaxTurns (5), not 1")
	assert.Len(t, agenttest.Filter[agentrt.PlannerRetry](events), 1)
	res := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, res, 2)
	assert.Equal(t, "7", res[0].Message.Content, "the frozen tool index: add, not other")
	assert.Empty(t, second.Requests(), "the frozen Planner")
	req := first.Requests()[len(first.Requests())-1]
	assert.Equal(t, "original", req.System, "the frozen instructions")
	require.Len(t, req.Tools, 1)
	assert.Equal(t, "add", req.Tools[0].Name, "the frozen tool specs")
	assert.Equal(t, "user:first", claimTexts(req)[0], "the same in-memory sessions")
	assert.Equal(t, []string{"first", "first"}, names, "the frozen Name")
}
