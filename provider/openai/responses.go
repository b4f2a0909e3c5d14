package openai

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// ResponsesOptions tunes a [Responses] planner. The zero value (and a nil
// *ResponsesOptions) means the defaults documented on each field.
// NewResponses copies them; changing them afterwards has no effect.
type ResponsesOptions struct {
	// Temperature, when non-nil, is sent as "temperature". Nil leaves it
	// to the server (reasoning models refuse it).
	Temperature *float64

	// MaxTokens caps the answer ("max_output_tokens", reasoning included)
	// when the ModelRequest does not. 0 sends no cap.
	MaxTokens int

	// ReasoningEffort ("minimal", "low", "medium", "high", ...) is sent as
	// reasoning.effort; "" leaves it to the model.
	ReasoningEffort string

	// ReasoningSummary ("auto", "concise", "detailed") asks for a summary
	// of the reasoning, kept as the thinking block's text; "" asks for
	// none.
	ReasoningSummary string

	// PromptCacheKey is sent as "prompt_cache_key": requests with the same
	// key and prefix are routed to the same cache. "" means a key made from
	// ModelRequest.SessionID, as in [Options]; none without a SessionID.
	PromptCacheKey string

	// NoPromptCacheKey sends no prompt_cache_key.
	NoPromptCacheKey bool

	// ExplicitCache and CacheTTL are as in [Options]: explicit caching,
	// with breakpoints on the developer message (the system prompt), the
	// session's last input item and where the call before ended. Message
	// contents and function call outputs are then sent as lists of parts.
	ExplicitCache bool
	CacheTTL      string

	// PreviousResponseID stores responses at OpenAI ("store": true) and
	// chains the calls of a session with "previous_response_id": a call
	// that follows a response this Responses value returned sends only
	// the messages after it. The trade-off: fewer bytes per request, but
	// the conversation is kept at OpenAI (for its retention period, and
	// not at all for zero-data-retention organisations), and the chain
	// lives in this value's memory, so a new process (or a session edited
	// in between) sends the whole history again, without its reasoning
	// items (with "store": true the API refuses them there, as the session
	// keeps no ids of the items that followed them). By default (false)
	// nothing is stored: the session is the only copy and every request
	// carries it all, reasoning included as encrypted content.
	PreviousResponseID bool

	// MaxRetries is as in [Options]: 0 keeps the client's setting, a
	// negative value disables the SDK's retries.
	MaxRetries int

	// DisableStrict sends tool schemas and ModelRequest.ResponseSchema
	// with "strict": false, as they are.
	DisableStrict bool

	// ServerTools are tools that OpenAI runs itself (web search, file
	// search, code interpreter, image generation, a remote MCP server,
	// hosted shell...), sent in "tools" after the function tools of the
	// ModelRequest, in this order, on every call (so the prompt's prefix,
	// and its cache, stay the same):
	//
	//	ServerTools: []responses.ToolUnionParam{
	//		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
	//		responses.ToolParamOfFileSearch([]string{"vs_123"}),
	//	}
	//
	// Their output items are not mapped and not sent back (see "Responses
	// API" in the package doc); only the answer's text is kept. A tool
	// whose calls the client must answer (function, custom, computer,
	// local shell, a shell without a container environment, apply_patch,
	// namespace, client tool_search) and an mcp tool without
	// require_approval "never" make NewResponses panic: no one could
	// answer their calls or approval requests. NewResponses copies the
	// slice, not the parameters its elements point to.
	ServerTools []responses.ToolUnionParam

	// ExtraFields are merged into the top level of every request body last
	// ("service_tier", "parallel_tool_calls", "truncation", ...). A "tools"
	// field there replaces the whole list, the function tools of the
	// ModelRequest and ServerTools included; use ServerTools to add to it.
	ExtraFields map[string]any
}

// Responses is an [agentrt.Planner] on OpenAI's Responses API
// (POST /v1/responses). It keeps a reasoning model's reasoning between
// turns without storing anything at OpenAI: each reasoning item becomes a
// thinking block whose Signature is the item's encrypted content, and is
// sent back with the next request, also from a resumed session.
//
// A Responses is safe for concurrent use. Its only mutable state is the
// chain of response ids kept with [ResponsesOptions].PreviousResponseID.
type Responses struct {
	client oai.Client
	model  string
	opts   ResponsesOptions
	chain  *responseChain // nil unless PreviousResponseID
}

var (
	_ agentrt.Planner                              = (*Responses)(nil)
	_ interface{ Describe() agentrt.ProviderInfo } = (*Responses)(nil)
)

// responsesProvider is the Provider of the thinking blocks made from
// reasoning items. It is not "openai", so that the Chat Completions
// Provider never sends encrypted reasoning as reasoning_content, and the
// reasoning text of a compatible server never reaches the Responses API.
const responsesProvider = "openai-responses"

// NewResponses returns a planner that calls model on the Responses API
// with the caller's client:
//
//	client := oai.NewClient() // OPENAI_API_KEY from the environment
//	p := openai.NewResponses(client, "gpt-5-mini", &openai.ResponsesOptions{ReasoningSummary: "auto"})
//
// opts may be nil for the defaults. NewResponses panics if model is empty,
// opts.MaxTokens is negative or opts.ServerTools holds a tool it refuses
// (see there).
func NewResponses(client oai.Client, model string, opts *ResponsesOptions) *Responses {
	if model == "" {
		panic("openai: NewResponses: empty model name")
	}
	r := &Responses{client: client, model: model}
	if opts != nil {
		r.opts = *opts
		r.opts.ExtraFields = maps.Clone(opts.ExtraFields)
		r.opts.ServerTools = slices.Clone(opts.ServerTools)
		if opts.Temperature != nil {
			t := *opts.Temperature
			r.opts.Temperature = &t
		}
	}
	if r.opts.MaxTokens < 0 {
		panic(fmt.Sprintf("openai: NewResponses: negative MaxTokens %d", r.opts.MaxTokens))
	}
	for i, t := range r.opts.ServerTools {
		if err := checkServerTool(t); err != nil {
			panic(fmt.Sprintf("openai: NewResponses: ServerTools[%d]: %v", i, err))
		}
	}
	if r.opts.PreviousResponseID {
		r.chain = &responseChain{ids: map[[32]byte]string{}}
	}
	return r
}

