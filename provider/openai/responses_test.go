package openai_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The recorded Responses calls (fantasy's TestOpenAIResponsesWithSummaryThinking)
// ask gpt-5 for high effort and an automatic summary, with the tool's
// schema as it is (strict false).
var recordedResponsesOpts = &openai.ResponsesOptions{ReasoningEffort: "high", ReasoningSummary: "auto", DisableStrict: true}

// responsesWeatherRequest is the request of the recordings.
func responsesWeatherRequest() *agentrt.ModelRequest {
	req := weatherRequest()
	req.Messages = []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")}
	req.ToolChoice = agentrt.ToolChoice{Mode: "auto"}
	return req
}

// recordedJSON decodes a file of testdata/responses.
func recordedJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(rfixture(t, name), &body))
	return body
}

// checkRecordedRequest compares the body sent with the recorded request:
// the same fields; input is compared by the caller.
func checkRecordedRequest(t *testing.T, recordedName string, body map[string]any) {
	t.Helper()
	rec := recordedJSON(t, recordedName)
	for _, k := range []string{"store", "include", "model", "reasoning", "tool_choice", "tools", "stream"} {
		if _, ok := rec[k]; !ok {
			assert.NotContains(t, body, k)
			continue
		}
		assert.JSONEq(t, field(t, rec, k), field(t, body, k), k)
	}
	assert.NotContains(t, body, "instructions")
}

// recordedInput is the recorded request's input: a developer message
// with the system prompt, the user message, and so on.
func recordedInput(t *testing.T, name string) []any {
	t.Helper()
	return recordedJSON(t, name)["input"].([]any)
}

// A reasoning model calls a tool (recorded): the request is the recorded
// one, the reasoning item becomes a thinking block with its summary and
// encrypted content, the call a tool_use block; usage counts reasoning.
func TestResponsesToolCall(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "reasoning-summary-tool-call.response.json")})
	resp, err := srv.responses(recordedResponsesOpts).Plan(context.Background(), responsesWeatherRequest())
	require.NoError(t, err)

	req := srv.request(0)
	assert.Equal(t, "/v1/responses", req.Path)
	checkRecordedRequest(t, "reasoning-summary-tool-call.request.json", req.Body)
	sameJSON(t, recordedInput(t, "reasoning-summary-tool-call.request.json"), req.Body["input"])

	rec := recordedJSON(t, "reasoning-summary-tool-call.response.json")
	item := rec["output"].([]any)[0].(map[string]any)
	summary := item["summary"].([]any)[0].(map[string]any)["text"].(string)
	want := agentrt.NewAssistantMessage(
		agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_0d8949369356df9a016a3c1243e5a0819c87655df5f53e767e", Text: summary,
			Signature: []byte(item["encrypted_content"].(string)), Provider: "openai-responses"},
		itemBlock(agentrt.ToolUseBlock("call_4QfIn5gPKIOWzKqBb5D2uuh4", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)),
			rec["output"].([]any)[1].(map[string]any)["id"].(string)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 63, OutputTokens: 212, ReasoningTokens: 128}, resp.Usage)
	assert.Equal(t, "gpt-5-2025-08-07", resp.Model)
}

// The follow-up (recorded) sends the reasoning item back, with its
// encrypted content, before the function call and its output. The
// recording client did not send the item; the rest of the input is the
// recorded one.
func TestResponsesToolResultFollowup(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "reasoning-summary-tool-call.response.json")},
		reply{body: rfixture(t, "reasoning-summary-tool-result-followup.response.json")})
	p := srv.responses(recordedResponsesOpts)
	req := responsesWeatherRequest()
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("call_4QfIn5gPKIOWzKqBb5D2uuh4", "40 C", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	body := srv.request(1).Body
	checkRecordedRequest(t, "reasoning-summary-tool-result-followup.request.json", body)
	input := body["input"].([]any)
	require.Len(t, input, 5)
	thinking := first.Message.Blocks[0]
	sameJSON(t, map[string]any{"type": "reasoning", "id": thinking.ID, "encrypted_content": string(thinking.Signature),
		"summary": []any{map[string]any{"type": "summary_text", "text": thinking.Text}}}, input[2])
	sameJSON(t, recordedInput(t, "reasoning-summary-tool-result-followup.request.json"), withoutCallIDs(t, append(input[:2:2], input[3:]...)))

	assert.Equal(t, "It’s currently about 40°C (104°F) in Florence, Italy. Want a forecast or more details like wind and humidity?", resp.Message.Text())
	require.Len(t, resp.Message.Blocks, 2)
	assert.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
	assert.Contains(t, resp.Message.Blocks[0].Text, "**Clarifying weather details**")
	assert.Contains(t, resp.Message.Blocks[0].Text, "\n\n", "two summary parts, joined")
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 92, OutputTokens: 544, ReasoningTokens: 448}, resp.Usage)
}

