package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file cover the opaque reasoning data OpenAI-compatible
// servers want back in a tool loop: OpenRouter's reasoning_details (kept
// in the thinking block's Signature, sent back on the assistant message)
// and the thought signature Gemini's OpenAI-compatible endpoint puts in a
// tool call's extra_content (kept in the tool_use block's Signature, sent
// back on the tool call).

// thinkingOf returns the only thinking block of m.
func thinkingOf(t *testing.T, m agentrt.Message) agentrt.Block {
	t.Helper()
	var found []agentrt.Block
	for _, b := range m.Blocks {
		if b.Type == agentrt.BlockThinking {
			found = append(found, b)
		}
	}
	require.Len(t, found, 1, "thinking blocks of %v", m.Blocks)
	return found[0]
}

// roundTrip stores m as a session does (JSON) and reads it back.
func roundTrip(t *testing.T, m agentrt.Message) agentrt.Message {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back agentrt.Message
	require.NoError(t, json.Unmarshal(b, &back))
	return back
}

// detailFragments returns the reasoning_details items of every delta of a
// recorded stream, in order.
func detailFragments(t *testing.T, sse []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					ReasoningDetails []map[string]any `json:"reasoning_details"`
				} `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &chunk), data)
		for _, c := range chunk.Choices {
			out = append(out, c.Delta.ReasoningDetails...)
		}
	}
	return out
}

// messageDetails returns the reasoning_details of a recorded whole answer,
// byte for byte.
func messageDetails(t *testing.T, body []byte) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct {
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &c))
	require.Len(t, c.Choices, 1)
	require.NotEmpty(t, c.Choices[0].Message.ReasoningDetails)
	return string(c.Choices[0].Message.ReasoningDetails)
}

// TestReasoningDetailsRecorded replays recorded OpenRouter answers and
// checks the reasoning_details kept in the thinking block: for a whole
// answer, the list byte for byte as the server sent it; for a stream, the
// merge of its fragments, compared with a merge worked out here from the
// recorded fragments or with the one another client sent back (and
// OpenRouter accepted).
func TestReasoningDetailsRecorded(t *testing.T) {
	t.Parallel()
	plan := func(t *testing.T, file string, stream bool) agentrt.Message {
		t.Helper()
		srv := newReplay(t, reply{body: fixture(t, file), sse: stream})
		req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
		if stream {
			req.OnText = func(string) {}
		}
		resp, err := srv.provider(nil).Plan(context.Background(), req)
		require.NoError(t, err)
		return resp.Message
	}

	t.Run("whole answers keep the list as sent", func(t *testing.T) {
		t.Parallel()
		for _, file := range []string{
			"fantasy/openrouter-reasoning-tool-call.json",                // gemini-3-pro: text, then encrypted
			"langchaingo/openrouter-claude-thinking-text-tool-call.json", // claude: text with a signature
		} {
			b := thinkingOf(t, plan(t, file, false))
			assert.Equal(t, messageDetails(t, fixture(t, file)), string(b.Signature), file)
			assert.Equal(t, "openai", b.Provider, file)
			assert.False(t, b.Redacted, file)
			assert.NotEmpty(t, b.Text, file)
		}
	})

	t.Run("claude stream: text fragments and a lone signature", func(t *testing.T) {
		t.Parallel()
		const file = "langchaingo/openrouter-claude-thinking-tool-call-stream.sse"
		// The merge worked out from the fragments: all are reasoning.text at
		// index 0 in format anthropic-claude-v1; the first has an empty
		// signature, one later has the signature alone.
		var text strings.Builder
		signature := ""
		frags := detailFragments(t, fixture(t, file))
		require.Greater(t, len(frags), 10)
		for i, f := range frags {
			require.Equal(t, "reasoning.text", f["type"], "fragment %d", i)
			require.Equal(t, float64(0), f["index"], "fragment %d", i)
			require.Equal(t, "anthropic-claude-v1", f["format"], "fragment %d", i)
			if s, _ := f["text"].(string); s != "" {
				text.WriteString(s)
			}
			if s, _ := f["signature"].(string); s != "" {
				require.Empty(t, signature, "one signature")
				signature = s
			}
		}
		require.NotEmpty(t, signature)
		want, err := json.Marshal([]map[string]any{{"type": "reasoning.text", "text": text.String(), "signature": signature, "format": "anthropic-claude-v1", "index": 0}})
		require.NoError(t, err)

		b := thinkingOf(t, plan(t, file, true))
		assert.JSONEq(t, string(want), string(b.Signature))
		// The "reasoning" deltas said the same as the fragments.
		assert.Equal(t, text.String(), b.Text)
		assert.False(t, b.Redacted)
	})

	t.Run("o4-mini stream: encrypted only", func(t *testing.T) {
		t.Parallel()
		const file = "langchaingo/openrouter-o4-mini-encrypted-reasoning-tool-call-stream.sse"
		frags := detailFragments(t, fixture(t, file))
		require.Len(t, frags, 1)
		require.Equal(t, "reasoning.encrypted", frags[0]["type"])
		want, err := json.Marshal(frags)
		require.NoError(t, err)

		m := plan(t, file, true)
		b := thinkingOf(t, m)
		assert.JSONEq(t, string(want), string(b.Signature))
		assert.Empty(t, b.Text)
		assert.True(t, b.Redacted)
		assert.Equal(t, "openai", b.Provider)
		assert.Equal(t, agentrt.BlockThinking, m.Blocks[0].Type, "the thinking block comes first")
	})

	t.Run("gemini-3 stream: text in two fragments, encrypted at the same index", func(t *testing.T) {
		t.Parallel()
		b := thinkingOf(t, plan(t, "fantasy/openrouter-reasoning-details-tool-call-stream.sse", true))
		var recorded struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(fixture(t, "fantasy/openrouter-reasoning-details-followup.request.json"), &recorded))
		require.Len(t, recorded.Messages, 4)
		// The list the recording client merged and sent back.
		assert.JSONEq(t, string(recorded.Messages[2]["reasoning_details"]), string(b.Signature))
		assert.True(t, strings.HasPrefix(b.Text, "**Assessing User Intent**"), b.Text)
		assert.True(t, strings.HasSuffix(b.Text, "the weather function call.\n\n\n"), b.Text)
		assert.Contains(t, b.Text, "call.\n\n\n**Pinpointing the Tool's Use**")
	})

	t.Run("an empty list makes no block", func(t *testing.T) {
		t.Parallel()
		m := plan(t, "langchaingo/openrouter-gemini-parallel-tool-calls-stream.sse", true)
		assert.Contains(t, string(fixture(t, "langchaingo/openrouter-gemini-parallel-tool-calls-stream.sse")), `"reasoning_details":[]`)
		for _, b := range m.Blocks {
			assert.NotEqual(t, agentrt.BlockThinking, b.Type)
		}
	})
}

// florenceWeather is the tool of charmbracelet/fantasy's recordings.
var florenceWeather = agentrt.ToolSpec{
	Name: "weather", Description: "Get weather information for a location",
	InputSchema: json.RawMessage(`{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object"}`),
}

