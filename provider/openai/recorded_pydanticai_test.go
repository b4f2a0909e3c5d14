package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay exchanges recorded by pydantic/pydantic-ai
// (VCR cassettes) with api.openai.com, OpenRouter and Gemini's
// OpenAI-compatible endpoint; see testdata/pydanticai/README.md.

func pyd(name string) string { return "pydanticai/" + name }

// TestRecordedPydanticAIChat replays Chat Completions answers.
func TestRecordedPydanticAIChat(t *testing.T) {
	t.Parallel()
	cases := []recordedCase{
		{
			// Reasoning tokens are part of completion_tokens.
			name: "o3-mini text with reasoning tokens", file: pyd("o3-mini-max-completion-tokens.response.json"),
			blocks: []wantBlock{text("Hello there! How can I help you today?")},
			usage:  agentrt.Usage{InputTokens: 7, OutputTokens: 87, ReasoningTokens: 64}, finish: agentrt.FinishStop, model: "o3-mini-2025-01-31",
		},
		{
			// No content field; total_tokens (126) is more than prompt +
			// completion (47): Gemini leaves its thinking out of
			// completion_tokens and reports no reasoning_tokens; the 79
			// are its thinking, billed as output.
			name: "gemini tool call", file: pyd("gemini-tool-call.json"),
			blocks: []wantBlock{toolUse("function-call-2900024254458648715", "get_current_time", `{}`)},
			usage:  agentrt.Usage{InputTokens: 35, OutputTokens: 12 + 79, ReasoningTokens: 79}, finish: agentrt.FinishToolUse, model: "gemini-2.5-pro",
		},
		{
			name: "gemini text after the tool result", file: pyd("gemini-tool-result-followup.response.json"),
			blocks: []wantBlock{text("The current time is Noon. \n")},
			usage:  agentrt.Usage{InputTokens: 66, OutputTokens: 6}, finish: agentrt.FinishStop, model: "gemini-2.5-pro",
		},
		{
			// "reasoning" holds the summary of the reasoning_details.
			name: "openrouter reasoning summary and encrypted reasoning", file: pyd("openrouter-reasoning-summary-encrypted.json"),
			blocks: []wantBlock{
				long(thinking("**Greeting warmly**\n\nThe user just said \"Hello!\""), "I'll definitely ask about their language choice too!", 490),
				text("Hello! How can I help you today? (Ask a question, get writing or coding help, analyze an image, brainstorm ideas, translate text, or something else?)"),
			},
			usage: agentrt.Usage{InputTokens: 8, OutputTokens: 150, ReasoningTokens: 64}, finish: agentrt.FinishStop, model: "openai/gpt-5-mini",
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// The recorded o3-mini request capped the answer with
// max_completion_tokens, which reasoning models require (max_tokens is
// refused: testdata/error-400-unsupported-parameter.json); the adapter
// sends the same.
func TestRecordedPydanticAIMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("o3-mini-max-completion-tokens.response.json"))})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hello")}, MaxTokens: 100}
	_, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)
	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, pyd("o3-mini-max-completion-tokens.request.json"), "max_completion_tokens"), field(t, body, "max_completion_tokens"))
	assert.JSONEq(t, recordedField(t, pyd("o3-mini-max-completion-tokens.request.json"), "messages"), field(t, body, "messages"))
	assert.NotContains(t, body, "max_tokens")
}

// Gemini's OpenAI-compatible endpoint accepted the tool round trip: the
// assistant message with its tool call (content null) and the "tool"
// message answering it by the call's id.
func TestRecordedPydanticAIGeminiFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, pyd("gemini-tool-call.json"))},
		reply{body: fixture(t, pyd("gemini-tool-result-followup.response.json"))})
	p := srv.provider(nil)
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the current time?")},
		Tools: []agentrt.ToolSpec{{
			Name: "get_current_time", Description: "Get the current time.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		}},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(first.Message.Blocks[0].ID, "Noon", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "The current time is Noon. \n", resp.Message.Text())

	// The recording client sent "content": null next to the tool call;
	// the adapter leaves content out, as OpenAI's API reference allows.
	body := srv.request(1).Body
	var want []any
	require.NoError(t, json.Unmarshal([]byte(recordedField(t, pyd("gemini-tool-result-followup.request.json"), "messages")), &want))
	assert.JSONEq(t, withoutNulls(t, want), field(t, body, "messages"))
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "tools")), &tools))
	require.Len(t, tools, 1)
	fn := tools[0]["function"].(map[string]any)
	assert.Equal(t, "get_current_time", fn["name"])
	assert.Equal(t, "Get the current time.", fn["description"])
}

