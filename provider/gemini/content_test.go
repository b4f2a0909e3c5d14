package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// recordedInline returns the text and the inlineData bytes of the first
// content of a recorded request.
func recordedInline(t *testing.T, name string) (string, []byte) {
	t.Helper()
	body := decode(t, fixture(t, name))
	text := at(t, body, "contents", 0, "parts", 0, "text").(string)
	img, err := base64.StdEncoding.DecodeString(at(t, body, "contents", 0, "parts", 1, "inlineData", "data").(string))
	require.NoError(t, err)
	return text, img
}

// Recorded: gemini/image-input.* and image-input-stream.* (fantasy).
func TestImageInputRecorded(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name, resp := "image-input", "image-input.response.json"
		if stream {
			name, resp = "image-input-stream", "image-input-stream.sse"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			text, img := recordedInline(t, name+".request.json")
			srv := newReplayServer(t, ok(t, resp))
			p, _ := newTestProvider(t, srv, nil)
			req := &agentrt.ModelRequest{
				System:    "You are a helpful assistant",
				Messages:  []agentrt.Message{agentrt.NewUserMessage(text, agentrt.ImageBlock("image/png", img))},
				MaxTokens: 4000,
			}
			if stream {
				req.OnText = func(string) {}
			}
			got, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			want := decode(t, fixture(t, name+".request.json"))
			body := srv.only(t).Body
			for _, k := range []string{"contents", "systemInstruction", "generationConfig"} {
				assert.Equal(t, want[k], body[k], "request field %q", k)
			}
			assert.Contains(t, got.Message.Text(), "star")
			if stream {
				assert.Equal(t, agentrt.Usage{InputTokens: 272, OutputTokens: 200 + 1114, ReasoningTokens: 1114}, got.Usage)
			} else {
				assert.Equal(t, agentrt.Usage{InputTokens: 272, OutputTokens: 86 + 641, ReasoningTokens: 641}, got.Usage)
			}
		})
	}
}

