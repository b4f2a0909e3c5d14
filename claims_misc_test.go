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
