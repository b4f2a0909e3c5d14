package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay exchanges that pydantic/pydantic-ai
// recorded with OpenAI-compatible servers: Groq
// (api.groq.com/openai/v1), Cerebras (api.cerebras.ai/v1) and the Hugging
// Face router in front of Together (router.huggingface.co/together/v1);
// see testdata/pydanticai/README.md.

// TestRecordedPydanticAICompat replays answers of compatible servers.
func TestRecordedPydanticAICompat(t *testing.T) {
	t.Parallel()
	cases := []recordedCase{
		{
			// Groq's gpt-oss: the reasoning in "reasoning"; usage with
			// queue_time, prompt_time... and x_groq beside it.
			name: "groq reasoning and tool call", file: pyd("groq-reasoning-tool-call.json"),
			blocks: []wantBlock{
				thinking(`We need to call with correct param: name field. Use some name, e.g., "test".`),
				toolUse("fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", "get_something_by_name", `{"name":"test"}`),
			},
			usage: agentrt.Usage{InputTokens: 301, OutputTokens: 52, ReasoningTokens: 22}, finish: agentrt.FinishToolUse, model: "openai/gpt-oss-120b",
		},
		{
			// The same, streamed: the reasoning word by word, the tool
			// call whole in one chunk, the usage in the finish chunk
			// (and again inside x_groq).
			name: "groq reasoning and tool call, streamed", file: pyd("groq-reasoning-tool-call-stream.sse"), stream: true,
			blocks: []wantBlock{
				thinking(`We need to call the function with correct parameter "name". Provide a name, e.g., "example".`),
				toolUse("fc_bfb39741-3748-4def-9886-a93fc9c64a90", "get_something_by_name", `{"name":"example"}`),
			},
			usage: agentrt.Usage{InputTokens: 304, OutputTokens: 49, ReasoningTokens: 23}, finish: agentrt.FinishToolUse, model: "openai/gpt-oss-120b",
		},
		{
			name: "groq answer after the tool result, cached prompt", file: pyd("groq-tool-result-followup.response.json"),
			blocks: []wantBlock{
				long(thinking(`We need to respond to user request. They asked: "Please call the ... tool`), "Use regular quotes.", 275),
				text(`The first call failed due to missing and extra parameters, as expected. The second call succeeded and returned: "Something with name: test".`),
			},
			usage: agentrt.Usage{InputTokens: 336, OutputTokens: 96, ReasoningTokens: 59, CacheReadTokens: 256}, finish: agentrt.FinishStop, model: "openai/gpt-oss-120b",
		},
		{
			// reasoning_format "raw": the reasoning (empty here) is in the
			// content between <think> tags. The adapter does not parse
			// tags out of the text: it stays text, tags and all.
			name: "groq raw reasoning format", file: pyd("groq-raw-think-in-content.json"),
			blocks: []wantBlock{long(text("<think>\n\n</think>\n\nTo cross the street safely, follow these steps:"), "cross the street safely and responsibly.", 1039)},
			usage:  agentrt.Usage{InputTokens: 10, OutputTokens: 216}, finish: agentrt.FinishStop, model: "deepseek-r1-distill-llama-70b",
		},
		{
			// Z.ai's GLM on Cerebras: "reasoning", not Z.ai's own
			// reasoning_content; time_info beside the usage.
			name: "cerebras zai reasoning", file: pyd("cerebras-zai-reasoning.json"),
			blocks: []wantBlock{
				long(thinking(`The user wants me to solve the multiplication problem: "25 * 4".`), `*   "25 multiplied by 4 is 100."`, 1388),
				text("25 * 4 = 100."),
			},
			usage: agentrt.Usage{InputTokens: 17, OutputTokens: 415, ReasoningTokens: 406}, finish: agentrt.FinishStop, model: "zai-glm-4.7",
		},
		{
			name: "cerebras gpt-oss reasoning", file: pyd("cerebras-gpt-oss-reasoning.json"),
			blocks: []wantBlock{
				thinking(`User asks simple: "What is 2 + 2? Think briefly first." Answer: 4. Probably straightforward.`),
				text("4."),
			},
			usage: agentrt.Usage{InputTokens: 79, OutputTokens: 37, ReasoningTokens: 25}, finish: agentrt.FinishStop, model: "gpt-oss-120b",
		},
		{
			name: "cerebras gpt-oss next turn", file: pyd("cerebras-gpt-oss-reasoning-followup.response.json"),
			blocks: []wantBlock{
				thinking(`User asks "Now add 3 to that." previous answer was 4. So 4+3 = 7. Simple.`),
				text(`\(4 + 3 = 7\).`),
			},
			usage: agentrt.Usage{InputTokens: 98, OutputTokens: 47, ReasoningTokens: 27}, finish: agentrt.FinishStop, model: "gpt-oss-120b",
		},
		{
			// Together behind the Hugging Face router: "content": "" and
			// "reasoning": null next to the tool call (no text block, no
			// thinking block), an "index" in the non-streamed tool call.
			name: "hf router together tool call", file: pyd("hf-together-tool-call.json"),
			blocks: []wantBlock{toolUse("call_f7631c2901964a6db675853a", "get_weather", `{"city": "Paris"}`)},
			usage:  agentrt.Usage{InputTokens: 616, OutputTokens: 7}, finish: agentrt.FinishToolUse, model: "meta-llama/Llama-4-Scout-17B-16E-Instruct",
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// groqTool is the tool of pydantic-ai's Groq tool_use_failed recordings.
func groqTool() agentrt.ToolSpec {
	return agentrt.ToolSpec{
		Name:        "get_something_by_name",
		InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}`),
	}
}

// Groq answers HTTP 400 with code tool_use_failed when the model's tool
// call does not match the tool's schema, or when tool_choice "required"
// got text; the model's output is in "failed_generation", which the
// adapter does not keep.
func TestRecordedPydanticAIGroqToolUseFailed(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, message string }{
		{
			name: "arguments against the schema", file: "groq-error-400-tool-use-failed.json",
			message: "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'foo' not allowed]",
		},
		{
			name: "text where a tool call is required", file: "groq-error-400-tool-choice-required.json",
			message: "Tool choice is required, but model did not call a tool",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{status: 400, body: fixture(t, pyd(c.file))})
			for _, stream := range []bool{false, true} {
				req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, Tools: []agentrt.ToolSpec{groqTool()}}
				if stream {
					req.OnText = func(string) { t.Error("no text") }
				}
				_, err := srv.provider(nil).Plan(context.Background(), req)
				var pe *agentrt.ProviderError
				require.True(t, errors.As(err, &pe), "%T: %v", err, err)
				require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
				assert.Equal(t, 400, pe.StatusCode)
				assert.Equal(t, "tool_use_failed", pe.Code)
				assert.Equal(t, c.message, pe.Message)
				assert.Zero(t, pe.RetryAfter)
				assert.False(t, pe.Retryable())
			}
			require.Equal(t, 2, srv.count(), "an invalid request is not retried")
		})
	}
}

// Streamed, Groq sends the reasoning first, then, once the tool call
// fails validation, an "event: error" whose data is the error of the
// non-streamed case plus "status_code": 400, and no [DONE]; the HTTP
// status was 200. It is the same refusal: ErrInvalidRequest, not a broken
// stream.
func TestRecordedPydanticAIGroqStreamToolUseFailed(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("groq-error-tool-use-failed-stream.sse")), sse: true})
	req := &agentrt.ModelRequest{
		System:   "Be concise. Never use pretty double quotes, just regular ones.",
		Messages: []agentrt.Message{agentrt.NewUserMessage(`Please call the "get_something_by_name" tool with non-existent parameters to test error handling; on the second try you can use valid args`)},
		Tools:    []agentrt.ToolSpec{groqTool()},
		OnText:   func(s string) { t.Errorf("the reasoning is not text, got %q", s) },
	}
	_, err := srv.provider(nil).Plan(context.Background(), req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.NotErrorIs(t, err, agentrt.ErrBadResponse)
	assert.Equal(t, "tool_use_failed", pe.Code)
	assert.Equal(t, "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed]", pe.Message)
	assert.Zero(t, pe.StatusCode, "the HTTP status was 200")
	assert.False(t, pe.Retryable())
	assert.Equal(t, 1, srv.count())
}

// After Groq's tool_use_failed, the recording client put the failed call
// in the session with the validation errors as its result; Groq then
// answered with reasoning (in "reasoning") and a valid call, and accepted
// the next request, whose tool loop carried that reasoning back. Groq
// refuses "reasoning_content" on an assistant message; the adapter sends
// the text back in "reasoning", the field it came in (the recording
// client wrapped it in <think> tags in the content instead). Everything
// else is the recorded request.
func TestRecordedPydanticAIGroqFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, pyd("groq-reasoning-tool-call.json"))},
		reply{body: fixture(t, pyd("groq-tool-result-followup.response.json"))})
	p := srv.provider(&openai.Options{DisableStrict: true})
	var rec map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, pyd("groq-tool-result-followup.request.json")), &rec))
	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, rec, "messages")), &want))
	require.Len(t, want, 6)

	req := &agentrt.ModelRequest{
		System: want[0]["content"].(string),
		Messages: []agentrt.Message{
			agentrt.NewUserMessage(want[1]["content"].(string)),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("pyd_ai_445dbde6c4764cafb5782bb928ef6c2c", "get_something_by_name", json.RawMessage(`{"foo":"bar"}`))),
			agentrt.NewToolMessage("pyd_ai_445dbde6c4764cafb5782bb928ef6c2c", want[3]["content"].(string), false),
		},
		Tools:      []agentrt.ToolSpec{groqTool()},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	th := thinkingOf(t, first.Message)
	assert.Equal(t, "reasoning", th.Name, "the field the reasoning came in")

	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", "Something with name: test", false))
	second, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.FinishStop, second.Finish)

	// The first request is the recorded one's first four messages.
	var sent0 []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(0).Body, "messages")), &sent0))
	assert.Equal(t, want[:4], sent0)

	body := srv.request(1).Body
	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "messages")), &sent))
	require.Len(t, sent, 6)
	assert.Equal(t, th.Text, sent[4]["reasoning"])
	assert.NotContains(t, sent[4], "reasoning_content", "Groq refuses it")
	assert.NotContains(t, sent[4], "content", "a tool call without text has no content")
	assert.Equal(t, "<think>\n"+th.Text+"\n</think>", want[4]["content"], "the recording client's form of the same reasoning")
	delete(sent[4], "reasoning")
	delete(want[4], "content")
	assert.Equal(t, want, sent)
	// The recorded tool has "description": ""; the adapter leaves an
	// empty description out.
	tools := rec["tools"].([]any)
	require.Len(t, tools, 1)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	require.Equal(t, "", fn["description"])
	delete(fn, "description")
	assert.JSONEq(t, field(t, rec, "tools"), toolsWithoutStrict(t, body))
	assert.JSONEq(t, field(t, rec, "tool_choice"), field(t, body, "tool_choice"))
}

// The streamed run of the same exchange: Groq's stream broke with
// tool_use_failed (see TestRecordedPydanticAIGroqStreamToolUseFailed), the
// recording client put the failed call in the session with the validation
// errors, and Groq streamed reasoning and a valid call; the next request,
// which Groq accepted, carried that reasoning back. The adapter's request
// is the recorded one with the reasoning in "reasoning" where the
// recording client had <think> tags in the content (the earlier
// reasoning, of the stream that broke, the adapter never got).
func TestRecordedPydanticAIGroqStreamFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("groq-reasoning-tool-call-stream.sse")), sse: true})
	p := srv.provider(nil)
	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(recordedField(t, pyd("groq-stream-tool-result-followup.request.json"), "messages")), &want))
	require.Len(t, want, 6)
	req := &agentrt.ModelRequest{
		System: want[0]["content"].(string),
		Messages: []agentrt.Message{
			agentrt.NewUserMessage(want[1]["content"].(string)),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("pyd_ai_53c381537e5a4ce2852509adfb88b3d5", "get_something_by_name", json.RawMessage(`{"invalid_param":"value"}`))),
			agentrt.NewToolMessage("pyd_ai_53c381537e5a4ce2852509adfb88b3d5", want[3]["content"].(string), false),
		},
		Tools:  []agentrt.ToolSpec{groqTool()},
		OnText: func(s string) { t.Errorf("no text was streamed, got %q", s) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	th := thinkingOf(t, first.Message)
	assert.Equal(t, "reasoning", th.Name, "the field the streamed reasoning came in")

	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("fc_bfb39741-3748-4def-9886-a93fc9c64a90", "Something with name: example", false))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	body := srv.request(1).Body
	assert.Equal(t, true, body["stream"])
	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "messages")), &sent))
	require.Len(t, sent, 6)
	assert.Equal(t, th.Text, sent[4]["reasoning"])
	assert.NotContains(t, sent[4], "reasoning_content", "Groq refuses it")
	assert.Equal(t, "<think>\n"+th.Text+"\n</think>", want[4]["content"])
	for _, i := range []int{2, 4} {
		assert.NotContains(t, sent[i], "content", "message %d", i)
		delete(want[i], "content")
	}
	delete(sent[4], "reasoning")
	assert.Equal(t, want, sent)
}

// Cerebras answered gpt-oss's reasoning in "reasoning" and accepted it
// back on the assistant message of the turn before (the recording client
// sent it). The adapter sends reasoning back only in the tool loop of the
// current turn, so its request is the recorded one without it.
func TestRecordedPydanticAICerebrasFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, pyd("cerebras-gpt-oss-reasoning.json"))},
		reply{body: fixture(t, pyd("cerebras-gpt-oss-reasoning-followup.response.json"))})
	p := srv.provider(nil)
	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(recordedField(t, pyd("cerebras-gpt-oss-reasoning-followup.request.json"), "messages")), &want))
	require.Len(t, want, 3)

	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage(want[0]["content"].(string))}}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	th := thinkingOf(t, first.Message)
	assert.Equal(t, "reasoning", th.Name)
	assert.Equal(t, want[1]["reasoning"], th.Text, "the recorded request sent the reasoning back as it came")

	req.Messages = append(req.Messages, first.Message, agentrt.NewUserMessage(want[2]["content"].(string)))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "messages")), &sent))
	delete(want[1], "reasoning")
	assert.Equal(t, want, sent)
}

// The Hugging Face router passed Together's HTTP 500 through, with
// retry-after: 1 and an OpenAI-shaped body (code null, type
// server_error), to the request that sent the tool result back.
func TestRecordedPydanticAIHFRouter500(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, pyd("hf-together-tool-call.json"))},
		reply{status: 500, header: map[string]string{"Retry-After": "1"}, body: fixture(t, pyd("hf-together-error-500.json"))})
	p := srv.provider(&openai.Options{MaxRetries: -1, DisableStrict: true})
	var rec map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, pyd("hf-together-tool-result.request.json")), &rec))
	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, rec, "messages")), &want))
	require.Len(t, want, 3)

	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage(want[0]["content"].(string))},
		Tools: []agentrt.ToolSpec{{
			Name: "get_weather", Description: "Get the weather for a city.",
			InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`),
		}},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(first.Message.Blocks[0].ID, "Sunny, 22C in Paris", false))
	_, err = p.Plan(context.Background(), req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	require.ErrorIs(t, err, agentrt.ErrOverloaded)
	assert.Equal(t, 500, pe.StatusCode)
	assert.Equal(t, "server_error", pe.Code)
	assert.Equal(t, "Internal server error", pe.Message)
	assert.Equal(t, time.Second, pe.RetryAfter)
	assert.True(t, pe.Retryable())
	require.Equal(t, 2, srv.count(), "MaxRetries -1: the 500 is not retried by the SDK")

	// The recorded request had no "arguments" in its tool call; the
	// adapter sends the model's arguments as they came.
	body := srv.request(1).Body
	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "messages")), &sent))
	require.Len(t, sent, 3)
	call := sent[1]["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	assert.Equal(t, `{"city": "Paris"}`, fn["arguments"])
	delete(fn, "arguments")
	assert.Equal(t, want, sent)
	assert.JSONEq(t, field(t, rec, "tools"), toolsWithoutStrict(t, body))
}
