package gemini

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// The conformance suite of agentrt providers, against replay servers of
// the recorded fixtures (and of the error bodies written here).
func TestConformance(t *testing.T) {
	agenttest.TestProvider(t, func(t *testing.T, scenario string) agentrt.Planner {
		var replies []reply
		switch scenario {
		case agenttest.ScenarioText:
			replies = []reply{ok(t, "text.json")}
		case agenttest.ScenarioTextStream:
			replies = []reply{ok(t, "text-stream.sse")}
		case agenttest.ScenarioToolCall:
			replies = []reply{ok(t, "tool-call.json")}
		case agenttest.ScenarioToolCallStream:
			replies = []reply{ok(t, "tool-call-stream.sse")}
		case agenttest.ScenarioParallelToolCalls:
			replies = []reply{ok(t, "parallel-tool-calls.response.json")}
		case agenttest.ScenarioParallelToolCallsStream:
			replies = []reply{ok(t, "parallel-tool-calls-stream.sse")}
		case agenttest.ScenarioRateLimitedThenOK:
			r := reply{status: 429, header: http.Header{"Retry-After": {"0"}},
				body: []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"}]}}`)}
			replies = []reply{r, ok(t, "text.json")}
		case agenttest.ScenarioRateLimited:
			replies = repeat(fail(t, 429, "written/error-429-resource-exhausted.json"), 1+DefaultMaxRetries)
		case agenttest.ScenarioServerError:
			replies = repeat(fail(t, 500, "written/error-500-internal.json"), 1+DefaultMaxRetries)
		case agenttest.ScenarioAuthError:
			replies = []reply{fail(t, 401, "written/error-401-unauthenticated.json")}
		case agenttest.ScenarioContextLength:
			replies = []reply{fail(t, 400, "written/error-400-context-length.json")}
		case agenttest.ScenarioTruncatedStream:
			// The Vertex AI recording of a call streamed in pieces, cut
			// before the call ends.
			events := sseEvents(t, "vertex-partial-args-stream.sse")
			replies = []reply{{body: []byte(strings.Join(events[:3], ""))}}
		case agenttest.ScenarioImageInput:
			replies = []reply{ok(t, "image-input.response.json")}
		case agenttest.ScenarioImageToolResult:
			replies = []reply{ok(t, "text.json")} // no recording of a function response with parts
		case agenttest.ScenarioThinkingRoundTrip:
			replies = []reply{ok(t, "thinking-tool-call.response.json"), ok(t, "thinking-tool-result-followup.response.json")}
		case agenttest.ScenarioUnsupportedContent:
			replies = []reply{ok(t, "text.json")}
		case agenttest.ScenarioStalledStream:
			replies = []reply{{body: []byte(sseEvents(t, "text-stream.sse")[0]), stall: true}}
		default:
			return nil
		}
		srv := newReplayServer(t, replies...)
		p, _ := newTestProvider(t, srv, nil) // retry waits are recorded, not slept
		return p
	})
}

func repeat(r reply, n int) []reply {
	out := make([]reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}
