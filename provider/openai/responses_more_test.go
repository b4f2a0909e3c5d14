package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/provider/openai"
)

// The replies of these tests are written from the API reference: no
// recording has images in the input, tool results with media, structured
// output, refusals, incomplete or failed responses.

// Images and PDFs in a user message and in a tool result, by bytes and by
// URL, in the shapes of the API reference (input_image, input_file).
func TestResponsesContent(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
	pdf := []byte("%PDF-1.4 test")
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("Look:", agentrt.ImageBlock("image/png", agenttest.PNG),
			agentrt.DocumentBlock("a.pdf", "application/pdf", pdf),
			agentrt.Block{Type: agentrt.BlockDocument, URL: "https://example.com/b.pdf"},
			agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/c.png"}),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me render it."), agentrt.ToolUseBlock("call_1", "render", nil)),
		{Role: agentrt.RoleTool, ToolUseID: "call_1", Content: "rendered", Blocks: []agentrt.Block{
			agentrt.ImageBlock("image/png", agenttest.PNG), agentrt.DocumentBlock("", "application/pdf", pdf)}},
	}}
	_, err := srv.responses(nil).Plan(context.Background(), req)
	require.NoError(t, err)
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(agenttest.PNG)
	pdfURL := "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(pdf)
	jsonEq(t, `[
		{"role":"user","content":[{"type":"input_text","text":"Look:"},
			{"type":"input_image","detail":"auto","image_url":"`+png+`"},
			{"type":"input_file","filename":"a.pdf","file_data":"`+pdfURL+`"},
			{"type":"input_file","file_url":"https://example.com/b.pdf"},
			{"type":"input_image","detail":"auto","image_url":"https://example.com/c.png"}]},
		{"role":"assistant","content":"Let me render it."},
		{"type":"function_call","call_id":"call_1","name":"render","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"rendered"},
			{"type":"input_image","detail":"auto","image_url":"`+png+`"},
			{"type":"input_file","filename":"document.pdf","file_data":"`+pdfURL+`"}]}]`, srv.request(0).Body["input"])
}

// Content the API cannot take is refused before any request.
func TestResponsesUnsupportedContent(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]agentrt.Block{
		"audio":      agentrt.DocumentBlock("a.wav", "audio/wav", []byte("RIFF")),
		"text file":  agentrt.DocumentBlock("a.txt", "text/plain", []byte("hi")),
		"svg image":  agentrt.ImageBlock("image/svg+xml", []byte("<svg/>")),
		"tool_use":   agentrt.ToolUseBlock("x", "y", nil),
		"unknown":    agentrt.DocumentBlock("d", agenttest.UnsupportedMediaType, []byte{1}),
		"empty file": {Type: agentrt.BlockDocument},
		// A Block cannot reference an uploaded file by id: a URL field
		// holding one is refused, not sent as a URL.
		"file id as a document URL": {Type: agentrt.BlockDocument, URL: "file-6F2ksmvXxt4VdoqmHRw6kL", MediaType: "application/pdf"},
		"file id as an image URL":   {Type: agentrt.BlockImage, URL: "file-6F2ksmvXxt4VdoqmHRw6kL", MediaType: "image/png"},
	} {
		for _, inTool := range []bool{false, true} {
			srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi", b)}}
			if inTool {
				req.Messages = []agentrt.Message{agentrt.NewUserMessage("hi"),
					agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c", "t", nil)),
					{Role: agentrt.RoleTool, ToolUseID: "c", Content: "x", Blocks: []agentrt.Block{b}}}
			}
			_, err := srv.responses(nil).Plan(context.Background(), req)
			assert.ErrorIs(t, err, agentrt.ErrUnsupportedContent, "%s (in a tool result: %v)", name, inTool)
			assert.Zero(t, srv.count(), name)
		}
	}
}