var weatherThinking = agentrt.ToolSpec{
	Name:        "weather",
	Description: "Get weather information for a location",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"description":"the city","type":"string"}},"required":["location"]}`),
}

// Recorded: gemini/thinking-tool-call.* and thinking-tool-result-followup.*
// (fantasy, gemini-3-pro-preview): the thought part becomes a thinking
// block, the function call keeps its thought signature in the session, and
// the follow-up sends it back, after a trip through the session's JSON.
func TestThinkingToolCallAndFollowupRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "thinking-tool-call.response.json"), ok(t, "thinking-tool-result-followup.response.json"))
	p, _ := newTestProvider(t, srv, &Options{ExtraFields: map[string]any{
		"generationConfig": map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true, "thinkingLevel": "HIGH"}}}})
	user := agentrt.NewUserMessage("What's the weather in Florence, Italy?")
	req := &agentrt.ModelRequest{
		System:     "You are a helpful assistant",
		Messages:   []agentrt.Message{user},
		Tools:      []agentrt.ToolSpec{weatherThinking},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 2)
	th, call := resp.Message.Blocks[0], resp.Message.Blocks[1]
	assert.Equal(t, agentrt.BlockThinking, th.Type)
	assert.Equal(t, "gemini", th.Provider)
	assert.Contains(t, th.Text, "Florence")
	assert.Empty(t, th.Signature, "this thought came without a signature")
	assert.Equal(t, "v3yybtcf", call.ID)
	assert.Equal(t, "gemini", call.Provider)
	recordedSig := at(t, decode(t, fixture(t, "thinking-tool-call.response.json")), "candidates", 0, "content", "parts", 1, "thoughtSignature").(string)
	assert.Equal(t, recordedSig, base64.StdEncoding.EncodeToString(call.Signature))
	assert.Equal(t, agentrt.Usage{InputTokens: 65, OutputTokens: 16 + 138, ReasoningTokens: 138}, resp.Usage)

	b, err := json.Marshal(resp.Message)
	require.NoError(t, err)
	var stored agentrt.Message
	require.NoError(t, json.Unmarshal(b, &stored))
	req2 := *req
	req2.Messages = []agentrt.Message{user, stored, agentrt.NewToolMessage("v3yybtcf", "40 C", false)}
	resp2, err := p.Plan(context.Background(), &req2)
	require.NoError(t, err)

	for i, name := range []string{"thinking-tool-call.request.json", "thinking-tool-result-followup.request.json"} {
		want, got := decode(t, fixture(t, name)), srv.reqs()[i].Body
		for _, k := range []string{"systemInstruction", "generationConfig", "toolConfig", "tools"} {
			assert.Equal(t, want[k], got[k], "%s: request field %q", name, k)
		}
		if i == 0 {
			assert.Equal(t, want["contents"], got["contents"])
			continue
		}
		assert.Equal(t, at(t, want, "contents", 0), at(t, got, "contents", 0))
		// The model turn: the call with its id and the real signature; the
		// thought text without a signature is not sent back, as recorded.
		assert.Equal(t, at(t, want, "contents", 1), at(t, got, "contents", 1))
		// fantasy sent {"result": ...}; this adapter sends Google's
		// documented {"output": ...}.
		jsonEq(t, `{"role":"user","parts":[{"functionResponse":{"id":"v3yybtcf","name":"weather","response":{"output":"40 C"}}}]}`, at(t, got, "contents", 2))
	}
	require.Len(t, resp2.Message.Blocks, 2)
	assert.Equal(t, agentrt.BlockThinking, resp2.Message.Blocks[0].Type)
	assert.NotEmpty(t, resp2.Message.Blocks[1].Signature, "the answer's text keeps its signature")
	assert.Contains(t, resp2.Message.Text(), "40")
	assert.Equal(t, 56, resp2.Usage.ReasoningTokens)
}

// Recorded: gemini/thinking-tool-call-stream.* (fantasy, gemini-2.5-flash).
func TestThinkingStreamRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "thinking-tool-call-stream.sse"))
	p, _ := newTestProvider(t, srv, &Options{ExtraFields: map[string]any{
		"generationConfig": map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true, "thinkingBudget": 128}}}})
	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:     "You are a helpful assistant",
		Messages:   []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")},
		Tools:      []agentrt.ToolSpec{weatherThinking},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
		OnText:     func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	want, got := decode(t, fixture(t, "thinking-tool-call-stream.request.json")), srv.only(t).Body
	for _, k := range []string{"contents", "systemInstruction", "generationConfig", "toolConfig", "tools"} {
		assert.Equal(t, want[k], got[k], "request field %q", k)
	}
	assert.Empty(t, deltas, "thoughts are not answer text")
	require.Len(t, resp.Message.Blocks, 2)
	assert.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
	assert.Contains(t, resp.Message.Blocks[0].Text, "Florence")
	assert.NotEmpty(t, resp.Message.Blocks[1].Signature)
	assert.Equal(t, agentrt.Usage{InputTokens: 54, OutputTokens: 14 + 62, ReasoningTokens: 62}, resp.Usage)
}

// Recorded: gemini/thinking-level-low.json (vercel/ai): a text part with a
// thought signature and no thoughtsTokenCount.
func TestTextSignatureRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "thinking-level-low.json"), ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Hi")}})
	require.NoError(t, err)
	b := resp.Message.Blocks[0]
	assert.Equal(t, "Hello! How can I help you today?", b.Text)
	assert.Equal(t, "gemini", b.Provider)
	assert.Equal(t, agentrt.Usage{InputTokens: 2, OutputTokens: 9}, resp.Usage)

	// Sent back on the text part.
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("Hi"), resp.Message, agentrt.NewUserMessage("Bye")}})
	require.NoError(t, err)
	jsonEq(t, `{"role":"model","parts":[{"text":"Hello! How can I help you today?","thoughtSignature":"`+base64.StdEncoding.EncodeToString(b.Signature)+`"}]}`,
		at(t, srv.reqs()[1].Body, "contents", 1))
}

// Recorded: gemini/tool-call-forced.request.json (mode ANY with
// allowedFunctionNames) and tool-result-followup.request.json (mode NONE).
func TestToolChoiceRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "tool-call-forced.response.json"), ok(t, "text.json"), ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, nil)
	catalog := agentrt.ToolSpec{Name: "catalogSearch", Description: "Returns catalog metadata and a PDF page.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
	for _, choice := range []agentrt.ToolChoice{{Mode: "tool", Name: "catalogSearch"}, {Mode: "none"}, {Mode: "required"}} {
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("Call catalogSearch once, then say whether metadata was returned. Do not inspect the PDF.")},
			Tools:    []agentrt.ToolSpec{catalog}, ToolChoice: choice, MaxTokens: 64,
		})
		require.NoError(t, err)
	}
	reqs := srv.reqs()
	assert.Equal(t, decode(t, fixture(t, "tool-call-forced.request.json"))["toolConfig"], reqs[0].Body["toolConfig"])
	assert.Equal(t, decode(t, fixture(t, "tool-result-followup.request.json"))["toolConfig"], reqs[1].Body["toolConfig"])
	// Written from the API reference (no recording of ANY without names).
	jsonEq(t, `{"functionCallingConfig":{"mode":"ANY"}}`, reqs[2].Body["toolConfig"])
}

// Written from the API reference (no recording of fileData, of a PDF part
// or of a function response with parts exists): documents and URLs in a
// user turn, and, for Gemini 3, an image returned by a tool as the
// function response's parts (multimodal function responses).
func TestContentPartsWritten(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-flash-preview", nil)
	png := []byte("\x89PNG")
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Read these.",
				agentrt.DocumentBlock("a.pdf", "application/pdf", []byte("%PDF")),
				agentrt.Block{Type: agentrt.BlockImage, URL: "https://generativelanguage.googleapis.com/v1beta/files/abc", MediaType: "image/jpeg"}),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "shot", json.RawMessage(`{}`))),
			{Role: agentrt.RoleTool, ToolUseID: "c1", Content: "the screen", Blocks: []agentrt.Block{agentrt.ImageBlock("image/png", png)}},
		},
		Tools: []agentrt.ToolSpec{{Name: "shot", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	})
	require.NoError(t, err)
	body := srv.only(t).Body
	jsonEq(t, `{"role":"user","parts":[{"text":"Read these."},
		{"inlineData":{"mimeType":"application/pdf","data":"JVBERg=="}},
		{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc","mimeType":"image/jpeg"}}]}`, at(t, body, "contents", 0))
	jsonEq(t, `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"shot","response":{"output":"the screen"},
		"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}}]}}]}`, at(t, body, "contents", 2))
}

func TestUnsupportedAndEmptyRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t)
	p, _ := newTestProvider(t, srv, nil)
	for _, msgs := range [][]agentrt.Message{
		{agentrt.NewUserMessage("hi", agentrt.Block{Type: agentrt.BlockImage, URL: "gs://b/x"})},
		{agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c", "t", nil)),
			{Role: agentrt.RoleTool, ToolUseID: "c", Blocks: []agentrt.Block{agentrt.ImageBlock("image/gif", []byte("GIF"))}}},
	} {
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
		require.ErrorIs(t, err, agentrt.ErrUnsupportedContent)
	}
	// No message at all leaves nothing to send: a clear error, not a
	// request the API refuses.
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{})
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "nothing to send")
	assert.Empty(t, srv.reqs(), "nothing was sent")
}

// Thinking and signatures of another vendor are not sent to Gemini.
func TestForeignThinkingDropped(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, nil)
	use := agentrt.ToolUseBlock("toolu_1", "weather", json.RawMessage(`{"location":"Oslo"}`))
	use.Signature = []byte(`{"anthropic_thinking":[]}`)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("Oslo?"),
		agentrt.NewAssistantMessage(agentrt.Block{Type: agentrt.BlockThinking, Text: "hmm", Signature: []byte("sig"), Provider: "anthropic"}, use),
		agentrt.NewToolMessage("toolu_1", "5C", false),
	}, Tools: []agentrt.ToolSpec{weatherThinking}})
	require.NoError(t, err)
	skip := base64.StdEncoding.EncodeToString(skipSignature)
	jsonEq(t, `{"role":"model","parts":[{"functionCall":{"id":"toolu_1","name":"weather","args":{"location":"Oslo"}},"thoughtSignature":"`+skip+`"}]}`,
		at(t, srv.only(t).Body, "contents", 1))
}
