package agentrt

import (
	"encoding/json"
	"time"
)

// Event is one step of a run, yielded by [Agent.Run]. It is one of
// [TextDelta], [AssistantMessage], [ToolCall], [PermissionDecision],
// [ToolResult], [PlannerRetry], [HookFailed], [SubAgentEvent] and [Done];
// switch on its type:
//
//	switch e := ev.(type) {
//	case agentrt.TextDelta:
//		fmt.Print(e.Text)
//	case agentrt.ToolResult:
//		...
//	}
//
// The set is sealed: only this package defines events. Events are values;
// the messages they carry are shared with the session and must not be
// modified.
type Event interface {
	isEvent()
}

// TextDelta is a piece of the model's answer as it streams in. The same
// text arrives again, whole, in the AssistantMessage that follows.
type TextDelta struct {
	Turn int
	Text string
}

// AssistantMessage is the model's message of one turn, already appended to
// the session, with the usage of the planner call that produced it.
type AssistantMessage struct {
	Turn    int
	Message Message
	Usage   Usage
	Finish  FinishReason
}

// ToolCall is one call of a tool: the event yielded before the call is
// handled (looked up, decoded, checked and executed; its result follows as
// a [ToolResult]), what the [PermissionChecker] is asked about, what the
// BeforeTool and AfterTool hooks see, and each call left to a person in
// [Done.Pending].
//
// The event is yielded before the input is decoded: its Input is nil,
// and, for a tool the agent does not have, its Tool has only Name set.
// The checker and the hooks see the call once its input was decoded and
// validated. Each of them gets a value of its own, which it may keep (a
// checker that answers later, say): the runtime never changes it
// afterwards, and only BeforeTool's change of Input takes effect. Tool and
// RawInput are shared with the agent and the session and must not be
// modified.
type ToolCall struct {
	SessionID string
	Turn      int
	ToolUseID string
	// Tool describes the tool; Tool.ReadOnly tells a write tool apart.
	Tool ToolSpec
	// Input is the decoded input: for a tool built by NewTool, a value of
	// its input type, which a checker or a hook may type-assert.
	// BeforeTool may replace it with a value of the same type. Nil in the
	// event.
	Input any
	// RawInput is the input as the model sent it, or as a person edited
	// it when EditedBy is set.
	RawInput json.RawMessage
	// EditedBy, for the permission checker, names who replaced the model's
	// input (the Source of a person's decision given to [Agent.Resume]):
	// the checker is asked again about the edit and may refuse it.
	EditedBy string
	// Remembered, for the permission checker, is the decision a person
	// made earlier in this session for calls like this one (an "always",
	// see [Decision.Always]), or nil. A checker that would ask a person may
	// return it instead; the runtime applies it itself to a call the
	// checker defers ([Decision.Pending]).
	Remembered *Decision
	// Start, for AfterTool, is when the call started running.
	Start time.Time
}

// PermissionDecision reports the permission checker's decision on a call,
// whoever made it (policy, user, memory of an earlier answer).
type PermissionDecision struct {
	Turn      int
	ToolUseID string
	Tool      string
	Decision  Decision
}

// ToolResult is the result of one tool call: what the AfterTool hooks see
// and may change, then the event yielded once it is appended to the
// session. Message is what the model sees.
type ToolResult struct {
	Turn    int
	Tool    string
	Message Message
	// Err is the failure behind an is_error result: a [*ToolError] wrapping
	// the tool's error, a [*PanicError] with the stack, an input or
	// permission failure, or the context's error. Nil on success.
	Err error
	// Duration is the time Execute took (0 if the tool did not run).
	Duration time.Duration
	// FullOutput is the tool's whole output when Message.Content was cut
	// to Agent.MaxToolOutput, and "" otherwise.
	FullOutput string
}

// PlannerRetry reports a transient planner failure that the runtime is
// about to retry after Delay.
type PlannerRetry struct {
	Turn    int
	Attempt int // the attempt that failed, from 1
	Delay   time.Duration
	// Asked is the wait the provider asked for (Retry-After) when it was
	// longer than RetryPolicy.MaxDelay and Delay was cut to that; 0
	// otherwise.
	Asked time.Duration
	Err   error
}

// HookFailed is the event of a contained hook failure: a hook that
// returned an error or panicked (Err wraps a [*PanicError]).
type HookFailed struct {
	Turn int
	// Stage is the hook's field name: "BeforeTool", "OnRunEnd", ...
	Stage string
	// Index is the position of the Hooks in Agent.Hooks, or -1 when the
	// failure cannot be told apart (a Goexit in the hooks of a durable
	// step).
	Index int
	Err   error
}

// SubAgentEvent is an event of a sub-agent run by an [AgentTool], seen by
// the caller of the parent's Run. Agent is the tool's name; SessionID is
// the child session.
type SubAgentEvent struct {
	Turn      int // the parent's turn
	ToolUseID string
	Agent     string
	SessionID string
	Event     Event
}

