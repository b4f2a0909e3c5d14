package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Broken streams and bodies, written here by cutting or editing the
// recorded ones: a truncated or malformed response is an error, never a
// partial success.

func TestBrokenStreams(t *testing.T) {
	t.Parallel()
	split := fixture(t, "tool-call-stream-split-args.sse")
	text := fixture(t, "text-stream.sse")
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{
			name: "cut off mid tool call",
			body: cut(t, split, `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" this run?`),
			want: "stream ended without a stop reason in the middle of tool_use block 0 (website_update toolu_01Cr31vcGoeeRgi3Eo5Ds8qN)",
		},
		{
			name: "cut off mid event",
			body: cut(t, split, `this run?`),
			want: "in the middle of tool_use block 0",
		},
		{
			name: "no finish reason",
			body: append(cut(t, text, "event: message_delta"), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...),
			want: "stream ended without a stop reason",
		},
		{
			name: "ends after message_delta",
			body: cut(t, text, "event: message_stop"),
			want: "stream ended before message_stop",
		},
		{
			name: "cut off mid text",
			body: cut(t, text, "event: content_block_stop"),
			want: "stream ended without a stop reason in the middle of text block 0",
		},
		{
			name: "empty body",
			body: nil,
			want: "stream ended before message_start",
		},
		{
			name: "JSON body instead of a stream",
			body: fixture(t, "text.json"),
			want: "stream ended before message_start",
		},
		{
			name: "malformed event",
			body: append(cut(t, text, "event: content_block_stop"), "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":\n\n"...),
			want: "stream failed in the middle of text block 0",
		},
		{
			name: "invalid tool input with a normal stop",
			body: bytes.Replace(split, []byte(`"partial_json":"}"`), []byte(`"partial_json":""`), 1),
			want: "tool_use block 0 (website_update toolu_01Cr31vcGoeeRgi3Eo5Ds8qN): input is not valid JSON",
		},
		{
			name: "delta for a block never started",
			body: bytes.Replace(text, []byte(`"index":0,"delta":{"type":"text_delta","text":" Is"}`), []byte(`"index":3,"delta":{"type":"text_delta","text":" Is"}`), 1),
			want: "content_block_delta for content block 3, which has not started",
		},
		{
			name: "events before message_start",
			body: text[bytes.Index(text, []byte("event: content_block_start")):],
			want: `stream event "content_block_start" before message_start`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, sseReply(tt.body))
			resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
				OnText:   func(string) {},
			})
			assert.Nil(t, resp, "no partial success")
			require.ErrorIs(t, err, agentrt.ErrBadResponse)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "anthropic", pe.Provider)
			assert.Zero(t, pe.StatusCode)
			assert.Contains(t, pe.Message, tt.want)
			assert.True(t, pe.Retryable())
		})
	}
}

// A stream whose connection drops in the middle of a tool call (the
// server goes away without finishing the chunked body).
func TestStreamConnectionDropped(t *testing.T) {
	t.Parallel()
	partial := cut(t, fixture(t, "parallel-tool-calls-stream.sse"), "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1")
	r := newReplay(t, reply{handler: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(partial)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // close the connection mid-body
	}})
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(string) {},
	})
	assert.Nil(t, resp)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	assert.Contains(t, err.Error(), "in the middle of tool_use block 1 (searchDocs toolu_016tfZE7otAFSBjhc67wu189)")
}

// A tool input cut short by max_tokens is an incomplete call, not a
// malformed stream: it is left out and Finish says length.
func TestStreamToolInputCutByMaxTokens(t *testing.T) {
	t.Parallel()
	split := fixture(t, "tool-call-stream-split-args.sse")
	body := bytes.Replace(split, []byte(`"partial_json":"}"`), []byte(`"partial_json":""`), 1)
	body = bytes.Replace(body, []byte(`"stop_reason":"tool_use"`), []byte(`"stop_reason":"max_tokens"`), 1)
	r := newReplay(t, sseReply(body))
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(string) {},
	})
	require.NoError(t, err)
	assert.Equal(t, agentrt.FinishLength, resp.Finish)
	assert.Empty(t, resp.Message.Blocks)
	assert.False(t, resp.Message.HasToolUse())
}

