package openai

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Options tunes a [Provider]. The zero value (and a nil *Options) means
// the defaults documented on each field. New and NewCompatible copy the
// Options; changing them afterwards has no effect.
type Options struct {
	// Temperature, when non-nil, is sent as "temperature". Nil leaves it to
	// the server's default.
	Temperature *float64

	// MaxTokens caps the length of an answer when the ModelRequest does not
	// (its MaxTokens is 0). 0 sends no cap: the model's own limit applies.
	MaxTokens int

	// MaxTokensField is the request field that carries the cap.
	// "" means "max_completion_tokens" for a Provider made by New (OpenAI's
	// reasoning models refuse "max_tokens") and "max_tokens" for one made
	// by NewCompatible (which every OpenAI-compatible server understands).
	// Set it to either name, or to another field a server expects.
	MaxTokensField string

	// MaxRetries is how many times a failed call is retried by the SDK's
	// own retry loop (connection errors, 408, 409, 429 and 5xx, with
	// exponential backoff and jitter, honouring Retry-After and
	// Retry-After-Ms). 0 keeps the client's setting: none for a client
	// built by NewCompatible, the SDK's default of 2 retries for one
	// built by oai.NewClient without option.WithMaxRetries. A negative
	// value disables retries. The runtime retries on its own (see
	// [agentrt.RetryPolicy] and the package doc's "Retries").
	MaxRetries int

	// DisableStrict sends every tool schema (and ModelRequest.ResponseSchema)
	// as it is, with "strict": false. By default a schema that strict mode
	// can express is rewritten for it and sent with "strict": true.
	DisableStrict bool

	// PromptCacheKey is sent as "prompt_cache_key", which routes requests
	// with the same key and prefix to the same cache. "" means a key made
	// from ModelRequest.SessionID ("agentrt-" and 16 hex digits of its
	// SHA-256, so nothing of the id is sent) for a Provider made by New;
	// none for one made by NewCompatible (other servers may refuse the
	// field) or for a request without a SessionID.
	PromptCacheKey string

	// NoPromptCacheKey sends no prompt_cache_key: for a server reached
	// through New that refuses the field.
	NoPromptCacheKey bool

	// ExplicitCache turns on OpenAI's explicit caching (gpt-5.6 and
	// later): "prompt_cache_options": {"mode": "explicit"} and a
	// "prompt_cache_breakpoint" on the last part of the system prompt, of
	// the session's messages (before a trailing user message only this
	// call has, such as a recall hook's) and of the message where the call
	// before ended: 3 of the 4 breakpoints a request may write. System,
	// user and tool messages are then sent as lists of parts. By default
	// OpenAI caches by itself (one implicit breakpoint).
	ExplicitCache bool

	// CacheTTL is "prompt_cache_options.ttl" ("30m"); "" leaves it to the
	// API's default.
	CacheTTL string

	// ExtraFields are merged into the top level of every request body, for
	// API features this package does not model ("reasoning_effort",
	// "parallel_tool_calls", "seed", "service_tier", a server's own
	// options...). They are applied last and replace a field of the same
	// name that the adapter set. Values must be JSON-encodable.
	ExtraFields map[string]any
}

// Provider is an [agentrt.Planner] on OpenAI's Chat Completions API, or on
// any server that implements it (Ollama, vLLM, llama.cpp server, LM Studio,
// DeepSeek, Qwen...).
//
// A Provider is safe for concurrent use: it holds only the client and the
// Options given to New, and never changes them.
type Provider struct {
	client     oai.Client
	model      string
	opts       Options
	tokenField string
	deriveKey  bool // a prompt_cache_key from the session id by default
}

var (
	_ agentrt.Planner                              = (*Provider)(nil)
	_ interface{ Describe() agentrt.ProviderInfo } = (*Provider)(nil)
)

// providerName is the vendor name in ProviderInfo and ProviderError.
const providerName = "openai"

