package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// recordedImageRequest returns the text and the image bytes of the user
// message of a recorded image request.
func recordedImageRequest(t *testing.T, name string) (string, []byte) {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(fixture(t, name), &req))
	var parts []struct {
		Text     string
		ImageURL struct{ URL string } `json:"image_url"`
	}
	require.NoError(t, json.Unmarshal(req.Messages[1].Content, &parts))
	b64, ok := strings.CutPrefix(parts[1].ImageURL.URL, "data:image/png;base64,")
	require.True(t, ok)
	img, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	return parts[0].Text, img
}

// Recorded: openai/image-input.* and image-input-stream.* (fantasy, gpt-5).
func TestImageInputRecorded(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := "image-input"
		rep := reply{body: fixture(t, "image-input.response.json")}
		if stream {
			name = "image-input-stream"
			rep = reply{body: fixture(t, "image-input-stream.sse"), sse: true}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			text, img := recordedImageRequest(t, name+".request.json")
			srv := newReplay(t, rep)
			req := &agentrt.ModelRequest{
				System:    "You are a helpful assistant",
				Messages:  []agentrt.Message{agentrt.NewUserMessage(text, agentrt.ImageBlock("image/png", img))},
				MaxTokens: 4000,
			}
			if stream {
				req.OnText = func(string) {}
			}
			resp, err := srv.provider(nil).Plan(context.Background(), req)
			require.NoError(t, err)
			body := srv.request(0).Body
			for _, k := range []string{"messages", "max_completion_tokens"} {
				assert.JSONEq(t, recordedField(t, name+".request.json", k), field(t, body, k), k)
			}
			assert.Contains(t, strings.ToLower(resp.Message.Text()), "star")
			if stream {
				assert.Equal(t, agentrt.Usage{InputTokens: 232, OutputTokens: 96, ReasoningTokens: 64}, resp.Usage)
			} else {
				assert.Equal(t, agentrt.Usage{InputTokens: 232, OutputTokens: 163, ReasoningTokens: 128}, resp.Usage)
			}
		})
	}
}

// Recorded: openai/reasoning-tokens-tool-call.* (fantasy, gpt-5) and
// prompt-cache-miss/hit.json (vercel/ai, gpt-4o-mini).
func TestReasoningAndCacheUsageRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, "reasoning-tokens-tool-call.response.json")},
		reply{body: fixture(t, "prompt-cache-miss.json")},
		reply{body: fixture(t, "prompt-cache-hit.json")})
	p := srv.provider(&openai.Options{DisableStrict: true})
	req := weatherRequest()
	req.ToolChoice = agentrt.ToolChoice{Mode: "auto"}
	req.MaxTokens = 4000
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	for _, k := range []string{"messages", "tools", "tool_choice", "max_completion_tokens"} {
		assert.JSONEq(t, recordedField(t, "reasoning-tokens-tool-call.request.json", k), field(t, srv.request(0).Body, k), k)
	}
	assert.Equal(t, agentrt.Usage{InputTokens: 145, OutputTokens: 153, ReasoningTokens: 128}, resp.Usage)

	var usages []agentrt.Usage
	for range 2 {
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("the same long prompt")}})
		require.NoError(t, err)
		usages = append(usages, resp.Usage)
	}
	assert.Equal(t, agentrt.Usage{InputTokens: 2920, OutputTokens: 1}, usages[0])
	assert.Equal(t, agentrt.Usage{InputTokens: 2920, OutputTokens: 1, CacheReadTokens: 2816}, usages[1])
}