// withoutNulls returns the JSON text v without object members whose value
// is null.
func withoutNulls(t *testing.T, v any) string {
	t.Helper()
	var drop func(any) any
	drop = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				if x != nil {
					out[k] = drop(x)
				}
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = drop(x)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(drop(v))
	require.NoError(t, err)
	return string(b)
}

// OpenRouter's gpt-5-mini answered with reasoning_details (a
// reasoning.summary and a reasoning.encrypted item) and "reasoning", the
// summary's text. The thinking block keeps the list whole, as its
// Signature, to send back. The recorded next request sent it back before
// a new user message too, and OpenRouter accepted it; the adapter's
// request is the recorded one, with the list exactly as OpenRouter sent it
// (the recording client added "id": null to the summary item).
func TestRecordedPydanticAIOpenRouterReasoningFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("openrouter-reasoning-summary-encrypted.json"))})
	p := srv.provider(nil)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Hello!")}}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	var answer struct {
		Choices []struct {
			Message struct {
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, pyd("openrouter-reasoning-summary-encrypted.json")), &answer))
	th := thinkingOf(t, first.Message)
	assert.JSONEq(t, string(answer.Choices[0].Message.ReasoningDetails), string(th.Signature))
	assert.Equal(t, "openai", th.Provider)

	req.Messages = append(req.Messages, first.Message, agentrt.NewUserMessage("What was the impact of Voltaire's writings on modern french culture?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)

	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(recordedField(t, pyd("openrouter-reasoning-followup.request.json"), "messages")), &want))
	require.Len(t, want, 3)
	require.Contains(t, want[1], "reasoning_details")
	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "messages")), &sent))
	require.Len(t, sent, 3)
	assert.JSONEq(t, string(answer.Choices[0].Message.ReasoningDetails), jsonText(t, sent[1]["reasoning_details"]))
	delete(want[1], "reasoning_details")
	delete(sent[1], "reasoning_details")
	assert.Equal(t, want, sent)
}

// OpenRouter's MiniMax route streamed reasoning, finish_reason "length",
// then a chunk with {"error":{"code":400,"message":"Token limit
// reached"}} next to the usage, then [DONE].
func TestRecordedPydanticAIOpenRouterStreamError(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("openrouter-minimax-error-after-length-stream.sse")), sse: true})
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Hello there")},
		OnText:   func(s string) { t.Errorf("no text was streamed, got %q", s) },
	}
	_, err := srv.provider(nil).Plan(context.Background(), req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	// The error event wins over the finish_reason before it: the stream
	// did not end well, and nothing tells the length cap from another
	// failure upstream.
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	assert.Equal(t, "Token limit reached", pe.Message)
	assert.Empty(t, pe.Code, "the code is the number 400, an HTTP status, not a code")
	assert.Zero(t, pe.StatusCode, "the HTTP status was 200")
}

