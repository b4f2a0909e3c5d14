package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Retry defaults of [Options.MaxRetries].
const (
	// DefaultMaxRetries is the number of retries of a Provider made by New
	// when Options.MaxRetries is 0 (one made by NewFromAPIKey does not retry).
	DefaultMaxRetries = 2
	// maxServerDelay is the longest wait asked by the server that Plan
	// honours; a longer one is returned to the caller in the error's
	// RetryAfter instead of waited for.
	maxServerDelay = time.Minute
	// backoffBase and backoffMax bound the exponential backoff used when the
	// server gives no delay.
	backoffBase = 500 * time.Millisecond
	backoffMax  = 8 * time.Second
)

// Options configures a [Provider]. The zero value (and a nil *Options)
// means the defaults documented on each field.
type Options struct {
	// Temperature, when non-nil, is sent as generationConfig.temperature.
	// Nil sends none: the model's default applies.
	Temperature *float64

	// MaxTokens is generationConfig.maxOutputTokens for requests whose
	// ModelRequest.MaxTokens is 0. Zero sends none: the model's own output
	// limit applies (Gemini, unlike Anthropic, needs no explicit value; on
	// thinking models the thoughts count against this limit).
	MaxTokens int

	// MaxRetries is how many times Plan retries a call that the API
	// refused with HTTP 429, 5xx or 529 (or that could not reach the API),
	// before any part of the answer arrived. It waits for the delay the
	// server asked for (google.rpc.RetryInfo in the error body, or a
	// Retry-After / Retry-After-Ms header, which only clients built by
	// [NewFromAPIKey] can see) and otherwise backs off exponentially from
	// 0.5s to 8s with jitter. A server delay over one minute is not waited
	// for: the error is returned with RetryAfter set.
	//
	// Zero means [DefaultMaxRetries] for a Provider made by [New], unless
	// the client has its own HTTPOptions.RetryOptions: then the SDK's retry
	// runs and Plan adds none; for one made by [NewFromAPIKey] zero
	// means no retries, as the runtime retries ([agentrt.RetryPolicy]). A
	// positive value adds that many retries (on top of the SDK's, if the
	// client has them). A negative value disables the adapter's retries.
	//
	// The retry loop is the adapter's own because the SDK's (genai
	// HTTPRetryOptions) ignores the delay the server asks for.
	MaxRetries int

	// ExtraFields are merged into every request body (recursively: a map
	// value is merged into the object of the same name), for API features
	// this adapter does not model, such as
	//
	//	"generationConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 0}},
	//	"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
	//	"cachedContent":    "cachedContents/abc",
	//
	// It uses the SDK's HTTPOptions.ExtraBody: the client's own ExtraBody,
	// if any, is merged first. New copies the map; values must be
	// JSON-encodable. A key's value that is not an object replaces the
	// adapter's: "tools" replaces the whole tools array, the agent's
	// function declarations and ServerTools included (ServerTools adds).
	ExtraFields map[string]any

	// ServerTools are tools the API runs itself, such as
	// &genai.Tool{GoogleSearch: &genai.GoogleSearch{}}, sent after the
	// agent's function declarations. Beside those, set
	// toolConfig.includeServerSideToolInvocations through ExtraFields on
	// the Gemini API; a request the API refuses is [agentrt.ErrInvalidRequest].
	// What they add to an answer is left out of it (see the package doc).
	// New copies the slice and panics on a nil tool.
	ServerTools []*genai.Tool
}

// Provider is the [agentrt.Planner] for the Gemini API (and Vertex AI)
// through google.golang.org/genai's Models.GenerateContent and
// GenerateContentStream.
//
// A Provider is safe for concurrent use; it keeps no state between calls
// (thought signatures travel in the session's blocks).
type Provider struct {
	client     *genai.Client
	model      string
	temp       *float32
	maxTokens  int32
	maxRetries int
	extra      []byte        // ExtraFields merged over the client's ExtraBody, as JSON; nil if none
	server     []*genai.Tool // Options.ServerTools, copied

	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ agentrt.Planner                              = (*Provider)(nil)
	_ interface{ Describe() agentrt.ProviderInfo } = (*Provider)(nil)
)

