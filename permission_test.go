package agentrt_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestInvalidPatternRemembersNothing shows Decision.Pattern's "An
// invalid pattern remembers nothing": an "always" answer with a pattern
// that does not compile is asked again on the next call, while one with a
// valid pattern that matches is not.
func TestInvalidPatternRemembersNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		asked   int
	}{
		{`"path":"notes/`, 1},
		{`"path":(`, 2},
	} {
		asked := 0
		ask := func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
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

// AskOnWrite does not ask a person again about their own edit: the
// runtime decides an edited input again (ToolCall.EditedBy), and the
// person already decided it.
func TestAskOnWriteDoesNotAskAboutAnEdit(t *testing.T) {
	t.Parallel()
	asked := 0
	checker := agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		asked++
		return agentrt.Decision{Reason: "no"}, nil
	})
	d, err := checker.Check(context.Background(), &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write"}, EditedBy: "alice"})
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Zero(t, asked)
	d, err = checker.Check(context.Background(), &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write"}})
	require.NoError(t, err)
	assert.False(t, d.Allow)
	assert.Equal(t, 1, asked, "the model's input is asked about")
}
