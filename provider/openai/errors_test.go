package openai_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

func hello() *agentrt.ModelRequest {
	return &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
}

// Error bodies written here in the API's documented shape (the recordings
// hold only the 400 of error-400-unsupported-parameter.json), plus the
// shapes of compatible servers.
const (
	body401 = `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	body403 = `{"error":{"message":"Project does not have access to model gpt-4o","type":"invalid_request_error","param":null,"code":"model_not_found"}}`
	body429 = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500. Please try again in 1s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	body500 = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	body503 = `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`
	bodyCtx = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	// vLLM: a top-level error object.
	bodyVLLMCtx = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`
	// llama.cpp server.
	bodyLlamaCtx = `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`
	// Ollama: the error is a string.
	bodyOllama404 = `{"error":"model \"llama9\" not found, try pulling it first"}`
)

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		header     map[string]string
		kind       error
		code       string
		message    string
		retryAfter time.Duration
	}{
		{name: "400 recorded", status: 400, body: "error-400-unsupported-parameter.json", kind: agentrt.ErrInvalidRequest,
			code: "unsupported_parameter", message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."},
		{name: "401", status: 401, body: body401, kind: agentrt.ErrAuth, code: "invalid_api_key", message: "Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys."},
		{name: "403", status: 403, body: body403, kind: agentrt.ErrAuth, code: "model_not_found", message: "Project does not have access to model gpt-4o"},
		{name: "404 Ollama", status: 404, body: bodyOllama404, kind: agentrt.ErrInvalidRequest, message: `model "llama9" not found, try pulling it first`},
		{name: "429 Retry-After seconds", status: 429, body: body429, header: map[string]string{"Retry-After": "20"},
			kind: agentrt.ErrRateLimited, code: "rate_limit_exceeded", message: "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500. Please try again in 1s.", retryAfter: 20 * time.Second},
		{name: "429 Retry-After-Ms", status: 429, body: body429, header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"},
			kind: agentrt.ErrRateLimited, code: "rate_limit_exceeded", retryAfter: 1500 * time.Millisecond},
		{name: "500", status: 500, body: body500, kind: agentrt.ErrOverloaded, code: "server_error", message: "The server had an error while processing your request. Sorry about that!"},
		{name: "503 overloaded", status: 503, body: body503, kind: agentrt.ErrOverloaded, code: "server_error", message: "The engine is currently overloaded, please try again later"},
		{name: "529", status: 529, body: `{"error":{"message":"Overloaded","type":"overloaded_error"}}`, kind: agentrt.ErrOverloaded, code: "overloaded_error", message: "Overloaded"},
		{name: "502 from a proxy, not JSON", status: 502, body: "<html>Bad Gateway</html>", header: map[string]string{"Content-Type": "text/html"}, kind: agentrt.ErrOverloaded, message: "<html>Bad Gateway</html>"},
		{name: "context length", status: 400, body: bodyCtx, kind: agentrt.ErrContextLength, code: "context_length_exceeded",
			message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."},
		{name: "context length vLLM", status: 400, body: bodyVLLMCtx, kind: agentrt.ErrContextLength, code: "BadRequestError"},
		{name: "context length llama.cpp", status: 400, body: bodyLlamaCtx, kind: agentrt.ErrContextLength, code: "exceed_context_size_error",
			message: "the request exceeds the available context size, try increasing it"},
		{name: "413", status: 413, body: "", kind: agentrt.ErrContextLength},
		{name: "422", status: 422, body: `{"error":{"message":"bad","type":"invalid_request_error"}}`, kind: agentrt.ErrInvalidRequest, code: "invalid_request_error", message: "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(tt.body)
			if len(tt.body) > 5 && tt.body[len(tt.body)-5:] == ".json" {
				body = fixture(t, tt.body)
			}
			for _, stream := range []bool{false, true} {
				srv := newReplay(t, reply{status: tt.status, body: body, header: tt.header})
				// No retries: each case is one request (retries are tested below).
				p := srv.provider(&openai.Options{MaxRetries: -1})
				req := hello()
				if stream {
					req.OnText = func(string) { t.Error("OnText called for an error") }
				}
				resp, err := p.Plan(context.Background(), req)
				require.Error(t, err)
				assert.Nil(t, resp)
				assert.ErrorIs(t, err, tt.kind)
				var pe *agentrt.ProviderError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "openai", pe.Provider)
				assert.Equal(t, tt.status, pe.StatusCode)
				assert.Equal(t, tt.code, pe.Code)
				if tt.message != "" {
					assert.Equal(t, tt.message, pe.Message)
				}
				assert.Equal(t, tt.retryAfter, pe.RetryAfter)
				assert.Equal(t, 1, srv.count())
				if tt.body != bodyOllama404 {
					var ae *oai.Error
					assert.ErrorAs(t, err, &ae, "the SDK's error is reachable")
				}
			}
		})
	}
}