// StopReason says why a run ended.
type StopReason string

// Reasons a run ends, in [Done.Reason].
const (
	// StopComplete: the model answered without calling a tool.
	StopComplete StopReason = "complete"
	// StopMaxTurns: the run reached Agent.MaxTurns.
	StopMaxTurns StopReason = "max_turns"
	// StopLoopDetected: the model kept repeating the same tool calls with
	// the same results after it was told so.
	StopLoopDetected StopReason = "loop_detected"
	// StopBudgetExceeded: the run reached its token, cost or time budget.
	StopBudgetExceeded StopReason = "budget_exceeded"
	// StopCancelled: the context was cancelled or the caller stopped
	// ranging over the events.
	StopCancelled StopReason = "cancelled"
	// StopError: the planner, a hook or the store failed, or the final
	// answer did not match the expected output; the error follows Done.
	StopError StopReason = "error"
	// StopPending: the permission checker left calls to a person
	// ([Decision.Pending]). They are recorded in the session and listed in
	// Done.Pending, unanswered; [Agent.Resume] continues the run with the
	// person's decisions.
	StopPending StopReason = "pending"
)

// Layer names the part of the system a run's stop came from, so that a
// person sees at once where to look.
type Layer string

// Layers, in [Done.Layer].
const (
	// LayerNone: the run completed.
	LayerNone Layer = ""
	// LayerProvider: the model API failed (a [*ProviderError]).
	LayerProvider Layer = "provider"
	// LayerPlanner: the planner failed or panicked, the compressor failed,
	// or the final answer did not match the expected output.
	LayerPlanner Layer = "planner"
	// LayerHook: a BeforePlan hook refused the planner call.
	LayerHook Layer = "hook"
	// LayerStore: the session store failed.
	LayerStore Layer = "store"
	// LayerLimit: MaxTurns, the loop guard or the budget ended the run.
	LayerLimit Layer = "limit"
	// LayerCancellation: the context was cancelled or the caller stopped
	// ranging.
	LayerCancellation Layer = "cancellation"
	// LayerPermission: the permission checker deferred calls to a person
	// (StopPending).
	LayerPermission Layer = "permission"
)

// Done is the last event of every run that started (see [Agent.Run] for
// the early failures that yield only an error). When Reason is
// StopCancelled or StopError and the caller is still ranging, the iterator
// yields the error right after it, once, as its last value.
type Done struct {
	Reason StopReason
	// Layer is where the stop came from; LayerNone for a complete run.
	Layer Layer
	// FinalText is the model's final answer: its last text when Reason is
	// StopComplete, or the answer it gave without tools after a limit
	// (empty when it gave none or with Agent.NoFinalAnswer).
	FinalText string
	// Detail says, for a person, why the run stopped; empty for a complete
	// run. It is never model output.
	Detail string
	// Usage is the total of every planner call of the run.
	Usage Usage
	// Turns is the number of planner calls made.
	Turns int
	// Pending lists, for StopPending, the calls that wait for a person's
	// decision, in order, each with its decoded input; nil otherwise.
	Pending []*ToolCall
}

// Err returns nil for a complete run and an error that says why it ended
// otherwise (errors.Is works with [ErrMaxTurns], [ErrLoopDetected] and
// [ErrBudgetExceeded]).
func (d Done) Err() error {
	switch d.Reason {
	case StopComplete:
		return nil
	case StopMaxTurns:
		return ErrMaxTurns
	case StopLoopDetected:
		return ErrLoopDetected
	case StopBudgetExceeded:
		return ErrBudgetExceeded
	}
	return &stopError{d}
}

type stopError struct{ d Done }

func (e *stopError) Error() string {
	return "agentrt: run stopped (" + string(e.d.Reason) + "): " + e.d.Detail
}

func (TextDelta) isEvent()          {}
func (AssistantMessage) isEvent()   {}
func (ToolCall) isEvent()           {}
func (PermissionDecision) isEvent() {}
func (ToolResult) isEvent()         {}
func (Done) isEvent()               {}
func (PlannerRetry) isEvent()       {}
func (HookFailed) isEvent()         {}
func (SubAgentEvent) isEvent()      {}

// permissionRecord is the JSON body of a RecordPermission record.
type permissionRecord struct {
	ToolUseID string `json:"tool_use_id"`
	Tool      string `json:"tool"`
	Allow     bool   `json:"allow"`
	Reason    string `json:"reason,omitempty"`
	Source    string `json:"source,omitempty"`
	// Input is the rewritten input, when the checker changed it.
	Input json.RawMessage `json:"input,omitempty"`
	// Always, AnyTool and Pattern are a remembered decision's rule.
	Always  bool   `json:"always,omitempty"`
	AnyTool bool   `json:"any_tool,omitempty"`
	Pattern string `json:"pattern,omitempty"`
}
