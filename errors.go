package agentrt

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors of the runtime, the stores and the model providers, for errors.Is.
var (
	// Errors that end a run or describe why it ended.

	// ErrInvalidAgent is returned by Run, alone and before any event, for
	// an Agent it cannot run: no Planner, a nil tool, two tools with one
	// name, an invalid tool name, or a Tool.Spec that panics.
	ErrInvalidAgent = errors.New("agentrt: invalid agent")
	// ErrNoPlanner is the ErrInvalidAgent of an Agent without a Planner
	// (nil, or a typed nil pointer).
	ErrNoPlanner = fmt.Errorf("%w: no planner", ErrInvalidAgent)
	// ErrRunReused is yielded, alone, by a second range over the iterator
	// of one Run (or Resume): like sql.Rows, it runs once.
	ErrRunReused = errors.New("agentrt: the iterator of a Run was ranged over twice; call Run again for another run")
	// ErrMaxTurns is what [Done.Err] returns when a run stopped at MaxTurns.
	ErrMaxTurns = errors.New("agentrt: max turns reached")
	// ErrLoopDetected is what [Done.Err] returns for StopLoopDetected.
	ErrLoopDetected = errors.New("agentrt: loop detected")
	// ErrBudgetExceeded is what [Done.Err] returns for StopBudgetExceeded.
	ErrBudgetExceeded = errors.New("agentrt: budget exceeded")
	// ErrSessionBusy is returned when another run holds the session.
	ErrSessionBusy = errors.New("agentrt: session is busy with another run")
	// ErrInvalidSessionID is returned for a session id that a store refuses.
	ErrInvalidSessionID = errors.New("agentrt: invalid session id")
	// ErrEmptyInput is returned by Run for an empty input on a new session.
	ErrEmptyInput = errors.New("agentrt: empty input for a new session")
	// ErrNotPending is returned by [Agent.Resume], before anything runs,
	// for a [Decision] of a call that is not pending: an unknown call,
	// one already decided, or one approved twice.
	ErrNotPending = errors.New("agentrt: no such pending call")

	// Errors of the JSONL store.

	// ErrJSONLVersion is returned (inside a [*jsonl.LineError]) for a
	// session file written in a format version this reader does not know.
	ErrJSONLVersion = errors.New("unsupported JSONL format version")
	// ErrLineTooLong is returned when a record is longer than
	// [JSONLOptions.MaxLineSize]: by Append, which writes nothing, and by
	// Load (inside a [*jsonl.LineError]) for such a line in a file. Run
	// answers a tool result the store refuses with it by an error result
	// saying so.
	ErrLineTooLong = errors.New("JSONL line longer than the store's MaxLineSize")
	// ErrSessionExists is returned by [JSONLStore.Fork] and
	// [JSONLStore.Create] when the session to create already exists.
	ErrSessionExists = errors.New("agentrt: session already exists")
	// ErrBrokenSession is wrapped by the Verify methods of the stores of
	// this module for a session whose messages break the runtime's first
	// invariant: a second result for one call, an orphaned result (its
	// tool_use is not in the assistant message before it), a result out
	// of place. Calls open at the end of a session are allowed.
	ErrBrokenSession = errors.New("agentrt: session breaks the message invariant")

	// Kinds of provider failure, set as [ProviderError.Kind].

	// ErrRateLimited: the API refused the call for its rate limit (HTTP 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrOverloaded: the API is overloaded or failed on its side (HTTP 5xx, 529).
	ErrOverloaded = errors.New("provider overloaded or unavailable")
	// ErrAuth: the credentials were refused (HTTP 401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrContextLength: the request is longer than the model's context window.
	ErrContextLength = errors.New("context length exceeded")
	// ErrInvalidRequest: the API refused the request as malformed (HTTP 400, 404, 422).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrBadResponse: the reply or stream was truncated or could not be parsed.
	ErrBadResponse = errors.New("malformed or truncated response")
	// ErrUnsupportedContent is the Kind (through ErrInvalidRequest, which
	// it wraps) of the [*ProviderError] a provider returns, before sending
	// anything, for content its API cannot take: a document type it does
	// not read, an image URL where it takes only bytes, an image where it
	// takes text only.
	ErrUnsupportedContent = fmt.Errorf("%w: unsupported content", ErrInvalidRequest)
)

