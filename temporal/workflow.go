package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentrt/agentrt"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names of the workflow's signal and queries.
const (
	// SignalApprove is the signal that answers a pending approval; its
	// payload is an [Approval].
	SignalApprove = "agentrt.approve"
	// QueryState returns the run's [State]: messages and pending approvals.
	QueryState = "agentrt.state"
	// QueryEvents takes an index and returns an [EventsPage] with the
	// run's events from that index on, and the pending approvals.
	QueryEvents = "agentrt.events"
)

// RunInput is the input of an agent workflow.
type RunInput struct {
	SessionID string `json:"session_id"`
	// Input is the user's message; it may be empty when History is not.
	Input string `json:"input,omitempty"`
	// History is the session so far (a previous run's Result.Messages), or
	// nil for a new session. If it ends with tool_uses that have no result,
	// each gets an is_error "interrupted" result first.
	History []agentrt.Message `json:"history,omitempty"`
}

// Result is what an agent workflow returns when the run ends normally
// (complete, max turns, budget). A cancelled run ends the workflow as
// cancelled, and a planner failure ends it as failed; their messages stay
// readable with [QueryState].
type Result struct {
	Reason    agentrt.StopReason `json:"reason"`
	FinalText string             `json:"final_text"`
	Usage     agentrt.Usage      `json:"usage"`
	Turns     int                `json:"turns"`
	// Messages is the whole session, History included.
	Messages []agentrt.Message `json:"messages"`
}

// Done returns the result as the Done event of an in-process run.
func (r *Result) Done() agentrt.Done {
	return agentrt.Done{Reason: r.Reason, FinalText: r.FinalText, Usage: r.Usage, Turns: r.Turns}
}

// Approval answers a pending write-tool call; send it as the payload of
// the signal [SignalApprove] (see [Approve]). An approval for a call that
// is not pending yet is kept until the call asks.
type Approval struct {
	ToolUseID string `json:"tool_use_id"`
	Allow     bool   `json:"allow"`
	// Always, with Allow, allows every later call of the same tool in this
	// run without asking (agentrt.AnswerAlways).
	Always bool `json:"always,omitempty"`
	// Reason explains a denial to the model; empty means a standard text.
	Reason string `json:"reason,omitempty"`
	// By names who decided, reported as Decision.Source; empty means "user".
	By string `json:"by,omitempty"`
}

// PendingApproval is a write-tool call waiting for an [Approval].
type PendingApproval struct {
	ToolUseID string          `json:"tool_use_id"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input,omitempty"`
	Turn      int             `json:"turn"`
}

// State is the answer to [QueryState].
type State struct {
	SessionID string            `json:"session_id"`
	Messages  []agentrt.Message `json:"messages"`
	Pending   []PendingApproval `json:"pending,omitempty"`
	Turn      int               `json:"turn"`
	Usage     agentrt.Usage     `json:"usage"`
	// Done is set once the run has ended.
	Done *agentrt.Done `json:"done,omitempty"`
}

// EventsPage is the answer to [QueryEvents].
type EventsPage struct {
	Events  []EventRecord     `json:"events"`
	Pending []PendingApproval `json:"pending,omitempty"`
	// Next is the index to ask for next.
	Next int `json:"next"`
}

// Kinds of [EventRecord].
const (
	KindAssistantMessage   = "assistant_message"
	KindToolCall           = "tool_call"
	KindPermissionDecision = "permission_decision"
	KindToolResult         = "tool_result"
	KindDone               = "done"
)