// New returns a Provider that calls model with the caller's own client,
// which keeps its authentication, base URL, HTTP client, middleware and
// retry settings:
//
//	client := oai.NewClient(option.WithAPIKey(key)) // or from OPENAI_API_KEY
//	p := openai.New(client, "gpt-4.1-mini", nil)
//
// opts may be nil for the defaults. New panics if model is empty or
// opts.MaxTokens is negative.
func New(client oai.Client, model string, opts *Options) *Provider {
	if model == "" {
		panic("openai: New: empty model name")
	}
	p := &Provider{client: client, model: model, tokenField: "max_completion_tokens", deriveKey: true}
	if opts != nil {
		p.opts = *opts
		p.opts.ExtraFields = maps.Clone(opts.ExtraFields)
		if opts.Temperature != nil {
			t := *opts.Temperature
			p.opts.Temperature = &t
		}
	}
	if p.opts.MaxTokens < 0 {
		panic(fmt.Sprintf("openai: New: negative MaxTokens %d", p.opts.MaxTokens))
	}
	if p.opts.MaxTokensField != "" {
		p.tokenField = p.opts.MaxTokensField
	}
	return p
}

// NewCompatible returns a Provider for an OpenAI-compatible server: its
// base URL (up to and including the /v1 that precedes /chat/completions)
// and the model name are all it takes. apiKey is sent as a bearer token;
// an empty apiKey sends no Authorization header (Ollama and llama.cpp
// server need none; "ollama" is the customary placeholder).
//
//	p := openai.NewCompatible("http://localhost:11434/v1", "ollama", "llama3.2", nil)
//
// The client is built without the OpenAI settings of the environment
// leaking to the other server: the base URL and key given here replace
// OPENAI_BASE_URL and OPENAI_API_KEY, and the OpenAI-Organization and
// OpenAI-Project headers are not sent. The token cap is sent as
// "max_tokens" unless opts.MaxTokensField says otherwise.
//
// The client does not retry (the runtime does: [agentrt.RetryPolicy]);
// Options.MaxRetries turns the SDK's retries on.
//
// For anything more (a proxy, custom headers, timeouts), build the client
// with oai.NewClient and the option package, and call New.
func NewCompatible(baseURL, apiKey, model string, opts *Options) *Provider {
	client := oai.NewClient(
		option.WithBaseURL(baseURL),
		option.WithAPIKey(apiKey),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithMaxRetries(0), // retries in one place: Agent.Retry
	)
	p := New(client, model, opts)
	p.deriveKey = false
	if p.opts.MaxTokensField == "" {
		p.tokenField = "max_tokens"
	}
	return p
}

// Describe reports the vendor, "openai", and the model requested.
func (p *Provider) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: providerName, Model: p.model}
}

// Plan makes one Chat Completions call. It streams when req.OnText is
// set, calling it with each piece of text (and refusal) on the calling
// goroutine, and returns the same complete message either way.
//
// Errors from the API and broken replies are [*agentrt.ProviderError]
// values whose Kind works with errors.Is: [agentrt.ErrRateLimited] (429),
// [agentrt.ErrOverloaded] (5xx, or the server unreachable),
// [agentrt.ErrAuth] (401, 403), [agentrt.ErrContextLength] (the prompt is
// longer than the model's context window), [agentrt.ErrInvalidRequest]
// (other 4xx) and [agentrt.ErrBadResponse] (a body or stream that is
// malformed, truncated, or ends without a finish reason). Retries happen
// inside the SDK before Plan returns. A cancelled ctx stops the HTTP
// request or stream at once; the error then wraps ctx.Err() and is not a
// ProviderError.
func (p *Provider) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	var raw *http.Response
	ropts := []option.RequestOption{option.WithResponseInto(&raw)}
	if p.opts.MaxRetries > 0 {
		ropts = append(ropts, option.WithMaxRetries(p.opts.MaxRetries))
	} else if p.opts.MaxRetries < 0 {
		ropts = append(ropts, option.WithMaxRetries(0))
	}
	if req.OnText != nil {
		return p.stream(ctx, params, req.OnText, &raw, ropts)
	}
	completion, err := p.client.Chat.Completions.New(ctx, params, ropts...)
	if err != nil {
		return nil, callError(ctx, err, raw)
	}
	return p.response(completion)
}
