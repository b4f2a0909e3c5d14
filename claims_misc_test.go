package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestClaimHasToolUseDoesNotAllocate shows Message.HasToolUse's "Unlike
// ToolUses it does not allocate".
func TestClaimHasToolUseDoesNotAllocate(t *testing.T) {
	msg := agentrt.NewAssistantMessage(agentrt.TextBlock("let me see"), agentrt.ToolUseBlock("c1", "add", json.RawMessage(`{}`)))
	var has bool
	allocs := testing.AllocsPerRun(100, func() { has = msg.HasToolUse() })
	assert.True(t, has)
	assert.Zero(t, allocs)
}

// badNameTool is a hand-written Tool whose name the model could not call.
type badNameTool struct{}

func (badNameTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "read file", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (badNameTool) Decode(raw json.RawMessage) (any, error)      { return raw, nil }
func (badNameTool) Execute(context.Context, any) (string, error) { return "", nil }

// TestClaimInvalidToolNameIsAnInvalidAgent: a Tool whose Spec has a name
// outside ^[a-zA-Z0-9_-]{1,64}$ makes the Agent invalid (ErrInvalidAgent),
// reported by every Run, with no planner call.
func TestClaimInvalidToolNameIsAnInvalidAgent(t *testing.T) {
	t.Parallel()
	script := agenttest.Script()
	ag := &agentrt.Agent{Planner: script, Tools: []agentrt.Tool{badNameTool{}}}
	for range 2 {
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
		assert.Contains(t, err.Error(), `"read file"`)
		assert.Empty(t, events)
	}
	assert.Empty(t, script.Requests())
}

// TestClaimInvalidPatternRemembersNothing shows Decision.Pattern's "An
// invalid pattern remembers nothing": an "always" answer with a pattern
// that does not compile is asked again on the next call, while one with a
// valid pattern that matches is not.
func TestClaimInvalidPatternRemembersNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		asked   int
	}{
		{`"path":"notes/`, 1},
		{`"path":(`, 2},
	} {
		asked := 0
		ask := func(context.Context, *agentrt.ToolInvocation) (agentrt.Decision, error) {
			asked++
			return agentrt.Decision{Allow: true, Always: true, Pattern: tc.pattern}, nil
		}
		script := agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"notes/a.txt","text":"a"}`),
			agenttest.CallTool("write_file", `{"path":"notes/b.txt","text":"b"}`),
			agenttest.Reply("done"))
		write := agentrt.NewTool("write_file", "Write a file.", func(context.Context, WriteIn) (string, error) { return "ok", nil })
		ag, _ := newAgent(script, write)
		ag.Permission = agentrt.AskOnWrite(ask)
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "write two notes"))
		require.NoError(t, err)
		for _, r := range agenttest.Filter[agentrt.ToolResult](events) {
			assert.False(t, r.Message.IsError, r.Message.Content)
		}
		assert.Equal(t, tc.asked, asked, "pattern %s", tc.pattern)
	}
}

// failingAfterCancel is a MemoryStore that cannot append the result of
// call_2 once the run was cancelled: the stop cannot answer that call.
type failingAfterCancel struct {
	*agentrt.MemoryStore
	ctx context.Context
}

var errDiskFull = errors.New("disk full")

func (s failingAfterCancel) Append(ctx context.Context, id string, m agentrt.Message) error {
	if s.ctx.Err() != nil && m.ToolUseID == "call_2" {
		return errDiskFull
	}
	return s.MemoryStore.Append(ctx, id, m)
}

// TestStoreFailureAtACancelledStopIsReported: when a cancelled run's stop
// cannot store the results of the calls it answers, the run still ends
// cancelled, and its error wraps both the cancellation and the store's
// failure, so that the caller learns the session has calls left open
// (the next run answers them).
func TestStoreFailureAtACancelledStopIsReported(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("cancel", `{}`), agenttest.ToolUse("add", `{"a":1,"b":2}`)),
		agenttest.Reply("never"))
	mem := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: script, Tools: []agentrt.Tool{claimCanceller(&cancel), addTool()}, MaxParallelTools: 1,
		Store: failingAfterCancel{MemoryStore: mem, ctx: ctx}}
	events, err := agenttest.Collect(ag.Run(ctx, "s", "go"))
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, errDiskFull, "the store's failure is not dropped")

	// The next run answers the calls left open.
	next := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("ok")), Store: mem}
	_, err = agenttest.Collect(next.Run(context.Background(), "s", "again"))
	require.NoError(t, err)
	msgs, err := mem.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
}
