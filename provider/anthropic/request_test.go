package anthropic

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Request mapping cases the recordings lack; the response bodies are
// recorded ones, the requests are written here.

func TestToolResultsGroupedWithIsError(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Weather in Paris and Rome, and 2+2?"),
			agentrt.NewAssistantMessage(
				agentrt.TextBlock("Checking."),
				agentrt.ToolUseBlock("toolu_1", "weather", json.RawMessage(`{"city":"Paris"}`)),
				agentrt.ToolUseBlock("toolu_2", "weather", json.RawMessage(`{"city":"Rome"}`)),
				agentrt.ToolUseBlock("toolu_3", "calc", nil),
			),
			agentrt.NewToolMessage("toolu_1", "18°C, cloudy", false),
			agentrt.NewToolMessage("toolu_2", `unknown city "Rome"`, true),
			agentrt.NewToolMessage("toolu_3", "", false),
			agentrt.NewAssistantMessage(agentrt.TextBlock("Paris is 18°C. I could not get Rome.")),
			agentrt.NewUserMessage("Thanks."),
		},
	})
	require.NoError(t, err)

	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Weather in Paris and Rome, and 2+2?"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
			{"type":"tool_use","id":"toolu_2","name":"weather","input":{"city":"Rome"}},
			{"type":"tool_use","id":"toolu_3","name":"calc","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"18°C, cloudy"}]},
			{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"unknown city \"Rome\""}]},
			{"type":"tool_result","tool_use_id":"toolu_3"}]},
		{"role":"assistant","content":[{"type":"text","text":"Paris is 18°C. I could not get Rome."}]},
		{"role":"user","content":[{"type":"text","text":"Thanks."}]}
	]`, jsonOf(t, r.only().json(t)["messages"]))
}

func TestMessagesMerged(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("first"),
			agentrt.NewUserMessage(""), // empty text is refused by the API: left out
			agentrt.NewUserMessage("second"),
			agentrt.NewAssistantMessage(agentrt.TextBlock("")), // empty: left out
			agentrt.NewUserMessage("third"),
			// A tool_use whose input another provider stored as non-object JSON.
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("t1", "calc", json.RawMessage(`"2+2"`))),
			agentrt.NewToolMessage("t1", "input must be a JSON object", true),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("t2", "calc", json.RawMessage(`{"a": 1,`))),
			agentrt.NewToolMessage("t2", "input is not valid JSON", true),
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"first"},{"type":"text","text":"second"},{"type":"text","text":"third"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"calc","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"input must be a JSON object"}]}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"calc","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"input is not valid JSON"}]}]}
	]`, jsonOf(t, r.only().json(t)["messages"]))
}