// TestReasoningDetailsFollowUp replays OpenRouter's gemini-3-pro-preview
// tool loop, streamed: the tool call with its reasoning_details, then the
// answer to the tool result. The answer is stored as a session stores it
// (JSON) before the follow-up, which must carry the messages the
// recording client sent, reasoning_details included and nothing else
// (OpenRouter answered it).
func TestReasoningDetailsFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, "fantasy/openrouter-reasoning-details-tool-call-stream.sse"), sse: true},
		reply{body: fixture(t, "fantasy/openrouter-reasoning-details-text-followup-stream.sse"), sse: true})
	p := srv.provider(&openai.Options{DisableStrict: true})
	var streamed strings.Builder
	req := &agentrt.ModelRequest{
		System:   "You are a helpful assistant",
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")},
		Tools:    []agentrt.ToolSpec{florenceWeather},
		OnText:   func(s string) { streamed.WriteString(s) },
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolUses(), 1)
	stored := roundTrip(t, resp.Message)
	assert.Equal(t, resp.Message, stored, "the session keeps the blocks")
	assert.NotEmpty(t, thinkingOf(t, stored).Text, "the reasoning text is kept, for display")

	req.Messages = append(req.Messages, stored, agentrt.NewToolMessage(stored.ToolUses()[0].ID, "40 C", false))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "The weather in Florence, Italy, currently feels quite hot at 40°C.", resp.Message.Text())
	assert.Equal(t, resp.Message.Text(), streamed.String())

	var sent []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "messages")), &sent))
	require.Len(t, sent, 4)
	assert.NotContains(t, sent[2], "reasoning_content", "the list holds the text already")
	assert.JSONEq(t, recordedField(t, "fantasy/openrouter-reasoning-details-followup.request.json", "messages"), jsonText(t, sent))
}

