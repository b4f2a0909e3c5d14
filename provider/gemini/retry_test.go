package gemini_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/providertest"
	"github.com/agentrt/agentrt/provider/gemini"
)

// Retries happen in one place: neither the client NewFromAPIKey builds nor
// its Planner retries, so an Agent's RetryPolicy is the only one;
// Options.MaxRetries turns the adapter's retries on. The SDK finds the
// server through GOOGLE_GEMINI_BASE_URL.
func TestNewFromAPIKeyDoesNotRetry(t *testing.T) { // not parallel: t.Setenv
	providertest.RetriesInOnePlace(t, func(maxRetries int) (agentrt.Planner, *atomic.Int32) {
		srv, calls := providertest.FailingServer(t, `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`)
		t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
		var opts *gemini.Options
		if maxRetries > 0 {
			opts = &gemini.Options{MaxRetries: maxRetries}
		}
		p, err := gemini.NewFromAPIKey("key", "m", opts)
		require.NoError(t, err)
		return p, calls
	})
}
