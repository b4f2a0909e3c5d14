package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Broken streams, written here: each is cut or edited from a recorded
// stream, or built in the recorded chunk format.

func TestStreamCutMidToolCall(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "parallel-tool-calls-stream.sse"))
	tests := map[string][]byte{
		// The first call is complete, the second has its name and half its
		// arguments; then the connection closes.
		"between chunks": bytes.Join(events[:9], nil),
		// The connection closes in the middle of a chunk's JSON.
		"inside a chunk": append(bytes.Join(events[:8], nil), events[8][:len(events[8])/2]...),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: body, sse: true})
			req := mathRequest()
			req.OnText = func(string) {}
			resp, err := srv.provider(nil).Plan(context.Background(), req)
			require.ErrorIs(t, err, agentrt.ErrBadResponse)
			assert.Nil(t, resp, "a truncated stream is never a partial success")
			assert.ErrorContains(t, err, "in the middle of a tool call")
			assert.Equal(t, 1, srv.count(), "a broken stream is not retried by the SDK")
		})
	}
}

func TestStreamWithoutFinishReason(t *testing.T) {
	t.Parallel()
	tests := map[string][]byte{
		// All text and the usage chunk arrive, and [DONE], but no chunk
		// carries a finish_reason.
		"text": withoutEvents(fixture(t, "text-stream.sse"), `"finish_reason":"stop"`),
		// The tool call's arguments are complete, but the stream ends
		// before the finish chunk.
		"tool call": withoutEvents(fixture(t, "tool-call-stream.sse"), `"finish_reason":"tool_calls"`, `"usage":{`, "[DONE]"),
		"empty":     []byte("data: [DONE]\n\n"),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: body, sse: true})
			req := weatherRequest()
			var text strings.Builder
			req.OnText = func(d string) { text.WriteString(d) }
			resp, err := srv.provider(nil).Plan(context.Background(), req)
			require.ErrorIs(t, err, agentrt.ErrBadResponse)
			assert.Nil(t, resp)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Zero(t, pe.StatusCode)
			if name == "text" {
				assert.NotEmpty(t, text.String(), "deltas were streamed before the failure")
			}
		})
	}
}

func TestStreamMalformedChunk(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "tool-call-stream.sse"))
	body := bytes.Join([][]byte{events[0], events[1], []byte("data: {\"id\":\"chatcmpl-x\",\"choices\":[{\n\n"), events[2]}, nil)
	srv := newReplay(t, reply{body: body, sse: true})
	req := weatherRequest()
	req.OnText = func(string) {}
	_, err := srv.provider(nil).Plan(context.Background(), req)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
}

func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "text-stream.sse"))
	tests := []struct {
		name  string
		event string
		kind  error
	}{
		{"server error", `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, agentrt.ErrOverloaded},
		{"rate limit", `data: {"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, agentrt.ErrRateLimited},
		{"other", `data: {"error":{"message":"Something odd","type":"weird"}}`, agentrt.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, at := range []int{0, 5} { // before any chunk, and mid-stream
				body := append(bytes.Join(events[:at], nil), []byte(tt.event+"\n\n")...)
				srv := newReplay(t, reply{body: body, sse: true})
				req := hello()
				req.OnText = func(string) {}
				_, err := srv.provider(nil).Plan(context.Background(), req)
				require.ErrorIs(t, err, tt.kind)
				var pe *agentrt.ProviderError
				require.ErrorAs(t, err, &pe)
				var ev map[string]map[string]any
				require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(tt.event, "data: ")), &ev))
				assert.Equal(t, ev["error"]["message"], pe.Message)
			}
		})
	}
}

// TestStreamCompatibleServers covers streams of OpenAI-compatible servers
// that differ from OpenAI's (written here).
func TestStreamCompatibleServers(t *testing.T) {
	t.Parallel()
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	usage := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}` + "\n\n"
	tests := []struct {
		name   string
		body   string
		want   agentrt.Message
		finish agentrt.FinishReason
	}{{
		// Older Ollama: every call whole, all at index 0, then "stop".
		name: "whole calls at one index",
		body: chunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_a","index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}`, "null") +
			chunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_b","index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]}`, "null") +
			chunk(`{"role":"assistant","content":""}`, `"stop"`) + usage + "data: [DONE]\n\n",
		want: agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("call_a", "weather", json.RawMessage(`{"city":"Paris"}`)),
			agentrt.ToolUseBlock("call_b", "weather", json.RawMessage(`{"city":"Rome"}`)),
		),
		finish: agentrt.FinishToolUse,
	}, {
		// A server that repeats the id and name in every fragment, and
		// sends no [DONE] after the usage chunk.
		name: "id repeated in every fragment",
		body: chunk(`{"tool_calls":[{"id":"call_a","index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}`, "null") +
			chunk(`{"tool_calls":[{"id":"call_a","index":0,"type":"function","function":{"name":"weather","arguments":"\"Oslo\"}"}}]}`, "null") +
			chunk(`{}`, `"tool_calls"`) + usage,
		want:   agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_a", "weather", json.RawMessage(`{"city":"Oslo"}`))),
		finish: agentrt.FinishToolUse,
	}, {
		// No usage chunk at all (include_usage unsupported): usage is zero.
		name:   "no usage",
		body:   chunk(`{"role":"assistant","content":"Hi"}`, "null") + chunk(`{"content":" there"}`, `"stop"`) + "data: [DONE]\n\n",
		want:   agentrt.NewAssistantMessage(agentrt.TextBlock("Hi there")),
		finish: agentrt.FinishStop,
	}, {
		// Refusal deltas are streamed and kept as text.
		name:   "refusal",
		body:   chunk(`{"role":"assistant","refusal":"I can't"}`, "null") + chunk(`{"refusal":" help with that."}`, `"stop"`) + usage + "data: [DONE]\n\n",
		want:   agentrt.NewAssistantMessage(agentrt.TextBlock("I can't help with that.")),
		finish: agentrt.FinishContentFilter,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(tt.body), sse: true})
			req := hello()
			var text strings.Builder
			req.OnText = func(d string) { text.WriteString(d) }
			resp, err := srv.provider(nil).Plan(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Message)
			assert.Equal(t, tt.finish, resp.Finish)
			assert.Equal(t, resp.Message.Text(), text.String())
			assert.Equal(t, "llama3.2", resp.Model)
		})
	}
}

// TestStreamCancel: the server sends part of an answer and then waits; the
// caller cancels from OnText. Plan must return at once with an error
// wrapping context.Canceled, and the server must see the client go away.
func TestStreamCancel(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "text-stream.sse"))
	srv := newReplay(t, reply{body: bytes.Join(events[:4], nil), sse: true, hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := hello()
	var deltas []string
	req.OnText = func(d string) {
		deltas = append(deltas, d)
		cancel()
	}
	done := make(chan error, 1)
	go func() {
		resp, err := srv.provider(nil).Plan(ctx, req)
		if resp != nil {
			err = errors.Join(err, errors.New("got a response"))
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		var pe *agentrt.ProviderError
		assert.False(t, errors.As(err, &pe), "cancellation is not a ProviderError: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Plan did not return after the context was cancelled")
	}
	select {
	case <-srv.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP stream was not closed after cancellation")
	}
	assert.NotEmpty(t, deltas)
}
