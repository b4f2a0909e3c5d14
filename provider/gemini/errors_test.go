package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

func textRequest(stream bool) *agentrt.ModelRequest {
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
	if stream {
		req.OnText = func(string) {}
	}
	return req
}

// HTTP errors: recorded (400 INVALID_ARGUMENT, vercel/ai) and written here
// (the others, in testdata/written). Retryable kinds are retried twice by
// default; the waits are recorded, not slept.
func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file       string
		status     int
		kind       error
		code       string
		message    string
		retryAfter time.Duration
		requests   int // with the default two retries
	}{
		{"error-400-invalid-argument.json", 400, agentrt.ErrInvalidRequest, "INVALID_ARGUMENT", "Thinking level MINIMAL is not supported", 0, 1},
		{"written/error-400-context-length.json", 400, agentrt.ErrContextLength, "INVALID_ARGUMENT", "exceeds the maximum number of tokens allowed", 0, 1},
		{"written/error-400-api-key-invalid.json", 400, agentrt.ErrAuth, "INVALID_ARGUMENT", "API key not valid", 0, 1},
		{"written/error-401-unauthenticated.json", 401, agentrt.ErrAuth, "UNAUTHENTICATED", "invalid authentication credentials", 0, 1},
		{"written/error-403-permission-denied.json", 403, agentrt.ErrAuth, "PERMISSION_DENIED", "Permission denied", 0, 1},
		{"written/error-429-resource-exhausted.json", 429, agentrt.ErrRateLimited, "RESOURCE_EXHAUSTED", "exceeded your current quota", 37 * time.Second, 3},
		{"written/error-500-internal.json", 500, agentrt.ErrOverloaded, "INTERNAL", "internal error", 0, 3},
		{"written/error-503-unavailable.json", 503, agentrt.ErrOverloaded, "UNAVAILABLE", "The model is overloaded", 0, 3},
		{"written/error-529-overloaded.json", 529, agentrt.ErrOverloaded, "UNAVAILABLE", "Overloaded", 0, 3},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.file
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				replies := make([]reply, tc.requests)
				for i := range replies {
					replies[i] = fail(t, tc.status, tc.file)
				}
				srv := newReplayServer(t, replies...)
				p, w := newTestProvider(t, srv, nil)
				resp, err := p.Plan(context.Background(), textRequest(stream))
				require.Error(t, err)
				assert.Nil(t, resp)
				assert.ErrorIs(t, err, tc.kind)
				var pe *agentrt.ProviderError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "gemini", pe.Provider)
				assert.Equal(t, tc.status, pe.StatusCode)
				assert.Equal(t, tc.code, pe.Code)
				assert.Contains(t, pe.Message, tc.message)
				assert.Equal(t, tc.retryAfter, pe.RetryAfter)
				var apiErr genai.APIError
				assert.ErrorAs(t, err, &apiErr, "the SDK's error is reachable")
				assert.Len(t, srv.reqs(), tc.requests)

				waits := w.all()
				require.Len(t, waits, tc.requests-1)
				for i, d := range waits {
					if tc.retryAfter > 0 {
						assert.Equal(t, tc.retryAfter, d, "the server's RetryInfo delay is honoured")
						continue
					}
					base := backoffBase << i
					assert.GreaterOrEqual(t, d, base/2, "backoff of retry %d", i+1)
					assert.LessOrEqual(t, d, base, "backoff of retry %d", i+1)
				}
			})
		}
	}
}

// Written here: 429 then 200. The retry waits for the RetryInfo delay of
// the error body, then succeeds; both attempts send the same request.
func TestRateLimitedThenOK(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, fail(t, 429, "written/error-429-resource-exhausted.json"), ok(t, "text.json"))
	p, w := newTestProvider(t, srv, nil)
	resp, err := p.Plan(context.Background(), textRequest(false))
	require.NoError(t, err)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, []time.Duration{37 * time.Second}, w.all())
	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Raw, reqs[1].Raw)
}

