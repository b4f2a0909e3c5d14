package agenttest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func TestScriptAfterSkipsOneStepPerAssistantMessage(t *testing.T) {
	t.Parallel()
	a := agentrt.NewAssistantMessage(agentrt.TextBlock("x"))
	u := agentrt.NewUserMessage("u")
	steps := []agenttest.Step{agenttest.Reply("1"), agenttest.Reply("2"), agenttest.Reply("3")}
	for _, tt := range []struct {
		name      string
		history   []agentrt.Message
		remaining int
	}{
		{"no session", nil, 3},
		{"users only", []agentrt.Message{u, u}, 3},
		{"two answers", []agentrt.Message{u, a, u, a}, 1},
		{"more answers than steps", []agentrt.Message{a, a, a, a}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := agenttest.ScriptAfter(tt.history, steps...)
			assert.Equal(t, tt.remaining, p.Remaining())
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{})
			if tt.remaining == 0 {
				require.ErrorIs(t, err, agenttest.ErrScriptExhausted)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"1", "2", "3"}[3-tt.remaining], resp.Message.Text())
		})
	}
}
