package anthropic

import (
	"context"
	"fmt"
	"maps"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentrt/agentrt"
)

// DefaultMaxTokens is the max_tokens sent when neither the request nor
// [Options.MaxTokens] sets one. The Messages API requires the field; 8192
// leaves room for a long answer or a large tool input on every current
// Claude model, and stays below the size for which the SDK insists on
// streaming.
const DefaultMaxTokens = 8192

// Options configures a [Provider]. The zero value (or a nil *Options) means
// the documented defaults.
type Options struct {
	// Temperature, when non-nil, is sent as "temperature". Nil sends none.
	//
	// Note: SDK v2 has no temperature field. It sends API version
	// 2026-10-21 (header anthropic-version), which dropped the sampling
	// parameters (temperature, top_p, top_k) and refuses a request that
	// carries one with HTTP 400, returned as [agentrt.ErrInvalidRequest].
	// Set it only with a client pinned to the older version
	// (option.WithHeader("anthropic-version", "2023-06-01")) or for an
	// Anthropic-compatible server that accepts it.
	Temperature *float64

	// MaxTokens is max_tokens for requests whose ModelRequest.MaxTokens is
	// 0. Zero means DefaultMaxTokens.
	MaxTokens int

	// MaxRetries is how many times the SDK retries a call that failed with
	// a connection error, HTTP 408, 409, 429 or 5xx (529 included), with
	// exponential backoff and jitter, honouring Retry-After and
	// Retry-After-Ms. Zero keeps the client's setting: none for a client
	// built by NewFromAPIKey, the SDK's default of 2 retries for one built
	// by anthropic.NewClient without option.WithMaxRetries. A negative value
	// disables retries. A stream that breaks after its first byte is not
	// retried: Plan returns the error. The runtime retries on its own
	// (see [agentrt.RetryPolicy] and the package doc's "Retries").
	MaxRetries int

	// NoCache turns off the prompt-cache breakpoints the adapter sets by
	// default: cache_control on the end of the system prompt (caching the
	// tools with it) and on the last block of each of the last two
	// messages of the session (a trailing user message added for this call
	// only, such as a recall hook's, comes after them), so that each call of an agent loop reads from the cache the
	// prefix the call before wrote. Cache writes cost 1.25 times the input
	// price and reads 0.1 times, and prompts below the model's minimum
	// (1024 to 4096 tokens) are not cached at all, so the default pays off
	// from the second call of a run. Turn it off for one-shot calls with a
	// prompt that is never sent again. A top-level "cache_control" in
	// ExtraFields (automatic caching) turns these breakpoints off too.
	NoCache bool

	// ServerTools are tools of the API's own, sent after the agent's: those
	// it runs itself (web search, web fetch, code execution, tool search),
	// such as
	//
	//	{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{MaxUses: anthropic.Int(3)}}
	//
	// and Anthropic-defined tools the agent runs (memory, the text editor,
	// bash): one named like a tool of the agent is sent in its place. What
	// a server tool adds to a reply is left out of the answer (see the
	// package doc). New copies the tools as JSON.
	ServerTools []sdk.ToolUnionParam

	// ExtraFields are merged into the top level of every request body, for
	// API features this adapter does not model, such as
	//
	//	"thinking":      map[string]any{"type": "adaptive"},
	//	"cache_control": map[string]any{"type": "ephemeral"},
	//	"metadata":      map[string]any{"user_id": "u-42"},
	//
	// A key replaces the whole field of that name, including fields the
	// adapter sets ("tools", "system", "output_config", "temperature"):
	// ServerTools adds to the tools instead.
	// New copies the map; its values must not be modified afterwards.
	ExtraFields map[string]any
}

// Provider is the [agentrt.Planner] for the Anthropic Messages API. It is
// safe for concurrent use; it holds no state between calls.
type Provider struct {
	client    sdk.Client
	model     string
	maxTokens int
	noCache   bool
	extras    map[string]any // ExtraFields plus temperature; read-only
	servers   []serverTool   // ServerTools
	reqOpts   []option.RequestOption
}

