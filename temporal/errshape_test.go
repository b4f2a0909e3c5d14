package temporal

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

// A run's error on Temporal carries the typed errors an in-process run's
// does: errors.As finds the *agentrt.ProviderError (its kind works with
// errors.Is), the *agentrt.PanicError of a planner that panicked, the
// *agentrt.OutputError of a typed answer that never matched, with the
// same fields.
func TestRunErrorKeepsItsTypes(t *testing.T) {
	t.Parallel()
	authErr := &agentrt.ProviderError{Provider: "openai", StatusCode: 401, Code: "invalid_api_key",
		Message: "Incorrect API key", Kind: agentrt.ErrAuth, Err: errors.New("401 Unauthorized")}
	schema := []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)
	for _, tc := range []struct {
		name   string
		step   agenttest.Step
		output []byte
		check  func(t *testing.T, err error)
	}{
		{"provider error", agenttest.Fail(authErr), nil, func(t *testing.T, err error) {
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "openai", pe.Provider)
			assert.Equal(t, 401, pe.StatusCode)
			assert.Equal(t, "invalid_api_key", pe.Code)
			assert.Equal(t, "Incorrect API key", pe.Message)
			assert.ErrorIs(t, err, agentrt.ErrAuth)
			assert.EqualError(t, pe.Err, "401 Unauthorized")
		}},
		{"rate limited", agenttest.Fail(&agentrt.ProviderError{Provider: "anthropic", StatusCode: 429, Kind: agentrt.ErrRateLimited, RetryAfter: 3 * time.Second}), nil, func(t *testing.T, err error) {
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, agentrt.ErrRateLimited)
			assert.Equal(t, 3*time.Second, pe.RetryAfter)
		}},
		{"planner panic", agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			panic("boom")
		}), nil, func(t *testing.T, err error) {
			var xe *agentrt.PanicError
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, "boom", xe.Value)
		}},
		{"output never matches", agenttest.Reply(`[]`), schema, func(t *testing.T, err error) {
			var oe *agentrt.OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "[]", oe.Raw)
			require.Error(t, oe.Err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps := []agenttest.Step{tc.step}
			retry := agentrt.RetryPolicy{MaxAttempts: 1}
			ag := &agentrt.Agent{Planner: agenttest.Script(steps...), Retry: retry}

			// In-process first: the same checks hold there.
			var inErr error
			if tc.output != nil {
				type city struct {
					City string `json:"city"`
				}
				_, inErr = agentrt.RunTyped[city](context.Background(), ag, "s", "go", &agentrt.TypedOptions{MaxRetries: -1})
			} else {
				_, inErr = agenttest.Collect(ag.Run(context.Background(), "s", "go"))
			}
			require.Error(t, inErr)
			tc.check(t, inErr)

			tag := &agentrt.Agent{Planner: agenttest.Script(steps...), Retry: retry}
			env := newEnv(t, tag, Options{})
			env.ExecuteWorkflow(WorkflowName(tag.Name), RunInput{SessionID: "s", Input: "go", Output: tc.output, OutputRetries: -1})
			require.True(t, env.IsWorkflowCompleted())
			werr := env.GetWorkflowError()
			require.Error(t, werr)
			err := runError(werr)
			assert.Equal(t, werr.Error(), err.Error(), "the text is the workflow error's")
			tc.check(t, err)
		})
	}
}

// An early failure of the workflow is the same sentinel error as
// in-process: an empty input on an empty session is ErrEmptyInput.
func TestRunErrorEarlyFailures(t *testing.T) {
	t.Parallel()
	ag := &agentrt.Agent{Planner: agenttest.Script()}
	_, inErr := agenttest.Collect(ag.Run(context.Background(), "s", ""))
	require.ErrorIs(t, inErr, agentrt.ErrEmptyInput)

	tag := &agentrt.Agent{Planner: agenttest.Script()}
	env := newEnv(t, tag, Options{})
	env.ExecuteWorkflow(WorkflowName(tag.Name), RunInput{SessionID: "s"})
	require.True(t, env.IsWorkflowCompleted())
	werr := env.GetWorkflowError()
	require.Error(t, werr)
	assert.NotErrorIs(t, werr, agentrt.ErrEmptyInput, "the workflow's error is untyped")
	err := runError(werr)
	assert.ErrorIs(t, err, agentrt.ErrEmptyInput)
	assert.Equal(t, werr.Error(), err.Error())
}

// A query the stopping worker cancelled, one that timed out and one no
// worker answered yet are tried again (queryEvents); a query of a
// workflow that does not exist is not.
func TestTransientQueryError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{context.Canceled, true},
		{fmt.Errorf("query: %w", context.Canceled), true},
		{context.DeadlineExceeded, true},
		{serviceerror.NewCanceled("worker stopping"), true},
		{serviceerror.NewDeadlineExceeded("no answer"), true},
		{serviceerror.NewUnavailable("no poller"), true},
		{serviceerror.NewNotFound("no such workflow"), false},
		{errors.New("query failed: bad handler"), false},
	} {
		assert.Equal(t, tc.want, transientQueryError(tc.err), "%v", tc.err)
	}
}