// jsonText encodes v.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestReasoningDetailsStreamMerge checks the merge rules on fragments
// written here in the shapes MiniMax (reasoning_split, no reasoning text
// besides the details, items with an id) and OpenRouter (items without
// index) use: a fragment without index or id continues the last item of
// its type, one with another id starts a new item, an empty string does
// not replace a field, and without any reasoning text the block's text is
// that of the items.
func TestReasoningDetailsStreamMerge(t *testing.T) {
	t.Parallel()
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	body := chunk(`{"role":"assistant","reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user"}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"","index":0,"text":" wants <b>&"}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.summary","summary":"Sum"}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.summary","summary":"mary."}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.encrypted","id":"a","data":"QUJD"}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.encrypted","id":"b","data":"REVG"}]}`) +
		chunk(`{"content":"Hi."}`) +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	srv := newReplay(t, reply{body: []byte(body), sse: true})
	resp, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(string) {},
	})
	require.NoError(t, err)
	b := thinkingOf(t, resp.Message)
	assert.JSONEq(t, `[
		{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user wants <b>&"},
		{"type":"reasoning.summary","summary":"Summary."},
		{"type":"reasoning.encrypted","id":"a","data":"QUJD"},
		{"type":"reasoning.encrypted","id":"b","data":"REVG"}]`, string(b.Signature))
	assert.Contains(t, string(b.Signature), `"The user wants <b>&"`, "HTML characters are not escaped")
	assert.Equal(t, "The user wants <b>&Summary.", b.Text)
	assert.False(t, b.Redacted)
	assert.Equal(t, "Hi.", resp.Message.Text())
}

// TestReasoningDetailsWhenSent builds a session by hand and checks what
// goes back: reasoning_details in every assistant message, and only from
// this adapter's thinking blocks; no
// reasoning_content for a block without text; thought signatures of this
// adapter on their tool calls in every assistant message, those of other
// vendors nowhere. The Responses planner ignores all of it.
func TestReasoningDetailsWhenSent(t *testing.T) {
	t.Parallel()
	const details = `[{"type":"reasoning.encrypted","data":"QUJD","id":"call_new","format":"google-gemini-v1","index":0}]`
	signed := func(id, sig, provider string) agentrt.Block {
		b := agentrt.ToolUseBlock(id, "weather", json.RawMessage(`{"location":"Paris"}`))
		b.Signature, b.Provider = []byte(sig), provider
		return b
	}
	session := []agentrt.Message{
		agentrt.NewUserMessage("q1"),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, Text: "old", Signature: []byte(`[{"type":"reasoning.text","text":"old","index":0}]`), Provider: "openai"},
			signed("call_old", "sig-old", "openai")),
		agentrt.NewToolMessage("call_old", "sunny", false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("a1")),
		agentrt.NewUserMessage("q2"),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, Signature: []byte(details), Redacted: true, Provider: "openai"},
			agentrt.Block{Type: agentrt.BlockThinking, Text: "claude thinks", Signature: []byte("anthropic-signature"), Provider: "anthropic"},
			agentrt.Block{Type: agentrt.BlockThinking, Text: "item", ID: "rs_1", Signature: []byte("gAAAA"), Provider: "openai-responses"},
			signed("call_new", "sig-new", "openai"),
			signed("call_gemini", "gemini-native-sig", "gemini")),
		agentrt.NewToolMessage("call_new", "rainy", false),
		agentrt.NewToolMessage("call_gemini", "rainy", false),
	}
	for i := range session {
		session[i] = roundTrip(t, session[i])
	}

	t.Run("chat completions", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{body: fixture(t, "text.json")})
		_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: session, Tools: []agentrt.ToolSpec{florenceWeather}})
		require.NoError(t, err)
		var sent []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(0).Body, "messages")), &sent))
		require.Len(t, sent, 8)

		old := sent[1]
		assert.JSONEq(t, `[{"type":"reasoning.text","text":"old","index":0}]`, string(old["reasoning_details"]), "in every turn")
		assert.NotContains(t, old, "reasoning_content", "the list holds it")
		assert.JSONEq(t, `[{"id":"call_old","type":"function","function":{"name":"weather","arguments":"{\"location\":\"Paris\"}"},
			"extra_content":{"google":{"thought_signature":"sig-old"}}}]`, string(old["tool_calls"]))

		cur := sent[5]
		assert.JSONEq(t, details, string(cur["reasoning_details"]), "this adapter's list only")
		assert.NotContains(t, cur, "reasoning_content", "no text, no reasoning_content")
		assert.JSONEq(t, `[
			{"id":"call_new","type":"function","function":{"name":"weather","arguments":"{\"location\":\"Paris\"}"},
			 "extra_content":{"google":{"thought_signature":"sig-new"}}},
			{"id":"call_gemini","type":"function","function":{"name":"weather","arguments":"{\"location\":\"Paris\"}"}}]`, string(cur["tool_calls"]))
		for _, leak := range []string{"claude thinks", "anthropic-signature", "gAAAA", "gemini-native-sig"} {
			assert.NotContains(t, field(t, srv.request(0).Body, "messages"), leak)
		}
	})

	t.Run("responses", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
		_, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: session, Tools: []agentrt.ToolSpec{florenceWeather}})
		require.NoError(t, err)
		input := field(t, srv.request(0).Body, "input")
		var items []map[string]any
		require.NoError(t, json.Unmarshal([]byte(input), &items))
		for _, it := range items {
			// rs_1 is the Responses API's own, but the call after it has no
			// item id of that API: the API would refuse the reasoning item
			// without its following item, so it stays too.
			assert.NotEqual(t, "reasoning", it["type"], "no reasoning item: %v", it)
		}
		for _, leak := range []string{"reasoning_details", "QUJD", "extra_content", "sig-new", "sig-old"} {
			assert.NotContains(t, input, leak)
		}
	})
}