// Describe reports the vendor, "openai", and the model requested.
func (r *Responses) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: providerName, Model: r.model}
}

// Plan makes one Responses API call. It streams when req.OnText is set,
// calling it with each piece of text (and refusal) on the calling
// goroutine, and returns the same complete message either way.
//
// Errors are [*agentrt.ProviderError] values with the kinds of
// [Provider.Plan]; content the API cannot take is refused before any
// request with [agentrt.ErrUnsupportedContent]. A response that failed
// (status "failed", or an error event in the stream) is a ProviderError
// with the code the API gave. A cancelled ctx stops the request at once;
// the error then wraps ctx.Err().
func (r *Responses) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	params, err := r.params(req)
	if err != nil {
		return nil, err
	}
	var raw *http.Response
	ropts := []option.RequestOption{option.WithResponseInto(&raw)}
	if r.opts.MaxRetries > 0 {
		ropts = append(ropts, option.WithMaxRetries(r.opts.MaxRetries))
	} else if r.opts.MaxRetries < 0 {
		ropts = append(ropts, option.WithMaxRetries(0))
	}
	var resp *responses.Response
	if req.OnText != nil {
		resp, err = r.stream(ctx, params, req.OnText, &raw, ropts)
	} else {
		resp, err = r.client.Responses.New(ctx, params, ropts...)
		if err != nil {
			err = callError(ctx, err, raw)
		}
	}
	if err != nil {
		return nil, err
	}
	out, err := r.response(resp, req.Tools)
	if err != nil {
		return nil, err
	}
	if r.chain != nil && !expandedWrapper(resp, req.Tools) {
		// A response whose "parallel" wrapper was expanded is not
		// chained: the API knows the wrapper's call id, not ours.
		r.chain.put(out.Message, resp.ID)
	}
	return out, nil
}

// expandedWrapper reports whether resp has a function call that
// [parallelCalls] expands.
func expandedWrapper(resp *responses.Response, tools []agentrt.ToolSpec) bool {
	return slices.ContainsFunc(resp.Output, func(item responses.ResponseOutputItemUnion) bool {
		return item.Type == "function_call" && parallelCalls(item.CallID, item.Name, item.Arguments.OfString, tools) != nil
	})
}

// responseChain maps an assistant message this planner returned (by the
// hash of its JSON form) to the id of the response that produced it.
type responseChain struct {
	mu  sync.Mutex
	ids map[[32]byte]string
}

// maxChain bounds the chain's memory; when full it starts again (the next
// call of a forgotten session then sends its whole history).
const maxChain = 4096

func messageKey(m agentrt.Message) [32]byte {
	m.Role = agentrt.RoleAssistant
	b, _ := json.Marshal(m) // a Message always encodes
	return sha256.Sum256(b)
}

func (c *responseChain) put(m agentrt.Message, id string) {
	if id == "" {
		return
	}
	k := messageKey(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) >= maxChain {
		clear(c.ids)
	}
	c.ids[k] = id
}

// previous returns the id of the response that produced m, if known.
func (c *responseChain) previous(m agentrt.Message) (string, bool) {
	k := messageKey(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[k]
	return id, ok
}

// checkServerTool refuses a ServerTools entry whose calls the client
// would have to answer: the adapter drops such output items, so the turn
// would end without an answer, and the call waiting for it would never
// be answered.
func checkServerTool(t responses.ToolUnionParam) error {
	client := ""
	switch {
	case t.OfFunction != nil:
		return fmt.Errorf("a function tool belongs in ModelRequest.Tools, as an agentrt tool")
	case t.OfCustom != nil:
		client = "a custom tool"
	case t.OfComputer != nil, t.OfComputerUsePreview != nil:
		client = "a computer tool"
	case t.OfLocalShell != nil:
		client = "a local_shell tool"
	case t.OfApplyPatch != nil:
		client = "an apply_patch tool"
	case t.OfNamespace != nil:
		client = "a namespace of function tools"
	case t.OfShell != nil:
		if env := t.OfShell.Environment; env.OfContainerAuto == nil && env.OfContainerReference == nil {
			client = "a shell tool without a container environment"
		}
	case t.OfToolSearch != nil:
		if t.OfToolSearch.Execution == responses.ToolSearchToolExecutionClient {
			client = `a tool_search tool with execution "client"`
		}
	case t.OfMcp != nil:
		if t.OfMcp.RequireApproval.OfMcpToolApprovalSetting.Value != "never" {
			return fmt.Errorf(`mcp tool %q: set RequireApproval to "never": nothing could answer its mcp_approval_request items`, t.OfMcp.ServerLabel)
		}
	default:
		if b, err := json.Marshal(t); err != nil || string(b) == "null" {
			return fmt.Errorf("no tool set")
		}
	}
	if client != "" {
		return fmt.Errorf("%s is run by the client, and this adapter cannot answer its calls", client)
	}
	return nil
}
