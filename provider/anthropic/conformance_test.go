package anthropic

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestConformance runs the Provider conformance suite, each scenario
// against a replay server: recorded bodies for the answers, written ones
// for the errors, the truncated stream and the stalled stream.
func TestConformance(t *testing.T) {
	t.Parallel()
	const model = "claude-sonnet-4-5"
	rateLimited := errorReply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", "0")
	agenttest.TestProvider(t, func(t *testing.T, scenario string) agentrt.Planner {
		switch scenario {
		case agenttest.ScenarioText:
			return newReplay(t, jsonReply(fixture(t, "text.json"))).provider(model, nil)
		case agenttest.ScenarioTextStream:
			return newReplay(t, sseReply(fixture(t, "text-stream.sse"))).provider(model, nil)
		case agenttest.ScenarioToolCall:
			return newReplay(t, jsonReply(fixture(t, "tool-call.json"))).provider(model, nil)
		case agenttest.ScenarioToolCallStream:
			return newReplay(t, sseReply(fixture(t, "tool-call-stream-split-args.sse"))).provider(model, nil)
		case agenttest.ScenarioParallelToolCalls:
			return newReplay(t, jsonReply(fixture(t, "parallel-tool-calls.response.json"))).provider(model, nil)
		case agenttest.ScenarioParallelToolCallsStream:
			return newReplay(t, sseReply(fixture(t, "parallel-tool-calls-stream.sse"))).provider(model, nil)
		case agenttest.ScenarioRateLimitedThenOK:
			return newReplay(t, rateLimited, jsonReply(fixture(t, "text.json"))).provider(model, &Options{})
		case agenttest.ScenarioRateLimited:
			return newReplay(t, rateLimited, rateLimited).provider(model, &Options{MaxRetries: 1})
		case agenttest.ScenarioServerError:
			return newReplay(t, errorReply(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)).provider(model, nil)
		case agenttest.ScenarioAuthError:
			return newReplay(t, errorReply(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)).provider(model, nil)
		case agenttest.ScenarioContextLength:
			return newReplay(t, errorReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"}}`)).provider(model, nil)
		case agenttest.ScenarioTruncatedStream:
			body := cut(t, fixture(t, "tool-call-stream-split-args.sse"), "event: content_block_stop")
			return newReplay(t, sseReply(body)).provider(model, nil)
		case agenttest.ScenarioImageInput:
			return newReplay(t, jsonReply(fixture(t, "image-input.response.json"))).provider(model, nil)
		case agenttest.ScenarioImageToolResult:
			return newReplay(t, jsonReply(fixture(t, "tool-result-image.response.json"))).provider(model, nil)
		case agenttest.ScenarioThinkingRoundTrip:
			return newReplay(t, jsonReply(fixture(t, "thinking-tool-call.response.json")),
				jsonReply(fixture(t, "thinking-tool-result-followup.response.json"))).provider(model, thinkingOpts)
		case agenttest.ScenarioUnsupportedContent:
			return newReplay(t).provider(model, nil)
		case agenttest.ScenarioStalledStream:
			head := cut(t, fixture(t, "text-stream.sse"), "event: content_block_stop")
			return newReplay(t, reply{handler: func(w http.ResponseWriter, req *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(head)
				w.(http.Flusher).Flush()
				<-req.Context().Done()
			}}).provider(model, nil)
		}
		return nil
	})
}

// The conformance request, as this adapter sends it.
func TestConformanceRequestShape(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), agenttest.ConformanceRequest())
	require.NoError(t, err)
	body := r.only().json(t)
	assert.EqualValues(t, 256, body["max_tokens"])
	assert.JSONEq(t, `[{"type":"text","text":"You are a test assistant."}]`, jsonOf(t, body["system"]))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"What is the weather in Paris and Rome?"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Let me check."},
			{"type":"tool_use","id":"call_a","name":"weather","input":{"city":"Paris"}},
			{"type":"tool_use","id":"call_b","name":"weather","input":{"city":"Rome"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"call_a","content":[{"type":"text","text":"18C, sunny"}]},
			{"type":"tool_result","tool_use_id":"call_b","is_error":true,"content":[{"type":"text","text":"weather service unavailable"}]},
			{"type":"text","text":"Try Rome again, please."}]}
	]`, jsonOf(t, body["messages"]))
	tools := body["tools"].([]any)
	require.Len(t, tools, 2)
	assert.Equal(t, "weather", tools[0].(map[string]any)["name"])
	assert.Equal(t, "add", tools[1].(map[string]any)["name"])
}
