package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay responses recorded from the real API
// (testdata/*.json, testdata/*.sse; see testdata/README.md) and check both
// directions: the request the adapter sent, field by field, and what it
// parsed from the reply.

// weatherSchema is the tool schema of the recorded tool-call requests.
const weatherSchema = `{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object"}`

// weatherStrict is weatherSchema as strict mode needs it.
const weatherStrict = `{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object","additionalProperties":false}`

const addSchema = `{"properties":{"a":{"description":"first number","type":"integer"},"b":{"description":"second number","type":"integer"}},"required":["a","b"],"type":"object"}`

func weatherRequest() *agentrt.ModelRequest {
	return &agentrt.ModelRequest{
		System:   "You are a helpful assistant",
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence,Italy?")},
		Tools: []agentrt.ToolSpec{{
			Name: "weather", Description: "Get weather information for a location",
			InputSchema: json.RawMessage(weatherSchema),
		}},
	}
}

func mathRequest() *agentrt.ModelRequest {
	return &agentrt.ModelRequest{
		System:   "You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("Add and multiply the number 2 and 3")},
		Tools: []agentrt.ToolSpec{
			{Name: "add", Description: "Add two numbers", InputSchema: json.RawMessage(addSchema)},
			{Name: "multiply", Description: "Multiply two numbers", InputSchema: json.RawMessage(addSchema)},
		},
	}
}

// recordedField returns a field of a recorded request fixture as JSON text.
func recordedField(t *testing.T, name, key string) string {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, name), &body))
	return field(t, body, key)
}

func TestText(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := srv.provider(nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:    "Be creative.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Invent a new holiday and describe its traditions.")},
		MaxTokens: 500,
	})
	require.NoError(t, err)

	req := srv.request(0)
	assert.Equal(t, "/v1/chat/completions", req.Path)
	assert.Equal(t, "Bearer test-key", req.Header.Get("Authorization"))
	assert.Equal(t, "gpt-4o", req.Body["model"])
	jsonEq(t, `[{"role":"system","content":"Be creative."},
		{"role":"user","content":"Invent a new holiday and describe its traditions."}]`, req.Body["messages"])
	assert.EqualValues(t, 500, req.Body["max_completion_tokens"])
	for _, absent := range []string{"tools", "stream", "stream_options", "max_tokens", "temperature", "response_format"} {
		assert.NotContains(t, req.Body, absent)
	}

	assert.Equal(t, agentrt.RoleAssistant, resp.Message.Role)
	require.Len(t, resp.Message.Blocks, 1)
	assert.True(t, strings.HasPrefix(resp.Message.Text(), "**Holiday Name:** Galaxy Day"), resp.Message.Text())
	assert.True(t, strings.HasSuffix(resp.Message.Text(), "dream beyond our world."), resp.Message.Text())
	assert.Contains(t, resp.Message.Text(), "darkness\u2014mirroring")
	assert.Equal(t, agentrt.Usage{InputTokens: 16, OutputTokens: 363}, resp.Usage)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, "gpt-4.1-nano-2025-04-14", resp.Model)
}

func TestTextStream(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text-stream.sse"), sse: true})
	p := srv.provider(nil)
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Invent a new holiday and describe its traditions.")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	body := srv.request(0).Body
	assert.Equal(t, true, body["stream"])
	jsonEq(t, `{"include_usage":true}`, body["stream_options"])
	jsonEq(t, `[{"role":"user","content":"Invent a new holiday and describe its traditions."}]`, body["messages"])

	// 303 chunks: a role chunk with empty content, 300 text deltas, the
	// finish chunk and the usage chunk.
	assert.Len(t, deltas, 300)
	assert.Equal(t, "**", deltas[0])
	assert.Equal(t, strings.Join(deltas, ""), resp.Message.Text())
	require.Len(t, resp.Message.Blocks, 1)
	assert.True(t, strings.HasPrefix(resp.Message.Text(), "**Holiday Name"), resp.Message.Text())
	assert.Equal(t, agentrt.Usage{InputTokens: 16, OutputTokens: 300}, resp.Usage)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, "gpt-4.1-nano-2025-04-14", resp.Model)
}

