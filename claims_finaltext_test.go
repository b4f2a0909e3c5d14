package agentrt_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestClaimFinalTextEmptyWithoutAnAnswer shows README's "Done.FinalText is
// only ever the model's answer; the runtime's own explanation of a stop is
// in Done.Detail" and Done.FinalText's "(empty when it gave none or with
// Agent.NoFinalAnswer)": a run that stops without an answer has an empty
// FinalText, even though the model wrote text along with its tool calls,
// and its Detail says why it stopped.
func TestClaimFinalTextEmptyWithoutAnAnswer(t *testing.T) {
	t.Parallel()
	// A turn whose text is not an answer: it comes with a tool call.
	working := func(id string) agenttest.Step {
		return agenttest.Respond(agentrt.NewAssistantMessage(
			agentrt.TextBlock("let me add "+id),
			agentrt.ToolUseBlock(id, "add", []byte(`{"a":1,"b":2}`))))
	}
	tests := []struct {
		name    string
		steps   []agenttest.Step
		setup   func(ag *agentrt.Agent)
		reason  agentrt.StopReason
		detail  string
		wantErr bool
	}{
		{
			name:   "max turns with NoFinalAnswer",
			steps:  []agenttest.Step{working("c1"), working("c2")},
			setup:  func(ag *agentrt.Agent) { ag.MaxTurns = 2; ag.NoFinalAnswer = true },
			reason: agentrt.StopMaxTurns, detail: "it made 2 turns without a final answer",
		},
		{
			name:   "max turns, the final answer is a tool call without text",
			steps:  []agenttest.Step{working("c1"), agenttest.CallTool("add", `{"a":3,"b":4}`)},
			setup:  func(ag *agentrt.Agent) { ag.MaxTurns = 1 },
			reason: agentrt.StopMaxTurns, detail: "it made 1 turns without a final answer",
		},
		{
			name:   "budget with NoFinalAnswer",
			steps:  []agenttest.Step{working("c1").WithUsage(agentrt.Usage{InputTokens: 100, OutputTokens: 100})},
			setup:  func(ag *agentrt.Agent) { ag.Budget.MaxTokens = 10; ag.NoFinalAnswer = true },
			reason: agentrt.StopBudgetExceeded, detail: "budget_exceeded",
		},
		{
			name:   "planner error",
			steps:  []agenttest.Step{working("c1"), agenttest.Fail(errors.New("model exploded"))},
			reason: agentrt.StopError, detail: "model exploded", wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := agenttest.Script(tc.steps...)
			ag, store := newAgent(script, addTool())
			if tc.setup != nil {
				tc.setup(ag)
			}
			events, msgs, err := runAgent(t, ag, store, "go")
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			script.AssertDone(t)
			done, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, tc.reason, done.Reason)
			assert.Empty(t, done.FinalText, "no answer: FinalText is empty")
			assert.Contains(t, done.Detail, tc.detail, "the runtime's explanation is in Detail")
			// The model did write text in the session.
			assert.Contains(t, msgs[1].Text(), "let me add c1")
		})
	}
}
