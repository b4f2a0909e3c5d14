package temporal

import (
	"log/slog"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// replayHistory is the history of the end-to-end run of the seed's task
// (weather ×2, calculator killed with its worker and retried on another,
// save_note approved by a signal), recorded from a real Temporal server by
// `AGENTRT_TEMPORAL_RECORD=1 ./ci.sh`.
const replayHistory = "testdata/seed_restart_approval.json"

// replayRegistry lets Register register on a WorkflowReplayer, which runs
// no activities.
type replayRegistry struct{ worker.WorkflowReplayer }

func (replayRegistry) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

func replayAgent() *agentrt.Agent {
	f := &e2eFixture{calcStarted: make(chan struct{})}
	return f.agent(agenttest.Script()) // replay calls no activity
}

func quietLogger() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

func TestReplay(t *testing.T) {
	t.Parallel()
	r := worker.NewWorkflowReplayer()
	require.NoError(t, Register(replayRegistry{r}, replayAgent(), e2eOptions))
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), replayHistory))
}

// TestReplayDetectsNonDeterminism proves that the replay test can fail:
// workflow code that issues other commands than the recorded ones is
// reported as non-deterministic. (The SDK does not compare activity type
// names or inputs on replay, only the sequence of commands.)
func TestReplayDetectsNonDeterminism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(ag *agentrt.Agent)
	}{
		// The read-only weather calls now run one after the other.
		{name: "tool order", change: func(ag *agentrt.Agent) { ag.MaxParallelTools = 1 }},
		// A tool was removed: its call becomes an "unknown tool" result
		// without an activity.
		{name: "tool removed", change: func(ag *agentrt.Agent) { ag.Tools = ag.Tools[:2] }},
		// The run stops one turn earlier.
		{name: "max turns", change: func(ag *agentrt.Agent) { ag.MaxTurns = 2; ag.NoFinalAnswer = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ag := replayAgent()
			tt.change(ag)
			d, err := newDefinition(ag, e2eOptions)
			require.NoError(t, err)
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(d.workflow, workflow.RegisterOptions{Name: WorkflowName("")})
			err = r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), replayHistory)
			require.Error(t, err)
			// TMPRL1100 is the SDK's code for a non-determinism error.
			require.Contains(t, err.Error(), "[TMPRL1100]")
		})
	}
}
