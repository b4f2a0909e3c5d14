package temporal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable/loop"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names of the workflow's signal and queries.
const (
	// SignalApprove is the signal that answers a pending approval; its
	// payload is an [agentrt.Decision].
	SignalApprove = "agentrt.approve"
	// QueryState returns the run's [State]: messages and pending approvals.
	QueryState = "agentrt.state"
	// QueryEvents takes an index and returns an [EventsPage] with the
	// run's events from that index on, and the pending approvals.
	QueryEvents = "agentrt.events"
	// UpdateApprove is the update that [Approve] sends: an [agentrt.Decision], as
	// the signal, but refused (with an error of type
	// [ErrorTypeNotPending]) for a call that is unknown or already decided.
	UpdateApprove = "agentrt.approve"
	// ErrorTypeNotPending is the error type of a refused UpdateApprove;
	// Approve returns it as agentrt.ErrNotPending.
	ErrorTypeNotPending = "agentrt.NotPending"
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
	// Output, when set, is the JSON Schema the final answer must match, as
	// agentrt.RunTyped asks (see [RunTyped]); OutputRetries is
	// agentrt.TypedOptions.MaxRetries.
	Output        json.RawMessage `json:"output,omitempty"`
	OutputRetries int             `json:"output_retries,omitempty"`
	// Rules are the session's remembered decisions (approvals with
	// Always), from a previous run's Result or State.
	Rules []Rule `json:"rules,omitempty"`
}

// Result is what an agent workflow returns when the run ends normally
// (complete, max turns, budget). A cancelled run ends the workflow as
// cancelled, and a planner failure ends it as failed; their messages stay
// readable with [QueryState].
type Result struct {
	Reason    agentrt.StopReason `json:"reason"`
	Layer     agentrt.Layer      `json:"layer,omitempty"`
	FinalText string             `json:"final_text"`
	Detail    string             `json:"detail,omitempty"`
	Usage     agentrt.Usage      `json:"usage"`
	Turns     int                `json:"turns"`
	// Messages is the whole session, History included.
	Messages []agentrt.Message `json:"messages"`
	// Rules are the session's remembered decisions, RunInput.Rules
	// included; [Start] passes them on to the session's next run.
	Rules []Rule `json:"rules,omitempty"`
}

// Done returns the result as the Done event of an in-process run.
func (r *Result) Done() agentrt.Done {
	return agentrt.Done{Reason: r.Reason, Layer: r.Layer, FinalText: r.FinalText, Detail: r.Detail, Usage: r.Usage, Turns: r.Turns}
}