// Streamed (recorded): the function call's arguments arrive in 8 deltas
// and the reasoning summary in 75, none of which is text for OnText; the
// message equals the one the stream's response.completed carries. The
// streamed follow-up hands its text deltas to OnText.
func TestResponsesStream(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "reasoning-summary-tool-call-stream.sse"), sse: true},
		reply{body: rfixture(t, "reasoning-summary-tool-result-followup-stream.sse"), sse: true})
	p := srv.responses(recordedResponsesOpts)
	var deltas []string
	req := responsesWeatherRequest()
	req.OnText = func(d string) { deltas = append(deltas, d) }
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	checkRecordedRequest(t, "reasoning-summary-tool-call-stream.request.json", srv.request(0).Body)
	sameJSON(t, recordedInput(t, "reasoning-summary-tool-call-stream.request.json"), srv.request(0).Body["input"])
	assert.Empty(t, deltas)
	require.Len(t, first.Message.Blocks, 2)
	assert.Equal(t, agentrt.BlockThinking, first.Message.Blocks[0].Type)
	assert.NotEmpty(t, first.Message.Blocks[0].Signature)
	call := first.Message.Blocks[1]
	assert.True(t, strings.HasPrefix(string(call.Signature), "fc_"), "the call's item id: %q", call.Signature)
	assert.Equal(t, itemBlock(agentrt.ToolUseBlock("call_zgUaIBRPTwxxOusyyKw5NVMH", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)), string(call.Signature)), call)
	assert.Equal(t, agentrt.FinishToolUse, first.Finish)
	assert.Positive(t, first.Usage.ReasoningTokens)

	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("call_zgUaIBRPTwxxOusyyKw5NVMH", "40 C", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	input := srv.request(1).Body["input"].([]any)
	require.Len(t, input, 5)
	assert.Equal(t, "reasoning", input[2].(map[string]any)["type"])
	assert.Equal(t, string(first.Message.Blocks[0].Signature), input[2].(map[string]any)["encrypted_content"])
	sameJSON(t, recordedInput(t, "reasoning-summary-tool-result-followup-stream.request.json"), withoutCallIDs(t, append(input[:2:2], input[3:]...)))
	assert.Greater(t, len(deltas), 1)
	assert.Equal(t, strings.Join(deltas, ""), resp.Message.Text())
	assert.Equal(t, "Right now in Florence, Italy, it’s about 40°C (104°F). Would you like a forecast or details like wind and humidity?", resp.Message.Text())
	assert.Equal(t, agentrt.Usage{InputTokens: 92, OutputTokens: 456, ReasoningTokens: 384}, resp.Usage)
}

// Two calls in one answer, whole and streamed (written from the API
// reference: no recording of the Responses API has parallel calls), and
// the cached input tokens of the usage.
func TestResponsesParallelToolCalls(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := "written/parallel-tool-calls.json"
		if stream {
			name = "written/parallel-tool-calls-stream.sse"
		}
		srv := newReplay(t, reply{body: rfixture(t, name), sse: stream}, reply{body: rfixture(t, "pdf-input-file.json")})
		req := mathRequest()
		if stream {
			req.OnText = func(string) { t.Error("no text was streamed") }
		}
		resp, err := srv.responses(nil).Plan(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("call_written_add", "add", json.RawMessage(`{"a":2,"b":3}`)),
			agentrt.ToolUseBlock("call_written_mul", "multiply", json.RawMessage(`{"a":2,"b":3}`)),
		), resp.Message, "stream %v", stream)
		assert.Equal(t, agentrt.Usage{InputTokens: 80, OutputTokens: 40, CacheReadTokens: 64}, resp.Usage)

		// Their results go back as two function_call_output items.
		req.OnText = nil
		req.Messages = append(req.Messages, resp.Message,
			agentrt.NewToolMessage("call_written_add", "5", false), agentrt.NewToolMessage("call_written_mul", "no", true))
		_, err = srv.responses(nil).Plan(context.Background(), req)
		require.NoError(t, err)
		jsonEq(t, `[{"role":"developer","content":"You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS."},
			{"role":"user","content":[{"type":"input_text","text":"Add and multiply the number 2 and 3"}]},
			{"type":"function_call","call_id":"call_written_add","name":"add","arguments":"{\"a\":2,\"b\":3}"},
			{"type":"function_call","call_id":"call_written_mul","name":"multiply","arguments":"{\"a\":2,\"b\":3}"},
			{"type":"function_call_output","call_id":"call_written_add","output":"5"},
			{"type":"function_call_output","call_id":"call_written_mul","output":"Error: no"}]`, srv.request(1).Body["input"])
	}
}

