package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// recordedImage returns the bytes of the image in the first user message
// of a recorded request, and that message's text.
func recordedImage(t *testing.T, name string) (text string, img []byte) {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type   string
				Text   string
				Source struct{ Data string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(fixture(t, name), &req))
	for _, c := range req.Messages[0].Content {
		switch c.Type {
		case "text":
			text = c.Text
		case "image":
			var err error
			img, err = base64.StdEncoding.DecodeString(c.Source.Data)
			require.NoError(t, err)
		}
	}
	require.NotEmpty(t, img)
	return text, img
}

func TestImageInputRecorded(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := "image-input"
		rep := jsonReply(fixture(t, "image-input.response.json"))
		if stream {
			name = "image-input-stream"
			rep = sseReply(fixture(t, "image-input-stream.sse"))
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			text, img := recordedImage(t, name+".request.json")
			r := newReplay(t, rep)
			req := &agentrt.ModelRequest{
				System:    "You are a helpful assistant",
				Messages:  []agentrt.Message{agentrt.NewUserMessage(text, agentrt.ImageBlock("image/png", img))},
				MaxTokens: 4000,
			}
			if stream {
				req.OnText = func(string) {}
			}
			resp, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), req)
			require.NoError(t, err)
			want := fixtureJSON(t, name+".request.json")
			got := r.only().json(t)
			for _, key := range []string{"model", "max_tokens", "system", "messages"} {
				assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
			}
			assert.Contains(t, resp.Message.Text(), "gradient background")
		})
	}
}

