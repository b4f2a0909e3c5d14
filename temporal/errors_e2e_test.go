package temporal

import (
	"context"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
)

// TestE2ERunTyped runs RunTyped, the client side of a typed answer,
// against a real Temporal server: an answer that is not the type is sent
// back and retried, one that never is ends as an *agentrt.OutputError.
func TestE2ERunTyped(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name  string
		steps []agenttest.Step
		want  parityTrip
		fails bool
	}{
		{"retried then accepted", []agenttest.Step{
			agenttest.Reply(`not json`),
			agenttest.Reply("Here: ```json\n{\"city\":\"Lisbon\",\"days\":3}\n```"),
		}, parityTrip{City: "Lisbon", Days: 3}, false},
		{"never matches", []agenttest.Step{
			agenttest.Reply(`{"city":1}`),
			agenttest.Reply(`[]`),
		}, parityTrip{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tq := uniqueName(t)
			script := agenttest.Script(tc.steps...)
			w := worker.New(c, tq, worker.Options{})
			require.NoError(t, Register(w, &agentrt.Agent{Instructions: "Plan trips.", Planner: script}, Options{}))
			require.NoError(t, w.Start())
			defer w.Stop()
			rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond}
			trip, err := RunTyped[parityTrip](ctx, rt, "e2e-"+uniqueName(t), "Plan Lisbon.", &agentrt.TypedOptions{MaxRetries: 1})
			if tc.fails {
				var oe *agentrt.OutputError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, "[]", oe.Raw, "the last answer")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, trip)
			assert.Len(t, script.Requests(), 2, "one answer retried")
		})
	}
}

// TestE2EEmptyInput: an empty input on an empty session is
// agentrt.ErrEmptyInput through a real server too.
func TestE2EEmptyInput(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := uniqueName(t)
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, &agentrt.Agent{Planner: agenttest.Script()}, Options{}))
	require.NoError(t, w.Start())
	defer w.Stop()
	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond}
	_, err := agenttest.Collect(rt.Run(ctx, "e2e-"+uniqueName(t), ""))
	require.ErrorIs(t, err, agentrt.ErrEmptyInput)
}