// Written here: the Retry-After and Retry-After-Ms headers, which a client
// built by NewFromAPIKey lets Plan see, for real (no recorded sleep).
func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`)
	for _, tc := range []struct {
		header, value string
		want          time.Duration
	}{
		{"Retry-After", "0", 0},
		{"Retry-After", "2", 2 * time.Second},
		{"Retry-After-Ms", "1500", 1500 * time.Millisecond},
	} {
		t.Run(tc.header+"="+tc.value, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t,
				reply{status: 429, header: http.Header{tc.header: {tc.value}}, body: body},
				ok(t, "text.json"))
			// NewFromAPIKey's Provider retries only when asked (the runtime does).
			p, err := newFromConfig(&genai.ClientConfig{APIKey: "test-key", HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}}, testModel, &Options{MaxRetries: 1})
			require.NoError(t, err)
			w := &waits{}
			if tc.want > 0 {
				p.sleep = w.sleep // do not wait for seconds in a test
			}
			resp, err := p.Plan(context.Background(), textRequest(false))
			require.NoError(t, err)
			assert.Equal(t, agentrt.FinishStop, resp.Finish)
			assert.Len(t, srv.reqs(), 2)
			if tc.want > 0 {
				assert.Equal(t, []time.Duration{tc.want}, w.all())
			}
		})
	}
	t.Run("without the transport the header is not seen", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, reply{status: 429, header: http.Header{"Retry-After": {"3"}}, body: body}, ok(t, "text.json"))
		p, w := newTestProvider(t, srv, nil)
		_, err := p.Plan(context.Background(), textRequest(false))
		require.NoError(t, err)
		waits := w.all()
		require.Len(t, waits, 1)
		assert.LessOrEqual(t, waits[0], backoffBase, "backoff, not the header")
	})
}

func TestRetryLimits(t *testing.T) {
	t.Parallel()
	t.Run("a server delay over a minute is returned, not waited for", func(t *testing.T) {
		t.Parallel()
		body := []byte(`{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",
			"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3600s"}]}}`)
		srv := newReplayServer(t, reply{status: 429, body: body})
		p, w := newTestProvider(t, srv, nil)
		_, err := p.Plan(context.Background(), textRequest(false))
		var pe *agentrt.ProviderError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, time.Hour, pe.RetryAfter)
		assert.True(t, pe.Retryable())
		assert.Empty(t, w.all())
	})
	t.Run("negative MaxRetries disables retries", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, fail(t, 503, "written/error-503-unavailable.json"))
		p, w := newTestProvider(t, srv, &Options{MaxRetries: -1})
		_, err := p.Plan(context.Background(), textRequest(false))
		assert.ErrorIs(t, err, agentrt.ErrOverloaded)
		assert.Len(t, srv.reqs(), 1)
		assert.Empty(t, w.all())
	})
	t.Run("MaxRetries sets the number of retries", func(t *testing.T) {
		t.Parallel()
		replies := make([]reply, 5)
		for i := range replies {
			replies[i] = fail(t, 500, "written/error-500-internal.json")
		}
		srv := newReplayServer(t, replies...)
		p, w := newTestProvider(t, srv, &Options{MaxRetries: 4})
		_, err := p.Plan(context.Background(), textRequest(false))
		assert.ErrorIs(t, err, agentrt.ErrOverloaded)
		assert.Len(t, srv.reqs(), 5)
		assert.Len(t, w.all(), 4)
	})
	t.Run("the client's own SDK retry options are kept", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, fail(t, 503, "written/error-503-unavailable.json"), ok(t, "text.json"))
		client := newClient(t, srv, genai.BackendGeminiAPI, &genai.HTTPRetryOptions{
			Attempts: genai.Ptr[int32](2), InitialDelay: genai.Ptr(0.0), Jitter: genai.Ptr(0.0),
		})
		p := New(client, testModel, nil)
		w := &waits{}
		p.sleep = w.sleep
		_, err := p.Plan(context.Background(), textRequest(false))
		require.NoError(t, err)
		assert.Len(t, srv.reqs(), 2, "the SDK retried")
		assert.Empty(t, w.all(), "the adapter added no retry of its own")
	})
	t.Run("a connection refused is retried as unavailable", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t)
		p, w := newTestProvider(t, srv, &Options{MaxRetries: 1})
		srv.Close()
		_, err := p.Plan(context.Background(), textRequest(false))
		assert.ErrorIs(t, err, agentrt.ErrOverloaded)
		assert.Len(t, w.all(), 1)
	})
}

// Broken answers are errors of kind ErrBadResponse, never partial
// successes. The cut streams are derived here from recorded ones
// (truncated or missing their last events); the others are written here.
func TestBadResponses(t *testing.T) {
	t.Parallel()
	vertex := sseEvents(t, "vertex-partial-args-stream.sse")
	textStream := sseEvents(t, "text-stream.sse")
	parallel := string(fixture(t, "parallel-tool-calls-stream.sse"))
	for _, tc := range []struct {
		name    string
		reply   reply
		vertex  bool
		stream  bool
		message string
	}{
		{name: "stream cut in the middle of a split tool call",
			reply: reply{body: []byte(strings.Join(vertex[:3], ""))}, vertex: true, stream: true, message: "middle of function call"},
		{name: "stream cut in the middle of an event",
			reply: reply{body: []byte(parallel[:len(parallel)/2])}, stream: true},
		{name: "stream without a finish reason",
			reply: reply{body: []byte(strings.Join(textStream[:2], ""))}, stream: true, message: "without a finish reason"},
		{name: "connection dropped mid-stream",
			reply: reply{body: []byte(textStream[0]), abort: true}, stream: true},
		{name: "stream of garbage",
			reply: reply{body: []byte("data: {\"candidates\": [\r\n\r\n")}, stream: true},
		{name: "truncated body",
			reply: reply{body: fixture(t, "text.json")[:100]}},
		{name: "body without candidates",
			reply: reply{body: []byte(`{"usageMetadata":{"promptTokenCount":3}}`)}, message: "no candidate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, tc.reply)
			var p *Provider
			if tc.vertex {
				p = New(newClient(t, srv, genai.BackendVertexAI, nil), "gemini-3.1-pro-preview", nil)
			} else {
				p, _ = newTestProvider(t, srv, nil)
			}
			resp, err := p.Plan(context.Background(), textRequest(tc.stream))
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, agentrt.ErrBadResponse)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Zero(t, pe.StatusCode)
			assert.Contains(t, pe.Error(), tc.message)
			assert.Len(t, srv.reqs(), 1, "a broken answer is not retried")
		})
	}
}

// Written here: an error event in the middle of a stream, after some text.
// It is reported with its kind, and not retried since text was delivered.
func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "written/stream-error-event.sse"))
	p, w := newTestProvider(t, srv, nil)
	var deltas []string
	req := textRequest(true)
	req.OnText = func(d string) { deltas = append(deltas, d) }
	_, err := p.Plan(context.Background(), req)
	assert.ErrorIs(t, err, agentrt.ErrOverloaded)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "INTERNAL", pe.Code)
	assert.Equal(t, 500, pe.StatusCode)
	assert.Equal(t, []string{"The weather in Paris is"}, deltas)
	assert.Len(t, srv.reqs(), 1)
	assert.Empty(t, w.all())
}

// Written here: a prompt refused by the safety filter comes back as an
// empty answer with FinishContentFilter, streamed or not.
func TestPromptBlocked(t *testing.T) {
	t.Parallel()
	body := `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12},"modelVersion":"gemini-2.5-flash","responseId":"blocked1"}`
	for _, stream := range []bool{false, true} {
		b := body
		if stream {
			b = "data: " + body + "\r\n\r\n"
		}
		srv := newReplayServer(t, reply{body: []byte(b)})
		p, _ := newTestProvider(t, srv, nil)
		resp, err := p.Plan(context.Background(), textRequest(stream))
		require.NoError(t, err)
		assert.Equal(t, agentrt.FinishContentFilter, resp.Finish)
		assert.Empty(t, resp.Message.Blocks)
		assert.Equal(t, agentrt.Usage{InputTokens: 12}, resp.Usage)
	}
}

// Cancellation in the middle of a stream: the server sends one event and
// then waits for the client to go away; Plan returns context.Canceled at
// once and the server sees the request end.
func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	first := sseEvents(t, "text-stream.sse")[0]
	srv := newReplayServer(t, reply{body: []byte(first), stall: true})
	p, w := newTestProvider(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := textRequest(true)
	var deltas []string
	req.OnText = func(d string) {
		deltas = append(deltas, d)
		cancel()
	}
	resp, err := p.Plan(ctx, req)
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, context.Canceled)
	var pe *agentrt.ProviderError
	assert.False(t, errors.As(err, &pe), "cancellation is not a ProviderError")
	assert.Equal(t, []string{"There are **3**"}, deltas)
	assert.Empty(t, w.all())
	select {
	case <-srv.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not see the stream closed")
	}
}

// Cancellation while waiting for the response headers of a
// non-streaming call.
func TestCancelBeforeResponse(t *testing.T) {
	t.Parallel()
	stalled, gone := make(chan struct{}, 1), make(chan struct{}, 1)
	hold := &replayServer{t: t}
	hold.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a closed connection once the body is read
		stalled <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	t.Cleanup(hold.Close)
	p, w := newTestProvider(t, hold, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stalled
		cancel()
	}()
	_, err := p.Plan(ctx, textRequest(false))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, w.all())
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not see the request cancelled")
	}
}