func TestToolResultImageRecorded(t *testing.T) {
	t.Parallel()
	var rec struct {
		Messages []struct {
			Content []struct {
				Content []struct {
					Source struct{ Data string }
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(fixture(t, "tool-result-image.request.json"), &rec))
	png, err := base64.StdEncoding.DecodeString(rec.Messages[2].Content[0].Content[0].Source.Data)
	require.NoError(t, err)

	r := newReplay(t, jsonReply(fixture(t, "tool-result-image.response.json")))
	resp, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), &agentrt.ModelRequest{
		System: "You are a helpful assistant",
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Take a screenshot of the desktop"),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("toolu_01MpnnLwjqpqYWLUQ5F5SixE", "computer", json.RawMessage(`{"action":"screenshot"}`))),
			{Role: agentrt.RoleTool, ToolUseID: "toolu_01MpnnLwjqpqYWLUQ5F5SixE", Blocks: []agentrt.Block{agentrt.ImageBlock("image/png", png)}},
		},
		MaxTokens: 4096,
	})
	require.NoError(t, err)
	// The recording declared Anthropic's computer-use tool, which a
	// ToolSpec does not express; the messages are the same.
	want := fixtureJSON(t, "tool-result-image.request.json")
	got := r.only().json(t)
	for _, key := range []string{"model", "max_tokens", "system", "messages"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
	assert.Contains(t, resp.Message.Text(), "black desktop")
}

var weatherTool = agentrt.ToolSpec{
	Name:        "weather",
	Description: "Get weather information for a location",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"description":"the city","type":"string"}},"required":["location"]}`),
}

// thinkingOpts enables extended thinking as the recordings did.
var thinkingOpts = &Options{MaxRetries: -1, ExtraFields: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 4000}}}

func TestThinkingToolCallAndFollowupRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		jsonReply(fixture(t, "thinking-tool-call.response.json")),
		jsonReply(fixture(t, "thinking-tool-result-followup.response.json")))
	p := r.provider("claude-sonnet-4-20250514", thinkingOpts)
	user := agentrt.NewUserMessage("What's the weather in Florence, Italy?")
	req := &agentrt.ModelRequest{
		System:     "You are a helpful assistant",
		Messages:   []agentrt.Message{user},
		Tools:      []agentrt.ToolSpec{weatherTool},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
		MaxTokens:  4096,
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 2)
	th := resp.Message.Blocks[0]
	assert.Equal(t, agentrt.BlockThinking, th.Type)
	assert.Equal(t, "anthropic", th.Provider)
	assert.Contains(t, th.Text, "Florence")
	assert.Equal(t, "Es8DCkYICxgCKkBROcM", string(th.Signature[:19]))
	assert.Equal(t, `{"location":"Florence, Italy"}`, string(resp.Message.Blocks[1].Input))

	// Through the session's JSON form (the JSONL store), then back: the
	// follow-up is the recorded one, thinking block and signature included.
	b, err := json.Marshal(resp.Message)
	require.NoError(t, err)
	var stored agentrt.Message
	require.NoError(t, json.Unmarshal(b, &stored))
	req2 := *req
	req2.Messages = []agentrt.Message{user, stored, agentrt.NewToolMessage("toolu_014azqsWLU8Djh6RhmBGRC2u", "40 C", false)}
	resp2, err := p.Plan(context.Background(), &req2)
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 2)
	for i, name := range []string{"thinking-tool-call.request.json", "thinking-tool-result-followup.request.json"} {
		want, got := fixtureJSON(t, name), reqs[i].json(t)
		for _, key := range []string{"model", "max_tokens", "system", "messages", "tools", "thinking"} {
			assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "%s: field %q", name, key)
		}
		// The recording sent disable_parallel_tool_use: false, the default.
		assert.JSONEq(t, `{"type":"auto"}`, jsonOf(t, got["tool_choice"]))
	}
	assert.NotEmpty(t, resp2.Message.Text())
}

func TestThinkingStreamRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "thinking-tool-call-stream.sse")))
	var deltas []string
	resp, err := r.provider("claude-sonnet-4-20250514", thinkingOpts).Plan(context.Background(), &agentrt.ModelRequest{
		System:    "You are a helpful assistant",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")},
		Tools:     []agentrt.ToolSpec{weatherTool},
		MaxTokens: 4096,
		OnText:    func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	want := fixtureJSON(t, "thinking-tool-call-stream.request.json")
	got := r.only().json(t)
	for _, key := range []string{"model", "max_tokens", "system", "messages", "tools", "thinking", "stream"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
	require.Len(t, resp.Message.Blocks, 2)
	th := resp.Message.Blocks[0]
	assert.Equal(t, agentrt.BlockThinking, th.Type)
	assert.NotEmpty(t, th.Text)
	assert.NotEmpty(t, th.Signature)
	assert.Empty(t, deltas, "thinking is not streamed as answer text")
	assert.Equal(t, agentrt.BlockToolUse, resp.Message.Blocks[1].Type)
}

func TestThinkingUsageRecorded(t *testing.T) {
	t.Parallel()
	// Adaptive thinking without display: no thinking text, one signature;
	// thinking_tokens in message_delta.
	r := newReplay(t, sseReply(fixture(t, "thinking-omitted-stream.sse")), jsonReply(fixture(t, "thinking-text.json")))
	p := r.provider("claude-sonnet-5", nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, OnText: func(string) {}})
	require.NoError(t, err)
	th := resp.Message.Blocks[0]
	assert.Equal(t, agentrt.BlockThinking, th.Type)
	assert.Empty(t, th.Text)
	assert.NotEmpty(t, th.Signature)
	assert.Equal(t, agentrt.Usage{InputTokens: 47, OutputTokens: 496, ReasoningTokens: 62}, resp.Usage)

	resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, 139, resp.Usage.ReasoningTokens)
	assert.Equal(t, 1699, resp.Usage.OutputTokens)
	assert.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
}

// The recorded request of fantasy's cache-control test has the same
// breakpoints as this adapter's default: the system prompt, and the last
// block of each of the last two messages.
func TestCacheBreakpointsRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "cache-control-tool-result-followup.response.json")))
	_, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), &agentrt.ModelRequest{
		System: "You are a helpful assistant",
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("What's the weather in Florence,Italy?"),
			agentrt.NewAssistantMessage(agentrt.TextBlock("I'll get the weather information for Florence, Italy for you."),
				agentrt.ToolUseBlock("toolu_01G4V9gJccyjCmy6PYH7Gx2E", "weather", json.RawMessage(`{"location":"Florence,Italy"}`))),
			agentrt.NewToolMessage("toolu_01G4V9gJccyjCmy6PYH7Gx2E", "40 C", false),
		},
		Tools:     []agentrt.ToolSpec{weatherTool},
		MaxTokens: 4000,
	})
	require.NoError(t, err)
	want := fixtureJSON(t, "cache-control-tool-result-followup.request.json")
	got := r.only().raw(t)
	for _, key := range []string{"model", "max_tokens", "system", "messages", "tools"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
}

func TestNoCacheSendsNoBreakpoints(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")), jsonReply(fixture(t, "text.json")))
	req := &agentrt.ModelRequest{
		System:   "sys",
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		Tools:    []agentrt.ToolSpec{weatherTool},
	}
	_, err := r.provider("m", &Options{NoCache: true, MaxRetries: -1}).Plan(context.Background(), req)
	require.NoError(t, err)
	auto := &Options{MaxRetries: -1, ExtraFields: map[string]any{"cache_control": map[string]any{"type": "ephemeral"}}}
	_, err = r.provider("m", auto).Plan(context.Background(), req)
	require.NoError(t, err)
	reqs := r.requests()
	assert.NotContains(t, string(reqs[0].body), "cache_control")
	assert.Equal(t, 1, strings.Count(string(reqs[1].body), "cache_control"), "only the top-level one: %s", reqs[1].body)
}

// Two calls of one long prompt, recorded: the first writes the cache, the
// second reads it. Priced at Claude Sonnet's list prices, caching costs
// 1.25x on the first call and saves 90% of the prefix on every later one.
func TestPromptCacheSavingRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "prompt-cache-write-stream.sse")), sseReply(fixture(t, "prompt-cache-read-stream.sse")))
	p := r.provider("claude-sonnet-4-6", nil)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("a long document ...")}, MaxTokens: 8, OnText: func(string) {}}
	var total agentrt.Usage
	var usages []agentrt.Usage
	for range 2 {
		resp, err := p.Plan(context.Background(), req)
		require.NoError(t, err)
		usages = append(usages, resp.Usage)
		total = total.Add(resp.Usage)
	}
	assert.Equal(t, agentrt.Usage{InputTokens: 16063, OutputTokens: 5, CacheWriteTokens: 16060}, usages[0])
	assert.Equal(t, agentrt.Usage{InputTokens: 16063, OutputTokens: 5, CacheReadTokens: 16060}, usages[1])
	// The request marks the user's last block, as the recording's did.
	got := r.requests()[0].raw(t)
	assert.JSONEq(t, `{"type":"ephemeral"}`, jsonOf(t, got["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["cache_control"]))

	prices := agentrt.Prices{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30}
	cached := prices.Cost(total)
	uncached := prices.Cost(agentrt.Usage{InputTokens: total.InputTokens, OutputTokens: total.OutputTokens})
	// 16060 written at 3.75 + 16060 read at 0.30 + 6 at 3 + 10 output at 15.
	assert.InDelta(t, 0.065211, cached, 1e-9)
	// 32126 input at 3 + 10 output at 15.
	assert.InDelta(t, 0.096528, uncached, 1e-9)
	assert.Less(t, cached, uncached)
	// From the third call of the same prefix on, each call costs a tenth.
}

func TestToolChoiceRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "tool-choice-tool.response.json")))
	person := agentrt.ToolSpec{Name: "Person", Description: "A person with name, age, and city",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"age":{"description":"The person's age","type":"integer"},"city":{"description":"The city where the person lives","type":"string"},"name":{"description":"The person's name","type":"string"}},"required":["name","age","city"]}`)}
	resp, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages:   []agentrt.Message{agentrt.NewUserMessage("Generate information about a person named Alice who is 30 years old and lives in Paris.")},
		Tools:      []agentrt.ToolSpec{person},
		ToolChoice: agentrt.ToolChoice{Mode: "tool", Name: "Person"},
		MaxTokens:  4000,
	})
	require.NoError(t, err)
	want := fixtureJSON(t, "tool-choice-tool.request.json")
	got := r.only().json(t)
	for _, key := range []string{"model", "max_tokens", "messages", "tools"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
	assert.JSONEq(t, `{"type":"tool","name":"Person"}`, jsonOf(t, got["tool_choice"]))
	assert.Equal(t, "Person", resp.Message.ToolUses()[0].Name)
}

