package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay exchanges recorded by tmc/langchaingo
// (httprr traces of api.openai.com, OpenRouter, xAI and Moonshot; see
// testdata/langchaingo/README.md). Every answer is replayed as it was
// recorded, streamed or not, and where the recorded request says something
// the adapter also decides (tools, messages, response_format), the
// adapter's request is compared with it.

// lcgo is the path of a file of testdata/langchaingo.
func lcgo(name string) string { return "langchaingo/" + name }

// TestRecordedLangchaingo replays the recorded answers.
func TestRecordedLangchaingo(t *testing.T) {
	t.Parallel()
	boston := `{"location":"Boston, MA"}`
	cases := []recordedCase{
		{
			// Both calls whole in the first chunk, with finish_reason; then a
			// chunk with content "", finish_reason null and the usage.
			name: "openrouter gemini parallel calls streamed", file: lcgo("openrouter-gemini-parallel-tool-calls-stream.sse"), stream: true,
			blocks: []wantBlock{
				toolUse("tool_getCurrentWeather_3lhCz5SSaZG604yaibNB", "getCurrentWeather", boston),
				toolUse("tool_getCurrentTime_ljJXl2E9hr87YwAgPI1B", "getCurrentTime", boston),
			},
			usage: agentrt.Usage{InputTokens: 71, OutputTokens: 12}, finish: agentrt.FinishToolUse, model: "google/gemini-2.5-flash",
		},
		{
			// No finish_reason key until the finish chunk; xAI counts the
			// reasoning tokens apart from completion_tokens (335+14+25=374).
			name: "xai grok-4.5 reasoning and a tool call streamed", file: lcgo("xai-reasoning-tool-call-stream.sse"), stream: true,
			blocks: []wantBlock{
				thinking("The user wants to know the weather in Boston, MA. I have the getCurrentWeather tool. I should use that."),
				toolUse("call-c9fb0be8-f98b-4ae6-bb02-30cc74f74c7c-0", "getCurrentWeather", boston),
			},
			usage: agentrt.Usage{InputTokens: 335, OutputTokens: 14 + 25, ReasoningTokens: 25, CacheReadTokens: 128}, finish: agentrt.FinishToolUse, model: "grok-4.5",
		},
		{
			// Keep-alive comments between chunks; the reasoning only as an
			// encrypted reasoning_details item (no text: a redacted thinking
			// block that keeps it, see TestReasoningDetailsRecorded); the
			// arguments in 12 fragments; the usage after the finish chunk.
			name: "openrouter o4-mini encrypted reasoning and a tool call streamed", file: lcgo("openrouter-o4-mini-encrypted-reasoning-tool-call-stream.sse"), stream: true,
			blocks: []wantBlock{
				thinking(""),
				toolUse("call_4Rd7BhzuDU54uV7HBfrLFy0R", "getCurrentWeather", `{"location":"Boston, MA","unit":"fahrenheit"}`),
			},
			usage: agentrt.Usage{InputTokens: 78, OutputTokens: 476, ReasoningTokens: 448}, finish: agentrt.FinishToolUse, model: "openai/o4-mini",
		},
		{
			// Blank keep-alive lines before the JSON; reasoning (with
			// reasoning_details next to it), text and a tool call.
			name: "openrouter claude thinking, text and a tool call", file: lcgo("openrouter-claude-thinking-text-tool-call.json"),
			blocks: []wantBlock{
				long(thinking("The user is asking about the weather in Boston, MA. I can help with this by using the getCurrentWeather function."), "I'll omit it in my function call.", 580),
				text("I can check the current weather in Boston for you."),
				toolUse("toolu_vrtx_01NQuquGHdegsMiCvu9PEgM6", "getCurrentWeather", boston),
			},
			usage: agentrt.Usage{InputTokens: 454, OutputTokens: 206, ReasoningTokens: 150}, finish: agentrt.FinishToolUse, model: "anthropic/claude-3.7-sonnet:thinking",
		},
		{
			// "reasoning" deltas next to reasoning_details (the signature
			// comes alone, with reasoning null), then text deltas, then the
			// call whose first argument fragments are empty; every delta
			// repeats role and content ("" or null).
			name: "openrouter claude thinking, text and a tool call streamed", file: lcgo("openrouter-claude-thinking-tool-call-stream.sse"), stream: true,
			blocks: []wantBlock{
				long(thinking("Let's analyze the request:\n- The user wants to know the current weather in Boston, MA\n"), `with the location "Boston, MA" and unit "fahrenheit".`, 570),
				text("I'll check the current weather in Boston, MA for you."),
				toolUse("toolu_vrtx_017t4KEiZaydEY2w1NTQVTxe", "getCurrentWeather", `{"location":"Boston, MA","unit":"fahrenheit"}`),
			},
			usage: agentrt.Usage{InputTokens: 454, OutputTokens: 231, ReasoningTokens: 149}, finish: agentrt.FinishToolUse, model: "anthropic/claude-3.7-sonnet:thinking",
		},
		{
			// The whole text in the chunk that carries finish_reason "stop";
			// two empty content deltas before it, one with the usage after it.
			name: "openrouter text in the finish chunk", file: lcgo("openrouter-llama-text-in-finish-chunk-stream.sse"), stream: true,
			blocks: []wantBlock{text("OK")},
			usage:  agentrt.Usage{InputTokens: 586, OutputTokens: 2}, finish: agentrt.FinishStop, model: "meta-llama/llama-3.2-3b-instruct:free",
		},
		{
			// A pretty-printed body; the text is the structured output.
			name: "structured output", file: lcgo("structured-output.response.json"),
			blocks: []wantBlock{text(`{"final_answer":"4","steps":["Start with the expression 2 + 2.","Add the two numbers together: 2 + 2 = 4.","The result of the addition is 4."]}`)},
			usage:  agentrt.Usage{InputTokens: 66, OutputTokens: 44}, finish: agentrt.FinishStop, model: "gpt-4o-2024-08-06",
		},
		{
			name: "json object mode", file: lcgo("json-object-mode.response.json"),
			blocks: []wantBlock{text("{\n  \"greeting\": \"hello\"\n}")},
			usage:  agentrt.Usage{InputTokens: 21, OutputTokens: 10}, finish: agentrt.FinishStop, model: "gpt-3.5-turbo-0125",
		},
		{
			// content null; the arguments are indented JSON.
			name: "gpt-4 tool call with indented arguments", file: lcgo("gpt-4-pretty-tool-call.response.json"),
			blocks: []wantBlock{toolUse("call_yO81HxyxOrCecNGylDi5V2DK", "GoogleSearch", `{"__arg1":"Go programming language version 1.0 release date"}`)},
			usage:  agentrt.Usage{InputTokens: 167, OutputTokens: 25}, finish: agentrt.FinishToolUse, model: "gpt-4-0613",
		},
		{
			name: "moonshot reasoning_content and a tool call", file: lcgo("moonshot-reasoning-tool-call.response.json"),
			blocks: []wantBlock{
				thinking(moonshotReasoning),
				toolUse("get_weather:0", "get_weather", `{"location":"Beijing"}`),
			},
			usage: agentrt.Usage{InputTokens: 61, OutputTokens: 81}, finish: agentrt.FinishToolUse, model: "kimi-k2.5",
		},
		{
			name: "moonshot reasoning_content and text", file: lcgo("moonshot-reasoning-tool-result-followup.response.json"),
			blocks: []wantBlock{
				thinking("Great! I received the weather information for Beijing. The result shows:\n- Temperature: 22°C\n- Condition: sunny\n\nI should present this information clearly to the user."),
				text("The weather in Beijing is currently **22°C** and **sunny**. ☀️"),
			},
			usage: agentrt.Usage{InputTokens: 174, OutputTokens: 57}, finish: agentrt.FinishStop, model: "kimi-k2.5",
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// moonshotReasoning is the reasoning_content of the first Moonshot answer.
const moonshotReasoning = "The user is asking for the weather in Beijing. I have a function available called `get_weather` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the `get_weather` function with \"Beijing\" as the location parameter."

// lcgoWeatherTools are the tools of langchaingo's function-call tests, as
// recorded.
func lcgoWeatherTools(withTime bool) []agentrt.ToolSpec {
	loc := `"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}`
	tools := []agentrt.ToolSpec{{
		Name: "getCurrentWeather", Description: "Get the current weather in a given location",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + loc + `,"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}`),
	}}
	if withTime {
		tools = append(tools, agentrt.ToolSpec{
			Name: "getCurrentTime", Description: "Get the current time in a given location",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + loc + `},"required":["location"]}`),
		})
	}
	return tools
}

// toolsWithoutStrict returns the "tools" of a request body without their
// "strict": false, which the recording client did not send; it checks that
// every tool has it.
func toolsWithoutStrict(t *testing.T, body map[string]any) string {
	t.Helper()
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "tools")), &tools))
	for i, tool := range tools {
		fn, ok := tool["function"].(map[string]any)
		require.True(t, ok, "tool %d: %v", i, tool)
		assert.Equal(t, false, fn["strict"], "tool %d", i)
		delete(fn, "strict")
	}
	b, err := json.Marshal(tools)
	require.NoError(t, err)
	return string(b)
}

