// Package providertest holds the checks that the provider adapters' tests
// share.
package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// FailingServer starts a server that answers every request with HTTP 500
// and body (and a 1 ms Retry-After-Ms, so that a retry, if any, is quick),
// and counts the requests.
func FailingServer(t *testing.T, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// RetriesInOnePlace checks that retries happen in one place, the
// runtime's: a Planner that newPlanner builds with maxRetries 0 makes one
// call for a Plan that fails with a retryable error, an Agent's
// RetryPolicy of 3 attempts makes three, and maxRetries 1 (the adapter's
// own retries, turned on) makes two. newPlanner starts a failing server
// (FailingServer) for each Planner and returns the server's count with it.
func RetriesInOnePlace(t *testing.T, newPlanner func(maxRetries int) (agentrt.Planner, *atomic.Int32)) {
	t.Helper()
	ctx := context.Background()
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}

	p, calls := newPlanner(0)
	_, err := p.Plan(ctx, req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.True(t, pe.Retryable())
	assert.EqualValues(t, 1, calls.Load(), "one call: nothing below the runtime retried")

	calls.Store(0)
	ag := &agentrt.Agent{
		Planner: p,
		Retry:   agentrt.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}
	_, err = agenttest.Collect(ag.Run(ctx, "s", "hi"))
	require.Error(t, err)
	assert.EqualValues(t, 3, calls.Load(), "three attempts of the runtime, one call each")

	p, calls = newPlanner(1)
	_, err = p.Plan(ctx, req)
	require.Error(t, err)
	assert.EqualValues(t, 2, calls.Load(), "the adapter's own retry, turned on, is counted")
}