// The API refuses a text block of whitespace alone ("text content blocks
// must contain non-whitespace text"), which an answer can leave once its
// server tool calls are left out: an assistant's or a tool result's goes.
func TestWhitespaceTextLeftOut(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("search"),
			agentrt.NewAssistantMessage(agentrt.TextBlock(" "), agentrt.TextBlock("Found it."), agentrt.TextBlock("\n\n")),
			agentrt.NewUserMessage("and?"),
			agentrt.NewAssistantMessage(agentrt.TextBlock("\n"), agentrt.ToolUseBlock("t1", "ls", json.RawMessage(`{}`))),
			agentrt.NewToolMessage("t1", " \n", false),
			agentrt.NewAssistantMessage(agentrt.TextBlock(" ")),
			agentrt.NewUserMessage("ok"),
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"search"}]},
		{"role":"assistant","content":[{"type":"text","text":"Found it."}]},
		{"role":"user","content":[{"type":"text","text":"and?"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"ok"}]}
	]`, jsonOf(t, r.only().json(t)["messages"]))
}

func TestMaxTokensAndOptions(t *testing.T) {
	t.Parallel()
	temp := 0.25
	tests := []struct {
		name    string
		opts    *Options
		reqMax  int
		wantMax float64
		check   func(t *testing.T, body map[string]any)
	}{
		{name: "default", opts: &Options{MaxRetries: -1}, wantMax: DefaultMaxTokens},
		{name: "options", opts: &Options{MaxRetries: -1, MaxTokens: 1000}, wantMax: 1000},
		{name: "request wins", opts: &Options{MaxRetries: -1, MaxTokens: 1000}, reqMax: 300, wantMax: 300},
		{
			name:    "temperature and extra fields",
			opts:    &Options{MaxRetries: -1, Temperature: &temp, ExtraFields: map[string]any{"metadata": map[string]any{"user_id": "u-42"}, "service_tier": "standard_only"}},
			wantMax: DefaultMaxTokens,
			check: func(t *testing.T, body map[string]any) {
				assert.InDelta(t, 0.25, body["temperature"], 1e-9)
				assert.JSONEq(t, `{"user_id":"u-42"}`, jsonOf(t, body["metadata"]))
				assert.Equal(t, "standard_only", body["service_tier"])
			},
		},
		{
			name:    "extra field replaces an adapter field",
			opts:    &Options{MaxRetries: -1, Temperature: &temp, ExtraFields: map[string]any{"temperature": 1, "system": "from extras"}},
			wantMax: DefaultMaxTokens,
			check: func(t *testing.T, body map[string]any) {
				assert.EqualValues(t, 1, body["temperature"])
				assert.Equal(t, "from extras", body["system"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, jsonReply(fixture(t, "text.json")))
			_, err := New(r.client(), "claude-sonnet-4-5", tt.opts).Plan(context.Background(), &agentrt.ModelRequest{
				System:    "sys",
				Messages:  []agentrt.Message{agentrt.NewUserMessage("hi")},
				MaxTokens: tt.reqMax,
			})
			require.NoError(t, err)
			body := r.only().json(t)
			assert.InDelta(t, tt.wantMax, body["max_tokens"], 0)
			if tt.check != nil {
				tt.check(t, body)
			} else {
				assert.NotContains(t, body, "temperature")
			}
		})
	}
}

func TestOptionsMapIsCopied(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	extras := map[string]any{"service_tier": "auto"}
	p := New(r.client(), "claude-sonnet-4-5", &Options{MaxRetries: -1, ExtraFields: extras})
	extras["service_tier"] = "changed later"
	extras["other"] = true
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	body := r.only().json(t)
	assert.Equal(t, "auto", body["service_tier"])
	assert.NotContains(t, body, "other")
}

// A max_tokens too large for a non-streaming call (the SDK refuses those)
// is sent as a stream, and the message assembled as usual.
func TestLargeMaxTokensStreams(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "text-stream.sse")))
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages:  []agentrt.Message{agentrt.NewUserMessage("hi")},
		MaxTokens: 64000,
	})
	require.NoError(t, err)
	body := r.only().json(t)
	assert.Equal(t, true, body["stream"])
	assert.EqualValues(t, 64000, body["max_tokens"])
	assert.Equal(t, "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?", resp.Message.Text())
}

func TestResponseSchema(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply([]byte(`{"model":"claude-sonnet-4-5","id":"msg_1","type":"message","role":"assistant",
		"content":[{"type":"text","text":"{\"city\":\"Paris\",\"temp_c\":18}"}],"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":40,"output_tokens":12}}`)))
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages:       []agentrt.Message{agentrt.NewUserMessage("Weather in Paris as JSON.")},
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"integer","minimum":-90}},"required":["city","temp_c"]}`),
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":{"type":"json_schema","schema":{
		"type":"object","additionalProperties":false,"required":["city","temp_c"],
		"properties":{"city":{"type":"string"},"temp_c":{"type":"integer","description":"{minimum: -90}"}}}}}`,
		jsonOf(t, r.only().json(t)["output_config"]))
	assert.JSONEq(t, `{"city":"Paris","temp_c":18}`, resp.Message.Text())
}

func TestInvalidRequestNotSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  agentrt.ModelRequest
		want string
	}{
		{
			name: "tool schema not an object",
			req:  agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)}}},
			want: `tool "bad": input schema must have "type": "object"`,
		},
		{
			name: "tool schema not JSON",
			req:  agentrt.ModelRequest{Tools: []agentrt.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}}},
			want: `tool "bad": input schema is not a JSON object`,
		},
		{
			name: "response schema not an object",
			req:  agentrt.ModelRequest{ResponseSchema: json.RawMessage(`[1]`)},
			want: "response schema: not a JSON object",
		},
		{
			name: "unknown role",
			req:  agentrt.ModelRequest{Messages: []agentrt.Message{{Role: "system", Content: "x"}}},
			want: `message 1: unknown role "system"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t)
			req := tt.req
			req.Messages = append([]agentrt.Message{agentrt.NewUserMessage("hi")}, req.Messages...)
			_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &req)
			require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, r.requests(), "nothing is sent")
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	p := New(newReplay(t).client(), "claude-haiku-4-5", nil)
	assert.Equal(t, agentrt.ProviderInfo{Name: "anthropic", Model: "claude-haiku-4-5"}, p.Describe())
	var planner agentrt.Planner = p
	d, ok := planner.(interface{ Describe() agentrt.ProviderInfo })
	require.True(t, ok)
	assert.Equal(t, "anthropic", d.Describe().Name)
	assert.Panics(t, func() { New(newReplay(t).client(), "", nil) })
	assert.PanicsWithValue(t, "anthropic: New: negative MaxTokens -1", func() { New(newReplay(t).client(), "claude-haiku-4-5", &Options{MaxTokens: -1}) })
}

