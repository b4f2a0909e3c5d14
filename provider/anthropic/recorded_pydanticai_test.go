package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of recordings made by pydantic-ai against the real Messages API
// (testdata/pydanticai/README.md). Where the cassette holds the request
// the API accepted, the adapter builds the same conversation from agentrt
// values and its request is compared with the recorded one, field by
// field; the answers are decoded as the runtime sees them.

// pyd returns the bytes of testdata/pydanticai/name.
func pyd(t *testing.T, name string) []byte {
	t.Helper()
	return fixture(t, "pydanticai/"+name)
}

// recordedRequest returns the recorded request body testdata/pydanticai/name,
// with pydantic-ai's spelling of what this adapter sends in another
// equivalent form rewritten to the adapter's: a tool_result's string content
// as a list of one text block, "is_error": false and a tool's empty
// description (the defaults) left out, and a system prompt string as a list
// of one text block.
func recordedRequest(t *testing.T, name string) map[string]any {
	t.Helper()
	body := fixtureJSON(t, "pydanticai/"+name)
	toolResultsAsBlocks(body)
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["is_error"] == false {
				delete(b, "is_error")
			}
		}
	}
	tools, _ := body["tools"].([]any)
	for _, tool := range tools {
		if m, _ := tool.(map[string]any); m["description"] == "" {
			delete(m, "description")
		}
	}
	if s, ok := body["system"].(string); ok {
		body["system"] = []any{map[string]any{"type": "text", "text": s}}
	}
	return body
}

// requireSameFields checks that the request the adapter sent has the
// recorded values of keys (cache_control marks aside, see seen.json).
func requireSameFields(t *testing.T, recorded map[string]any, sent seen, keys ...string) {
	t.Helper()
	got := sent.json(t)
	for _, k := range keys {
		require.Contains(t, recorded, k)
		require.JSONEq(t, jsonOf(t, recorded[k]), jsonOf(t, got[k]), "request field %q", k)
	}
}