// New returns a Provider that calls model (such as "gemini-2.5-flash")
// through client, which the caller builds and keeps owning: its API key or
// Google Cloud credentials, backend (Gemini API or Vertex AI), base URL,
// HTTP client, headers and retry options are used as they are. opts may be
// nil.
//
// New panics if client is nil, model is empty, opts.MaxTokens is
// negative or opts.ServerTools holds a nil tool.
func New(client *genai.Client, model string, opts *Options) *Provider {
	if client == nil {
		panic("gemini: New: nil client")
	}
	if model == "" {
		panic("gemini: New: empty model name")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxTokens < 0 {
		panic(fmt.Sprintf("gemini: New: negative MaxTokens %d", o.MaxTokens))
	}
	for i, t := range o.ServerTools {
		if t == nil {
			panic(fmt.Sprintf("gemini: New: ServerTools[%d] is nil", i))
		}
	}
	p := &Provider{
		server:    slices.Clone(o.ServerTools),
		client:    client,
		model:     model,
		maxTokens: int32(o.MaxTokens),
		sleep:     sleepCtx,
	}
	if o.Temperature != nil {
		t := float32(*o.Temperature)
		p.temp = &t
	}
	cfg := client.ClientConfig()
	switch {
	case o.MaxRetries < 0:
		p.maxRetries = 0
	case o.MaxRetries > 0:
		p.maxRetries = o.MaxRetries
	case cfg.HTTPOptions.RetryOptions != nil:
		p.maxRetries = 0 // the SDK retries, as the client says
	default:
		p.maxRetries = DefaultMaxRetries
	}
	if len(o.ExtraFields) > 0 {
		merged := map[string]any{}
		if cfg.HTTPOptions.ExtraBody != nil {
			mergeMaps(merged, cloneJSON(cfg.HTTPOptions.ExtraBody))
		}
		mergeMaps(merged, cloneJSON(o.ExtraFields))
		b, err := json.Marshal(merged)
		if err != nil {
			panic(fmt.Sprintf("gemini: New: ExtraFields cannot be encoded as JSON: %v", err))
		}
		p.extra = b
	}
	return p
}

// NewFromAPIKey returns a Provider for the Gemini API (not Vertex AI) with a
// client built from apiKey; an empty apiKey means the GOOGLE_API_KEY or
// GEMINI_API_KEY environment variable, as the SDK reads it. The client
// uses its own http.Client whose transport lets Plan see Retry-After
// headers. Neither the client nor the Provider retries unless
// opts.MaxRetries says so: the runtime does ([agentrt.RetryPolicy]), with
// the server's Retry-After. opts may be nil.
//
// It returns the SDK's error when no API key is found.
func NewFromAPIKey(apiKey, model string, opts *Options) (*Provider, error) {
	return newFromConfig(&genai.ClientConfig{APIKey: apiKey}, model, opts)
}

// newFromConfig builds the client of NewFromAPIKey; tests set a base URL.
func newFromConfig(cfg *genai.ClientConfig, model string, opts *Options) (*Provider, error) {
	if model == "" {
		return nil, errors.New("gemini: empty model name")
	}
	cfg.Backend = genai.BackendGeminiAPI
	cfg.HTTPClient = &http.Client{Transport: &retryAfterTransport{base: http.DefaultTransport}}
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if opts == nil || opts.MaxRetries == 0 { // retries in one place: Agent.Retry
		o := Options{MaxRetries: -1}
		if opts != nil {
			o = *opts
			o.MaxRetries = -1
		}
		opts = &o
	}
	return New(client, model, opts), nil
}

// Describe reports the vendor, "gemini", and the model name given to New.
func (p *Provider) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: providerName, Model: p.model}
}

const providerName = "gemini"