// The recipe of the Temperature doc: a client pinned to the API version
// that still takes sampling parameters.
func TestTemperatureWithPinnedVersion(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	client := sdk.NewClient(
		option.WithBaseURL(r.srv.URL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(r.srv.Client()),
		option.WithHeader("anthropic-version", "2023-06-01"),
	)
	temp := 0.0
	_, err := New(client, "claude-sonnet-4-5", &Options{Temperature: &temp}).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
	})
	require.NoError(t, err)
	got := r.only()
	assert.Equal(t, "2023-06-01", got.header.Get("Anthropic-Version"))
	body := got.json(t)
	require.Contains(t, body, "temperature")
	assert.EqualValues(t, 0, body["temperature"], "a zero temperature is sent, not omitted")
}

// Ids other vendors gave their calls (Kimi's "functions.add:0", as in
// the openai package's recording of Kimi on Groq) hold characters the
// API refuses in a tool_use id; each goes in a form it takes, the same in
// the call and its result, and ids that differ stay apart.
func TestForeignToolUseIDs(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	ids := []string{"functions.add:0", "functions.add:1", "functions_add_0", "a.b", "a:b", "звонок", "toolu_01A-b_c"}
	var uses []agentrt.Block
	msgs := []agentrt.Message{agentrt.NewUserMessage("add")}
	for _, id := range ids {
		uses = append(uses, agentrt.ToolUseBlock(id, "add", json.RawMessage(`{}`)))
	}
	msgs = append(msgs, agentrt.NewAssistantMessage(uses...))
	for _, id := range ids {
		msgs = append(msgs, agentrt.NewToolMessage(id, "2", false))
	}
	_, err := r.provider("m", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)

	sent := r.requests()[0].json(t)["messages"].([]any)
	require.Len(t, sent, 3)
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	var useIDs, resultIDs []string
	for _, b := range sent[1].(map[string]any)["content"].([]any) {
		useIDs = append(useIDs, b.(map[string]any)["id"].(string))
	}
	for _, b := range sent[2].(map[string]any)["content"].([]any) {
		resultIDs = append(resultIDs, b.(map[string]any)["tool_use_id"].(string))
	}
	require.Equal(t, useIDs, resultIDs, "each result names its call")
	seen := map[string]bool{}
	for i, id := range useIDs {
		assert.Regexp(t, valid, id)
		assert.False(t, seen[id], "%q and another id sent as %q", ids[i], id)
		seen[id] = true
	}
	assert.Equal(t, "toolu_01A-b_c", useIDs[6], "a valid id goes as it is")
	assert.Equal(t, "functions_add_0", useIDs[2])
	assert.True(t, strings.HasPrefix(useIDs[0], "functions_add_0_"), useIDs[0])

	// The same session sent again gives the same bytes (the prompt cache).
	r2 := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err = r2.provider("m", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	assert.Equal(t, r.requests()[0].body, r2.requests()[0].body)
}