// Structured output goes as text.format json_schema, strict, with the
// properties in the order given; the options reach the body.
func TestResponsesRequestOptions(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
	temp := 0.5
	p := srv.responses(&openai.ResponsesOptions{Temperature: &temp, MaxTokens: 99, PromptCacheKey: "user-42",
		ReasoningEffort: "low", ExtraFields: map[string]any{"service_tier": "flex"}})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:         "Be brief.",
		Messages:       []agentrt.Message{agentrt.NewUserMessage("")},
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta","alpha"]}`),
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	assert.NotContains(t, body, "instructions")
	jsonEq(t, `[{"role":"developer","content":"Be brief."},{"role":"user","content":[{"type":"input_text","text":""}]}]`, body["input"], "an empty text is sent")
	assert.Equal(t, "user-42", body["prompt_cache_key"])
	assert.EqualValues(t, 99, body["max_output_tokens"])
	assert.EqualValues(t, 0.5, body["temperature"])
	assert.Equal(t, "flex", body["service_tier"])
	assert.Equal(t, false, body["store"])
	jsonEq(t, `["reasoning.encrypted_content"]`, body["include"])
	jsonEq(t, `{"effort":"low"}`, body["reasoning"])
	assert.NotContains(t, body, "previous_response_id")
	assert.NotContains(t, body, "tools")
	assert.NotContains(t, body, "tool_choice")
	jsonEq(t, `{"format":{"type":"json_schema","name":"response","strict":true,
		"schema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta","alpha"],"additionalProperties":false}}}`, body["text"])
}

// A refusal, an answer cut by max_output_tokens, and a failed response.
func TestResponsesFinish(t *testing.T) {
	t.Parallel()
	const usage = `"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`
	tests := []struct {
		name, body string
		want       agentrt.FinishReason
		text       string
		kind       error
	}{
		{"refusal", `{"id":"r","status":"completed","output":[{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]}],` + usage + `}`,
			agentrt.FinishContentFilter, "I can't help with that.", nil},
		{"max tokens", `{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","id":"m","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"Once upon","annotations":[]}]}],` + usage + `}`,
			agentrt.FinishLength, "Once upon", nil},
		{"content filter", `{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[],` + usage + `}`,
			agentrt.FinishContentFilter, "", nil},
		{"failed", `{"id":"r","status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[],` + usage + `}`,
			"", "", agentrt.ErrOverloaded},
		{"failed, rate limit", `{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"Slow down."},"output":[]}`,
			"", "", agentrt.ErrRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(tt.body)})
			resp, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
			if tt.kind != nil {
				assert.ErrorIs(t, err, tt.kind)
				var pe *agentrt.ProviderError
				require.ErrorAs(t, err, &pe)
				assert.NotEmpty(t, pe.Message)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Finish)
			assert.Equal(t, tt.text, resp.Message.Text())
		})
	}
}

// Stream failures: an error event, a response.failed event, a stream cut
// before response.completed, and an empty stream.
func TestResponsesStreamErrors(t *testing.T) {
	t.Parallel()
	events := sseEvents(rfixture(t, "reasoning-summary-tool-result-followup-stream.sse"))
	first := func(more string) []byte { return append(append([]byte{}, events[0]...), more...) }
	tests := []struct {
		name string
		body []byte
		kind error
	}{
		{"error event", first("event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Too many requests\",\"param\":null,\"sequence_number\":1}\n\n"), agentrt.ErrRateLimited},
		{"failed event", first("event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"},\"output\":[]},\"sequence_number\":1}\n\n"), agentrt.ErrOverloaded},
		{"cut", first(string(events[1])), agentrt.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: tt.body, sse: true})
			_, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, OnText: func(string) {}})
			assert.ErrorIs(t, err, tt.kind)
			var pe *agentrt.ProviderError
			assert.ErrorAs(t, err, &pe)
		})
	}
}

