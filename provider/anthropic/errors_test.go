package anthropic

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Error responses. Only the 400 invalid_request_error body is recorded
// (testdata/error-400-invalid-request.response.json); the others are
// written here in the documented shape {"type":"error","error":{"type",
// "message"},"request_id"}, with messages the API is known to send.

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		header     []string
		kind       error
		code       string
		msg        string
		retryAfter time.Duration
	}{
		{
			name: "400 invalid request (recorded)", status: 400, body: string(fixture(t, "error-400-invalid-request.response.json")),
			kind: agentrt.ErrInvalidRequest, code: "invalid_request_error",
			msg: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_01FvCG2mjosttzrL4Lnb5mHy. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		},
		{
			name: "400 prompt too long", status: 400,
			body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"},"request_id":"req_1"}`,
			kind: agentrt.ErrContextLength, code: "invalid_request_error", msg: "prompt is too long: 208656 tokens > 200000 maximum",
		},
		{
			name: "400 input and max_tokens exceed context", status: 400,
			body: "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 197202 + 8192 > 200000, decrease input length or `max_tokens` and try again\"}}",
			kind: agentrt.ErrContextLength, code: "invalid_request_error",
			msg: "input length and `max_tokens` exceed context limit: 197202 + 8192 > 200000, decrease input length or `max_tokens` and try again",
		},
		{
			name: "413 request too large", status: 413,
			body: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			kind: agentrt.ErrContextLength, code: "request_too_large", msg: "Request exceeds the maximum allowed number of bytes.",
		},
		{
			name: "401 authentication", status: 401,
			body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_2"}`,
			kind: agentrt.ErrAuth, code: "authentication_error", msg: "invalid x-api-key",
		},
		{
			name: "403 permission", status: 403,
			body: `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`,
			kind: agentrt.ErrAuth, code: "permission_error", msg: "Your API key does not have permission to use the specified resource.",
		},
		{
			name: "404 unknown model", status: 404,
			body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`,
			kind: agentrt.ErrInvalidRequest, code: "not_found_error", msg: "model: claude-nope",
		},
		{
			name: "429 rate limit with Retry-After", status: 429, header: []string{"Retry-After", "7"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			kind: agentrt.ErrRateLimited, code: "rate_limit_error", msg: "Number of request tokens has exceeded your per-minute rate limit",
			retryAfter: 7 * time.Second,
		},
		{
			name: "429 with Retry-After-Ms", status: 429, header: []string{"Retry-After-Ms", "1500", "Retry-After", "2"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			kind: agentrt.ErrRateLimited, code: "rate_limit_error", msg: "slow down", retryAfter: 1500 * time.Millisecond,
		},
		{
			name: "500 api error", status: 500,
			body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			kind: agentrt.ErrOverloaded, code: "api_error", msg: "Internal server error",
		},
		{
			name: "502 from a proxy, not JSON", status: 502, body: "<html>Bad Gateway</html>",
			kind: agentrt.ErrOverloaded, msg: "<html>Bad Gateway</html>",
		},
		{
			name: "529 overloaded", status: 529,
			body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			kind: agentrt.ErrOverloaded, code: "overloaded_error", msg: "Overloaded",
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				t.Parallel()
				r := newReplay(t, errorReply(tt.status, tt.body, tt.header...))
				req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
				if stream {
					req.OnText = func(string) { t.Error("OnText called for an error response") }
				}
				resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), req)
				require.Error(t, err)
				assert.Nil(t, resp)
				assert.Len(t, r.requests(), 1, "retries are off")

				var pe *agentrt.ProviderError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "anthropic", pe.Provider)
				assert.Equal(t, tt.status, pe.StatusCode)
				assert.Equal(t, tt.code, pe.Code)
				assert.Equal(t, tt.msg, pe.Message)
				assert.Equal(t, tt.retryAfter, pe.RetryAfter)
				assert.ErrorIs(t, err, tt.kind)
				for _, other := range []error{agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrAuth, agentrt.ErrContextLength, agentrt.ErrInvalidRequest, agentrt.ErrBadResponse} {
					if other != tt.kind {
						assert.NotErrorIs(t, err, other)
					}
				}
				var apiErr *sdk.Error
				require.ErrorAs(t, err, &apiErr, "the SDK's error is reachable")
				assert.Equal(t, tt.status, apiErr.StatusCode)
			})
		}
	}
}

// An "error" event inside a stream that has begun (written here: the
// recordings have none). The API sends it when it is overloaded
// mid-answer; the HTTP status of the stream is 200.
func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	stream := string(cut(t, fixture(t, "text-stream.sse"), "event: content_block_stop")) +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	r := newReplay(t, sseReply([]byte(stream)))
	var text string
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(d string) { text += d },
	})
	assert.Nil(t, resp)
	require.ErrorIs(t, err, agentrt.ErrOverloaded)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Zero(t, pe.StatusCode, "no HTTP error status: the error came inside the stream")
	assert.Equal(t, "overloaded_error", pe.Code)
	assert.Equal(t, "Overloaded", pe.Message)
	assert.True(t, pe.Retryable())
	assert.NotEmpty(t, text, "the text before the error was streamed")
}

// The SDK retries 429 and 5xx itself; Options.MaxRetries sets how often.
func TestRetries(t *testing.T) {
	t.Parallel()
	rateLimited := func(retryAfter string) reply {
		return errorReply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", retryAfter)
	}
	overloaded := errorReply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Retry-After", "0")

	t.Run("429 then 200", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t,
			errorReply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After-Ms", "600"),
			jsonReply(fixture(t, "text.json")))
		resp, err := r.provider("claude-sonnet-4-5", &Options{}).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		})
		require.NoError(t, err)
		assert.Equal(t, agentrt.FinishStop, resp.Finish)
		reqs := r.requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "0", reqs[0].header.Get("X-Stainless-Retry-Count"))
		assert.Equal(t, "1", reqs[1].header.Get("X-Stainless-Retry-Count"))
		assert.Equal(t, reqs[0].body, reqs[1].body, "the same request is sent again")
		// The wait the server asked for was honoured: the SDK's own
		// backoff before a first retry is at most 0.5s.
		assert.GreaterOrEqual(t, reqs[1].at.Sub(reqs[0].at), 600*time.Millisecond)
	})
	t.Run("529 then stream", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, overloaded, sseReply(fixture(t, "text-stream.sse")))
		resp, err := r.provider("claude-sonnet-4-5", &Options{MaxRetries: 1}).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			OnText:   func(string) {},
		})
		require.NoError(t, err)
		assert.Equal(t, agentrt.FinishStop, resp.Finish)
		assert.Len(t, r.requests(), 2)
	})
	t.Run("retries exhausted", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, rateLimited("0"), rateLimited("0"), rateLimited("0.002"))
		_, err := r.provider("claude-sonnet-4-5", &Options{MaxRetries: 2}).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		})
		require.ErrorIs(t, err, agentrt.ErrRateLimited)
		var pe *agentrt.ProviderError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, 2*time.Millisecond, pe.RetryAfter, "RetryAfter of the last response")
		assert.Len(t, r.requests(), 3)
	})
	t.Run("negative disables retries", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, overloaded)
		_, err := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1}).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		})
		require.ErrorIs(t, err, agentrt.ErrOverloaded)
		assert.Len(t, r.requests(), 1)
	})
	t.Run("400 is not retried", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, errorReply(400, string(fixture(t, "error-400-invalid-request.response.json"))))
		_, err := r.provider("claude-sonnet-4-5", &Options{MaxRetries: 3}).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		})
		require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
		assert.Len(t, r.requests(), 1)
	})
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	r := newReplay(t)
	client := r.client()
	r.srv.Close() // nothing listens any more
	for _, stream := range []bool{false, true} {
		req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
		if stream {
			req.OnText = func(string) {}
		}
		_, err := New(client, "claude-sonnet-4-5", &Options{MaxRetries: -1}).Plan(context.Background(), req)
		require.ErrorIs(t, err, agentrt.ErrOverloaded, "stream=%v", stream)
		var pe *agentrt.ProviderError
		require.ErrorAs(t, err, &pe)
		assert.Zero(t, pe.StatusCode)
	}
}

func TestErrorKindOfUnknownStreamError(t *testing.T) {
	t.Parallel()
	assert.Equal(t, agentrt.ErrBadResponse, errorKind(0, "some_new_error", "?"))
	assert.Equal(t, agentrt.ErrInvalidRequest, errorKind(409, "conflict_error", "?"))
	assert.Equal(t, agentrt.ErrOverloaded, errorKind(0, "api_error", "?"))
	assert.True(t, errors.Is(&agentrt.ProviderError{Kind: errorKind(0, "rate_limit_error", "")}, agentrt.ErrRateLimited))
}
