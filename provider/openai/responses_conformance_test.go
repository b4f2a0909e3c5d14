package openai_test

import (
	"bytes"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// bodyResponsesCtx is the Responses API's context-window error, written
// from the API reference (no recording has it).
const bodyResponsesCtx = `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`

// rfixture reads a file of testdata/responses.
func rfixture(t *testing.T, name string) []byte {
	t.Helper()
	return fixture(t, "responses/"+name)
}

// TestResponsesConformance runs the Provider conformance suite against
// the Responses planner: recorded replies of the Responses API where the
// recordings have the scenario (text, tool calls, reasoning round trip);
// replies written here from the API reference for the others (parallel
// calls, the errors and broken streams).
func TestResponsesConformance(t *testing.T) {
	t.Parallel()
	fast := map[string]string{"Retry-After": "0"}
	agenttest.TestProvider(t, func(t *testing.T, scenario string) agentrt.Planner {
		var replies []reply
		switch scenario {
		case agenttest.ScenarioText:
			replies = []reply{{body: rfixture(t, "pdf-input-file.json")}}
		case agenttest.ScenarioTextStream:
			replies = []reply{{body: rfixture(t, "reasoning-summary-tool-result-followup-stream.sse"), sse: true}}
		case agenttest.ScenarioToolCall:
			replies = []reply{{body: rfixture(t, "reasoning-summary-tool-call.response.json")}}
		case agenttest.ScenarioToolCallStream:
			replies = []reply{{body: rfixture(t, "reasoning-summary-tool-call-stream.sse"), sse: true}}
		case agenttest.ScenarioParallelToolCalls:
			replies = []reply{{body: rfixture(t, "written/parallel-tool-calls.json")}}
		case agenttest.ScenarioParallelToolCallsStream:
			replies = []reply{{body: rfixture(t, "written/parallel-tool-calls-stream.sse"), sse: true}}
		case agenttest.ScenarioRateLimitedThenOK:
			replies = []reply{{status: 429, body: []byte(body429), header: fast}, {body: rfixture(t, "pdf-input-file.json")}}
		case agenttest.ScenarioRateLimited:
			replies = []reply{{status: 429, body: []byte(body429), header: fast}}
		case agenttest.ScenarioServerError:
			replies = []reply{{status: 500, body: []byte(body500), header: fast}}
		case agenttest.ScenarioAuthError:
			replies = []reply{{status: 401, body: []byte(body401)}}
		case agenttest.ScenarioContextLength:
			replies = []reply{{status: 400, body: []byte(bodyResponsesCtx)}}
		case agenttest.ScenarioTruncatedStream:
			// Cut after the first function call's second argument delta:
			// no response.completed.
			events := sseEvents(rfixture(t, "written/parallel-tool-calls-stream.sse"))
			replies = []reply{{body: bytes.Join(events[:5], nil), sse: true}}
		case agenttest.ScenarioImageInput, agenttest.ScenarioImageToolResult, agenttest.ScenarioUnsupportedContent:
			replies = []reply{{body: rfixture(t, "pdf-input-file.json")}} // no recording answers an image; any text answer does
		case agenttest.ScenarioThinkingRoundTrip:
			replies = []reply{{body: rfixture(t, "reasoning-summary-tool-call.response.json")}, {body: rfixture(t, "reasoning-summary-tool-result-followup.response.json")}}
		case agenttest.ScenarioStalledStream:
			events := sseEvents(rfixture(t, "reasoning-summary-tool-result-followup-stream.sse"))
			var text []byte
			for _, ev := range events {
				text = append(text, ev...)
				if bytes.Contains(ev, []byte("response.output_text.delta")) {
					break
				}
			}
			replies = []reply{{body: text, sse: true, hold: true}}
		default:
			return nil
		}
		return newReplay(t, replies...).responses(nil)
	})
}
