package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func TestRun(t *testing.T) {
	srv := httptest.NewServer(standIn())
	defer srv.Close()
	var out strings.Builder
	require.NoError(t, run(context.Background(), srv.URL, &out))
	assert.Equal(t, "-> add {\"a\":2,\"b\":40}\n<- 42\nanswer: 2+40 is 42. (50 tokens)\n", out.String())
}

// The adapter passes the scenarios of the provider conformance suite that
// the stand-in server can play.
func TestConformance(t *testing.T) {
	agenttest.TestProvider(t, func(t *testing.T, scenario string) agentrt.Planner {
		var h http.Handler
		switch scenario {
		case agenttest.ScenarioText:
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"text":"Sunny.","usage":{"in":12,"out":2}}`))
			})
		case agenttest.ScenarioToolCall:
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"tool_calls":[{"id":"c9","name":"weather","arguments":{"city":"Rome"}}],"usage":{"in":12,"out":9}}`))
			})
		case agenttest.ScenarioServerError:
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
		case agenttest.ScenarioRateLimited:
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) })
		case agenttest.ScenarioImageInput, agenttest.ScenarioImageToolResult, agenttest.ScenarioUnsupportedContent:
			// The adapter declares it cannot take images or documents: it
			// refuses them with agentrt.ErrUnsupportedContent, and the
			// server must never see the request.
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				t.Errorf("the server got a request with content it cannot take")
				http.Error(w, "text only", http.StatusBadRequest)
			})
		default:
			return nil // not played by this toy server
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return &InHouse{BaseURL: srv.URL}
	})
}