// Rule is a remembered decision of a session: a person's [agentrt.Decision] with
// Always. It stands for later calls of Tool (of every tool with AnyTool)
// whose input, as compact JSON, matches the regular expression Pattern
// (every input when empty), as in-process.
type Rule struct {
	Tool    string `json:"tool,omitempty"`
	AnyTool bool   `json:"any_tool,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Allow   bool   `json:"allow"`
	Reason  string `json:"reason,omitempty"`
}

// PendingApproval is a write-tool call waiting for an [agentrt.Decision].
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
	// Rules are the session's remembered decisions.
	Rules []Rule `json:"rules,omitempty"`
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
	KindHookFailed         = "hook_failed"
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
	// Allow, Reason and Source are a permission decision; Always says
	// a person's decision is remembered for the session, Pattern narrows
	// it.
	Allow   bool   `json:"allow,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Source  string `json:"source,omitempty"`
	Always  bool   `json:"always,omitempty"`
	AnyTool bool   `json:"any_tool,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	// Error is the failure behind an is_error tool result, or a hook's.
	Error string `json:"error,omitempty"`
	// Stage and Index name the hook of a hook_failed event.
	Stage      string        `json:"stage,omitempty"`
	Index      int           `json:"index,omitempty"`
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
		return agentrt.ToolCall{Turn: e.Turn, ToolUseID: b.ID, Tool: agentrt.ToolSpec{Name: b.Name, ReadOnly: e.ReadOnly}, RawInput: b.Input}
	case KindPermissionDecision:
		return agentrt.PermissionDecision{Turn: e.Turn, ToolUseID: e.ToolUseID, Tool: e.Tool,
			Decision: agentrt.Decision{Allow: e.Allow, Reason: e.Reason, Source: e.Source, Always: e.Always, AnyTool: e.AnyTool, Pattern: e.Pattern}}
	case KindToolResult:
		ev := agentrt.ToolResult{Turn: e.Turn, Tool: e.Tool, Message: deref(e.Message), Duration: e.Duration, FullOutput: e.FullOutput}
		if e.Error != "" {
			ev.Err = &agentrt.ToolError{Tool: e.Tool, ToolUseID: e.ToolUseID, Err: errors.New(e.Error)}
		}
		return ev
	case KindHookFailed:
		return agentrt.HookFailed{Turn: e.Turn, Stage: e.Stage, Index: e.Index, Err: errors.New(e.Error)}
	case KindDone:
		if e.Done != nil {
			return *e.Done
		}
	}
	return nil
}

// recordOf converts an event the workflow keeps to its record.
func recordOf(ev agentrt.Event) (EventRecord, bool) {
	switch ev := ev.(type) {
	case agentrt.AssistantMessage:
		return EventRecord{Kind: KindAssistantMessage, Turn: ev.Turn, Message: &ev.Message, Usage: ev.Usage, Finish: ev.Finish}, true
	case agentrt.ToolCall:
		b := agentrt.ToolUseBlock(ev.ToolUseID, ev.Tool.Name, ev.RawInput)
		return EventRecord{Kind: KindToolCall, Turn: ev.Turn, ToolUse: &b, ReadOnly: ev.Tool.ReadOnly}, true
	case agentrt.PermissionDecision:
		d := ev.Decision
		return EventRecord{Kind: KindPermissionDecision, Turn: ev.Turn, Tool: ev.Tool, ToolUseID: ev.ToolUseID,
			Allow: d.Allow, Reason: d.Reason, Source: d.Source, Always: d.Always, AnyTool: d.AnyTool, Pattern: d.Pattern}, true
	case agentrt.ToolResult:
		r := EventRecord{Kind: KindToolResult, Turn: ev.Turn, Tool: ev.Tool, ToolUseID: ev.Message.ToolUseID, Message: &ev.Message,
			FullOutput: ev.FullOutput, Duration: ev.Duration}
		var te *agentrt.ToolError
		switch {
		case errors.As(ev.Err, &te) && te.Err != nil:
			r.Error = te.Err.Error()
		case ev.Err != nil:
			r.Error = ev.Err.Error()
		}
		return r, true
	case agentrt.HookFailed:
		r := EventRecord{Kind: KindHookFailed, Turn: ev.Turn, Stage: ev.Stage, Index: ev.Index}
		if ev.Err != nil {
			r.Error = ev.Err.Error()
		}
		return r, true
	case agentrt.Done:
		return EventRecord{Kind: KindDone, Done: &ev}, true
	}
	return EventRecord{}, false
}

func deref(m *agentrt.Message) agentrt.Message {
	if m == nil {
		return agentrt.Message{}
	}
	return *m
}

// wfRun is the state of one workflow execution: the loop
// ([loop.Loop]) and what the queries show. Everything here is
// deterministic: no clock, no randomness, maps only looked up, never
// ranged over.
type wfRun struct {
	d          *definition
	lp         loop.Loop
	sessionID  string
	history    []agentrt.Message
	events     []EventRecord
	pending    []PendingApproval
	approvals  map[string]agentrt.Decision // by tool_use id; arrived, not yet used
	decided    map[string]bool             // tool_use ids a person's approval was used for
	rules      []Rule                      // remembered decisions, oldest first
	turn       int
	usage      agentrt.Usage
	done       *agentrt.Done
	compaction *agentrt.Compaction // the last one; the Compressor's Previous
	timeUp     bool                // Budget.MaxDuration has passed
}

// errCancelled marks a run that stopped because its workflow was cancelled.
var errCancelled = errors.New("cancelled")

// workflow is the agent loop as a Temporal workflow.
func (d *definition) workflow(ctx workflow.Context, in RunInput) (*Result, error) {
	lp, err := loop.New(d.ag, in.SessionID, nil)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.InvalidAgent", nil)
	}
	if in.Output != nil {
		if err := lp.ExpectOutput(in.Output, in.OutputRetries); err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.InvalidOutput", nil)
		}
	}
	w := &wfRun{
		d:         d,
		lp:        lp,
		sessionID: in.SessionID,
		history:   append([]agentrt.Message(nil), in.History...),
		approvals: map[string]agentrt.Decision{},
		decided:   map[string]bool{},
		rules:     append([]Rule(nil), in.Rules...),
	}
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) {
		return State{SessionID: w.sessionID, Messages: w.history, Pending: w.pending, Turn: w.turn, Usage: w.usage, Done: w.done, Rules: w.rules}, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (EventsPage, error) {
		from = min(max(from, 0), len(w.events))
		return EventsPage{Events: w.events[from:], Pending: w.pending, Next: len(w.events)}, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove, func(ctx workflow.Context, a agentrt.Decision) error {
		w.approvals[a.ToolUseID] = a
		return nil
	}, workflow.UpdateHandlerOptions{Validator: w.validApproval}); err != nil {
		return nil, err
	}
	sig := workflow.GetSignalChannel(ctx, SignalApprove)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a agentrt.Decision
			if !sig.Receive(ctx, &a) {
				return
			}
			if a.Pending { // no decision: the call keeps waiting (Approve refuses it)
				workflow.GetLogger(ctx).Warn("agentrt: an approval signal with Pending set decides nothing; ignored", "tool_use_id", a.ToolUseID)
				continue
			}
			if _, dup := w.approvals[a.ToolUseID]; !dup && !w.decided[a.ToolUseID] {
				w.approvals[a.ToolUseID] = a
			}
		}
	})

	first, err := lp.Begin(in.History, in.Input)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.EmptyInput", nil)
	}
	w.history = append(w.history, first...)
	runCtx := ctx
	if t := d.maxDuration; t > 0 {
		var cancel workflow.CancelFunc
		runCtx, cancel = workflow.WithCancel(ctx)
		workflow.Go(ctx, func(ctx workflow.Context) {
			if workflow.Sleep(ctx, t) == nil {
				w.timeUp = true
				cancel()
			}
		})
	}
	done, runErr := w.loop(runCtx)
	w.done = &done
	w.emit(done)
	switch {
	case errors.Is(runErr, errCancelled):
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, temporal.NewCanceledError("agentrt: run cancelled")
	case runErr != nil:
		if shape := shapeOf(runErr); shape != nil {
			return nil, temporal.NewNonRetryableApplicationError(runErr.Error(), runErrorType, nil, shape)
		}
		return nil, temporal.NewNonRetryableApplicationError(runErr.Error(), runErrorType, nil)
	}
	return &Result{Reason: done.Reason, Layer: done.Layer, FinalText: done.FinalText, Detail: done.Detail,
		Usage: done.Usage, Turns: done.Turns, Messages: w.history, Rules: w.rules}, nil
}

func (w *wfRun) emit(ev agentrt.Event) {
	if r, ok := recordOf(ev); ok {
		w.events = append(w.events, r)
	}
}

func (w *wfRun) add(msgs ...agentrt.Message) { w.history = append(w.history, msgs...) }

// loop runs the turns and returns the run's Done and error: errCancelled
// when the workflow was cancelled, or the error that ended the run.
func (w *wfRun) loop(ctx workflow.Context) (agentrt.Done, error) {
	for {
		if ctx.Err() != nil {
			return w.cancelled(ctx)
		}
		req := w.lp.Request()
		w.turn = req.Turn
		resp, layer, err := w.plan(ctx, req)
		switch {
		case errors.Is(err, errCancelled):
			return w.cancelled(ctx)
		case err != nil:
			return w.stop(agentrt.StopError, layer, err)
		}
		w.usage = w.usage.Add(resp.Usage)
		msg, calls := w.lp.Accept(resp)
		w.add(msg)
		w.emit(agentrt.AssistantMessage{Turn: w.turn, Message: msg, Usage: resp.Usage, Finish: resp.Finish})
		if len(calls) > 0 {
			if err := w.runTools(ctx, msg, calls); err != nil || ctx.Err() != nil {
				return w.cancelled(ctx)
			}
		}
		more, done, err := w.lp.Next()
		w.add(more...)
		if done != nil {
			return *done, err
		}
	}
}

// stop ends the run early: the open tool_uses get their results.
func (w *wfRun) stop(reason agentrt.StopReason, layer agentrt.Layer, err error) (agentrt.Done, error) {
	msgs, done := w.lp.Stop(reason, layer, err)
	w.add(msgs...)
	return done, err
}

// cancelled ends a run whose context was cancelled: by a client, or by the
// time budget.
func (w *wfRun) cancelled(ctx workflow.Context) (agentrt.Done, error) {
	if w.timeUp {
		return w.stop(agentrt.StopBudgetExceeded, agentrt.LayerLimit, nil)
	}
	done, _ := w.stop(agentrt.StopCancelled, agentrt.LayerCancellation, errors.New("agentrt: run cancelled: the workflow was cancelled"))
	return done, errCancelled
}

// plan makes a planner call: one planner activity per attempt, retried
// by the workflow as Agent.Retry says. The activity's own retries are for
// timeouts only (a worker that died), so they do not use up Agent.Retry.
func (w *wfRun) plan(ctx workflow.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, agentrt.Layer, error) {
	o := w.d.opts
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: o.PlannerTimeout,
		HeartbeatTimeout:    o.HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: int32(o.PlannerAttempts)},
	})
	force := false
	for attempt := 1; ; attempt++ {
		in := PlanInput{SessionID: w.sessionID, Turn: req.Turn, System: req.System, Messages: req.Messages, Tools: req.Tools,
			ResponseSchema: req.ResponseSchema, Compaction: w.compaction, Force: force, Attempt: attempt}
		var out PlanOutput
		err := workflow.ExecuteActivity(actx, planActivityName(w.d.name), in).Get(actx, &out)
		if err == nil {
			if out.Compaction != nil {
				w.compaction = out.Compaction
			}
			w.events = append(w.events, out.Events...)
			msg, err := out.message()
			if err != nil {
				return nil, agentrt.LayerPlanner, fmt.Errorf("agentrt: planner (turn %d): decode its message: %w", req.Turn, err)
			}
			return &agentrt.ModelResponse{Message: msg, Usage: out.Usage, Finish: out.Finish, Model: out.Model}, "", nil
		}
		if ctx.Err() != nil {
			return nil, "", errCancelled
		}
		var f planFailure
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != plannerErrorType || ae.Details(&f) != nil {
			// The activity itself failed (timeouts, attempt after attempt).
			return nil, agentrt.LayerPlanner, fmt.Errorf("agentrt: planner (turn %d): %w", req.Turn, err)
		}
		if f.Compaction != nil {
			w.compaction = f.Compaction
		}
		w.events = append(w.events, f.Events...)
		switch {
		case f.Compact:
			force = true
			attempt--
			continue
		case !f.Retry:
			return nil, f.Layer, withShape(errors.New(f.Message), f.Shape)
		}
		if workflow.Sleep(ctx, f.Delay) != nil {
			return nil, "", errCancelled
		}
	}
}

// wfCall is a call of the current group.
type wfCall struct {
	use    agentrt.Block
	spec   agentrt.ToolSpec
	input  json.RawMessage     // what the tool runs with, when allowed
	out    *agentrt.ToolResult // decided or finished
	ran    bool
	future workflow.Future
}

// runTools handles the calls of one assistant message, one group after
// another (loop.Loop.Batch): every call of a group is decided in order,
// the allowed ones run together, and their results are settled in order. It
// returns errCancelled when the workflow was cancelled; the calls not
// settled then get their results from Stop.
func (w *wfRun) runTools(ctx workflow.Context, msg agentrt.Message, calls []agentrt.ToolCall) error {
	for i := 0; i < len(calls); {
		j := w.lp.Batch(i)
		group := make([]wfCall, j-i)
		for k := range group {
			c, tc := &group[k], calls[i+k]
			c.use, c.spec = toolUse(msg, tc), w.d.byName[tc.Tool.Name]
			w.emit(tc)
			if !w.lp.Runs(i + k) {
				continue
			}
			if ctx.Err() != nil {
				return errCancelled
			}
			if err := w.decide(ctx, c); err != nil {
				return err
			}
		}
		for k := range group {
			if c := &group[k]; c.out == nil && w.lp.Runs(i+k) {
				w.start(ctx, c)
			}
		}
		for k := range group {
			c := &group[k]
			if c.future != nil {
				w.wait(ctx, c)
			}
			var out agentrt.ToolResult
			if c.out != nil {
				out = *c.out
			}
			res := w.lp.Settle(i+k, out, c.ran)
			w.add(res.Message)
			w.emit(res)
		}
		i = j
	}
	return nil
}

// toolUse returns the tool_use block of call tc in msg, the assistant
// message of the turn.
func toolUse(msg agentrt.Message, tc agentrt.ToolCall) agentrt.Block {
	for _, b := range msg.Blocks {
		if b.Type == agentrt.BlockToolUse && b.ID == tc.ToolUseID {
			return b
		}
	}
	return agentrt.ToolUseBlock(tc.ToolUseID, tc.Tool.Name, tc.RawInput)
}

// failed returns the is_error result of c with text and err.
func (w *wfRun) failed(c *wfCall, text string, err error) *agentrt.ToolResult {
	return &agentrt.ToolResult{Turn: w.turn, Tool: c.use.Name, Message: agentrt.NewToolMessage(c.use.ID, text, true), Err: err}
}

// decide runs the decide activity of a call and, under PolicyAsk, waits
// for a person's approval of a write tool. A call that may not run gets
// its result. It returns errCancelled if the workflow was cancelled.
func (w *wfRun) decide(ctx workflow.Context, c *wfCall) error {
	o := w.d.opts
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: o.PlannerTimeout,
		HeartbeatTimeout:    o.HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: int32(o.PlannerAttempts)},
	})
	var out DecideOutput
	err := workflow.ExecuteActivity(actx, decideActivityName(w.d.name), DecideInput{SessionID: w.sessionID, Turn: w.turn, ToolUse: c.use}).Get(actx, &out)
	if err != nil {
		if ctx.Err() != nil {
			return errCancelled
		}
		w.deny(c, fmt.Sprintf("permission denied: the permission check of tool %q did not complete: %v", c.use.Name, err), "error")
		return nil
	}
	w.events = append(w.events, out.Events...)
	switch {
	case out.Denied != nil:
		oc := out.Denied.result()
		c.out = &oc
		return nil
	case out.Ask:
		d, err := w.approve(ctx, c)
		if err != nil {
			return err
		}
		if d.Allow && d.Input != nil { // the person's edit, decided again
			return w.recheck(actx, c, d)
		}
		w.emit(agentrt.PermissionDecision{Turn: w.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
		if !d.Allow {
			text := w.lp.Denial(c.use.Name, d)
			c.out = w.failed(c, text, errors.New(text))
			return nil
		}
	}
	c.input = out.Input
	return nil
}

// recheck runs the decide activity again on a person's edit d of c's
// input: the edit is decoded and validated, and the checker may refuse it.
func (w *wfRun) recheck(actx workflow.Context, c *wfCall, d agentrt.Decision) error {
	var out DecideOutput
	err := workflow.ExecuteActivity(actx, decideActivityName(w.d.name), DecideInput{SessionID: w.sessionID, Turn: w.turn, ToolUse: c.use, Edit: &d}).Get(actx, &out)
	if err != nil {
		if actx.Err() != nil {
			return errCancelled
		}
		w.deny(c, fmt.Sprintf("permission denied: the permission check of the edited input of tool %q did not complete: %v", c.use.Name, err), "error")
		return nil
	}
	w.events = append(w.events, out.Events...)
	if out.Denied != nil {
		oc := out.Denied.result()
		c.out = &oc
		return nil
	}
	c.input = out.Input
	return nil
}

// deny gives c an is_error result and reports the decision.
func (w *wfRun) deny(c *wfCall, reason, source string) {
	w.emit(agentrt.PermissionDecision{Turn: w.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: agentrt.Decision{Reason: reason, Source: source}})
	c.out = w.failed(c, reason, errors.New(reason))
}

// validApproval refuses an approval of a call that is not open: not a
// tool_use of the current turn, answered, or already decided.
func (w *wfRun) validApproval(a agentrt.Decision) error {
	notPending := func(why string) error {
		return temporal.NewApplicationError(fmt.Sprintf("%s: %q: %s", agentrt.ErrNotPending, a.ToolUseID, why), ErrorTypeNotPending)
	}
	if _, dup := w.approvals[a.ToolUseID]; dup || w.decided[a.ToolUseID] {
		return notPending("the call was already decided")
	}
	if a.Pending {
		return notPending("a decision cannot be pending; leave the call out to keep it waiting")
	}
	if a.Pattern != "" {
		if _, err := regexp.Compile(a.Pattern); err != nil {
			return temporal.NewApplicationError("agentrt: invalid Pattern: "+err.Error(), ErrorTypeNotPending)
		}
	}
	last := -1
	for i := len(w.history) - 1; i >= 0; i-- {
		if w.history[i].Role == agentrt.RoleAssistant {
			last = i
			break
		}
	}
	if last >= 0 {
		for _, u := range w.history[last].ToolUses() {
			if u.ID != a.ToolUseID {
				continue
			}
			for _, m := range w.history[last+1:] {
				if m.Role == agentrt.RoleTool && m.ToolUseID == u.ID {
					return notPending("the call was already answered")
				}
			}
			return nil
		}
	}
	return notPending("the run has no open call with this id")
}

// remembered returns the session's remembered decision on c, if any: the
// last rule that matches its tool and input.
func (w *wfRun) remembered(c *wfCall) (agentrt.Decision, bool) {
	for i := len(w.rules) - 1; i >= 0; i-- {
		ru := w.rules[i]
		if !ru.AnyTool && ru.Tool != c.use.Name {
			continue
		}
		if ru.Pattern != "" {
			re, err := regexp.Compile(ru.Pattern)
			var b bytes.Buffer
			input := []byte(c.use.Input)
			if json.Compact(&b, input) == nil {
				input = b.Bytes()
			}
			if err != nil || !re.Match(input) {
				continue
			}
		}
		d := agentrt.Decision{Allow: ru.Allow, Reason: ru.Reason, Source: "remembered"}
		if !d.Allow && d.Reason == "" {
			d.Reason = fmt.Sprintf("permission denied: the user refused calls of %q", c.use.Name)
		}
		return d, true
	}
	return agentrt.Decision{}, false
}

// approve waits for a person's approval of a call (PolicyAsk, or a
// checker's pending decision). An allowed call's input may be the person's edit,
// set in c.input.
func (w *wfRun) approve(ctx workflow.Context, c *wfCall) (agentrt.Decision, error) {
	if d, ok := w.remembered(c); ok {
		return d, nil
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
	w.decided[id] = true
	d := w.lp.Personal(c.use.Name, a)
	if a.Always {
		ru := Rule{Tool: c.use.Name, AnyTool: a.AnyTool, Pattern: a.Pattern, Allow: a.Allow}
		if !a.Allow {
			ru.Reason = d.Reason
		}
		w.rules = append(w.rules, ru)
	}
	return d, nil
}

// start schedules the tool activity of an allowed call: a write tool runs
// at most once unless it is idempotent; a read-only one is retried.
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
	in := ToolInput{SessionID: w.sessionID, Turn: w.turn, ToolUseID: c.use.ID, Name: c.use.Name, Input: c.use.Input}
	if !bytes.Equal(c.input, c.use.Input) {
		in.Run = c.input
	}
	c.future = workflow.ExecuteActivity(actx, toolActivityName(w.d.name), in)
}

// wait waits for a started call and turns an activity failure into an
// is_error result: a cancelled workflow, a dead worker (timeout), or any
// other failure after the last attempt.
func (w *wfRun) wait(ctx workflow.Context, c *wfCall) {
	var out ToolOutput
	err := c.future.Get(ctx, &out)
	if err == nil {
		w.events = append(w.events, out.Events...)
		oc := out.result()
		c.out, c.ran = &oc, out.Ran
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
	c.out = w.failed(c, text, err)
}