// Recorded: openai/compat-deepseek-reasoning-content*.json/.sse and
// compat-deepseek-reasoning-tool-call.json (vercel/ai, DeepSeek's
// OpenAI-compatible server, not api.openai.com).
func TestReasoningContentRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, "compat-deepseek-reasoning-content.json")},
		reply{body: fixture(t, "compat-deepseek-reasoning-content-stream.sse"), sse: true},
		reply{body: fixture(t, "compat-deepseek-reasoning-tool-call.json")})
	p := srv.provider(nil)
	var msgs []agentrt.Message
	var deltas strings.Builder
	for i, onText := range []func(string){nil, func(d string) { deltas.WriteString(d) }, nil} {
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("How many 'r's are in the word strawberry?")}, OnText: onText})
		require.NoError(t, err, i)
		msgs = append(msgs, resp.Message)
		th := resp.Message.Blocks[0]
		assert.Equal(t, agentrt.BlockThinking, th.Type, i)
		assert.Equal(t, "openai", th.Provider)
		assert.NotEmpty(t, th.Text)
		switch i {
		case 0:
			assert.Equal(t, agentrt.Usage{InputTokens: 18, OutputTokens: 345, ReasoningTokens: 315}, resp.Usage)
		case 1:
			assert.Equal(t, agentrt.Usage{InputTokens: 18, OutputTokens: 219, ReasoningTokens: 205}, resp.Usage)
			assert.Equal(t, resp.Message.Text(), deltas.String(), "reasoning is not streamed as answer text")
		case 2:
			assert.Equal(t, agentrt.Usage{InputTokens: 339, OutputTokens: 92, ReasoningTokens: 48, CacheReadTokens: 320}, resp.Usage)
			assert.Equal(t, "weather", resp.Message.ToolUses()[0].Name)
		}
	}
	assert.Contains(t, msgs[0].Text(), "three")
	assert.Contains(t, msgs[1].Blocks[0].Text, "strawberry")
}

// Recorded: openai/compat-zai-reasoning-tool-call.* and
// compat-zai-reasoning-tool-result-followup.* (fantasy, Z.ai's
// OpenAI-compatible server): reasoning_content comes with the tool call
// and goes back with the assistant message in the follow-up.
func TestReasoningContentSentBackRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, "compat-zai-reasoning-tool-call.response.json")},
		reply{body: fixture(t, "compat-zai-reasoning-tool-result-followup.response.json")})
	p := srv.provider(&openai.Options{DisableStrict: true, ExtraFields: map[string]any{"reasoning_effort": "high"}})
	req := weatherRequest()
	req.Messages = []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")}
	req.ToolChoice = agentrt.ToolChoice{Mode: "auto"}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 3)
	assert.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
	assert.Equal(t, agentrt.Usage{InputTokens: 173, OutputTokens: 89, ReasoningTokens: 61, CacheReadTokens: 169}, resp.Usage)

	b, err := json.Marshal(resp.Message)
	require.NoError(t, err)
	var stored agentrt.Message
	require.NoError(t, json.Unmarshal(b, &stored))
	call := stored.ToolUses()[0]
	req.Messages = append(req.Messages, stored, agentrt.NewToolMessage(call.ID, "40 C", false))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	for i, name := range []string{"compat-zai-reasoning-tool-call.request.json", "compat-zai-reasoning-tool-result-followup.request.json"} {
		for _, k := range []string{"messages", "tools", "tool_choice", "reasoning_effort"} {
			assert.JSONEq(t, recordedField(t, name, k), field(t, srv.request(i).Body, k), "%s: %s", name, k)
		}
	}
	assert.Contains(t, resp.Message.Text(), "40°C")

	// A user message a hook adds for this call only (recalled facts) after
	// the tool result is not the user's: the reasoning still goes back.
	recall := *req
	recall.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], agentrt.NewUserMessage("[recalled] likes Celsius"))
	_, err = p.Plan(context.Background(), &recall)
	require.NoError(t, err)
	assert.Contains(t, field(t, srv.request(2).Body, "messages"), "reasoning_content")

	// After a new user message, earlier reasoning is not sent again.
	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("And tomorrow?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.NotContains(t, field(t, srv.request(3).Body, "messages"), "reasoning_content")
}

// Recorded: openai/compat-xai-tool-choice-function.* (fantasy, xAI's
// OpenAI-compatible server; api.openai.com has no recording of a forced
// function).
func TestToolChoiceRecorded(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "compat-xai-tool-choice-function.response.json")})
	resp, err := srv.provider(&openai.Options{DisableStrict: true, MaxTokensField: "max_tokens"}).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Generate information about a person named Alice who is 30 years old and lives in Paris.")},
		Tools: []agentrt.ToolSpec{{Name: "Person", Description: "A person with name, age, and city",
			InputSchema: json.RawMessage(`{"properties":{"age":{"description":"The person's age","type":"integer"},"city":{"description":"The city where the person lives","type":"string"},"name":{"description":"The person's name","type":"string"}},"required":["name","age","city"],"type":"object"}`)}},
		ToolChoice: agentrt.ToolChoice{Mode: "tool", Name: "Person"},
		MaxTokens:  4000,
	})
	require.NoError(t, err)
	for _, k := range []string{"messages", "tools", "tool_choice", "max_tokens"} {
		assert.JSONEq(t, recordedField(t, "compat-xai-tool-choice-function.request.json", k), field(t, srv.request(0).Body, k), k)
	}
	assert.Equal(t, "Person", resp.Message.ToolUses()[0].Name)
	assert.Equal(t, agentrt.Usage{InputTokens: 401, OutputTokens: 44 + 185, ReasoningTokens: 185, CacheReadTokens: 305}, resp.Usage) // xAI counts reasoning apart from completion_tokens
}

