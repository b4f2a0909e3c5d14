package anthropic_test

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
	"github.com/agentrt/agentrt/provider/anthropic"
)

// failingServer answers every request with HTTP 500 (and a 1 ms
// Retry-After-Ms, so that a retry, if any, is quick) and counts them; the
// SDK finds it through ANTHROPIC_BASE_URL.
func failingServer(t *testing.T) *atomic.Int32 {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	return &calls
}

// Retries happen in one place: a client NewFromAPIKey builds does not
// retry, so an Agent's RetryPolicy is the only one.
func TestNewFromAPIKeyClientDoesNotRetry(t *testing.T) { // not parallel: t.Setenv
	ctx := context.Background()
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}

	calls := failingServer(t)
	p := anthropic.NewFromAPIKey("key", "m", nil)
	_, err := p.Plan(ctx, req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.True(t, pe.Retryable())
	assert.EqualValues(t, 1, calls.Load(), "one call: the SDK did not retry")

	calls.Store(0)
	ag := &agentrt.Agent{
		Planner: p,
		Retry:   agentrt.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}
	_, err = agenttest.Collect(ag.Run(ctx, "s", "hi"))
	require.Error(t, err)
	assert.EqualValues(t, 3, calls.Load(), "three attempts of the runtime, one call each")

	// Options.MaxRetries turns the SDK's retries on (and the count sees them).
	calls = failingServer(t)
	p = anthropic.NewFromAPIKey("key", "m", &anthropic.Options{MaxRetries: 1})
	_, err = p.Plan(ctx, req)
	require.Error(t, err)
	assert.EqualValues(t, 2, calls.Load())
}