func TestToolCall(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "tool-call.response.json")})
	resp, err := srv.provider(nil).Plan(context.Background(), weatherRequest())
	require.NoError(t, err)

	// The messages are exactly those of the recorded request; the tool is
	// the recorded one, made strict.
	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, "tool-call.request.json", "messages"), field(t, body, "messages"))
	jsonEq(t, `[{"type":"function","function":{"name":"weather","description":"Get weather information for a location",
		"strict":true,"parameters":`+weatherStrict+`}}]`, body["tools"])
	assert.NotContains(t, body, "tool_choice")
	assert.NotContains(t, body, "parallel_tool_calls")

	want := agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_IUonKM9GCNis5eMRHuusMqoy", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 61, OutputTokens: 16}, resp.Usage)
	assert.Equal(t, "gpt-4o-2024-08-06", resp.Model)
}

func TestParallelToolCalls(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "parallel-tool-calls.response.json")})
	resp, err := srv.provider(nil).Plan(context.Background(), mathRequest())
	require.NoError(t, err)

	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, "parallel-tool-calls.request.json", "messages"), field(t, body, "messages"))
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "tools")), &tools))
	require.Len(t, tools, 2)
	for i, name := range []string{"add", "multiply"} {
		fn := tools[i]["function"].(map[string]any)
		assert.Equal(t, name, fn["name"])
		assert.Equal(t, true, fn["strict"])
		assert.Equal(t, false, fn["parameters"].(map[string]any)["additionalProperties"])
	}

	want := agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_fifE5poZ3dg3JDUKGFi48NGq", "add", json.RawMessage(`{"a": 2, "b": 3}`)),
		agentrt.ToolUseBlock("call_cvvIly4eGLZUYOMhAviT8jAF", "multiply", json.RawMessage(`{"a": 2, "b": 3}`)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 110, OutputTokens: 50}, resp.Usage)
}

func TestToolCallStreamSplitArguments(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "tool-call-stream.sse"), sse: true})
	req := weatherRequest()
	var deltas []string
	req.OnText = func(d string) { deltas = append(deltas, d) }
	resp, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)

	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, "tool-call-stream.request.json", "messages"), field(t, body, "messages"))
	assert.JSONEq(t, recordedField(t, "tool-call-stream.request.json", "stream_options"), field(t, body, "stream_options"))
	assert.Equal(t, true, body["stream"])

	// The arguments arrive in 8 fragments: {" location ":" Flor ence , Italy "}
	assert.Empty(t, deltas)
	want := agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_7kE4IjtnwXcGbX6hDM7xFu8T", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 61, OutputTokens: 16}, resp.Usage)
}

func TestParallelToolCallsStream(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "parallel-tool-calls-stream.sse"), sse: true})
	req := mathRequest()
	req.System = "You are a helpful assistant. Always use both add and multiply at the same time."
	req.OnText = func(string) { t.Error("OnText called for an answer without text") }
	resp, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)

	body := srv.request(0).Body
	assert.JSONEq(t, recordedField(t, "parallel-tool-calls-stream.request.json", "messages"), field(t, body, "messages"))

	want := agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_ehIWdjL1abZk1h8FWGLQ0Hie", "add", json.RawMessage(`{"a": 2, "b": 3}`)),
		agentrt.ToolUseBlock("call_fBSgA47J5VeONggizTIvl7AH", "multiply", json.RawMessage(`{"a": 2, "b": 3}`)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 106, OutputTokens: 50}, resp.Usage)
}

func TestTextThenToolCallStream(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text-then-tool-call-stream.sse"), sse: true})
	req := weatherRequest()
	var deltas []string
	req.OnText = func(d string) { deltas = append(deltas, d) }
	resp, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)

	assert.Equal(t, []string{"PRE", "_TOOL"}, deltas)
	want := agentrt.NewAssistantMessage(
		agentrt.TextBlock("PRE_TOOL"),
		agentrt.ToolUseBlock("call_NZa7xqfefoaMI2YYHowVXVlU", "weather", json.RawMessage(`{}`)),
	)
	assert.Equal(t, want, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 58, OutputTokens: 12}, resp.Usage)
}

func TestToolResultFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "tool-result-followup.response.json")})
	req := weatherRequest()
	req.Messages = append(req.Messages,
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_IUonKM9GCNis5eMRHuusMqoy", "weather", json.RawMessage(`{"location":"Florence, Italy"}`))),
		agentrt.NewToolMessage("call_IUonKM9GCNis5eMRHuusMqoy", "40 C", false),
	)
	resp, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)

	// The assistant's tool_calls and the tool message with its tool_call_id
	// are exactly what the recorded request sent.
	assert.JSONEq(t, recordedField(t, "tool-result-followup.request.json", "messages"), field(t, srv.request(0).Body, "messages"))

	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The weather in Florence, Italy is currently 40°C.")), resp.Message)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 86, OutputTokens: 13}, resp.Usage)
}

func TestParallelToolResultsFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "parallel-tool-results-followup.response.json")})
	req := mathRequest()
	req.Messages = append(req.Messages,
		agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("call_fifE5poZ3dg3JDUKGFi48NGq", "add", json.RawMessage(`{"a": 2, "b": 3}`)),
			agentrt.ToolUseBlock("call_cvvIly4eGLZUYOMhAviT8jAF", "multiply", json.RawMessage(`{"a": 2, "b": 3}`)),
		),
		agentrt.NewToolMessage("call_fifE5poZ3dg3JDUKGFi48NGq", "5", false),
		agentrt.NewToolMessage("call_cvvIly4eGLZUYOMhAviT8jAF", "6", false),
	)
	resp, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)

	assert.JSONEq(t, recordedField(t, "parallel-tool-results-followup.request.json", "messages"), field(t, srv.request(0).Body, "messages"))
	assert.Equal(t, "The result of adding 2 and 3 is 5, and the result of multiplying 2 and 3 is 6.", resp.Message.Text())
	assert.Equal(t, agentrt.Usage{InputTokens: 176, OutputTokens: 28}, resp.Usage)
}

