package gemini

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// An empty user text goes out as {"text":""}, which the API answers (the
// issue reports HTTP 200 in a recording we do not have; the body here is
// written from it), and the follow-up of that conversation starts with
// the same user turn, not with the model's.
func TestEmptyUserTextSent(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"), ok(t, "text.json"), ok(t, "text-stream.sse"))
	p, _ := newTestProvider(t, srv, nil)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("")}}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	reqs := srv.reqs()
	require.Len(t, reqs, 1)
	assert.Contains(t, string(reqs[0].Raw), `"parts":[{"text":""}]`)
	jsonEq(t, `[{"role":"user","parts":[{"text":""}]}]`, reqs[0].Body["contents"])

	req.Messages = append(req.Messages, plain(first.Message), agentrt.NewUserMessage("And now?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	contents := srv.reqs()[1].Body["contents"].([]any)
	require.Len(t, contents, 3)
	jsonEq(t, `{"role":"user","parts":[{"text":""}]}`, contents[0])
	assert.Equal(t, "model", at(t, contents[1], "role"))
	jsonEq(t, `{"role":"user","parts":[{"text":"And now?"}]}`, contents[2])

	// Streamed, the same.
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("")}, OnText: func(string) {}})
	require.NoError(t, err)
	jsonEq(t, `[{"role":"user","parts":[{"text":""}]}]`, srv.reqs()[2].Body["contents"])
}