// ProviderError is a failed model API call. Adapters return it so that
// callers can tell kinds of failure apart with errors.Is (Kind) and reach
// the SDK's own error with errors.As (Err).
type ProviderError struct {
	// Provider names the vendor: "openai", "anthropic", "gemini".
	Provider string
	// StatusCode is the HTTP status, or 0 when there was none (a broken stream).
	StatusCode int
	// Code is the vendor's error type or code, such as "rate_limit_error".
	Code string
	// Message is the vendor's error message.
	Message string
	// RetryAfter is the wait the API asked for (Retry-After), or 0.
	RetryAfter time.Duration
	// Kind is one of ErrRateLimited, ErrOverloaded, ErrAuth,
	// ErrContextLength, ErrInvalidRequest, ErrBadResponse, or nil.
	Kind error
	// Err is the underlying error, usually the SDK's.
	Err error
}

func (e *ProviderError) Error() string {
	var sb strings.Builder
	if e.Provider != "" {
		sb.WriteString(e.Provider)
		sb.WriteString(": ")
	}
	if e.Kind != nil {
		sb.WriteString(e.Kind.Error())
	} else {
		sb.WriteString("request failed")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&sb, " (HTTP %d", e.StatusCode)
		if e.Code != "" {
			sb.WriteString(", ")
			sb.WriteString(e.Code)
		}
		sb.WriteByte(')')
	} else if e.Code != "" {
		fmt.Fprintf(&sb, " (%s)", e.Code)
	}
	switch {
	case e.Message != "":
		sb.WriteString(": ")
		sb.WriteString(e.Message)
	case e.Err != nil:
		sb.WriteString(": ")
		sb.WriteString(e.Err.Error())
	}
	return sb.String()
}

// Unwrap returns Kind and Err, so errors.Is and errors.As see both.
func (e *ProviderError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Retryable reports whether trying the same call again later may succeed:
// rate limits, overload and server errors, and broken streams.
func (e *ProviderError) Retryable() bool {
	return e.Kind == ErrRateLimited || e.Kind == ErrOverloaded || e.Kind == ErrBadResponse
}

// ToolError is a failed tool call. The model sees its message in an
// is_error tool result; the caller of Run finds the ToolError itself in
// [ToolResult.Err].
type ToolError struct {
	Tool      string // the tool's name, as the model asked for it
	ToolUseID string
	Err       error
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %q (%s): %v", e.Tool, e.ToolUseID, e.Err)
}

func (e *ToolError) Unwrap() error { return e.Err }

// PanicError is a user callback's recovered panic (a tool, a decoder, a
// permission checker, a hook, a planner), with the stack trace. A
// runtime.Goexit on a goroutine the runtime started (a parallel tool call,
// a durable step) gives one too, with Value "runtime.Goexit called". The
// model sees only "tool "x" panicked: value"; the stack stays with the caller.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// wrapf puts context in front of err as "agentrt: <context>: <err>", with
// one "agentrt: " prefix however deep the chain: err's own prefix is left
// out of the text (errors.Is and errors.As still see err).
func wrapf(err error, format string, args ...any) error {
	return &prefixedError{ctx: "agentrt: " + fmt.Sprintf(format, args...) + ": ", err: err}
}

type prefixedError struct {
	ctx string
	err error
}

func (e *prefixedError) Error() string { return e.ctx + strings.TrimPrefix(e.err.Error(), "agentrt: ") }
func (e *prefixedError) Unwrap() error { return e.err }

// errorText is err.Error(), or what fmt prints for an Error method that
// panics: the text of an error from user code, read on the run's
// goroutine.
func errorText(err error) string {
	return fmt.Sprint(err)
}