// sseBlock returns field of the content_block of the content_block_start
// event for index in testdata/pydanticai/name.
func sseBlock(t *testing.T, name string, index int, field string) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(pyd(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string
			Index        int
			ContentBlock map[string]any `json:"content_block"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		if ev.Type == "content_block_start" && ev.Index == index {
			s, _ := ev.ContentBlock[field].(string)
			require.NotEmpty(t, s, "content_block %d .%s of %s", index, field, name)
			return s
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no content_block_start %d in %s", index, name)
	return ""
}

// claude-fable-5-1 answers with a thinking block whose text is empty and
// whose signature binds it to the prompt prefix. The next call changes the
// system prompt, so the API drops that block ("input_transformations":
// thinking_dropped) instead of refusing the request: the adapter must send
// the block back as it came, empty thinking text and signature, as
// pydantic-ai did. Recorded twice, with the second answer as JSON and as a
// stream.
func TestPydanticAIStaleThinkingBlock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, first, request, second string
		stream                       bool
		firstText                    string
	}{
		{
			name: "json", first: "fable-stale-thinking-1.response.json",
			request: "fable-stale-thinking-2.request.json", second: "fable-stale-thinking-2.response.json",
			firstText: "17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = **391**.",
		},
		{
			name: "streamed", first: "fable-stale-thinking-streamed-1.response.json",
			request: "fable-stale-thinking-streamed-2.request.json", second: "fable-stale-thinking-streamed-2-stream.sse",
			stream: true, firstText: "17 × 23 = (17 × 20) + (17 × 3) = 340 + 51 = **391**.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			second := jsonReply(pyd(t, tt.second))
			if tt.stream {
				second = sseReply(pyd(t, tt.second))
			}
			r := newReplay(t, jsonReply(pyd(t, tt.first)), second)
			p := r.provider("claude-fable-5-1", &Options{MaxRetries: -1, ExtraFields: map[string]any{
				"thinking": map[string]any{"block_binding": map[string]any{"prefix_mismatch_behavior": "drop_block"}},
			}})
			msgs := []agentrt.Message{agentrt.NewUserMessage("Think about it, then say what 17*23 is.")}
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
				System: "You are a helpful assistant. Answer briefly.", Messages: msgs, MaxTokens: 4096,
			})
			require.NoError(t, err)
			sig := jsonContent(t, "pydanticai/"+tt.first, 0, "signature")
			require.Equal(t, agentrt.NewAssistantMessage(thinking("", sig, false), agentrt.TextBlock(tt.firstText)), resp.Message)
			require.Equal(t, agentrt.Usage{InputTokens: 41, OutputTokens: 67, ReasoningTokens: 30}, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)
			require.Equal(t, "claude-fable-5-1", resp.Model)

			msgs = append(msgs, resp.Message, agentrt.NewUserMessage("And times two?"))
			req := &agentrt.ModelRequest{
				System: "You are a helpful assistant. Answer briefly. Today is 2026-09-01.", Messages: msgs, MaxTokens: 4096,
			}
			var deltas strings.Builder
			if tt.stream {
				req.OnText = func(d string) { deltas.WriteString(d) }
			}
			resp, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			sent := r.requests()[1]
			requireSameFields(t, recordedRequest(t, tt.request), sent, "model", "max_tokens", "system", "messages", "thinking")
			checkSendable(t, sent.body)
			checkBreakpoints(t, sent.body)

			require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("391 × 2 = **782**.")), resp.Message)
			require.Equal(t, agentrt.Usage{InputTokens: 95, OutputTokens: 13}, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)
			require.Equal(t, "claude-fable-5-1", resp.Model)
			if tt.stream {
				require.Equal(t, "391 × 2 = **782**.", deltas.String())
			}
		})
	}
}

// A session whose assistant turn came from OpenAI (gpt-5 reasoning with
// encrypted content, then text) continues on claude-sonnet-4-0 with
// thinking enabled. pydantic-ai sent the other model's reasoning as
// <thinking> text; this adapter leaves another vendor's thinking out, so
// the assistant turn is its text alone (a previous turn without thinking
// blocks is accepted with thinking on). The answer's thinking comes back
// with its signature.
func TestPydanticAIThinkingFromOtherModel(t *testing.T) {
	t.Parallel()
	const (
		req  = "thinking-from-other-model.request.json"
		resp = "thinking-from-other-model.response.json"
	)
	recorded := recordedRequest(t, req)
	rmsgs := recorded["messages"].([]any)
	require.Len(t, rmsgs, 3)
	rblocks := rmsgs[1].(map[string]any)["content"].([]any)
	answer := rblocks[len(rblocks)-1].(map[string]any)["text"].(string)
	summary := strings.TrimSuffix(strings.TrimPrefix(rblocks[0].(map[string]any)["text"].(string), "<thinking>\n"), "\n</thinking>")

	r := newReplay(t, jsonReply(pyd(t, resp)), jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-0", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
	}})
	openai := agentrt.Block{
		Type: agentrt.BlockThinking, Text: summary, Provider: "openai",
		Signature: []byte("gAAAAABpgMny_encrypted_content_of_rs_0cd2b5edf91e3cfb"), // shortened
	}
	msgs := []agentrt.Message{
		agentrt.NewUserMessage("How do I cross the street?"),
		agentrt.NewAssistantMessage(openai, agentrt.TextBlock(answer)),
		agentrt.NewUserMessage("Considering the way to cross the street, analogously, how do I cross the river?"),
	}
	got, err := p.Plan(context.Background(), &agentrt.ModelRequest{System: "You are a helpful assistant.", Messages: msgs, MaxTokens: 4096})
	require.NoError(t, err)

	sent := r.only()
	requireSameFields(t, recorded, sent, "model", "max_tokens", "system", "thinking")
	body := sent.json(t)
	smsgs := body["messages"].([]any)
	require.Len(t, smsgs, 3)
	require.JSONEq(t, jsonOf(t, rmsgs[0]), jsonOf(t, smsgs[0]))
	require.JSONEq(t, jsonOf(t, rmsgs[2]), jsonOf(t, smsgs[2]))
	require.JSONEq(t, `{"role":"assistant","content":[{"type":"text","text":`+jsonString(t, answer)+`}]}`, jsonOf(t, smsgs[1]),
		"the other vendor's thinking is left out")
	require.NotContains(t, string(sent.body), "gAAAAA")
	checkSendable(t, sent.body)

	require.Equal(t, agentrt.NewAssistantMessage(
		thinking(jsonContent(t, "pydanticai/"+resp, 0, "thinking"), jsonContent(t, "pydanticai/"+resp, 0, "signature"), false),
		agentrt.TextBlock(jsonContent(t, "pydanticai/"+resp, 1, "text")),
	), got.Message)
	require.True(t, strings.HasPrefix(got.Message.Blocks[0].Text, "The user is asking about crossing a river"))
	require.True(t, strings.HasSuffix(got.Message.Text(), "What type of river crossing are you considering?"))
	require.Equal(t, agentrt.Usage{InputTokens: 1061, OutputTokens: 546}, got.Usage)
	require.Equal(t, agentrt.FinishStop, got.Finish)
	require.Equal(t, "claude-sonnet-4-20250514", got.Model)

	// The next turn sends Claude's thinking back, signed, before its text.
	msgs = append(msgs, got.Message, agentrt.NewUserMessage("Thanks"))
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{System: "You are a helpful assistant.", Messages: msgs, MaxTokens: 4096})
	require.NoError(t, err)
	next := checkSendable(t, r.requests()[1].body)
	require.Len(t, next, 5)
	require.Equal(t, "thinking", next[3].Content[0].Type)
	require.Equal(t, jsonContent(t, "pydanticai/"+resp, 0, "signature"), next[3].Content[0].Signature)
}

// Empty assistant messages in the history (the answer of a failed call,
// with no blocks or an empty text) are left out. In the first recording
// the history also begins with an assistant message, which the API
// accepted; in the second, leaving the empty answer out puts two user
// messages in a row, which the adapter merges into one (pydantic-ai sent
// them apart; both forms are accepted).
func TestPydanticAIEmptyAssistantMessages(t *testing.T) {
	t.Parallel()
	t.Run("history begins with the assistant", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(pyd(t, "empty-message-on-history.response.json")))
		p := r.provider("claude-sonnet-4-5", nil)
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			System: "You are a helpful assistant.\n\n",
			Messages: []agentrt.Message{
				agentrt.NewAssistantMessage(agentrt.TextBlock("Hello, how can I help you?")),
				agentrt.NewAssistantMessage(),
				agentrt.NewAssistantMessage(agentrt.TextBlock("")),
				agentrt.NewUserMessage("I need a potato!"),
			},
			MaxTokens: 4096,
		})
		require.NoError(t, err)
		requireSameFields(t, recordedRequest(t, "empty-message-on-history.request.json"), r.only(), "model", "max_tokens", "system", "messages")
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(jsonContent(t, "pydanticai/empty-message-on-history.response.json", 0, "text"))), resp.Message)
		require.True(t, strings.HasPrefix(resp.Message.Text(), "I can't physically give you a potato"))
		require.Equal(t, agentrt.Usage{InputTokens: 41, OutputTokens: 88}, resp.Usage)
		require.Equal(t, agentrt.FinishStop, resp.Finish)
		require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)
	})
	t.Run("retry after an empty answer", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(pyd(t, "retry-after-empty-response.response.json")))
		p := r.provider("claude-haiku-4-5", nil)
		feedback := "Validation feedback:\nPlease return text.\n\nFix the errors and try again."
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{
				agentrt.NewUserMessage("Hi"),
				agentrt.NewAssistantMessage(),
				agentrt.NewUserMessage(feedback),
			},
			MaxTokens: 4096,
		})
		require.NoError(t, err)
		sent := r.only()
		recorded := recordedRequest(t, "retry-after-empty-response.request.json")
		requireSameFields(t, recorded, sent, "model", "max_tokens")
		// The recorded two user messages, merged.
		var merged []any
		for _, m := range recorded["messages"].([]any) {
			require.Equal(t, "user", m.(map[string]any)["role"])
			merged = append(merged, m.(map[string]any)["content"].([]any)...)
		}
		require.JSONEq(t, jsonOf(t, []any{map[string]any{"role": "user", "content": merged}}), jsonOf(t, sent.json(t)["messages"]))
		require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":`+jsonString(t, feedback)+`}]}]`,
			jsonOf(t, sent.json(t)["messages"]))
		checkSendable(t, sent.body)
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("# Hi there! 👋\n\nHow can I help you today?")), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 26, OutputTokens: 18}, resp.Usage)
		require.Equal(t, agentrt.FinishStop, resp.Finish)
		require.Equal(t, "claude-haiku-4-5-20251001", resp.Model)
	})
}

