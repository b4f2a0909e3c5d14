package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	agenttemporal "github.com/agentrt/agentrt/temporal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

const question = "What is the sum of today's temperatures in Beijing and Shanghai? Save it in a note."

// The example's agent runs in-process, unchanged but for its permission
// checker (no terminal in a test).
func TestInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ag, err := newAgent(dir, 0)
	require.NoError(t, err)
	ag.Permission = agentrt.AllowAll()
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", question))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C. I saved it in sum.txt.", done.FinalText)
	b, err := os.ReadFile(filepath.Join(dir, "sum.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Beijing 12°C + Shanghai 17.5°C = 29.5°C\n", string(b))
}

// On Temporal (the SDK's test environment), the write waits for a denial.
func TestOnTemporalDenied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ag, err := newAgent(dir, 0)
	require.NoError(t, err)
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	require.NoError(t, agenttemporal.Register(env, ag, agenttemporal.Options{Policy: agenttemporal.PolicyAsk}))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(agenttemporal.SignalApprove, agentrt.Decision{ToolUseID: "call_3_0", Reason: "not now"})
	}, time.Hour)
	env.ExecuteWorkflow(agenttemporal.WorkflowName("weather"), agenttemporal.RunInput{SessionID: "s1", Input: question})
	var res agenttemporal.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	agenttest.AssertInvariants(t, res.Messages)
	assert.Equal(t, "Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C. I could not save the note: permission denied: the user refused this call of \"save_note\": not now", res.FinalText)
	_, err = os.Stat(filepath.Join(dir, "sum.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