// TestRecordedLangchaingoStreamRequest replays OpenRouter's parallel calls
// and compares the adapter's request with the recorded one: the same
// messages, tools (strict off, as recorded) and stream options.
func TestRecordedLangchaingoStreamRequest(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, lcgo("openrouter-gemini-parallel-tool-calls-stream.sse")), sse: true})
	var streamed []string
	resp, err := srv.provider(&openai.Options{DisableStrict: true}).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What are the weather and time in Boston, MA?")},
		Tools:    lcgoWeatherTools(true),
		OnText:   func(s string) { streamed = append(streamed, s) },
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	for _, k := range []string{"messages", "stream", "stream_options"} {
		assert.JSONEq(t, recordedField(t, lcgo("openrouter-gemini-parallel-tool-calls-stream.request.json"), k), field(t, body, k), k)
	}
	assert.JSONEq(t, recordedField(t, lcgo("openrouter-gemini-parallel-tool-calls-stream.request.json"), "tools"), toolsWithoutStrict(t, body))
	assert.Empty(t, streamed, "no text was streamed")
	require.Len(t, resp.Message.ToolUses(), 2)
	assert.Equal(t, []string{"getCurrentWeather", "getCurrentTime"}, []string{resp.Message.ToolUses()[0].Name, resp.Message.ToolUses()[1].Name})
}

