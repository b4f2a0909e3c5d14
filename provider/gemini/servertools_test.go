package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// weatherTool is an agent tool, sent as a function declaration.
var weatherTool = agentrt.ToolSpec{
	Name:        "get_weather",
	Description: "Weather in a city.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

// weatherDecls is weatherTool as the request's first tool.
const weatherDecls = `{"functionDeclarations":[{"name":"get_weather","description":"Weather in a city.",
	"parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}`

// ServerTools come after the tool carrying the agent's function
// declarations, each as given, in order, on both backends, streamed or
// not; a second request sends the same tools (nothing piles up).
func TestServerToolsAfterFunctionDeclarations(t *testing.T) {
	t.Parallel()
	server := []*genai.Tool{
		{GoogleSearch: &genai.GoogleSearch{}},
		{CodeExecution: &genai.ToolCodeExecution{}},
		{URLContext: &genai.URLContext{}},
	}
	want := `[` + weatherDecls + `,{"googleSearch":{}},{"codeExecution":{}},{"urlContext":{}}]`
	for _, backend := range []genai.Backend{genai.BackendGeminiAPI, genai.BackendVertexAI} {
		t.Run(backend.String(), func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, "text.json"), ok(t, "text-stream.sse"))
			p := New(newClient(t, srv, backend, nil), "gemini-3-flash-preview", &Options{ServerTools: server})
			req := &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("Weather in the northernmost US city?")},
				Tools:    []agentrt.ToolSpec{weatherTool},
			}
			_, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			req.OnText = func(string) {}
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			reqs := srv.reqs()
			require.Len(t, reqs, 2)
			for i, r := range reqs {
				jsonEq(t, want, r.Body["tools"], "request %d", i)
				_, ok := r.Body["toolConfig"]
				require.False(t, ok, "request %d: no toolConfig unless asked for", i)
			}
		})
	}
}

// Without agent tools the server tools are the only tools: no empty
// function declarations before them.
func TestServerToolsOnly(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, &Options{ServerTools: []*genai.Tool{
		{GoogleSearch: &genai.GoogleSearch{}},
		{URLContext: &genai.URLContext{}},
	}})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("News today?")}})
	require.NoError(t, err)
	jsonEq(t, `[{"googleSearch":{}},{"urlContext":{}}]`, srv.only(t).Body["tools"])
}

// New copies the slice: changing the caller's slice afterwards changes no
// request. A nil tool panics in New.
func TestServerToolsCopiedAndChecked(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	server := []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}
	p, _ := newTestProvider(t, srv, &Options{ServerTools: server})
	server[0] = &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}}
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	jsonEq(t, `[{"googleSearch":{}}]`, srv.only(t).Body["tools"])

	client := newClient(t, srv, genai.BackendGeminiAPI, nil)
	require.PanicsWithValue(t, "gemini: New: ServerTools[1] is nil", func() {
		New(client, testModel, &Options{ServerTools: []*genai.Tool{{URLContext: &genai.URLContext{}}, nil}})
	})
}

// A "tools" key in ExtraFields replaces the whole tools array, the
// function declarations and ServerTools included, as Options.ExtraFields
// says.
func TestExtraFieldsToolsReplaceServerTools(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, &Options{
		ServerTools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		ExtraFields: map[string]any{"tools": []any{map[string]any{"codeExecution": map[string]any{}}}},
	})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		Tools:    []agentrt.ToolSpec{weatherTool},
	})
	require.NoError(t, err)
	jsonEq(t, `[{"codeExecution":{}}]`, srv.only(t).Body["tools"])
}

// The mix on the Gemini API, as Options.ServerTools says to send it:
// includeServerSideToolInvocations from ExtraFields is merged into the
// toolConfig the adapter builds from the tool choice, and the tools are
// still the adapter's.
func TestServerToolsWithServerSideInvocations(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, &Options{
		ServerTools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		ExtraFields: map[string]any{"toolConfig": map[string]any{"includeServerSideToolInvocations": true}},
	})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages:   []agentrt.Message{agentrt.NewUserMessage("hi")},
		Tools:      []agentrt.ToolSpec{weatherTool},
		ToolChoice: agentrt.ToolChoice{Mode: "required"},
	})
	require.NoError(t, err)
	body := srv.only(t).Body
	jsonEq(t, `[`+weatherDecls+`,{"googleSearch":{}}]`, body["tools"])
	jsonEq(t, `{"functionCallingConfig":{"mode":"ANY"},"includeServerSideToolInvocations":true}`, body["toolConfig"])
}

// What built-in tools add to an answer makes no block: the toolCall and
// toolResponse parts of a server-side search, executableCode and
// codeExecutionResult parts (each with a thought signature), and the
// candidate's groundingMetadata. The text around them is one text block;
// the agent's function call is kept with its own signature. (The body is
// written from the shapes in the SDK's types and Google's tool-combination
// guide, not recorded.)
func TestServerToolPartsLeftOut(t *testing.T) {
	t.Parallel()
	body := `{"candidates":[{"content":{"role":"model","parts":[
		{"toolCall":{"id":"s1","toolType":"GOOGLE_SEARCH_WEB","args":{"queries":["northernmost city in the US"]}},"thoughtSignature":"c2lnMQ=="},
		{"toolResponse":{"id":"s1","toolType":"GOOGLE_SEARCH_WEB","response":{"search_suggestions":"..."}},"thoughtSignature":"c2lnMg=="},
		{"text":"Utqiagvik, Alaska. "},
		{"executableCode":{"language":"PYTHON","code":"print(1+1)"},"thoughtSignature":"c2lnMw=="},
		{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2\n"}},
		{"text":"Checking its weather."},
		{"functionCall":{"id":"f1","name":"get_weather","args":{"city":"Utqiagvik"}},"thoughtSignature":"c2lnNA=="}]},
		"finishReason":"STOP","index":0,
		"groundingMetadata":{"webSearchQueries":["northernmost city in the US"],
			"groundingChunks":[{"web":{"uri":"https://example.com/utqiagvik","title":"example.com"}}]}}],
		"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"toolUsePromptTokenCount":7},
		"modelVersion":"gemini-3-flash-preview","responseId":"r1"}`
	srv := newReplayServer(t, reply{body: []byte(body)})
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-flash-preview", &Options{
		ServerTools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}, {CodeExecution: &genai.ToolCodeExecution{}}},
	})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Weather in the northernmost US city?")},
		Tools:    []agentrt.ToolSpec{weatherTool},
	})
	require.NoError(t, err)
	call := agentrt.ToolUseBlock("f1", "get_weather", json.RawMessage(`{"city":"Utqiagvik"}`))
	call.Signature, call.Provider = []byte("sig4"), providerName
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Utqiagvik, Alaska. Checking its weather."), call), resp.Message,
		fmt.Sprintf("%+v", resp.Message.Blocks))
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 10 + 7, OutputTokens: 5}, resp.Usage)
}