// Written from the API reference (api.openai.com has no recording of
// tool_choice none or required, of a file part, or of an image URL).
func TestContentPartsWritten(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := srv.provider(nil)
	for _, mode := range []string{"none", "required"} {
		req := weatherRequest()
		req.ToolChoice = agentrt.ToolChoice{Mode: mode}
		req.Messages = []agentrt.Message{agentrt.NewUserMessage("Read this.",
			agentrt.DocumentBlock("a.pdf", "application/pdf", []byte("%PDF")),
			agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/a.png"})}
		_, err := p.Plan(context.Background(), req)
		require.NoError(t, err)
	}
	assert.Equal(t, `"none"`, field(t, srv.request(0).Body, "tool_choice"))
	assert.Equal(t, `"required"`, field(t, srv.request(1).Body, "tool_choice"))
	assert.JSONEq(t, `[{"role":"system","content":"You are a helpful assistant"},{"role":"user","content":[
		{"type":"text","text":"Read this."},
		{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERg==","filename":"a.pdf"}},
		{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]`, field(t, srv.request(0).Body, "messages"))
}

// A tool message carries text only: a tool result's image follows the
// tool messages of its turn in a user message that names the tool call,
// and the tool message says so. Written from the API reference.
func TestToolResultImageBecomesUserMessage(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	png := []byte("\x89PNG")
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Look at the screen and the clock."),
			agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("call_1", "screenshot", json.RawMessage(`{}`)),
				agentrt.ToolUseBlock("call_2", "clock", json.RawMessage(`{}`))),
			{Role: agentrt.RoleTool, ToolUseID: "call_1", Content: "the screen", Blocks: []agentrt.Block{agentrt.ImageBlock("image/png", png)}},
			agentrt.NewToolMessage("call_2", "12:00", false),
			agentrt.NewUserMessage("What do you see?"),
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":"Look at the screen and the clock."},
		{"role":"assistant","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"screenshot","arguments":"{}"}},
			{"id":"call_2","type":"function","function":{"name":"clock","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"the screen\n[1 attachment(s) of this tool result follow in the next user message]"},
		{"role":"tool","tool_call_id":"call_2","content":"12:00"},
		{"role":"user","content":[
			{"type":"text","text":"Attachments of the result of tool call call_1:"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}}]},
		{"role":"user","content":"What do you see?"}]`, field(t, srv.request(0).Body, "messages"))
}

func TestUnsupportedContentRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := srv.provider(nil)
	for _, b := range []agentrt.Block{
		agentrt.ImageBlock("image/bmp", []byte("BM")),
		agentrt.DocumentBlock("a.txt", "text/plain", []byte("hi")),
		{Type: agentrt.BlockDocument, URL: "https://example.com/a.pdf", MediaType: "application/pdf"},
		// A Block cannot reference an uploaded file by id: refused, not
		// sent as an image URL.
		{Type: agentrt.BlockImage, URL: "file-6F2ksmvXxt4VdoqmHRw6kL", MediaType: "image/png"},
	} {
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi", b)}})
		require.ErrorIs(t, err, agentrt.ErrUnsupportedContent, "%v", b)
	}
	req := weatherRequest()
	req.ToolChoice = agentrt.ToolChoice{Mode: "always"}
	_, err := p.Plan(context.Background(), req)
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.Equal(t, 0, srv.count(), "nothing was sent")
}

// Thinking of another vendor is not sent as reasoning_content.
func TestForeignThinkingDropped(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(agentrt.Block{Type: agentrt.BlockThinking, Text: "claude thinks", Signature: []byte("s"), Provider: "anthropic"}, agentrt.TextBlock("hello")),
	}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, field(t, srv.request(0).Body, "messages"))
}

// An empty user text is sent as it is, not dropped.
func TestEmptyUserTextSent(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("")}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":""}]`, field(t, srv.request(0).Body, "messages"))
}