// Gemini's OpenAI-compatible endpoint (generativelanguage.googleapis.com
// /v1beta/openai) puts a thought signature on a function call; of
// parallel calls only the first has one. No recording of that endpoint
// was found: these answers are written here in the shape Google documents
// ("Thought signatures", OpenAI compatibility), whole and streamed (the
// signature on the tool-call delta).
const (
	geminiSig        = "CiQBjz1rX2xGbmNvZGVkU2lnbmF0dXJlK0FuZC9TbGFzaGVz=="
	geminiCallsWhole = `{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"role":"assistant","tool_calls":[` +
		`{"extra_content":{"google":{"thought_signature":"` + geminiSig + `"}},"function":{"arguments":"{\"location\":\"Paris\"}","name":"weather"},"id":"function-call-1a2b","type":"function"},` +
		`{"function":{"arguments":"{\"location\":\"London\"}","name":"weather"},"id":"function-call-3c4d","type":"function"}]}}],` +
		`"created":1765000000,"id":"gemini-1","model":"gemini-3-pro-preview","object":"chat.completion","usage":{"completion_tokens":30,"prompt_tokens":60,"total_tokens":150}}`
	geminiCallsStream = `data: {"choices":[{"delta":{"role":"assistant","tool_calls":[` +
		`{"extra_content":{"google":{"thought_signature":"` + geminiSig + `"}},"function":{"arguments":"{\"location\":\"Paris\"}","name":"weather"},"id":"function-call-1a2b","index":0,"type":"function"},` +
		`{"function":{"arguments":"{\"location\":\"London\"}","name":"weather"},"id":"function-call-3c4d","index":1,"type":"function"}]},"finish_reason":"tool_calls","index":0}],` +
		`"created":1765000000,"id":"gemini-1","model":"gemini-3-pro-preview","object":"chat.completion.chunk","usage":{"completion_tokens":30,"prompt_tokens":60,"total_tokens":150}}` + "\n\n" +
		"data: [DONE]\n\n"
)

// TestThoughtSignature keeps Gemini's thought signature on the tool_use
// block, through a session stored as JSON, and sends it back on that tool
// call only.
func TestThoughtSignature(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		body   string
		stream bool
	}{{"whole", geminiCallsWhole, false}, {"streamed", geminiCallsStream, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(c.body), sse: c.stream}, reply{body: fixture(t, "text.json")})
			p := srv.provider(nil)
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Weather in Paris and London?")}, Tools: []agentrt.ToolSpec{florenceWeather}}
			if c.stream {
				req.OnText = func(string) {}
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			calls := resp.Message.ToolUses()
			require.Len(t, calls, 2)
			assert.Equal(t, []byte(geminiSig), calls[0].Signature, "the string's bytes, not decoded")
			assert.Equal(t, "openai", calls[0].Provider)
			assert.Empty(t, calls[1].Signature)
			assert.Empty(t, calls[1].Provider)
			for _, b := range resp.Message.Blocks {
				assert.NotEqual(t, agentrt.BlockThinking, b.Type)
			}

			stored := roundTrip(t, resp.Message)
			req.Messages = append(req.Messages, stored,
				agentrt.NewToolMessage(calls[0].ID, "18 C", false), agentrt.NewToolMessage(calls[1].ID, "12 C", false))
			req.OnText = nil
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			var sent []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "messages")), &sent))
			require.Len(t, sent, 4)
			assert.JSONEq(t, `[
				{"id":"function-call-1a2b","type":"function","function":{"name":"weather","arguments":"{\"location\":\"Paris\"}"},
				 "extra_content":{"google":{"thought_signature":"`+geminiSig+`"}}},
				{"id":"function-call-3c4d","type":"function","function":{"name":"weather","arguments":"{\"location\":\"London\"}"}}]`, string(sent[1]["tool_calls"]))
			assert.NotContains(t, sent[1], "reasoning_details")
			assert.False(t, bytes.Contains([]byte(field(t, srv.request(0).Body, "messages")), []byte("extra_content")))
		})
	}
}