// A forced function (recorded response of o3, which echoes the
// tool_choice; the request is not stored, its tool_choice is written from
// the API reference).
func TestResponsesToolChoiceFunction(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "tool-choice-function.json")})
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Search for papers about machine learning")},
		Tools: []agentrt.ToolSpec{{Name: "semantic_scholar_search", Description: "Search papers",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)}},
		ToolChoice: agentrt.ToolChoice{Mode: "tool", Name: "semantic_scholar_search"},
	}
	resp, err := srv.responses(nil).Plan(context.Background(), req)
	require.NoError(t, err)
	rec := recordedJSON(t, "tool-choice-function.json")
	assert.JSONEq(t, field(t, rec, "tool_choice"), field(t, srv.request(0).Body, "tool_choice"))
	// The optional "limit" becomes nullable and required in strict mode.
	jsonEq(t, `[{"type":"function","name":"semantic_scholar_search","description":"Search papers","strict":true,
		"parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":["integer","null"]}},"required":["query","limit"],"additionalProperties":false}}]`, srv.request(0).Body["tools"])
	require.Len(t, resp.Message.Blocks, 2)
	assert.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
	assert.NotEmpty(t, resp.Message.Blocks[0].Signature, "real encrypted content, from a stored response")
	assert.Equal(t, itemBlock(agentrt.ToolUseBlock("call_sllqlMEFqHePsbF1dDko4Pdq", "semantic_scholar_search", json.RawMessage(`{"query":"machine learning","limit":10}`)),
		rec["output"].([]any)[1].(map[string]any)["id"].(string)), resp.Message.Blocks[1])
	assert.Equal(t, agentrt.Usage{InputTokens: 114, OutputTokens: 99, ReasoningTokens: 64}, resp.Usage)

	for mode, want := range map[string]string{"auto": `"auto"`, "none": `"none"`, "required": `"required"`} {
		req.ToolChoice = agentrt.ToolChoice{Mode: mode}
		_, err := srv.responses(nil).Plan(context.Background(), req)
		require.NoError(t, err)
		assert.JSONEq(t, want, field(t, srv.request(srv.count()-1).Body, "tool_choice"), mode)
	}
}

// sameJSON asserts that want and got have the same JSON form.
// itemBlock is b as a reply with reasoning gives it: with the id of its
// output item as Signature.
func itemBlock(b agentrt.Block, id string) agentrt.Block {
	b.Signature, b.Provider = []byte(id), "openai-responses"
	return b
}

// withoutCallIDs returns items with the "id" of their function_call items
// left out, checking that each had one from the reply (fc_…): the
// adapter sends it beside the reasoning item the call followed; the
// recording clients sent none.
func withoutCallIDs(t *testing.T, items []any) []any {
	t.Helper()
	out := make([]any, len(items))
	for i, it := range items {
		m := it.(map[string]any)
		if m["type"] == "function_call" {
			id, _ := m["id"].(string)
			assert.True(t, strings.HasPrefix(id, "fc_"), "item %d: the call's item id, got %q", i, id)
			c := maps.Clone(m)
			delete(c, "id")
			it = c
		}
		out[i] = it
	}
	return out
}

func sameJSON(t *testing.T, want, got any, msgAndArgs ...any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	jsonEq(t, string(w), got, msgAndArgs...)
}