func TestRetryRateLimitedThenOK(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{status: 429, body: []byte(body429), header: map[string]string{"Retry-After": "0"}},
		reply{body: fixture(t, "text.json")},
	)
	resp, err := srv.provider(nil).Plan(context.Background(), hello())
	require.NoError(t, err)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, 2, srv.count())
	assert.Equal(t, "1", srv.request(1).Header.Get("X-Stainless-Retry-Count"))
	assert.Equal(t, srv.request(0).Body, srv.request(1).Body, "the retry sends the same body")
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	t.Run("waits as asked", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t,
			reply{status: 429, body: []byte(body429), header: map[string]string{"Retry-After-Ms": "200"}},
			reply{body: fixture(t, "text.json")},
		)
		_, err := srv.provider(nil).Plan(context.Background(), hello())
		require.NoError(t, err)
		require.Equal(t, 2, srv.count())
		gap := srv.request(1).At.Sub(srv.request(0).At)
		assert.GreaterOrEqual(t, gap, 200*time.Millisecond, "retried %v after the 429", gap)
	})
	t.Run("does not retry before a wait too long", func(t *testing.T) {
		t.Parallel()
		// The SDK waits at most 2 minutes; asked for an hour it gives up
		// at once and the caller learns how long to wait.
		srv := newReplay(t, reply{status: 429, body: []byte(body429), header: map[string]string{"Retry-After": "3600"}})
		_, err := srv.provider(&openai.Options{MaxRetries: 3}).Plan(context.Background(), hello())
		require.ErrorIs(t, err, agentrt.ErrRateLimited)
		var pe *agentrt.ProviderError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, time.Hour, pe.RetryAfter)
		assert.True(t, pe.Retryable())
		assert.Equal(t, 1, srv.count())
	})
}

func TestMaxRetries(t *testing.T) {
	t.Parallel()
	fast := map[string]string{"Retry-After": "0"}
	tests := []struct {
		name     string
		opts     *openai.Options
		requests int
	}{
		{"SDK default of 2", nil, 3},
		{"one", &openai.Options{MaxRetries: 1}, 2},
		{"none", &openai.Options{MaxRetries: -1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{status: 500, body: []byte(body500), header: fast})
			_, err := srv.provider(tt.opts).Plan(context.Background(), hello())
			require.ErrorIs(t, err, agentrt.ErrOverloaded)
			assert.Equal(t, tt.requests, srv.count())
		})
	}
	t.Run("4xx is not retried", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{status: 400, body: []byte(bodyCtx)})
		_, err := srv.provider(nil).Plan(context.Background(), hello())
		require.ErrorIs(t, err, agentrt.ErrContextLength)
		assert.Equal(t, 1, srv.count())
	})
}

func TestServerUnreachable(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := srv.provider(&openai.Options{MaxRetries: -1})
	srv.Close()
	_, err := p.Plan(context.Background(), hello())
	require.ErrorIs(t, err, agentrt.ErrOverloaded)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Zero(t, pe.StatusCode)
}

func TestMalformedBody(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"truncated JSON": `{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis`,
		"no choices":     `{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m","choices":[]}`,
		"tool call without a name": `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
			"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(body)})
			resp, err := srv.provider(nil).Plan(context.Background(), hello())
			require.ErrorIs(t, err, agentrt.ErrBadResponse)
			assert.Nil(t, resp)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.True(t, pe.Retryable())
		})
	}
}

func TestCancelledBeforeCall(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := srv.provider(nil).Plan(ctx, hello())
	require.ErrorIs(t, err, context.Canceled)
	var pe *agentrt.ProviderError
	assert.False(t, errors.As(err, &pe), "cancellation is not a ProviderError: %v", err)
}

func TestCancelWhileRetrying(t *testing.T) {
	t.Parallel()
	// The server asks for a 100 s wait (within the SDK's limit); the
	// caller cancels as soon as the first attempt is answered.
	srv := newReplay(t, reply{status: 429, body: []byte(body429), header: map[string]string{"Retry-After": "100"}})
	ctx, cancel := context.WithCancel(context.Background())
	client := oai.NewClient(
		option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("test-key"),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			res, err := next(req)
			go cancel() // most likely lands while the SDK waits to retry
			return res, err
		}),
	)
	done := make(chan error, 1)
	go func() {
		_, err := openai.New(client, "gpt-4o", nil).Plan(ctx, hello())
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Plan did not return after cancellation during the retry wait")
	}
	assert.Equal(t, 1, srv.count())
}