// Plan sends req to the model and returns its answer. When req.OnText
// is set it streams (streamGenerateContent with SSE) and calls OnText with
// each text delta, on the calling goroutine, before it returns.
//
// Errors: a *[agentrt.ProviderError] whose Kind is [agentrt.ErrRateLimited]
// (429), [agentrt.ErrOverloaded] (5xx, 529, or the API unreachable),
// [agentrt.ErrAuth] (401, 403, or an invalid API key),
// [agentrt.ErrContextLength] (the input exceeds the model's context
// window), [agentrt.ErrInvalidRequest] (other 4xx, or a request this adapter
// cannot encode) or [agentrt.ErrBadResponse] (a truncated or malformed
// answer, a stream without a finish reason or cut in the middle of a tool
// call); or, when ctx ends, an error wrapping ctx.Err().
func (p *Provider) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	contents, err := contents(req.Messages, beforeGemini3(p.model))
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		// The API refuses a request without contents.
		return nil, invalidRequest("nothing to send: the request has no message", nil)
	}
	config, err := p.config(req, contents)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		info := &callInfo{}
		cctx := context.WithValue(ctx, callInfoKey{}, info)
		var resp *agentrt.ModelResponse
		if req.OnText != nil {
			resp, err = p.stream(cctx, contents, config, req.OnText, info)
		} else {
			resp, err = p.generate(cctx, contents, config)
		}
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctxError(ctx)
		}
		pe, hinted := classify(err, info)
		wait, retry := p.retryDelay(pe, hinted, attempt, info.output)
		if !retry {
			return nil, pe
		}
		if p.sleep(ctx, wait) != nil {
			return nil, ctxError(ctx)
		}
	}
}

// generate makes one non-streaming call.
func (p *Provider) generate(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (*agentrt.ModelResponse, error) {
	r, err := p.generateContent(ctx, contents, config)
	if err != nil {
		return nil, err
	}
	a := newAssembler(p.model)
	if err := a.add(r, nil); err != nil {
		return nil, err
	}
	return a.done(false)
}

// generateContent is Models.GenerateContent, with a panic of the SDK
// (its converters assert the JSON types of the body: {"candidates":"x"}
// panics) turned into an ErrBadResponse error.
func (p *Provider) generateContent(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (r *genai.GenerateContentResponse, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = nil, sdkPanic(v)
		}
	}()
	return p.client.Models.GenerateContent(ctx, p.model, contents, config)
}

// sdkPanic is the error of a panic of the SDK while it decoded a reply.
func sdkPanic(v any) error {
	return badResponse(fmt.Sprintf("the SDK could not decode the reply: %v", v))
}

// stream makes one streaming call; info.output records whether any chunk
// arrived (after which the call is not retried). A panic of the SDK while
// it decodes an event is an ErrBadResponse error; one of onText is not
// recovered.
func (p *Provider) stream(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig, onText func(string), info *callInfo) (resp *agentrt.ModelResponse, err error) {
	a := newAssembler(p.model)
	inSDK := true // the SDK's code is running, not the loop's body
	defer func() {
		if inSDK {
			if v := recover(); v != nil {
				resp, err = nil, sdkPanic(v)
			}
		}
	}()
	for r, err := range p.client.Models.GenerateContentStream(ctx, p.model, contents, config) {
		inSDK = false
		if err != nil {
			return nil, err
		}
		info.output = true
		if err := a.add(r, onText); err != nil {
			return nil, err
		}
		inSDK = true
	}
	inSDK = false
	return a.done(true)
}

// retryDelay says whether a failed attempt is retried, and after how
// long. hinted reports that the server gave the delay (pe.RetryAfter, which
// may be 0); output that part of the answer has already arrived.
func (p *Provider) retryDelay(pe *agentrt.ProviderError, hinted bool, attempt int, output bool) (time.Duration, bool) {
	if attempt >= p.maxRetries || output {
		return 0, false
	}
	if pe.Kind != agentrt.ErrRateLimited && pe.Kind != agentrt.ErrOverloaded {
		return 0, false
	}
	if hinted {
		if pe.RetryAfter > maxServerDelay {
			return 0, false
		}
		return pe.RetryAfter, true
	}
	d := min(backoffBase<<attempt, backoffMax)
	return d/2 + rand.N(d/2+1), true
}

// sleepCtx waits for d, or returns ctx's error if it ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ctxError is the error Plan returns once ctx has ended: it wraps
// ctx.Err() (so errors.Is works with context.Canceled and
// context.DeadlineExceeded) and the cause, if the caller set one.
func ctxError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return fmt.Errorf("gemini: %w: %w", ctx.Err(), cause)
	}
	return fmt.Errorf("gemini: %w", ctx.Err())
}
