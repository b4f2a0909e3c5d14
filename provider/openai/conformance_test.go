package openai_test

import (
	"bytes"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestConformance runs the Provider conformance suite against replay
// servers: recorded replies where the recordings have the scenario, and
// replies written here for the errors and broken streams they lack.
func TestConformance(t *testing.T) {
	t.Parallel()
	fast := map[string]string{"Retry-After": "0"} // keep the SDK's retries quick
	agenttest.TestProvider(t, func(t *testing.T, scenario string) agentrt.Planner {
		var replies []reply
		switch scenario {
		case agenttest.ScenarioText:
			replies = []reply{{body: fixture(t, "text.json")}}
		case agenttest.ScenarioTextStream:
			replies = []reply{{body: fixture(t, "text-stream.sse"), sse: true}}
		case agenttest.ScenarioToolCall:
			replies = []reply{{body: fixture(t, "tool-call.response.json")}}
		case agenttest.ScenarioToolCallStream:
			replies = []reply{{body: fixture(t, "tool-call-stream.sse"), sse: true}}
		case agenttest.ScenarioParallelToolCalls:
			replies = []reply{{body: fixture(t, "parallel-tool-calls.response.json")}}
		case agenttest.ScenarioParallelToolCallsStream:
			replies = []reply{{body: fixture(t, "parallel-tool-calls-stream.sse"), sse: true}}
		case agenttest.ScenarioRateLimitedThenOK:
			replies = []reply{{status: 429, body: []byte(body429), header: fast}, {body: fixture(t, "text.json")}}
		case agenttest.ScenarioRateLimited:
			replies = []reply{{status: 429, body: []byte(body429), header: fast}}
		case agenttest.ScenarioServerError:
			replies = []reply{{status: 500, body: []byte(body500), header: fast}}
		case agenttest.ScenarioAuthError:
			replies = []reply{{status: 401, body: []byte(body401)}}
		case agenttest.ScenarioContextLength:
			replies = []reply{{status: 400, body: []byte(bodyCtx)}}
		case agenttest.ScenarioTruncatedStream:
			events := sseEvents(fixture(t, "parallel-tool-calls-stream.sse"))
			replies = []reply{{body: bytes.Join(events[:9], nil), sse: true}}
		case agenttest.ScenarioImageInput:
			replies = []reply{{body: fixture(t, "image-input.response.json")}}
		case agenttest.ScenarioImageToolResult:
			replies = []reply{{body: fixture(t, "text.json")}} // Chat Completions has no tool result with an image
		case agenttest.ScenarioThinkingRoundTrip:
			replies = []reply{{body: fixture(t, "compat-zai-reasoning-tool-call.response.json")}, {body: fixture(t, "compat-zai-reasoning-tool-result-followup.response.json")}}
		case agenttest.ScenarioUnsupportedContent:
			replies = []reply{{body: fixture(t, "text.json")}}
		case agenttest.ScenarioStalledStream:
			events := sseEvents(fixture(t, "text-stream.sse"))
			replies = []reply{{body: bytes.Join(events[:4], nil), sse: true, hold: true}}
		default:
			return nil
		}
		return newReplay(t, replies...).provider(nil)
	})
}
