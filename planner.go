package agentrt

import (
	"context"
	"encoding/json"
)

// ModelRequest is what a [Planner] is asked: the instructions, the session
// so far and the tools the model may call.
//
// The runtime builds a new one for every planner call and never changes it
// afterwards, so a planner or hook may keep the pointer. Messages
// is a view of the session, not a copy: its elements must not be modified
// (appending to it is safe: its capacity equals its length, and the session
// never changes the messages it shows). Tools is built once per Agent and
// shared; do not modify it either.
type ModelRequest struct {
	// SessionID and Turn say where in which run this call is made
	// (Turn counts from 1). They are for logging; a model does not see them.
	SessionID string
	Turn      int

	// System is the system prompt: the Agent's Instructions.
	System string
	// Messages is the conversation so far, oldest first. It always starts
	// with a user message and satisfies both invariants of the runtime.
	Messages []Message
	// Tools are the tools the model may call. Empty means the model must
	// answer with text.
	Tools []ToolSpec
	// ToolChoice says whether the model must, may or must not call one of
	// Tools; its zero value lets the model decide.
	ToolChoice ToolChoice

	// MaxTokens caps the length of the answer; 0 means the provider's default.
	MaxTokens int
	// ResponseSchema, when set, asks for a final answer that is a JSON value
	// matching this JSON Schema (structured output). Providers with a native
	// mechanism use it; others may ignore it.
	ResponseSchema json.RawMessage

	// OnText, when non-nil, receives the answer's text as it streams in.
	// It must be called on the goroutine that called Plan, before that
	// call returns. A planner that cannot stream may ignore it;
	// the runtime then sees the text only in the final message.
	OnText func(delta string)
}

// ToolChoice says whether the model must call a tool. Mode is "" or
// "auto" (the model decides), "none" (it answers with text, the tools
// still declared so that the prompt and its cache stay the same),
// "required" (it calls at least one tool) or "tool" (it calls the tool
// named Name). A provider adapter maps it to its API; one whose API cannot
// express a mode returns an error (Kind [ErrInvalidRequest]) before
// sending anything.
type ToolChoice struct {
	Mode string `json:"mode,omitempty"`
	Name string `json:"name,omitempty"`
}

// ModelResponse is the next assistant message and what it cost. The
// runtime keeps Message in the session, sharing its Blocks and Input bytes
// (it copies them before changing anything), so a planner must
// not modify or reuse them after returning the response.
type ModelResponse struct {
	// Message is the assistant message. Its Role is set to RoleAssistant by
	// the runtime if empty.
	Message Message
	// Usage is the token count of this call.
	Usage Usage
	// Finish says why the model stopped.
	Finish FinishReason
	// Model is the model that answered, as the provider reported it.
	Model string
}

// FinishReason says why a model stopped generating.
type FinishReason string

// Finish reasons, mapped from each vendor's own.
const (
	FinishStop          FinishReason = "stop"           // a natural end of the answer
	FinishToolUse       FinishReason = "tool_use"       // the answer ends with tool calls
	FinishLength        FinishReason = "length"         // the token limit cut the answer
	FinishContentFilter FinishReason = "content_filter" // the vendor's filter stopped it, or the model refused
	FinishOther         FinishReason = "other"          // anything else
)

// Usage counts the tokens of one or more model calls. It is a plain value;
// the zero value counts nothing.
type Usage struct {
	// InputTokens counts every prompt token, the cached ones included
	// (CacheReadTokens and CacheWriteTokens say how many of them were).
	InputTokens int `json:"input_tokens"`
	// OutputTokens counts generated tokens, reasoning tokens included.
	OutputTokens int `json:"output_tokens"`
	// ReasoningTokens are the output tokens the model spent thinking
	// (priced as output).
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// CacheReadTokens are input tokens served from the provider's cache.
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens are input tokens written to the provider's cache.
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Planner decides the next step of a run: given the instructions, the
// session and the tools, it returns the next assistant message.
//
// Most Planners are one call to a model API: the adapters for OpenAI (and
// compatible servers), Anthropic and Gemini in the provider/ packages, or a
// page of code for an in-house model server. Such a Planner sends the
// request and returns the assistant message with the model's native tool
// calls as tool_use blocks. If req.OnText is set and the API can stream, it
// streams and calls OnText with each text delta. A truncated or malformed
// stream is an error, never a partial success. Errors from the API should
// be returned as [*ProviderError] with its Kind set, so that callers can
// use errors.Is with [ErrRateLimited], [ErrContextLength] and the other
// kinds. Tests use the scripted planner of package agenttest; package
// jsonplanner drives a model without native tool calls.
//
// Plan is called once per turn, never concurrently for one run; a Planner
// shared by several agents or sessions must be safe for concurrent use.
// An error returned by Plan ends the run (after the runtime has left the
// session valid) and is returned to the caller of Run, wrapped.
//
// A Planner may also say which vendor and model it calls, for logs and
// traces, with a method
//
//	Describe() ProviderInfo
//
// found by type assertion (the adapters of the provider/ packages have
// it; a Planner that wraps another should forward it). An Agent calls
// Describe once, with the tools' Spec, before its first run; a panic there
// makes the Agent invalid ([ErrInvalidAgent]).
type Planner interface {
	Plan(ctx context.Context, req *ModelRequest) (*ModelResponse, error)
}

// PlannerFunc adapts a function to a [Planner].
type PlannerFunc func(ctx context.Context, req *ModelRequest) (*ModelResponse, error)

// Plan calls f(ctx, req).
func (f PlannerFunc) Plan(ctx context.Context, req *ModelRequest) (*ModelResponse, error) {
	return f(ctx, req)
}

// ProviderInfo names a provider and its model, for logs and traces.
type ProviderInfo struct {
	// Name is the vendor: "openai", "anthropic", "gemini" or another.
	Name string
	// Model is the model requested, such as "gpt-4.1-mini".
	Model string
}

// describer is a [Planner] with a Describe method (see Planner).
type describer interface {
	Describe() ProviderInfo
}