// TestRecordedLangchaingoStructuredOutput sends the recorded schema as
// ResponseSchema and compares the request: system and user messages, and
// a response_format of type json_schema with the schema unchanged (it is
// already strict).
func TestRecordedLangchaingoStructuredOutput(t *testing.T) {
	t.Parallel()
	const name = "structured-output.request.json"
	var recorded struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, lcgo(name)), &recorded))
	srv := newReplay(t, reply{body: fixture(t, lcgo("structured-output.response.json"))})
	resp, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		System:         "You are a student taking a math exam.",
		Messages:       []agentrt.Message{agentrt.NewUserMessage("Solve 2 + 2")},
		ResponseSchema: recorded.ResponseFormat.JSONSchema.Schema,
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, lcgo(name), "messages"), field(t, body, "messages"))
	var sent struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "response_format")), &sent))
	assert.Equal(t, recorded.ResponseFormat.Type, sent.Type)
	assert.Equal(t, recorded.ResponseFormat.JSONSchema.Strict, sent.JSONSchema.Strict)
	assert.JSONEq(t, string(recorded.ResponseFormat.JSONSchema.Schema), string(sent.JSONSchema.Schema))

	var answer struct {
		FinalAnswer string   `json:"final_answer"`
		Steps       []string `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp.Message.Text()), &answer))
	assert.Equal(t, "4", answer.FinalAnswer)
	assert.Len(t, answer.Steps, 3)
}

// TestRecordedLangchaingoMoonshotFollowUp replays Moonshot's two turns
// (kimi-k2.5 with thinking on): the tool call with its reasoning_content,
// then the answer to the tool result. The follow-up must carry the call
// (id "get_weather:0" and the arguments as sent) and the reasoning_content
// back, as the recorded request does; the tool result goes with the
// call's id.
func TestRecordedLangchaingoMoonshotFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, lcgo("moonshot-reasoning-tool-call.response.json"))},
		reply{body: fixture(t, lcgo("moonshot-reasoning-tool-result-followup.response.json"))})
	p := srv.provider(&openai.Options{DisableStrict: true})
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the weather in Beijing?")},
		Tools: []agentrt.ToolSpec{{
			Name: "get_weather", Description: "Get current weather for a location",
			InputSchema: json.RawMessage(`{"properties":{"location":{"description":"The city name","type":"string"}},"required":["location"],"type":"object"}`),
		}},
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.JSONEq(t, recordedField(t, lcgo("moonshot-reasoning-tool-call.request.json"), "messages"), field(t, srv.request(0).Body, "messages"))
	assert.JSONEq(t, recordedField(t, lcgo("moonshot-reasoning-tool-call.request.json"), "tools"), toolsWithoutStrict(t, srv.request(0).Body))

	call := resp.Message.ToolUses()[0]
	req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage(call.ID, `{"temperature": "22°C", "condition": "sunny"}`, false))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "The weather in Beijing is currently **22°C** and **sunny**. ☀️", resp.Message.Text())

	type toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent string     `json:"reasoning_content"`
		ToolCalls        []toolCall `json:"tool_calls"`
		ToolCallID       string     `json:"tool_call_id"`
	}
	var want struct {
		Messages []message `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, lcgo("moonshot-reasoning-tool-result-followup.request.json")), &want))
	var got []message
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "messages")), &got))
	require.Len(t, got, len(want.Messages))
	for i, w := range want.Messages {
		g := got[i]
		assert.Equal(t, w.Role, g.Role, "message %d", i)
		assert.Equal(t, w.ReasoningContent, g.ReasoningContent, "message %d", i)
		assert.Equal(t, w.ToolCalls, g.ToolCalls, "message %d", i)
		assert.Equal(t, w.ToolCallID, g.ToolCallID, "message %d", i)
		if w.Role != "assistant" { // the recording client sent content "" next to the calls; the adapter sends none
			assert.Equal(t, w.Content, g.Content, "message %d", i)
		}
	}
	assert.Equal(t, moonshotReasoning, got[1].ReasoningContent)
}