// EventRecord is the serializable form of an [agentrt.Event] kept by the
// workflow. [EventRecord.Event] converts it back.
type EventRecord struct {
	Kind string `json:"kind"`
	Turn int    `json:"turn,omitempty"`
	// Message is the assistant message or tool result.
	Message *agentrt.Message     `json:"message,omitempty"`
	Usage   agentrt.Usage        `json:"usage,omitzero"`
	Finish  agentrt.FinishReason `json:"finish,omitempty"`
	// ToolUse is the call of a tool_call event.
	ToolUse  *agentrt.Block `json:"tool_use,omitempty"`
	ReadOnly bool           `json:"read_only,omitempty"`
	// Tool and ToolUseID name the call of a permission or result event.
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Allow, Reason and Source are a permission decision.
	Allow  bool   `json:"allow,omitempty"`
	Reason string `json:"reason,omitempty"`
	Source string `json:"source,omitempty"`
	// Error is the failure behind an is_error tool result.
	Error      string        `json:"error,omitempty"`
	FullOutput string        `json:"full_output,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	// Done is the end of the run.
	Done *agentrt.Done `json:"done,omitempty"`
}

// Event converts the record to the event an in-process run yields. The
// Err of a ToolResult is a *agentrt.ToolError whose Err carries only the
// text of the original error.
func (e EventRecord) Event() agentrt.Event {
	switch e.Kind {
	case KindAssistantMessage:
		return agentrt.AssistantMessage{Turn: e.Turn, Message: deref(e.Message), Usage: e.Usage, Finish: e.Finish}
	case KindToolCall:
		var b agentrt.Block
		if e.ToolUse != nil {
			b = *e.ToolUse
		}
		return agentrt.ToolCall{Turn: e.Turn, ToolUse: b, ReadOnly: e.ReadOnly}
	case KindPermissionDecision:
		return agentrt.PermissionDecision{Turn: e.Turn, ToolUseID: e.ToolUseID, Tool: e.Tool,
			Decision: agentrt.Decision{Allow: e.Allow, Reason: e.Reason, Source: e.Source}}
	case KindToolResult:
		ev := agentrt.ToolResult{Turn: e.Turn, Tool: e.Tool, Message: deref(e.Message), Duration: e.Duration, FullOutput: e.FullOutput}
		if e.Error != "" {
			ev.Err = &agentrt.ToolError{Tool: e.Tool, ToolUseID: e.ToolUseID, Err: errors.New(e.Error)}
		}
		return ev
	case KindDone:
		if e.Done != nil {
			return *e.Done
		}
	}
	return nil
}

func deref(m *agentrt.Message) agentrt.Message {
	if m == nil {
		return agentrt.Message{}
	}
	return *m
}

// wfRun is the state of one workflow execution. Everything here is
// deterministic: no clock, no randomness, maps only looked up, never
// ranged over.
type wfRun struct {
	d         *definition
	sessionID string
	history   []agentrt.Message
	events    []EventRecord
	pending   []PendingApproval
	approvals map[string]Approval // by tool_use id; arrived, not yet used
	always    map[string]bool     // tool names allowed for the rest of the run
	turn      int
	turns     int
	usage     agentrt.Usage
	done      *agentrt.Done
	final     string
}

// errCancelled marks a run that stopped because its workflow was cancelled.
var errCancelled = errors.New("cancelled")

// workflow is the agent loop as a Temporal workflow.
func (d *definition) workflow(ctx workflow.Context, in RunInput) (*Result, error) {
	w := &wfRun{
		d:         d,
		sessionID: in.SessionID,
		history:   append([]agentrt.Message(nil), in.History...),
		approvals: map[string]Approval{},
		always:    map[string]bool{},
	}
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) {
		return State{SessionID: w.sessionID, Messages: w.history, Pending: w.pending, Turn: w.turn, Usage: w.usage, Done: w.done}, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (EventsPage, error) {
		from = min(max(from, 0), len(w.events))
		return EventsPage{Events: w.events[from:], Pending: w.pending, Next: len(w.events)}, nil
	}); err != nil {
		return nil, err
	}
	sig := workflow.GetSignalChannel(ctx, SignalApprove)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a Approval
			if !sig.Receive(ctx, &a) {
				return
			}
			if _, dup := w.approvals[a.ToolUseID]; !dup {
				w.approvals[a.ToolUseID] = a
			}
		}
	})

	w.repair()
	if in.Input != "" {
		w.history = append(w.history, agentrt.NewUserMessage(in.Input))
	} else if len(w.history) == 0 {
		return nil, temporal.NewNonRetryableApplicationError(agentrt.ErrEmptyInput.Error(), "agentrt.EmptyInput", nil)
	}
	err := w.loop(ctx)
	switch {
	case errors.Is(err, errCancelled):
		w.finish(agentrt.StopCancelled, "The run was cancelled.")
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, temporal.NewCanceledError("agentrt: run cancelled")
	case err != nil:
		w.finish(agentrt.StopError, "The run stopped: the planner failed.")
		return nil, err
	}
	return &Result{Reason: w.done.Reason, FinalText: w.done.FinalText, Usage: w.usage, Turns: w.turns, Messages: w.history}, nil
}

func (w *wfRun) emit(e EventRecord) { w.events = append(w.events, e) }

func (w *wfRun) finish(reason agentrt.StopReason, text string) {
	w.done = &agentrt.Done{Reason: reason, FinalText: text, Usage: w.usage, Turns: w.turns}
	w.emit(EventRecord{Kind: KindDone, Done: w.done})
}

// repair gives an "interrupted" result to every unanswered tool_use of the
// last assistant message of the history.
func (w *wfRun) repair() {
	w.history = append(w.history, agentrt.InterruptedResults(w.history)...)
}

// loop runs the turns. It returns errCancelled when the workflow was
// cancelled, a planner error, or nil after finishing the run.
func (w *wfRun) loop(ctx workflow.Context) error {
	for w.turn = 1; w.turn <= w.d.maxTurns; w.turn++ {
		if ctx.Err() != nil {
			return errCancelled
		}
		out, err := w.plan(ctx)
		if err != nil {
			return err
		}
		if !out.Message.HasToolUse() {
			w.finish(agentrt.StopComplete, out.Message.Text())
			return nil
		}
		if err := w.runTools(ctx, out); err != nil {
			return err
		}
		if why := w.exceeded(); why != "" {
			return w.stopWithFinalAnswer(ctx, agentrt.StopBudgetExceeded, "The run stopped: it reached "+why+" (budget_exceeded).")
		}
	}
	return w.stopWithFinalAnswer(ctx, agentrt.StopMaxTurns, fmt.Sprintf("The run stopped after %d turns without a final answer (max_turns).", w.d.maxTurns))
}

func (w *wfRun) exceeded() string {
	b := w.d.budget
	if b.MaxTokens > 0 && w.usage.Total() >= b.MaxTokens {
		return fmt.Sprintf("its token budget (%d of %d tokens used)", w.usage.Total(), b.MaxTokens)
	}
	if b.MaxCost > 0 {
		if c := b.Prices.Cost(w.usage); c >= b.MaxCost {
			return fmt.Sprintf("its cost budget (%.4f of %.4f spent)", c, b.MaxCost)
		}
	}
	return ""
}

// stopWithFinalAnswer asks the model once more for an answer without tools
// (unless Agent.NoFinalAnswer), then finishes the run.
func (w *wfRun) stopWithFinalAnswer(ctx workflow.Context, reason agentrt.StopReason, why string) error {
	text := why
	if !w.d.noFinal {
		w.turn++
		w.final = "This run has reached a limit and is about to stop: " + why +
			" Do not call any tool. Answer the user now, as well as you can with what you have found so far, and say what is left undone."
		out, err := w.plan(ctx)
		if err != nil {
			return err
		}
		for _, u := range out.Message.ToolUses() {
			w.history = append(w.history, agentrt.NewToolResult(u.ID, "not run: the run reached a limit and is over", true))
		}
		if t := out.Message.Text(); t != "" {
			text = t
		}
	}
	w.finish(reason, text)
	return nil
}

// plan runs the planner activity and appends its message.
func (w *wfRun) plan(ctx workflow.Context) (*PlanOutput, error) {
	attempts, base, maxDelay := w.d.plannerRetry()
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: w.d.opts.PlannerTimeout,
		HeartbeatTimeout:    w.d.opts.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    base,
			BackoffCoefficient: 2,
			MaximumInterval:    maxDelay,
			MaximumAttempts:    attempts,
		},
	})
	system := w.d.instructions
	if w.final != "" {
		system += "\n\n" + w.final
	}
	n := len(w.history)
	in := PlanInput{SessionID: w.sessionID, Turn: w.turn, System: system, Messages: w.history[:n:n], Tools: w.d.specs}
	var out PlanOutput
	if err := workflow.ExecuteActivity(actx, planActivityName(w.d.name), in).Get(actx, &out); err != nil {
		if ctx.Err() != nil {
			return nil, errCancelled
		}
		return nil, fmt.Errorf("agentrt: planner (turn %d): %w", w.turn, err)
	}
	w.turns++
	w.usage = w.usage.Add(out.Usage)
	w.history = append(w.history, out.Message)
	msg := out.Message
	w.emit(EventRecord{Kind: KindAssistantMessage, Turn: w.turn, Message: &msg, Usage: out.Usage, Finish: out.Finish})
	return &out, nil
}

// wfCall is one tool_use being handled by the workflow.
type wfCall struct {
	use    agentrt.Block
	spec   agentrt.ToolSpec
	result *ToolOutput // decided or finished
	future workflow.Future
}

// runTools handles the tool_uses of one assistant message, in order:
// consecutive read-only calls run concurrently (at most MaxParallelTools at
// once), a write tool alone. Every tool_use gets exactly one result,
// appended right after the message, whatever happens.
func (w *wfRun) runTools(ctx workflow.Context, out *PlanOutput) error {
	uses := out.Message.ToolUses()
	calls := make([]wfCall, len(uses))
	for i, u := range uses {
		calls[i].use = u
	}
	for i := 0; i < len(calls); {
		if ctx.Err() != nil {
			w.skipRest(calls[i:])
			return errCancelled
		}
		c := &calls[i]
		if err := w.check(ctx, c, out.Notes); err != nil {
			w.skipRest(calls[i:])
			return err
		}
		if c.result != nil || !c.spec.ReadOnly {
			if c.result == nil {
				w.start(ctx, c)
				w.wait(ctx, c)
			}
			w.finishCall(c)
			i++
			continue
		}
		// A run of read-only calls: check them all, run them together.
		j := i + 1
		for j < len(calls) && j-i < w.d.maxPar {
			s, ok := w.d.byName[calls[j].use.Name]
			if _, bad := out.Notes[calls[j].use.ID]; bad || !ok || !s.ReadOnly {
				break
			}
			if err := w.check(ctx, &calls[j], out.Notes); err != nil {
				break
			}
			j++
		}
		for k := i; k < j; k++ {
			if calls[k].result == nil {
				w.start(ctx, &calls[k])
			}
		}
		for k := i; k < j; k++ {
			if calls[k].result == nil {
				w.wait(ctx, &calls[k])
			}
			w.finishCall(&calls[k])
		}
		i = j
	}
	if ctx.Err() != nil {
		return errCancelled
	}
	return nil
}

// check announces a call and decides whether it may run. A call that may
// not gets its result now. It returns errCancelled if the workflow was
// cancelled while waiting for an approval.
func (w *wfRun) check(ctx workflow.Context, c *wfCall, notes map[string]string) error {
	spec, known := w.d.byName[c.use.Name]
	w.emit(EventRecord{Kind: KindToolCall, Turn: w.turn, ToolUse: &c.use, ReadOnly: known && spec.ReadOnly})
	if note, bad := notes[c.use.ID]; bad {
		c.result = &ToolOutput{Content: note, IsError: true, Error: note}
		return nil
	}
	if !known { // the planner activity checks this; a worker with other tools?
		note := fmt.Sprintf("unknown tool %q; the available tools are: %s", c.use.Name, w.d.names)
		c.result = &ToolOutput{Content: note, IsError: true, Error: note}
		return nil
	}
	c.spec = spec
	dec, err := w.decide(ctx, c)
	if err != nil {
		return err
	}
	w.emit(EventRecord{Kind: KindPermissionDecision, Turn: w.turn, Tool: c.use.Name, ToolUseID: c.use.ID,
		Allow: dec.Allow, Reason: dec.Reason, Source: dec.Source})
	if !dec.Allow {
		c.result = &ToolOutput{Content: dec.Reason, IsError: true, Error: dec.Reason}
	}
	return nil
}

// decide applies the policy, waiting for an approval under PolicyAsk.
func (w *wfRun) decide(ctx workflow.Context, c *wfCall) (agentrt.Decision, error) {
	if c.spec.ReadOnly || w.d.policy == PolicyAllowAll {
		return agentrt.Decision{Allow: true, Source: "policy"}, nil
	}
	if w.d.policy != PolicyAsk {
		return agentrt.Decision{
			Reason: fmt.Sprintf("permission denied: %q is a write tool and this agent only allows read-only tools (the worker's temporal.Options.Policy must allow it)", c.use.Name),
			Source: "policy",
		}, nil
	}
	if w.always[c.use.Name] {
		return agentrt.Decision{Allow: true, Source: "remembered"}, nil
	}
	id := c.use.ID
	w.pending = append(w.pending, PendingApproval{ToolUseID: id, Tool: c.use.Name, Input: c.use.Input, Turn: w.turn})
	defer func() {
		for i, p := range w.pending {
			if p.ToolUseID == id {
				w.pending = append(w.pending[:i:i], w.pending[i+1:]...)
				break
			}
		}
	}()
	ready := func() bool { _, ok := w.approvals[id]; return ok }
	if t := w.d.opts.ApprovalTimeout; t > 0 {
		ok, err := workflow.AwaitWithTimeout(ctx, t, ready)
		if err != nil {
			return agentrt.Decision{}, errCancelled
		}
		if !ok {
			return agentrt.Decision{Reason: fmt.Sprintf("permission denied: no approval for this call of %q within %v", c.use.Name, t), Source: "timeout"}, nil
		}
	} else if err := workflow.Await(ctx, ready); err != nil {
		return agentrt.Decision{}, errCancelled
	}
	a := w.approvals[id]
	delete(w.approvals, id)
	source := a.By
	if source == "" {
		source = "user"
	}
	if !a.Allow {
		reason := a.Reason
		if reason == "" {
			reason = fmt.Sprintf("permission denied: the user refused this call of %q", c.use.Name)
		}
		return agentrt.Decision{Reason: reason, Source: source}, nil
	}
	if a.Always {
		w.always[c.use.Name] = true
	}
	return agentrt.Decision{Allow: true, Source: source}, nil
}

// start schedules the tool activity of an allowed call.
func (w *wfRun) start(ctx workflow.Context, c *wfCall) {
	o := w.d.opts
	timeout := o.MaxToolDuration
	if t := w.d.toolTimeoutOf(c.spec); t > 0 {
		timeout = t + o.HeartbeatTimeout
	}
	attempts := int32(1)
	if c.spec.ReadOnly || w.d.idempotent[c.spec.Name] {
		attempts = int32(o.ToolAttempts)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    o.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: attempts},
	})
	c.future = workflow.ExecuteActivity(actx, toolActivityName(w.d.name),
		ToolInput{SessionID: w.sessionID, ToolUseID: c.use.ID, Name: c.use.Name, Input: c.use.Input})
}

// wait waits for a started call and turns an activity failure into an
// is_error result: a cancelled workflow, a dead worker (timeout), or any
// other failure after the last attempt.
func (w *wfRun) wait(ctx workflow.Context, c *wfCall) {
	var out ToolOutput
	err := c.future.Get(ctx, &out)
	if err == nil {
		c.result = &out
		return
	}
	var text string
	var timeoutErr *temporal.TimeoutError
	switch {
	case ctx.Err() != nil || temporal.IsCanceledError(err):
		text = fmt.Sprintf("cancelled: the run was stopped while tool %q was running; it may or may not have taken effect", c.use.Name)
	case errors.As(err, &timeoutErr):
		text = fmt.Sprintf("interrupted: tool %q did not finish (%v): the worker running it may have stopped; it may or may not have taken effect", c.use.Name, timeoutErr.TimeoutType())
	default:
		text = fmt.Sprintf("interrupted: tool %q failed to complete: %v; it may or may not have taken effect", c.use.Name, err)
	}
	c.result = &ToolOutput{Content: text, IsError: true, Error: err.Error()}
}

// finishCall appends a call's result and records it.
func (w *wfRun) finishCall(c *wfCall) {
	msg := agentrt.NewToolResult(c.use.ID, c.result.Content, c.result.IsError)
	w.history = append(w.history, msg)
	w.emit(EventRecord{Kind: KindToolResult, Turn: w.turn, Tool: c.use.Name, ToolUseID: c.use.ID, Message: &msg,
		Error: c.result.Error, FullOutput: c.result.FullOutput, Duration: c.result.Duration})
}

// skipRest gives every call not yet answered a "cancelled" result.
func (w *wfRun) skipRest(rest []wfCall) {
	for i := range rest {
		c := &rest[i]
		if c.result == nil {
			text := fmt.Sprintf("cancelled: the run was stopped before tool %q ran", c.use.Name)
			c.result = &ToolOutput{Content: text, IsError: true, Error: text}
		}
		w.finishCall(c)
	}
}