// A prefilled answer: the conversation ends with the assistant's "Su
// nombre es", sent as the last message, and the model continues it; the
// continuation begins with a space, which is kept. Recorded as JSON and
// as a stream, with the same request.
func TestPydanticAIResponsePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  func(t *testing.T) reply
		text   string
		usage  agentrt.Usage
		stream bool
	}{
		{
			name:  "json",
			reply: func(t *testing.T) reply { return jsonReply(pyd(t, "response-prefix.response.json")) },
			text:  ` **rojo** (o "red" en inglés). Este es el valor hexadecimal para el color rojo puro en el espacio de color RGB.`,
			usage: agentrt.Usage{InputTokens: 24, OutputTokens: 39},
		},
		{
			name:  "stream",
			reply: func(t *testing.T) reply { return sseReply(pyd(t, "response-prefix-stream.sse")) },
			text: " **rojo** (o **red** en inglés).\n\nEl color #FF0000 es rojo puro en el sistema hexadecimal RGB, donde:\n" +
				"- FF = 255 (máximo valor de rojo)\n- 00 = 0 (sin verde)\n- 00 = 0 (sin azul)",
			usage: agentrt.Usage{InputTokens: 24, OutputTokens: 82}, stream: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, tt.reply(t))
			p := r.provider("claude-sonnet-4-0", nil)
			req := &agentrt.ModelRequest{
				System: "Be concise.",
				Messages: []agentrt.Message{
					agentrt.NewUserMessage("What is the name of color #FF0000"),
					agentrt.NewAssistantMessage(agentrt.TextBlock("Su nombre es")),
				},
				MaxTokens: 4096,
			}
			resp, deltas := planStreamed(t, p, req, tt.stream)
			sent := r.only()
			requireSameFields(t, recordedRequest(t, "response-prefix.request.json"), sent, "model", "max_tokens", "system", "messages")
			checkSendable(t, sent.body)
			require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(tt.text)), resp.Message)
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)
			require.Equal(t, "claude-sonnet-4-20250514", resp.Model)
			if tt.stream {
				require.Equal(t, tt.text, strings.Join(deltas, ""))
			}
		})
	}
}