// A tool's image and PDF: for models before Gemini 3, right after its
// function response in the same user content (the shape the issue reports
// from a working gemini-2.5-flash exchange, which we do not have; written
// from it), results in the order of the calls; for Gemini 3, in
// functionResponse.parts.
func TestToolMediaByModel(t *testing.T) {
	t.Parallel()
	msgs := []agentrt.Message{
		agentrt.NewUserMessage("Show me both."),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "shot", json.RawMessage(`{}`)), agentrt.ToolUseBlock("c2", "doc", json.RawMessage(`{}`))),
		{Role: agentrt.RoleTool, ToolUseID: "c2", Content: "the doc", Blocks: []agentrt.Block{agentrt.DocumentBlock("a.pdf", "application/pdf", []byte("%PDF"))}},
		{Role: agentrt.RoleTool, ToolUseID: "c1", Content: "the screen", Blocks: []agentrt.Block{
			agentrt.ImageBlock("image/png", []byte("\x89PNG")), {Type: agentrt.BlockImage, URL: "https://generativelanguage.googleapis.com/v1beta/files/x", MediaType: "image/jpeg"}}},
	}
	tests := []struct{ model, want string }{
		{"gemini-2.5-flash", `{"role":"user","parts":[
			{"functionResponse":{"id":"c1","name":"shot","response":{"output":"the screen"}}},
			{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}},
			{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/x","mimeType":"image/jpeg"}},
			{"functionResponse":{"id":"c2","name":"doc","response":{"output":"the doc"}}},
			{"inlineData":{"mimeType":"application/pdf","data":"JVBERg=="}}]}`},
		{"gemini-3-pro-preview", `{"role":"user","parts":[
			{"functionResponse":{"id":"c1","name":"shot","response":{"output":"the screen"},"parts":[
				{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}},
				{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/x","mimeType":"image/jpeg"}}]}},
			{"functionResponse":{"id":"c2","name":"doc","response":{"output":"the doc"},"parts":[
				{"inlineData":{"mimeType":"application/pdf","data":"JVBERg=="}}]}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, "text.json"))
			p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), tt.model, nil)
			_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs,
				Tools: []agentrt.ToolSpec{{Name: "shot"}, {Name: "doc"}}})
			require.NoError(t, err)
			jsonEq(t, tt.want, at(t, srv.only(t).Body, "contents", 2))
		})
	}
}

func TestBeforeGemini3(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"gemini-2.5-flash": true, "models/gemini-2.0-flash": true, "gemini-1.5-pro-002": true,
		"publishers/google/models/gemini-2.5-pro": true, "gemma-3-27b-it": true,
		"gemini-3-pro-preview": false, "models/gemini-3.1-flash-lite": false, "gemini-flash-latest": false, "gemini-10-ultra": false,
	} {
		assert.Equal(t, want, beforeGemini3(model), model)
	}
}

// A structured-output schema keeps its properties' order: every object
// schema with properties gets propertyOrdering, in nested objects, array
// items, $defs and anyOf branches; a property named "properties" is a
// property; a propertyOrdering given is kept. (No recording has a
// Gemini response schema; the keyword is documented for
// responseJsonSchema.)
func TestResponseSchemaPropertyOrdering(t *testing.T) {
	t.Parallel()
	type Address struct {
		Street string `json:"street"`
		City   string `json:"city"`
	}
	type Person struct {
		Zeta    string    `json:"zeta"`
		Alpha   int       `json:"alpha"`
		Middle  []Address `json:"middle"`
		Home    Address   `json:"home"`
		Comment string    `json:"comment"`
	}
	schema := agentrt.NewTool("p", "", func(context.Context, Person) (string, error) { return "", nil }).Spec().InputSchema
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, nil)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, ResponseSchema: schema})
	require.NoError(t, err)
	got := at(t, srv.only(t).Body, "generationConfig", "responseJsonSchema")
	jsonEq(t, `["zeta","alpha","middle","home","comment"]`, at(t, got, "propertyOrdering"), "the Go struct's field order")

	got, err = responseSchema(json.RawMessage(`{"$schema":"x","type":"object",
		"properties":{"b":{"type":"object","properties":{"y":{},"x":{}}},"a":{"type":"array","items":{"type":"object","properties":{"q":{},"p":{}}}},
			"properties":{"type":"object","properties":{"k2":{},"k1":{}}},"c":{"anyOf":[{"type":"object","properties":{"n":{},"m":{}}},{"type":"null"}]},
			"d":{"$ref":"#/$defs/D"},"e":{"enum":[{"properties":{"z":1,"y":2}}]}},
		"$defs":{"D":{"type":"object","properties":{"t":{},"s":{}},"propertyOrdering":["s","t"]}}}`))
	require.NoError(t, err)
	jsonEq(t, `{"type":"object","propertyOrdering":["b","a","properties","c","d","e"],
		"properties":{"b":{"type":"object","properties":{"y":{},"x":{}},"propertyOrdering":["y","x"]},
			"a":{"type":"array","items":{"type":"object","properties":{"q":{},"p":{}},"propertyOrdering":["q","p"]}},
			"properties":{"type":"object","properties":{"k2":{},"k1":{}},"propertyOrdering":["k2","k1"]},
			"c":{"anyOf":[{"type":"object","properties":{"n":{},"m":{}},"propertyOrdering":["n","m"]},{"type":"null"}]},
			"d":{"$ref":"#/$defs/D"},"e":{"enum":[{"properties":{"z":1,"y":2}}]}},
		"$defs":{"D":{"type":"object","properties":{"t":{},"s":{}},"propertyOrdering":["s","t"]}}}`, got)
}

// Implicit caching needs nothing in the request; a hit is reported as
// cachedContentTokenCount (written from the API reference: no recording
// has one).
func TestCachedTokensUsage(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, reply{body: []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi."}]},"finishReason":"STOP","index":0}],
		"usageMetadata":{"promptTokenCount":2100,"cachedContentTokenCount":2048,"candidatesTokenCount":2,"thoughtsTokenCount":5,"totalTokenCount":2107},
		"modelVersion":"gemini-2.5-flash"}`)})
	p, _ := newTestProvider(t, srv, nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, 2048, resp.Usage.CacheReadTokens)
	assert.Equal(t, 2100, resp.Usage.InputTokens)
	assert.Equal(t, 5, resp.Usage.ReasoningTokens)
}