// TestHistoryMapping checks the request shape for what the recordings lack
// (written here): text with tool calls, an error result, an assistant
// message without blocks, several turns.
func TestHistoryMapping(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Weather in Paris and Rome?"),
			agentrt.NewAssistantMessage(
				agentrt.TextBlock("Let me check. "),
				agentrt.ToolUseBlock("call_a", "weather", json.RawMessage(`{"city":"Paris"}`)),
				agentrt.TextBlock("Both cities."),
				agentrt.ToolUseBlock("call_b", "weather", nil),
			),
			agentrt.NewToolMessage("call_a", "18C", false),
			agentrt.NewToolMessage("call_b", "service unavailable", true),
			agentrt.NewToolMessage("call_c", "error: already says so", true),
			agentrt.NewAssistantMessage(),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_d", "weather", json.RawMessage(`"{\"city\":"`))),
			agentrt.NewUserMessage("Thanks"),
		},
	}
	_, err := srv.provider(nil).Plan(context.Background(), req)
	require.NoError(t, err)
	jsonEq(t, `[
		{"role":"user","content":"Weather in Paris and Rome?"},
		{"role":"assistant","content":"Let me check. Both cities.","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_b","type":"function","function":{"name":"weather","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_a","content":"18C"},
		{"role":"tool","tool_call_id":"call_b","content":"Error: service unavailable"},
		{"role":"tool","tool_call_id":"call_c","content":"error: already says so"},
		{"role":"assistant","content":""},
		{"role":"assistant","tool_calls":[
			{"id":"call_d","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]},
		{"role":"user","content":"Thanks"}]`, srv.request(0).Body["messages"])
}

func TestUnknownRole(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{{Role: "system", Content: "x"}},
	})
	require.ErrorContains(t, err, `unknown role "system"`)
	assert.Zero(t, srv.count(), "nothing is sent for an invalid request")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	temp := 0.25
	tests := []struct {
		name  string
		opts  *openai.Options
		req   *agentrt.ModelRequest
		check func(t *testing.T, body map[string]any)
	}{{
		name: "defaults",
		check: func(t *testing.T, body map[string]any) {
			assert.NotContains(t, body, "temperature")
			assert.NotContains(t, body, "max_completion_tokens")
			assert.NotContains(t, body, "max_tokens")
		},
	}, {
		name: "temperature and max tokens",
		opts: &openai.Options{Temperature: &temp, MaxTokens: 77},
		check: func(t *testing.T, body map[string]any) {
			assert.EqualValues(t, 0.25, body["temperature"])
			assert.EqualValues(t, 77, body["max_completion_tokens"])
		},
	}, {
		name: "request max tokens wins",
		opts: &openai.Options{MaxTokens: 77},
		req:  &agentrt.ModelRequest{MaxTokens: 12},
		check: func(t *testing.T, body map[string]any) {
			assert.EqualValues(t, 12, body["max_completion_tokens"])
		},
	}, {
		name: "max_tokens field",
		opts: &openai.Options{MaxTokens: 5, MaxTokensField: "max_tokens"},
		check: func(t *testing.T, body map[string]any) {
			assert.EqualValues(t, 5, body["max_tokens"])
			assert.NotContains(t, body, "max_completion_tokens")
		},
	}, {
		name: "another server's field",
		opts: &openai.Options{MaxTokens: 5, MaxTokensField: "n_predict"},
		check: func(t *testing.T, body map[string]any) {
			assert.EqualValues(t, 5, body["n_predict"])
			assert.NotContains(t, body, "max_tokens")
			assert.NotContains(t, body, "max_completion_tokens")
		},
	}, {
		name: "extra fields merged and overriding",
		opts: &openai.Options{ExtraFields: map[string]any{
			"reasoning_effort": "low", "parallel_tool_calls": false, "model": "other-model",
			"metadata": map[string]string{"k": "v"},
		}},
		req: &agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}},
		check: func(t *testing.T, body map[string]any) {
			assert.Equal(t, "low", body["reasoning_effort"])
			assert.Equal(t, false, body["parallel_tool_calls"])
			assert.Equal(t, "other-model", body["model"])
			jsonEq(t, `{"k":"v"}`, body["metadata"])
			assert.Contains(t, body, "tools")
		},
	}, {
		name: "strict disabled",
		opts: &openai.Options{DisableStrict: true},
		req:  &agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "weather", InputSchema: json.RawMessage(weatherSchema)}}},
		check: func(t *testing.T, body map[string]any) {
			jsonEq(t, `[{"type":"function","function":{"name":"weather","strict":false,"parameters":`+weatherSchema+`}}]`, body["tools"])
		},
	}, {
		name: "map schema is not strict",
		req: &agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "tag", Description: "Tag it.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"}}}}`)}}},
		check: func(t *testing.T, body map[string]any) {
			jsonEq(t, `[{"type":"function","function":{"name":"tag","description":"Tag it.","strict":false,
				"parameters":{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"}}}}}}]`, body["tools"])
		},
	}, {
		name: "tool without schema",
		req:  &agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "now", Description: "The time."}}},
		check: func(t *testing.T, body map[string]any) {
			jsonEq(t, `[{"type":"function","function":{"name":"now","description":"The time.","strict":true,
				"parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false}}}]`, body["tools"])
		},
	}, {
		name: "response schema",
		req: &agentrt.ModelRequest{ResponseSchema: json.RawMessage(
			`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}},"required":["answer"]}`)},
		check: func(t *testing.T, body map[string]any) {
			jsonEq(t, `{"type":"json_schema","json_schema":{"name":"response","strict":true,"schema":
				{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":["number","null"]}},
				"required":["answer","confidence"],"additionalProperties":false}}}`, body["response_format"])
		},
	}, {
		name: "response schema not strict",
		req:  &agentrt.ModelRequest{ResponseSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`)},
		check: func(t *testing.T, body map[string]any) {
			jsonEq(t, `{"type":"json_schema","json_schema":{"name":"response","strict":false,
				"schema":{"type":"array","items":{"type":"string"}}}}`, body["response_format"])
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: fixture(t, "text.json")})
			req := tt.req
			if req == nil {
				req = &agentrt.ModelRequest{}
			}
			req.Messages = []agentrt.Message{agentrt.NewUserMessage("hi")}
			_, err := srv.provider(tt.opts).Plan(context.Background(), req)
			require.NoError(t, err)
			tt.check(t, srv.request(0).Body)
		})
	}
}

func TestOptionsAreCopied(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	temp := 0.5
	opts := &openai.Options{Temperature: &temp, ExtraFields: map[string]any{"seed": 1}}
	p := srv.provider(opts)
	temp = 2
	opts.ExtraFields["seed"] = 2
	opts.MaxTokens = 9
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	body := srv.request(0).Body
	assert.EqualValues(t, 0.5, body["temperature"])
	assert.EqualValues(t, 1, body["seed"])
	assert.NotContains(t, body, "max_completion_tokens")
}

func TestInvalidToolSchema(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		Tools:    []agentrt.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`[1,2]`)}},
	})
	require.ErrorContains(t, err, `tool "bad": input schema is not a JSON object`)
	_, err = srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages:       []agentrt.Message{agentrt.NewUserMessage("hi")},
		ResponseSchema: json.RawMessage(`{"type":`),
	})
	require.ErrorContains(t, err, "ResponseSchema is not valid JSON")
	assert.Zero(t, srv.count())
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	p := openai.NewCompatible("http://localhost:11434/v1", "ollama", "llama3.2", nil)
	assert.Equal(t, agentrt.ProviderInfo{Name: "openai", Model: "llama3.2"}, p.Describe())
	// The runtime finds it on the Agent's Planner.
	var planner agentrt.Planner = p
	d, ok := planner.(interface{ Describe() agentrt.ProviderInfo })
	require.True(t, ok)
	assert.Equal(t, "llama3.2", d.Describe().Model)
	assert.Panics(t, func() { openai.NewCompatible("http://x", "k", "", nil) })
	assert.PanicsWithValue(t, "openai: New: negative MaxTokens -1", func() { openai.New(oai.NewClient(), "gpt-4.1", &openai.Options{MaxTokens: -1}) })
	assert.PanicsWithValue(t, "openai: NewResponses: negative MaxTokens -2", func() {
		openai.NewResponses(oai.NewClient(), "gpt-4.1", &openai.ResponsesOptions{MaxTokens: -2})
	})
}

func TestNewCompatible(t *testing.T) {
	// Not parallel: it sets environment variables.
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("OPENAI_ORG_ID", "org-must-not-leak")
	t.Setenv("OPENAI_PROJECT_ID", "proj-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/must-not-be-used")
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := openai.NewCompatible(srv.URL+"/v1", "ollama", "llama3.2", &openai.Options{MaxTokens: 64})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.NotEmpty(t, resp.Message.Text())

	req := srv.request(0)
	assert.Equal(t, "/v1/chat/completions", req.Path)
	assert.Equal(t, "Bearer ollama", req.Header.Get("Authorization"))
	assert.Empty(t, req.Header.Get("OpenAI-Organization"))
	assert.Empty(t, req.Header.Get("OpenAI-Project"))
	assert.Equal(t, "llama3.2", req.Body["model"])
	assert.EqualValues(t, 64, req.Body["max_tokens"], "compatible servers get max_tokens")
	assert.NotContains(t, req.Body, "max_completion_tokens")

	// No key: no Authorization header, and the environment's key is not sent.
	_, err = openai.NewCompatible(srv.URL+"/v1", "", "llama3.2", nil).Plan(context.Background(), hello())
	require.NoError(t, err)
	assert.Empty(t, srv.request(1).Header.Values("Authorization"))
}

// TestConcurrentUse: one Provider serves several goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "parallel-tool-calls-stream.sse"), sse: true})
	temp := 0.1
	p := srv.provider(&openai.Options{Temperature: &temp, ExtraFields: map[string]any{"seed": 7}})
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			req := mathRequest()
			req.OnText = func(string) {}
			resp, err := p.Plan(context.Background(), req)
			if err == nil && len(resp.Message.ToolUses()) != 2 {
				err = assert.AnError
			}
			errs <- err
		}()
	}
	for range n {
		assert.NoError(t, <-errs)
	}
	assert.Equal(t, n, srv.count())
}

// TestResponseEdgeCases covers replies the recordings lack (written here).
func TestResponseEdgeCases(t *testing.T) {
	t.Parallel()
	completion := func(message, finish string) []byte {
		return []byte(`{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06",
			"choices":[{"index":0,"message":` + message + `,"logprobs":null,"finish_reason":` + finish + `}],
			"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,
			"prompt_tokens_details":{"cached_tokens":4,"cache_write_tokens":2}}}`)
	}
	tests := []struct {
		name   string
		body   []byte
		want   agentrt.Message
		finish agentrt.FinishReason
	}{{
		name:   "refusal surfaced as text",
		body:   completion(`{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that."}`, `"stop"`),
		want:   agentrt.NewAssistantMessage(agentrt.TextBlock("I'm sorry, I can't help with that.")),
		finish: agentrt.FinishContentFilter,
	}, {
		name:   "length",
		body:   completion(`{"role":"assistant","content":"Once upon a"}`, `"length"`),
		want:   agentrt.NewAssistantMessage(agentrt.TextBlock("Once upon a")),
		finish: agentrt.FinishLength,
	}, {
		name:   "content filter",
		body:   completion(`{"role":"assistant","content":""}`, `"content_filter"`),
		want:   agentrt.NewAssistantMessage(),
		finish: agentrt.FinishContentFilter,
	}, {
		name: "stop with tool calls (Ollama)",
		body: completion(`{"role":"assistant","content":"","tool_calls":[{"id":"call_x","type":"function",
			"function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]}`, `"stop"`),
		want:   agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_x", "weather", json.RawMessage(`{"city":"Oslo"}`))),
		finish: agentrt.FinishToolUse,
	}, {
		name: "empty and invalid arguments",
		body: completion(`{"role":"assistant","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"now","arguments":""}},
			{"id":"call_2","type":"function","function":{"name":"weather","arguments":"{\"city\": \"Os"}}]}`, `"tool_calls"`),
		want: agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("call_1", "now", json.RawMessage(`{}`)),
			agentrt.ToolUseBlock("call_2", "weather", json.RawMessage(`"{\"city\": \"Os"`)),
		),
		finish: agentrt.FinishToolUse,
	}, {
		name:   "unknown finish reason",
		body:   completion(`{"role":"assistant","content":"hm"}`, `"something_new"`),
		want:   agentrt.NewAssistantMessage(agentrt.TextBlock("hm")),
		finish: agentrt.FinishOther,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: tt.body})
			resp, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Message)
			assert.Equal(t, tt.finish, resp.Finish)
			assert.Equal(t, agentrt.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 4, CacheWriteTokens: 2}, resp.Usage)
		})
	}
}

// TestInvalidArgumentsRoundTrip: arguments that are not JSON come back to
// the API as the model sent them.
func TestInvalidArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	bad := `{"city": "Os`
	srv := newReplay(t,
		reply{body: []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
			"message":{"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"weather","arguments":` + strconvQuote(bad) + `}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)},
		reply{body: fixture(t, "text.json")},
	)
	p := srv.provider(nil)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage("call_2", "input is not valid JSON", true))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	msgs := srv.request(1).Body["messages"].([]any)
	call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, bad, call["function"].(map[string]any)["arguments"])
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