// TestRecordedPydanticAIErrors replays recorded HTTP errors.
func TestRecordedPydanticAIErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		file      string
		status    int
		responses bool
		kind      error
		code      string
		message   string
	}{
		{
			// The code is the number 404, not a string: the adapter keeps
			// no code.
			name: "openrouter 404 no endpoints", file: "openrouter-error-404-no-endpoints.json", status: 404,
			kind: agentrt.ErrInvalidRequest, message: "No endpoints found for google/gemini-2.5-flash:free.",
		},
		{
			// "code": null: the type stands for it.
			name: "chat 400 web_search_options", file: "error-400-web-search-options.json", status: 400,
			kind: agentrt.ErrInvalidRequest, code: "invalid_request_error", message: "Web search options not supported with this model.",
		},
		{
			name: "responses 400 temperature below minimum", file: "responses-error-400-decimal-below-min.json", status: 400, responses: true,
			kind: agentrt.ErrInvalidRequest, code: "decimal_below_min_value",
			message: "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{status: c.status, body: fixture(t, pyd(c.file))})
			for _, stream := range []bool{false, true} {
				req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
				if stream {
					req.OnText = func(string) { t.Error("no text") }
				}
				var err error
				if c.responses {
					_, err = srv.responses(&openai.ResponsesOptions{MaxRetries: -1}).Plan(context.Background(), req)
				} else {
					_, err = srv.provider(nil).Plan(context.Background(), req)
				}
				var pe *agentrt.ProviderError
				require.True(t, errors.As(err, &pe), "%T: %v", err, err)
				require.ErrorIs(t, err, c.kind)
				assert.Equal(t, c.status, pe.StatusCode)
				assert.Equal(t, c.code, pe.Code)
				assert.Equal(t, c.message, pe.Message)
				assert.Zero(t, pe.RetryAfter)
			}
			require.Equal(t, 2, srv.count(), "an invalid request is not retried")
		})
	}
}

// TestRecordedPydanticAIFileSearch replays a Responses API answer with a
// server-side file_search_call item, then the next turn, whose answer has
// a file_citation annotation.
func TestRecordedPydanticAIFileSearch(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, pyd("responses-file-search.json"))},
		reply{body: fixture(t, pyd("responses-file-search-followup.response.json"))})
	// The hosted file_search tool as ServerTools, and tool_choice "auto"
	// from the request: sent since there are tools, if server tools only.
	p := srv.responses(&openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{
		responses.ToolParamOfFileSearch([]string{"vs_6931d72a43048191bbe7518b93c1d8ed"}),
	}})
	req := &agentrt.ModelRequest{
		System:     "You are a helpful assistant.",
		Messages:   []agentrt.Message{agentrt.NewUserMessage("What is the capital of France?")},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The capital of France is Paris.")), first.Message,
		"the file_search_call item is the server's; no block")
	assert.Equal(t, agentrt.Usage{InputTokens: 870, OutputTokens: 30}, first.Usage)
	assert.Equal(t, agentrt.FinishStop, first.Finish)
	assert.Equal(t, "gpt-4o-2024-08-06", first.Model)

	req.Messages = append(req.Messages, first.Message, agentrt.NewUserMessage("Tell me about the Eiffel Tower."))
	second, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(
		"The Eiffel Tower is a famous landmark in Paris, the capital of France. It is widely recognized and serves as an iconic symbol of the city.")), second.Message)
	assert.Equal(t, agentrt.Usage{InputTokens: 1188, OutputTokens: 55}, second.Usage)

	// The recorded request: the assistant's earlier answer as a message
	// item with a string content (the file_search_call item is not sent
	// back), the system prompt as instructions where the adapter sends a
	// developer message, and the file_search tool with tool_choice, the
	// same in both requests.
	var rec map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, pyd("responses-file-search-followup.request.json")), &rec))
	body := srv.request(1).Body
	var input []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "input")), &input))
	require.Len(t, input, 4)
	assert.Equal(t, map[string]any{"role": "developer", "content": rec["instructions"]}, input[0])
	recInput := rec["input"].([]any)
	assert.Equal(t, recInput[1], input[2])
	for i, n := range []int{1, 3} {
		assert.JSONEq(t, `[{"type":"input_text","text":`+jsonText(t, recInput[2*i].(map[string]any)["content"])+`}]`, jsonText(t, input[n]["content"]))
		assert.Equal(t, "user", input[n]["role"])
	}
	for i := range 2 {
		b := srv.request(i).Body
		assert.JSONEq(t, field(t, rec, "tools"), field(t, b, "tools"), "request %d", i)
		assert.JSONEq(t, field(t, rec, "tool_choice"), field(t, b, "tool_choice"), "request %d", i)
	}
}