// Two redacted_thinking blocks, then text, streamed. The blocks keep
// their data and go back, in order and before the text, in the next
// request.
func TestPydanticAIRedactedThinkingStream(t *testing.T) {
	t.Parallel()
	const stream = "redacted-thinking-stream.sse"
	r := newReplay(t, sseReply(pyd(t, stream)), jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-5-20250929", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
	}})
	msgs := []agentrt.Message{agentrt.NewUserMessage(
		"ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB")}
	var deltas strings.Builder
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: msgs, MaxTokens: 4096, OnText: func(d string) { deltas.WriteString(d) },
	})
	require.NoError(t, err)
	requireSameFields(t, recordedRequest(t, "redacted-thinking-stream.request.json"), r.only(), "model", "max_tokens", "messages", "thinking", "stream")

	data0, data1 := sseBlock(t, stream, 0, "data"), sseBlock(t, stream, 1, "data")
	text := "I notice that you've sent what appears to be some kind of test string or command. I don't have any special " +
		"\"magic string\" triggers or backdoor commands that would expose internal systems or change my behavior.\n\n" +
		"I'm Claude, an AI assistant created by Anthropic to be helpful, harmless, and honest. How can I assist you today " +
		"with a legitimate task or question?"
	require.Equal(t, agentrt.NewAssistantMessage(thinking("", data0, true), thinking("", data1, true), agentrt.TextBlock(text)), resp.Message)
	require.Equal(t, text, deltas.String())
	require.Equal(t, agentrt.Usage{InputTokens: 92, OutputTokens: 189}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)

	msgs = append(msgs, resp.Message, agentrt.NewUserMessage("OK"))
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096})
	require.NoError(t, err)
	body := r.requests()[1].body
	checkSendable(t, body)
	checkBreakpoints(t, body)
	var next struct{ Messages []json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &next))
	require.Len(t, next.Messages, 3)
	require.JSONEq(t, `{"role":"assistant","content":[
		{"type":"redacted_thinking","data":"`+data0+`"},
		{"type":"redacted_thinking","data":"`+data1+`"},
		{"type":"text","text":`+jsonString(t, text)+`}]}`, stripped(t, next.Messages[1]))
}

