package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay exchanges that crewAIInc/crewAI recorded
// with VCR: Azure OpenAI's Chat Completions (a streamed tool call after
// the prompt filter chunk, cached prompt tokens, structured output with a
// tool and its result) and Responses API (gpt-5.2-chat), and a Cerebras
// stream; see testdata/crewai/README.md.

func crew(name string) string { return "crewai/" + name }

// TestRecordedCrewAIChat replays the Chat Completions answers: blocks,
// usage, finish, model.
func TestRecordedCrewAIChat(t *testing.T) {
	t.Parallel()
	const mini = "gpt-4o-mini-2024-07-18"
	cases := []recordedCase{
		{
			// A first chunk with no choices, id or model (the prompt filter
			// results), then the call's id and name with empty arguments,
			// the arguments in 6 fragments, the finish chunk, the usage chunk.
			name: "azure tool call streamed", file: crew("azure-tool-call-stream.sse"), stream: true,
			blocks: []wantBlock{toolUse("call_zcFxlNpTgj5dBYWyVUJcEkYr", "get_current_temperature", `{"city":"San Francisco"}`)},
			usage:  agentrt.Usage{InputTokens: 66, OutputTokens: 17}, finish: agentrt.FinishToolUse, model: mini,
		},
		{
			// Chunks without finish_reason or logprobs; usage (and Cerebras'
			// time_info) on the finish chunk, no usage chunk.
			name: "cerebras text streamed", file: crew("cerebras-text-stream.sse"), stream: true,
			blocks: []wantBlock{text("One, two, three. What's next?")},
			usage:  agentrt.Usage{InputTokens: 43, OutputTokens: 11}, finish: agentrt.FinishStop, model: "llama3.1-8b",
		},
		{
			// prompt_tokens counts the cached ones.
			name: "azure tool call, cached prompt", file: crew("azure-cached-prompt-tool-call.response.json"),
			blocks: []wantBlock{toolUse("call_AHuNtncjS7lovtWiVRfmLpMs", "get_weather", `{"location":"Tokyo"}`)},
			usage:  agentrt.Usage{InputTokens: 1750, OutputTokens: 15, CacheReadTokens: 1664}, finish: agentrt.FinishToolUse, model: "gpt-4.1-2025-04-14",
		},
		{
			name: "azure structured output, tool call", file: crew("azure-structured-output-tool-call.response.json"),
			blocks: []wantBlock{toolUse("call_yusjHcc6BMO8J3LrKrcXty8H", "add_numbers", `{"a":15,"b":27}`)},
			usage:  agentrt.Usage{InputTokens: 194, OutputTokens: 19}, finish: agentrt.FinishToolUse, model: mini,
		},
		{
			name: "azure structured output, answer", file: crew("azure-structured-output-tool-result-followup.response.json"),
			blocks: []wantBlock{text(`{"operation":"addition","result":42,"explanation":"The sum of 15 and 27 is calculated by adding the two numbers together."}`)},
			usage:  agentrt.Usage{InputTokens: 221, OutputTokens: 36}, finish: agentrt.FinishStop, model: mini,
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// TestRecordedCrewAIAzureResponses replays Azure OpenAI's Responses API
// answers (gpt-5.2-chat, stored): a reasoning item with an empty summary
// and no encrypted content, then the message, with Azure's
// content_filters beside the output.
func TestRecordedCrewAIAzureResponses(t *testing.T) {
	t.Parallel()
	rs := func(id string) wantBlock { return withID(thinking(""), id) }
	cases := []recordedCase{
		{
			name: "text", file: crew("azure-responses-text.response.json"),
			blocks: []wantBlock{rs("rs_02861ec017218a520069f23d2287ac819399dd23b8dd56028e"), text("Hello! 👋")},
			usage:  agentrt.Usage{InputTokens: 12, OutputTokens: 21}, finish: agentrt.FinishStop, model: "gpt-5.2-chat",
		},
		{
			name: "web_search_preview declared, not called", file: crew("azure-responses-web-search-preview.response.json"),
			blocks: []wantBlock{rs("rs_0d80ad9adad65fca0069f23d0d8b8c8194b1a9ab61ddc3420d"), text("2 + 2 = 4.")},
			usage:  agentrt.Usage{InputTokens: 4312, OutputTokens: 28}, finish: agentrt.FinishStop, model: "gpt-5.2-chat",
		},
	}
	replayCases(t, cases, fixture, responsesAPI)
}

// TestRecordedCrewAIAzureResponsesNextTurn checks what the adapter sends
// after Azure's answer: its reasoning item has no encrypted content, so
// it cannot go back with "store": false; the text goes back as an
// assistant message. The first request's user message is the recorded
// one.
func TestRecordedCrewAIAzureResponsesNextTurn(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, crew("azure-responses-text.response.json"))})
	p := srv.responses(&openai.ResponsesOptions{NoPromptCacheKey: true})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Say hello in one sentence.")}}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 2)
	assert.Empty(t, resp.Message.Blocks[0].Signature, "no encrypted content was returned")

	rec := recordedItems(t, crew("azure-responses-text.request.json"))
	sent := sentItems(t, srv.request(0).Body)
	require.Len(t, sent, len(rec))
	// Recorded as {"role":"user","content":"…"}; the adapter sends the
	// text as one input_text part.
	assert.Equal(t, rec[0]["role"], sent[0]["role"])
	jsonEq(t, `[{"type":"input_text","text":"Say hello in one sentence."}]`, sent[0]["content"])

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("Again."))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	items := sentItems(t, srv.request(1).Body)
	require.Len(t, items, 3, "items: %v", items)
	jsonEq(t, `{"role":"assistant","content":"Hello! 👋"}`, items[1])
	for _, it := range items {
		assert.NotEqual(t, "reasoning", it["type"], "a reasoning item without encrypted content: %v", it)
	}
}