var (
	_ agentrt.Planner                              = (*Provider)(nil)
	_ interface{ Describe() agentrt.ProviderInfo } = (*Provider)(nil)
)

// New returns a Provider that calls model through client, the value
// returned by the SDK's anthropic.NewClient: its API key, base URL, HTTP
// client, middleware and retry settings are used as they are. The Provider
// keeps client (a value holding its options) and never modifies it.
//
// opts may be nil for the defaults. New panics if model is empty or
// opts.MaxTokens is negative.
func New(client sdk.Client, model string, opts *Options) *Provider {
	if model == "" {
		panic("anthropic: New: empty model name")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxTokens < 0 {
		panic(fmt.Sprintf("anthropic: New: negative MaxTokens %d", o.MaxTokens))
	}
	p := &Provider{client: client, model: model, maxTokens: o.MaxTokens, noCache: o.NoCache}
	if p.maxTokens <= 0 {
		p.maxTokens = DefaultMaxTokens
	}
	if o.Temperature != nil || len(o.ExtraFields) > 0 {
		p.extras = make(map[string]any, len(o.ExtraFields)+1)
		if o.Temperature != nil {
			p.extras["temperature"] = *o.Temperature
		}
		maps.Copy(p.extras, o.ExtraFields)
	}
	for _, t := range o.ServerTools {
		p.servers = append(p.servers, newServerTool(t))
	}
	switch {
	case o.MaxRetries > 0:
		p.reqOpts = append(p.reqOpts, option.WithMaxRetries(o.MaxRetries))
	case o.MaxRetries < 0:
		p.reqOpts = append(p.reqOpts, option.WithMaxRetries(0))
	}
	return p
}

// NewFromAPIKey returns a Provider on a new client that authenticates with
// apiKey and otherwise uses the SDK's defaults (the production base URL, or
// ANTHROPIC_BASE_URL if set, and a clone of http.DefaultTransport), except
// that it does not retry: the runtime does ([agentrt.RetryPolicy]), and
// Options.MaxRetries turns the SDK's retries on. Use [New] with your own
// client for anything else (a proxy, a custom base URL, the SDK's Vertex AI
// or Bedrock options).
func NewFromAPIKey(apiKey, model string, opts *Options) *Provider {
	return New(sdk.NewClient(option.WithAPIKey(apiKey), option.WithMaxRetries(0)), model, opts)
}

// Describe reports the vendor ("anthropic") and the model requested.
func (p *Provider) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: providerName, Model: p.model}
}

const providerName = "anthropic"

// Plan sends one Messages API call and returns the assistant message.
//
// When req.OnText is set it streams (POST /v1/messages with "stream":
// true), calls OnText with each text delta on the calling goroutine, and
// returns the same message the non-streaming call would. A request whose
// max_tokens is too large for a non-streaming call (the SDK refuses those)
// is streamed too, without OnText.
//
// Errors: a [*agentrt.ProviderError] whose Kind is one of
// [agentrt.ErrRateLimited], [agentrt.ErrOverloaded], [agentrt.ErrAuth],
// [agentrt.ErrContextLength], [agentrt.ErrInvalidRequest] or
// [agentrt.ErrBadResponse] (a truncated or malformed body or stream, never
// returned as a partial success); Kind is nil for a failure the adapter
// cannot classify (such as missing credentials). When ctx is done, Plan
// returns promptly with an error wrapping ctx.Err() instead.
func (p *Provider) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	params, err := p.newParams(req)
	if err != nil {
		return nil, err
	}
	if req.OnText != nil || p.mustStream(params) {
		return p.generateStream(ctx, params, req.OnText)
	}
	msg, err := p.client.Messages.New(ctx, params, p.reqOpts...)
	if err != nil {
		return nil, convertError(ctx, err)
	}
	return fromMessage(msg)
}

// mustStream reports whether the SDK would refuse params as a
// non-streaming call because of its max_tokens.
func (p *Provider) mustStream(params sdk.MessageNewParams) bool {
	_, err := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, p.client.Options)
	return err != nil
}
