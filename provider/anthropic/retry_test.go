package anthropic_test

import (
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/providertest"
	"github.com/agentrt/agentrt/provider/anthropic"
)

// Retries happen in one place: a client NewFromAPIKey builds does not
// retry, so an Agent's RetryPolicy is the only one; Options.MaxRetries
// turns the SDK's retries on. The SDK finds the server through
// ANTHROPIC_BASE_URL.
func TestNewFromAPIKeyClientDoesNotRetry(t *testing.T) { // not parallel: t.Setenv
	providertest.RetriesInOnePlace(t, func(maxRetries int) (agentrt.Planner, *atomic.Int32) {
		srv, calls := providertest.FailingServer(t, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
		t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		var opts *anthropic.Options
		if maxRetries > 0 {
			opts = &anthropic.Options{MaxRetries: maxRetries}
		}
		return anthropic.NewFromAPIKey("key", "m", opts), calls
	})
}