// TestRecordedCrewAIAzureStructuredOutput plays the recorded agent run
// (Azure OpenAI, gpt-4o-mini): a tool call answered with a structured
// output schema set, then the tool's result. The adapter's second request
// must carry the conversation the server accepted, and the schemas as
// recorded (they are already in strict form, in the same key order).
func TestRecordedCrewAIAzureStructuredOutput(t *testing.T) {
	t.Parallel()
	var first struct {
		ResponseFormat struct {
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, crew("azure-structured-output-tool-call.request.json")), &first))
	require.Len(t, first.Tools, 1)
	tool := first.Tools[0].Function

	srv := newReplay(t,
		reply{body: fixture(t, crew("azure-structured-output-tool-call.response.json"))},
		reply{body: fixture(t, crew("azure-structured-output-tool-result-followup.response.json"))})
	p := srv.provider(&openai.Options{NoPromptCacheKey: true})
	req := &agentrt.ModelRequest{
		System:         "You are Calculator. You are a calculator assistant that uses tools to compute results.\nYour personal goal is: Perform calculations using available tools",
		Messages:       []agentrt.Message{agentrt.NewUserMessage("\nCurrent Task: Calculate 15 + 27 using your add_numbers tool. Report the result.")},
		Tools:          []agentrt.ToolSpec{{Name: tool.Name, Description: tool.Description, InputSchema: tool.Parameters}},
		ResponseSchema: first.ResponseFormat.JSONSchema.Schema,
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage(resp.Message.Blocks[0].ID, "42", false))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, `{"operation":"addition","result":42,"explanation":"The sum of 15 and 27 is calculated by adding the two numbers together."}`, resp.Message.Text())

	for i, name := range []string{"azure-structured-output-tool-call.request.json", "azure-structured-output-tool-result-followup.request.json"} {
		body := srv.request(i).Body
		var rec []map[string]any
		require.NoError(t, json.Unmarshal([]byte(recordedField(t, crew(name), "messages")), &rec))
		var sent []map[string]any
		require.NoError(t, json.Unmarshal([]byte(field(t, body, "messages")), &sent))
		if i == 1 {
			// The recording client sent "content": "" beside the tool
			// calls; the adapter leaves content out, which the API
			// accepts as well.
			require.Len(t, rec, 4)
			assert.Equal(t, "", rec[2]["content"])
			delete(rec[2], "content")
		}
		assert.Equal(t, rec, sent, "request %d: messages", i)

		// The schemas as recorded, their properties in the recorded order.
		var got struct {
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Schema json.RawMessage `json:"schema"`
					Strict bool            `json:"strict"`
				} `json:"json_schema"`
			} `json:"response_format"`
			Tools []struct {
				Function struct {
					Parameters json.RawMessage `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(srv.request(i).Raw, &got))
		assert.Equal(t, "json_schema", got.ResponseFormat.Type)
		assert.True(t, got.ResponseFormat.JSONSchema.Strict)
		assert.JSONEq(t, string(first.ResponseFormat.JSONSchema.Schema), string(got.ResponseFormat.JSONSchema.Schema), "request %d: schema", i)
		assert.Equal(t, properties(t, first.ResponseFormat.JSONSchema.Schema), properties(t, got.ResponseFormat.JSONSchema.Schema), "request %d: schema properties in order", i)
		require.Len(t, got.Tools, 1)
		assert.JSONEq(t, string(tool.Parameters), string(got.Tools[0].Function.Parameters), "request %d: tool parameters", i)
		assert.Equal(t, properties(t, tool.Parameters), properties(t, got.Tools[0].Function.Parameters), "request %d: tool properties in order", i)
	}
}

// properties returns the "properties" of the JSON Schema b as compact
// JSON text, its key order kept: the model writes the properties in that
// order. (The order of the schema's own keywords does not matter; the SDK
// sends them sorted.)
func properties(t *testing.T, b json.RawMessage) string {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &top))
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, top["properties"]))
	return buf.String()
}

// TestRecordedCrewAIStreamRequests compares the adapter's streamed
// requests with the recorded ones: messages, stream_options and, for
// Cerebras (reached through New), max_completion_tokens.
func TestRecordedCrewAIStreamRequests(t *testing.T) {
	t.Parallel()
	t.Run("azure tool call", func(t *testing.T) {
		t.Parallel()
		name := crew("azure-tool-call-stream.request.json")
		var tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		require.NoError(t, json.Unmarshal([]byte(recordedField(t, name, "tools")), &tools))
		require.Len(t, tools, 1)
		f := tools[0].Function
		srv := newReplay(t, reply{body: fixture(t, crew("azure-tool-call-stream.sse")), sse: true})
		p := srv.provider(&openai.Options{NoPromptCacheKey: true})
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("What is the temperature in San Francisco?")},
			Tools:    []agentrt.ToolSpec{{Name: f.Name, Description: f.Description, InputSchema: f.Parameters}},
			OnText:   func(string) {},
		})
		require.NoError(t, err)
		body := srv.request(0).Body
		assert.JSONEq(t, recordedField(t, name, "messages"), field(t, body, "messages"))
		assert.JSONEq(t, recordedField(t, name, "stream_options"), field(t, body, "stream_options"))
		assert.Equal(t, true, body["stream"])
		// Sent strict, so closed, with the recorded properties and required.
		var sent []struct {
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		}
		require.NoError(t, json.Unmarshal([]byte(field(t, body, "tools")), &sent))
		require.Len(t, sent, 1)
		var want map[string]any
		require.NoError(t, json.Unmarshal(f.Parameters, &want))
		assert.Equal(t, f.Name, sent[0].Function.Name)
		assert.Equal(t, want["properties"], sent[0].Function.Parameters["properties"])
		assert.Equal(t, want["required"], sent[0].Function.Parameters["required"])
		assert.Equal(t, false, sent[0].Function.Parameters["additionalProperties"])
	})
	t.Run("cerebras", func(t *testing.T) {
		t.Parallel()
		name := crew("cerebras-text-stream.request.json")
		srv := newReplay(t, reply{body: fixture(t, crew("cerebras-text-stream.sse")), sse: true})
		p := openai.NewCompatible(srv.URL+"/v1", "", "llama3.1-8b", &openai.Options{MaxTokensField: "max_completion_tokens"})
		var streamed string
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages:  []agentrt.Message{agentrt.NewUserMessage("Count: one, two, three.")},
			MaxTokens: 32,
			OnText:    func(s string) { streamed += s },
		})
		require.NoError(t, err)
		assert.Equal(t, "One, two, three. What's next?", streamed)
		assert.Equal(t, agentrt.Usage{InputTokens: 43, OutputTokens: 11}, resp.Usage)
		body := srv.request(0).Body
		for _, k := range []string{"model", "max_completion_tokens", "messages", "stream", "stream_options"} {
			assert.JSONEq(t, recordedField(t, name, k), field(t, body, k), k)
		}
	})
}