// TestRecordedLangchaingoImageURL sends an image by its https URL before
// the text, with a 300-token cap, and compares the request with the
// recorded one: the same content parts in the same order and
// max_completion_tokens.
func TestRecordedLangchaingoImageURL(t *testing.T) {
	t.Parallel()
	const name = "image-url.request.json"
	srv := newReplay(t, reply{body: fixture(t, lcgo("image-url.response.json"))})
	resp, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{{Role: agentrt.RoleUser, Blocks: []agentrt.Block{
			{Type: agentrt.BlockImage, URL: "https://github.com/tmc/langchaingo/blob/main/docs/static/img/parrot-icon.png?raw=true"},
			agentrt.TextBlock("describe this image in detail"),
		}}},
		MaxTokens: 300,
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	for _, k := range []string{"messages", "max_completion_tokens"} {
		assert.JSONEq(t, recordedField(t, lcgo(name), k), field(t, body, k), k)
	}
	assert.True(t, strings.HasPrefix(resp.Message.Text(), "The image is an emoji of a parrot."), resp.Message.Text())
	assert.True(t, strings.HasSuffix(resp.Message.Text(), "makes the bright colors of the parrot stand out."), resp.Message.Text())
	assert.Len(t, resp.Message.Text(), 380)
	assert.Equal(t, agentrt.Usage{InputTokens: 267, OutputTokens: 88}, resp.Usage)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, "gpt-4o-2024-08-06", resp.Model)
}