func TestBrokenBodies(t *testing.T) {
	t.Parallel()
	whole := fixture(t, "tool-call.json")
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{name: "truncated JSON", body: whole[:len(whole)/2], want: "error parsing response json"},
		{name: "no stop_reason", body: []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}}`), want: "response has no stop_reason"},
		{name: "empty body", body: []byte{}, want: "response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, jsonReply(tt.body))
			resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			})
			assert.Nil(t, resp)
			require.ErrorIs(t, err, agentrt.ErrBadResponse)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Cancelling the context mid-stream stops the HTTP stream at once: the
// server sees its request's context end, and Plan returns an error
// wrapping context.Canceled, not a ProviderError. Written here.
func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	head := cut(t, fixture(t, "text-stream.sse"), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"! I\"}}")
	serverSawCancel := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newReplay(t, reply{handler: func(w http.ResponseWriter, req *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(head)
		w.(http.Flusher).Flush()
		select { // stall, as a slow model would
		case <-req.Context().Done():
			close(serverSawCancel)
		case <-release:
		}
	}})
	p := r.provider("claude-sonnet-4-5", nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		resp   *agentrt.ModelResponse
		err    error
		deltas []string
	}
	done := make(chan result, 1)
	go func() {
		var deltas []string
		resp, err := p.Plan(ctx, &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			OnText: func(d string) {
				deltas = append(deltas, d)
				cancel() // the caller gives up after the first words
			},
		})
		done <- result{resp, err, deltas}
	}()

	select {
	case res := <-done:
		assert.Nil(t, res.resp)
		require.ErrorIs(t, res.err, context.Canceled)
		var pe *agentrt.ProviderError
		assert.NotErrorAs(t, res.err, &pe, "cancellation is not a provider failure")
		assert.Equal(t, []string{"Hello"}, res.deltas)
	case <-time.After(10 * time.Second):
		t.Fatal("Plan did not return after cancellation")
	}
	select {
	case <-serverSawCancel:
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP stream was not closed")
	}
}

// A context cancelled before the call returns its error without a
// response.
func TestCancelledBeforeCall(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")), sseReply(fixture(t, "text-stream.sse")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, onText := range []func(string){nil, func(string) {}} {
		_, err := r.provider("claude-sonnet-4-5", nil).Plan(ctx, &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			OnText:   onText,
		})
		require.ErrorIs(t, err, context.Canceled)
	}
}

// Usage with prompt caching (written here; the recordings have none):
// InputTokens is the whole input, cached parts included.
func TestUsageWithCache(t *testing.T) {
	t.Parallel()
	body := []byte(`{"model":"claude-sonnet-4-5","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],
		"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":100,"output_tokens":5}}`)
	stream := []byte(strings.Join([]string{
		`event: message_start`,
		`data: {"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"msg_2","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":100,"output_tokens":1}}}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":0}`,
		``,
		`event: message_delta`,
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		``,
		`event: message_stop`,
		`data: {"type":"message_stop"}`,
		``, ``,
	}, "\n"))
	want := agentrt.Usage{InputTokens: 130, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20}
	r := newReplay(t, jsonReply(body), sseReply(stream))
	p := r.provider("claude-sonnet-4-5", nil)
	for _, onText := range []func(string){nil, func(string) {}} {
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, OnText: onText})
		require.NoError(t, err)
		assert.Equal(t, want, resp.Usage, "message_delta without input counts keeps message_start's")
		assert.Equal(t, "ok", resp.Message.Text())
	}
}

func TestFinishReasons(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]agentrt.FinishReason{
		"end_turn":                      agentrt.FinishStop,
		"stop_sequence":                 agentrt.FinishStop,
		"tool_use":                      agentrt.FinishToolUse,
		"max_tokens":                    agentrt.FinishLength,
		"model_context_window_exceeded": agentrt.FinishLength,
		"refusal":                       agentrt.FinishContentFilter,
		"pause_turn":                    agentrt.FinishOther,
		"something_new":                 agentrt.FinishOther,
	} {
		body, err := json.Marshal(map[string]any{
			"model": "m", "id": "msg_1", "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "x"}}, "stop_reason": reason,
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
		})
		require.NoError(t, err)
		r := newReplay(t, jsonReply(body))
		resp, err := r.provider("m", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
		require.NoError(t, err, reason)
		assert.Equal(t, want, resp.Finish, reason)
	}
}

// Thinking blocks (written here; the recordings have none) are not
// message text: they are not streamed to OnText, and they travel in the
// Signature of the block that follows them, so that the next request sends
// them back unmodified, in order, as the API requires during tool use.
func TestThinkingCarried(t *testing.T) {
	t.Parallel()
	body := []byte(`{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[
		{"type":"thinking","thinking":"Let me think.","signature":"sig-1"},
		{"type":"redacted_thinking","data":"EncryptedData=="},
		{"type":"text","text":"Checking."},
		{"type":"thinking","thinking":"Now the tool.","signature":"sig-2"},
		{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}}],
		"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`)
	stream := []byte(strings.Join([]string{
		`event: message_start`,
		`data: {"type":"message_start","message":{"model":"m","id":"msg_2","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-1"}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":0}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EncryptedData=="}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":1}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Checking."}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":2}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":3,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"Now the tool."}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"sig-2"}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":3}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Paris\"}"}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":4}`,
		``,
		`event: message_delta`,
		`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
		``,
		`event: message_stop`,
		`data: {"type":"message_stop"}`,
		``, ``,
	}, "\n"))
	r := newReplay(t, jsonReply(body), sseReply(stream), jsonReply(fixture(t, "text.json")))
	p := r.provider("m", nil)
	var deltas []string
	var msgs []agentrt.Message
	for _, onText := range []func(string){nil, func(d string) { deltas = append(deltas, d) }} {
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, OnText: onText})
		require.NoError(t, err)
		// Thinking and redacted thinking are blocks of their own.
		assert.Equal(t, agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, Text: "Let me think.", Signature: []byte("sig-1"), Provider: "anthropic"},
			agentrt.Block{Type: agentrt.BlockThinking, Signature: []byte("EncryptedData=="), Redacted: true, Provider: "anthropic"},
			agentrt.TextBlock("Checking."),
			agentrt.Block{Type: agentrt.BlockThinking, Text: "Now the tool.", Signature: []byte("sig-2"), Provider: "anthropic"},
			agentrt.ToolUseBlock("toolu_1", "weather", json.RawMessage(`{"city":"Paris"}`)),
		), resp.Message)
		msgs = append(msgs, resp.Message)
	}
	assert.Equal(t, []string{"Checking."}, deltas, "thinking is not streamed as text")
	assert.Equal(t, msgs[0], msgs[1], "streamed and not streamed, the same message")

	// The message survives the session's JSON form (the JSONL store).
	stored, err := json.Marshal(msgs[1])
	require.NoError(t, err)
	var back agentrt.Message
	require.NoError(t, json.Unmarshal(stored, &back))

	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		back,
		agentrt.NewToolMessage("toolu_1", "18C", false),
	}})
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 3)
	assert.JSONEq(t, `{"role":"assistant","content":[
		{"type":"thinking","thinking":"Let me think.","signature":"sig-1"},
		{"type":"redacted_thinking","data":"EncryptedData=="},
		{"type":"text","text":"Checking."},
		{"type":"thinking","thinking":"Now the tool.","signature":"sig-2"},
		{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}}]}`,
		jsonOf(t, reqs[2].json(t)["messages"].([]any)[1]))
}

// A signature or thinking block that another provider wrote is not sent;
// thinking at the end of a message is kept and sent back.
func TestForeignSignatureAndTrailingThinking(t *testing.T) {
	t.Parallel()
	body := []byte(`{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[
		{"type":"text","text":"Done."},
		{"type":"thinking","thinking":"Nothing more.","signature":"sig"}],
		"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	r := newReplay(t, jsonReply(body), jsonReply(fixture(t, "text.json")))
	p := r.provider("m", nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Done."),
		agentrt.Block{Type: agentrt.BlockThinking, Text: "Nothing more.", Signature: []byte("sig"), Provider: "anthropic"}), resp.Message)

	foreign := agentrt.ToolUseBlock("call_1", "weather", json.RawMessage(`{"city":"Oslo"}`))
	foreign.Signature, foreign.Provider = []byte("gemini-thought-signature"), "gemini"
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		resp.Message,
		agentrt.NewUserMessage("and Oslo?"),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, Text: "gemini thinks", Signature: []byte("g-sig"), Provider: "gemini"},
			foreign),
		agentrt.NewToolMessage("call_1", "5C", false),
	}})
	require.NoError(t, err)
	msgs := r.requests()[1].json(t)["messages"].([]any)
	assert.JSONEq(t, `{"role":"assistant","content":[{"type":"text","text":"Done."},{"type":"thinking","thinking":"Nothing more.","signature":"sig"}]}`,
		jsonOf(t, msgs[1]))
	assert.JSONEq(t, `{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"weather","input":{"city":"Oslo"}}]}`,
		jsonOf(t, msgs[3]))
}

// A tool_use whose input came whole in content_block_start, with no
// input_json_delta (written here; the API normally sends {} there and the
// input in deltas, and the SDK's own accumulator handles both).
func TestStreamToolInputInBlockStart(t *testing.T) {
	t.Parallel()
	body := bytes.Replace(fixture(t, "tool-call-no-args-stream.sse"),
		[]byte(`"name":"updateIssueList","input":{}`), []byte(`"name":"updateIssueList","input":{"issue": 7}`), 1)
	body = bytes.Replace(body, []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n"), nil, 1)
	require.NotContains(t, string(body), "input_json_delta")
	r := newReplay(t, sseReply(body))
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(string) {},
	})
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	assert.Equal(t, `{"issue":7}`, string(uses[0].Input))
}

// Cancelling from OnText stops the call even when the rest of the stream
// has already arrived: no more deltas, no response.
func TestCancelWithBufferedStream(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "text-stream.sse")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deltas []string
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(ctx, &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText: func(d string) {
			deltas = append(deltas, d)
			cancel()
		},
	})
	assert.Nil(t, resp)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{"Hello"}, deltas)
}