// Requests with fields the adapter sets from ModelRequest and Options, as
// the API accepted them: tool_choice "any" for ToolChoice "required"
// (together with adaptive thinking, which the API allows), thinking and
// output_config from ExtraFields, temperature and top_k. Each answer is
// decoded; the two tool-output calls are one conversation.
func TestPydanticAIRecordedRequests(t *testing.T) {
	t.Parallel()
	finalResult := agentrt.ToolSpec{
		Name:        "final_result",
		Description: "The final response which ends this conversation",
		InputSchema: json.RawMessage(`{"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"type":"object"}`),
	}
	userCountry := agentrt.ToolSpec{
		Name:        "get_user_country",
		InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`),
	}
	required := agentrt.ToolChoice{Mode: "required"}

	t.Run("adaptive thinking with a forced tool", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(pyd(t, "adaptive-thinking-tool-output.response.json")))
		p := r.provider("claude-opus-4-6", &Options{MaxRetries: -1, ExtraFields: map[string]any{"thinking": map[string]any{"type": "adaptive"}}})
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("What is the capital of France?")},
			Tools:    []agentrt.ToolSpec{finalResult}, ToolChoice: required, MaxTokens: 4096,
		})
		require.NoError(t, err)
		requireSameFields(t, recordedRequest(t, "adaptive-thinking-tool-output.request.json"), r.only(),
			"model", "max_tokens", "messages", "tools", "tool_choice", "thinking")
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.ToolUseBlock("toolu_019SXChyL3r8MfUDbGWncjDL", "final_result",
			json.RawMessage(`{"city":"Paris","country":"France"}`))), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 671, OutputTokens: 55}, resp.Usage)
		require.Equal(t, agentrt.FinishToolUse, resp.Finish)
		require.Equal(t, "claude-opus-4-6", resp.Model)
	})

	t.Run("effort and summarized adaptive thinking", func(t *testing.T) {
		t.Parallel()
		const answer = "opus-5-features.response.json"
		r := newReplay(t, jsonReply(pyd(t, answer)), jsonReply(fixture(t, "text.json")))
		p := r.provider("claude-opus-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{
			"output_config": map[string]any{"effort": "xhigh"},
			"thinking":      map[string]any{"type": "adaptive", "display": "summarized"},
		}})
		msgs := []agentrt.Message{agentrt.NewUserMessage("What is 2+2?")}
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096})
		require.NoError(t, err)
		requireSameFields(t, recordedRequest(t, "opus-5-features.request.json"), r.only(),
			"model", "max_tokens", "messages", "output_config", "thinking")
		sig := jsonContent(t, "pydanticai/"+answer, 0, "signature")
		require.Equal(t, agentrt.NewAssistantMessage(
			thinking("This is a straightforward arithmetic problem, so I'll just provide the answer directly.", sig, false),
			agentrt.TextBlock("2 + 2 = 4"),
		), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 13, OutputTokens: 44, ReasoningTokens: 33}, resp.Usage)
		require.Equal(t, agentrt.FinishStop, resp.Finish)
		require.Equal(t, "claude-opus-5", resp.Model)

		_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: append(msgs, resp.Message, agentrt.NewUserMessage("And 3+3?")), MaxTokens: 4096})
		require.NoError(t, err)
		next := checkSendable(t, r.requests()[1].body)
		require.Equal(t, sig, next[1].Content[0].Signature)
	})

	t.Run("tool output", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(pyd(t, "tool-output-1.response.json")), jsonReply(pyd(t, "tool-output-2.response.json")))
		p := r.provider("claude-sonnet-4-5", nil)
		tools := []agentrt.ToolSpec{userCountry, finalResult}
		msgs := []agentrt.Message{agentrt.NewUserMessage("What is the largest city in the user country?")}
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, Tools: tools, ToolChoice: required, MaxTokens: 4096})
		require.NoError(t, err)
		requireSameFields(t, recordedRequest(t, "tool-output-1.request.json"), r.requests()[0],
			"model", "max_tokens", "messages", "tools", "tool_choice")
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.ToolUseBlock("toolu_01ECaF1WRmnTui1BpXZXyBds", "get_user_country", json.RawMessage(`{}`))), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 711, OutputTokens: 23}, resp.Usage)
		require.Equal(t, agentrt.FinishToolUse, resp.Finish)
		require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)

		msgs = append(msgs, resp.Message, agentrt.NewToolMessage("toolu_01ECaF1WRmnTui1BpXZXyBds", "Mexico", false))
		resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, Tools: tools, ToolChoice: required, MaxTokens: 4096})
		require.NoError(t, err)
		sent := r.requests()[1]
		requireSameFields(t, recordedRequest(t, "tool-output-2.request.json"), sent,
			"model", "max_tokens", "messages", "tools", "tool_choice")
		checkSendable(t, sent.body)
		checkBreakpoints(t, sent.body)
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.ToolUseBlock("toolu_01UKDf4fk894G2BEpiPSwL6s", "final_result",
			json.RawMessage(`{"city":"Mexico City","country":"Mexico"}`))), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 762, OutputTokens: 56}, resp.Usage)
		require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	})

	t.Run("temperature and top_k", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(pyd(t, "sampling-settings.response.json")))
		temp := 0.2
		// The sampling parameters need the API version that still has them
		// (see Options.Temperature).
		client := sdk.NewClient(
			option.WithBaseURL(r.srv.URL),
			option.WithAPIKey("test-key"),
			option.WithHTTPClient(r.srv.Client()),
			option.WithHeader("anthropic-version", "2023-06-01"),
		)
		p := New(client, "claude-haiku-4-5", &Options{MaxRetries: -1, Temperature: &temp, ExtraFields: map[string]any{"top_k": 40}})
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hello")}, MaxTokens: 4096})
		require.NoError(t, err)
		sent := r.only()
		requireSameFields(t, recordedRequest(t, "sampling-settings.request.json"), sent, "model", "max_tokens", "messages", "temperature", "top_k")
		require.Equal(t, "2023-06-01", sent.header.Get("anthropic-version"))
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Hello! 👋 How can I help you today?")), resp.Message)
		require.Equal(t, agentrt.Usage{InputTokens: 8, OutputTokens: 16}, resp.Usage)
		require.Equal(t, "claude-haiku-4-5-20251001", resp.Model)
	})
}

// Usage as the runtime counts it: after a compaction, the top-level
// counts leave out the compaction step, which usage.iterations lists and
// the adapter adds (in JSON, 55096 tokens written to the cache by it; in
// the stream, 55096 read, and message_delta's counts replace
// message_start's, which were the compaction step's); a cache write with
// a one-hour TTL.
func TestPydanticAIUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		text  string
		usage agentrt.Usage
		model string
	}{
		{
			file: "compaction-usage-with-cache.response.json", text: "Hello! 👋",
			// The answer: 180 in, 8 out; the compaction: 100 in + 55096
			// written, 82 out.
			usage: agentrt.Usage{InputTokens: 180 + 100 + 55096, OutputTokens: 8 + 82, CacheWriteTokens: 55096},
			model: "claude-sonnet-4-6",
		},
		{
			file: "compaction-usage-with-cache-stream.sse", text: "Hello! 👋",
			// The answer: 181 in, 8 out; the compaction: 100 in + 55096
			// read, 83 out.
			usage: agentrt.Usage{InputTokens: 181 + 100 + 55096, OutputTokens: 8 + 83, CacheReadTokens: 55096},
			model: "claude-sonnet-4-6",
		},
		{
			file: "cache-1h-write-stream.sse", text: "Django",
			usage: agentrt.Usage{InputTokens: 13 + 3913, OutputTokens: 4, CacheWriteTokens: 3913},
			model: "claude-sonnet-4-6",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			stream := strings.HasSuffix(tt.file, ".sse")
			r := newReplay(t, fileReply(t, "pydanticai/"+tt.file))
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Now say hello.")}}
			resp, deltas := planStreamed(t, r.provider("claude-sonnet-4-6", nil), req, stream)
			require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(tt.text)), resp.Message, "the compaction block is left out")
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)
			require.Equal(t, tt.model, resp.Model)
			if stream {
				require.Equal(t, tt.text, strings.Join(deltas, ""))
			}
		})
	}
}

// The recorded 404 for an unknown model (from the count_tokens endpoint,
// whose error body is the Messages API's, with a request_id beside it).
func TestPydanticAINotFound(t *testing.T) {
	t.Parallel()
	r := newReplay(t, errorReply(404, string(pyd(t, "error-404-not-found.response.json"))))
	p := r.provider("claude-does-not-exist", nil)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hello")}})
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, 404, pe.StatusCode)
	require.Equal(t, "not_found_error", pe.Code)
	require.Equal(t, "model: claude-does-not-exist", pe.Message)
	require.Equal(t, "anthropic", pe.Provider)
}