// HTTP errors are classified as for Chat Completions, with Retry-After.
func TestResponsesHTTPErrors(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{status: 429, body: []byte(body429), header: map[string]string{"Retry-After": "3600"}})
	_, err := srv.responses(&openai.ResponsesOptions{MaxRetries: -1}).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.ErrorIs(t, err, agentrt.ErrRateLimited)
	assert.Equal(t, time.Hour, pe.RetryAfter)
	assert.Equal(t, 429, pe.StatusCode)
	assert.Equal(t, "rate_limit_exceeded", pe.Code)
	assert.Equal(t, 1, srv.count())
}

// With PreviousResponseID, responses are stored and a follow-up sends
// only what came after the answer it chains on; another planner (a new
// process) sends the whole history again, without its reasoning items.
func TestResponsesPreviousResponseID(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "reasoning-summary-tool-call.response.json")},
		reply{body: rfixture(t, "reasoning-summary-tool-result-followup.response.json")})
	opts := &openai.ResponsesOptions{PreviousResponseID: true}
	p := srv.responses(opts)
	req := responsesWeatherRequest()
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	body := srv.request(0).Body
	assert.Equal(t, true, body["store"])
	assert.NotContains(t, body, "previous_response_id")

	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("call_4QfIn5gPKIOWzKqBb5D2uuh4", "40 C", false))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	body = srv.request(1).Body
	assert.Equal(t, "resp_0d8949369356df9a016a3c12432020819c956937a00dcc1a84", body["previous_response_id"])
	jsonEq(t, `[{"type":"function_call_output","call_id":"call_4QfIn5gPKIOWzKqBb5D2uuh4","output":"40 C"}]`, body["input"],
		"only the new items: the stored conversation holds the developer message and the rest")

	_, err = srv.responses(opts).Plan(context.Background(), req)
	require.NoError(t, err)
	body = srv.request(2).Body
	assert.NotContains(t, body, "previous_response_id")
	assert.Equal(t, true, body["store"])
	var types []any
	for _, item := range body["input"].([]any) {
		types = append(types, item.(map[string]any)["type"])
	}
	assert.Equal(t, []any{nil, nil, "function_call", "function_call_output"}, types,
		"developer and user messages, the call and its output: no reasoning item, which the API refuses with store true when its following item has no id")
}

// Only the Responses API's own reasoning goes back, and only with the item
// that followed it: thinking of another vendor, of Chat Completions
// (Provider "openai"), or without encrypted content (nothing stored to
// find it by id) is not sent; here the text after rs_1 carries no item id,
// so rs_1 stays too (the API refuses a reasoning item without its
// following item); with it, rs_1 goes back, with "summary": [].
func TestResponsesThinkingSentBack(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
	_, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_1", Signature: []byte("enc"), Provider: "openai-responses"},
			agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_2", Text: "no content", Provider: "openai-responses"},
			agentrt.Block{Type: agentrt.BlockThinking, Text: "deepseek", Provider: "openai"},
			agentrt.Block{Type: agentrt.BlockThinking, Text: "claude", Signature: []byte("sig"), Provider: "anthropic"},
			agentrt.TextBlock("yo")),
		agentrt.NewUserMessage("again"),
	}})
	require.NoError(t, err)
	jsonEq(t, `[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
		{"role":"assistant","content":"yo"},
		{"role":"user","content":[{"type":"input_text","text":"again"}]}]`, srv.request(0).Body["input"])

	withID := agentrt.TextBlock("yo")
	withID.Signature, withID.Provider = []byte("msg_1"), "openai-responses"
	_, err = srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_1", Signature: []byte("enc"), Provider: "openai-responses"},
			withID,
			agentrt.Block{Type: agentrt.BlockThinking, Text: "claude", Signature: []byte("sig"), Provider: "anthropic"}),
		agentrt.NewUserMessage("again"),
	}})
	require.NoError(t, err)
	jsonEq(t, `[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
		{"type":"reasoning","id":"rs_1","encrypted_content":"enc","summary":[]},
		{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"yo","annotations":[]}]},
		{"role":"user","content":[{"type":"input_text","text":"again"}]}]`, srv.request(1).Body["input"])
}
