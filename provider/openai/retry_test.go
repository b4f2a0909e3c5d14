package openai_test

import (
	"sync/atomic"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/providertest"
	"github.com/agentrt/agentrt/provider/openai"
)

// Retries happen in one place: a client NewCompatible builds does not
// retry, so an Agent's RetryPolicy is the only one; Options.MaxRetries
// turns the SDK's retries on.
func TestNewCompatibleClientDoesNotRetry(t *testing.T) {
	t.Parallel()
	providertest.RetriesInOnePlace(t, func(maxRetries int) (agentrt.Planner, *atomic.Int32) {
		srv, calls := providertest.FailingServer(t, `{"error":{"message":"boom","type":"server_error"}}`)
		var opts *openai.Options
		if maxRetries > 0 {
			opts = &openai.Options{MaxRetries: maxRetries}
		}
		return openai.NewCompatible(srv.URL+"/v1", "key", "m", opts), calls
	})
}

// The same for the Responses planner, on a client built without retries:
// ResponsesOptions.MaxRetries turns the SDK's retries on.
func TestResponsesRetriesInOnePlace(t *testing.T) {
	t.Parallel()
	providertest.RetriesInOnePlace(t, func(maxRetries int) (agentrt.Planner, *atomic.Int32) {
		srv, calls := providertest.FailingServer(t, `{"error":{"message":"boom","type":"server_error"}}`)
		client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("key"), option.WithMaxRetries(0))
		return openai.NewResponses(client, "gpt-5", &openai.ResponsesOptions{MaxRetries: maxRetries}), calls
	})
}