// Written from the API reference (no recording of tool_choice any or
// none, nor of a document block, exists in the shared fixtures).
func TestToolChoiceModesAndDocumentsWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		choice agentrt.ToolChoice
		want   string
	}{
		{agentrt.ToolChoice{Mode: "none"}, `{"type":"none"}`},
		{agentrt.ToolChoice{Mode: "required"}, `{"type":"any"}`},
	} {
		r := newReplay(t, jsonReply(fixture(t, "text.json")))
		_, err := r.provider("m", nil).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi",
				agentrt.DocumentBlock("a.pdf", "application/pdf", []byte("%PDF-1.4")),
				agentrt.DocumentBlock("", "text/plain", []byte("plain")),
				agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/a.png"})},
			Tools:      []agentrt.ToolSpec{weatherTool},
			ToolChoice: tc.choice,
		})
		require.NoError(t, err)
		got := r.only().json(t)
		assert.JSONEq(t, tc.want, jsonOf(t, got["tool_choice"]))
		assert.JSONEq(t, `[{"type":"text","text":"hi"},
			{"type":"document","title":"a.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="}},
			{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain"}},
			{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]`,
			jsonOf(t, got["messages"].([]any)[0].(map[string]any)["content"]))
	}
}

func TestUnsupportedContentRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	r := newReplay(t)
	p := r.provider("m", nil)
	for _, b := range []agentrt.Block{
		agentrt.ImageBlock("image/bmp", []byte("BM")),
		agentrt.DocumentBlock("a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []byte("PK")),
	} {
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi", b)}})
		require.ErrorIs(t, err, agentrt.ErrUnsupportedContent)
		require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
		var pe *agentrt.ProviderError
		require.True(t, errors.As(err, &pe))
		assert.Contains(t, pe.Message, b.MediaType)
	}
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, ToolChoice: agentrt.ToolChoice{Mode: "sometimes"}})
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.Empty(t, r.requests(), "nothing was sent")
}

// A session written before thinking blocks existed carries the thinking
// in the Signature of the block after it; it is sent back as it was.
func TestLegacyCarriedThinkingResent(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	use := agentrt.ToolUseBlock("toolu_01", "add", json.RawMessage(`{"a":2,"b":40}`))
	use.Signature = []byte(`{"anthropic_thinking":[{"type":"thinking","thinking":"I should add.","signature":"EqQBCkYIBxgCKkBsig"}]}`)
	_, err := r.provider("m", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("What is 2+40?"), agentrt.NewAssistantMessage(use), agentrt.NewToolMessage("toolu_01", "42", false),
	}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"assistant","content":[{"type":"thinking","thinking":"I should add.","signature":"EqQBCkYIBxgCKkBsig"},{"type":"tool_use","id":"toolu_01","name":"add","input":{"a":2,"b":40}}]}`,
		jsonOf(t, r.only().json(t)["messages"].([]any)[1]))
}
