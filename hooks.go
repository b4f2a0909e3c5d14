package agentrt

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Hooks are functions the runtime calls around each run, turn, planner
// call and tool call: to observe (logs, traces, metrics), to change a
// request, an input or a result, or to block a tool call. Every field is
// optional. Agent.Hooks holds several; Before and start hooks run in order,
// After and end hooks in reverse order, like nested middleware.
//
// A context returned by a Before or start hook replaces the one passed on:
// a tracing hook puts its span there, so that the planner call or the tool
// (and the tool's own spans) run under it, and the matching After or end
// hook receives it.
//
// Failures are contained. A hook that panics is stopped there (a
// runtime.Goexit ends the goroutine ranging over Run, as for any callback:
// see the package documentation); the failure is reported as a [HookFailed] event (naming
// the hook's stage and index) and the run goes on, except that a
// BeforeTool that panics blocks its call (fail closed) and a BeforePlan
// that fails (an error or a panic) ends the run with an error naming the
// hook and wrapping its own. The invariants hold either way.
//
// Hooks run on the goroutine ranging over Run, one at a time, except the AfterTool hooks
// of read-only calls that run in parallel: those run on each call's own
// goroutine, concurrently, and must be safe for that (on Temporal the
// BeforeTool hooks of such calls run concurrently too, in their tool
// activities).
type Hooks struct {
	// OnRunStart is called once the session is loaded, before the first turn.
	OnRunStart func(ctx context.Context, run *RunInfo) context.Context
	// OnRunEnd is called with the run's Done event and its error, if any.
	OnRunEnd func(ctx context.Context, run *RunInfo, done Done, err error)
	// OnTurnStart and OnTurnEnd bracket a turn: one planner call and the
	// tools it asks for.
	OnTurnStart func(ctx context.Context, run *RunInfo, turn int) context.Context
	OnTurnEnd   func(ctx context.Context, run *RunInfo, turn int)
	// BeforePlan may change the request (not its Messages slice's
	// elements, which belong to the session). An error ends the run.
	BeforePlan func(ctx context.Context, req *ModelRequest) (context.Context, error)
	// AfterPlan sees the response or the error of each planner attempt and
	// may change the response. When the BeforePlan of Agent.Hooks[i]
	// fails, the AfterPlan of each Hooks before i is still called (in
	// reverse order, with the failure); those of i and after are not.
	AfterPlan func(ctx context.Context, req *ModelRequest, resp *ModelResponse, err error)
	// BeforeTool is called after the permission checker allowed a call,
	// before it runs; it may replace call.Input. Returning an error blocks
	// the call: the model sees the error's text, and the block is reported
	// and recorded like a permission denial (Source "hook"). A BeforeTool
	// that panics blocks its call too, and is a HookFailed.
	BeforeTool func(ctx context.Context, call *ToolCall) (context.Context, error)
	// AfterTool sees each call's result, the ToolResult the run then
	// yields (before Message.Content is cut to Agent.MaxToolOutput), and
	// may change what the model sees: result.Message's Content, IsError
	// and Blocks; a change of its other fields is ignored. When the
	// BeforeTool of Agent.Hooks[i] blocks the call, the AfterTool of each
	// Hooks before i is still called (in reverse order) and sees the block,
	// but cannot change it: the model gets the block's reason. Those of i
	// and after are not called.
	AfterTool func(ctx context.Context, call *ToolCall, result *ToolResult)
}

// RunInfo describes a run to hooks.
type RunInfo struct {
	Agent     string // Agent.Name
	SessionID string
	Input     string
	// Provider is what the planner reports of itself (its Describe method), or
	// the zero value.
	Provider ProviderInfo
	// Start is when the run started.
	Start time.Time
}

// blockedError is the error, in the *ToolError of ToolResult.Err, of a call
// a BeforeTool hook blocked.
type blockedError struct{ Reason string }

func (e *blockedError) Error() string { return "blocked: " + e.Reason }

// hookError reports a hook that failed or panicked: the error of a failed
// BeforePlan that ends a run, and the content of a HookFailed event.
type hookError struct {
	// Stage is the hook's field name: "BeforeTool", "OnRunEnd", ...
	Stage string
	// Index is the position of the Hooks in Agent.Hooks.
	Index int
	Err   error
}

func (e *hookError) Error() string {
	return fmt.Sprintf("agentrt: hook %d %s: %v", e.Index, e.Stage, e.Err)
}

func (e *hookError) Unwrap() error { return e.Err }

// hookFailedEvent is the HookFailed event of err.
func hookFailedEvent(turn int, err *hookError) HookFailed {
	return HookFailed{Turn: turn, Stage: err.Stage, Index: err.Index, Err: err.Err}
}

// callHook runs f, turning a panic into an error. A hook yields no event,
// so a panic in it is always its own.
func callHook(stage string, i int, f func() error) *hookError {
	var err error
	if perr := protect(nil, func() { err = f() }); perr != nil {
		err = perr
	}
	if err != nil {
		return &hookError{Stage: stage, Index: i, Err: err}
	}
	return nil
}

// hookFailed reports a hook's failure.
func (r *run) hookFailed(err *hookError) { r.emit(hookFailedEvent(r.l.turn, err)) }

func (r *run) runStartHooks() {
	for i, h := range r.p.hooks {
		if h.OnRunStart == nil {
			continue
		}
		ctx := r.ctx
		if err := callHook("OnRunStart", i, func() error {
			if c := h.OnRunStart(ctx, r.info); c != nil {
				ctx = c
			}
			return nil
		}); err != nil {
			r.hookFailed(err)
			continue
		}
		r.ctx = ctx
	}
}

func (r *run) runEndHooks(done Done, runErr error) {
	for i := len(r.p.hooks) - 1; i >= 0; i-- {
		h := r.p.hooks[i]
		if h.OnRunEnd == nil {
			continue
		}
		if err := callHook("OnRunEnd", i, func() error { h.OnRunEnd(r.ctx, r.info, done, runErr); return nil }); err != nil {
			r.hookFailed(err)
		}
	}
}

// turnStartHooks returns the turn's context.
func (r *run) turnStartHooks() context.Context {
	ctx := r.ctx
	for i, h := range r.p.hooks {
		if h.OnTurnStart == nil {
			continue
		}
		if err := callHook("OnTurnStart", i, func() error {
			if c := h.OnTurnStart(ctx, r.info, r.l.turn); c != nil {
				ctx = c
			}
			return nil
		}); err != nil {
			r.hookFailed(err)
		}
	}
	return ctx
}

func (r *run) turnEndHooks(ctx context.Context) {
	for i := len(r.p.hooks) - 1; i >= 0; i-- {
		h := r.p.hooks[i]
		if h.OnTurnEnd == nil {
			continue
		}
		if err := callHook("OnTurnEnd", i, func() error { h.OnTurnEnd(ctx, r.info, r.l.turn); return nil }); err != nil {
			r.hookFailed(err)
		}
	}
}

// beforePlan runs the BeforePlan hooks; an error ends the run, after the
// AfterPlan hooks of those that ran have seen it.
func (r *run) beforePlan(ctx context.Context, req *ModelRequest) (context.Context, error) {
	for i, h := range r.p.hooks {
		if h.BeforePlan == nil {
			continue
		}
		system, tools, msgs := req.System, req.Tools, req.Messages
		err := callHook("BeforePlan", i, func() error {
			c, err := h.BeforePlan(ctx, req)
			if c != nil {
				ctx = c
			}
			return err
		})
		r.tr.fp.changedBy(i, req.System != system, !sameSlice(req.Tools, tools), !sameSlice(req.Messages, msgs))
		if err != nil {
			r.afterPlanN(ctx, req, nil, err, i)
			return ctx, err
		}
	}
	return ctx, nil
}

func (r *run) afterPlan(ctx context.Context, req *ModelRequest, resp *ModelResponse, planErr error) {
	r.afterPlanN(ctx, req, resp, planErr, len(r.p.hooks))
}

// afterPlanN runs the AfterPlan hooks of the first n Hooks, last first.
func (r *run) afterPlanN(ctx context.Context, req *ModelRequest, resp *ModelResponse, planErr error, n int) {
	for i := n - 1; i >= 0; i-- {
		h := r.p.hooks[i]
		if h.AfterPlan == nil {
			continue
		}
		if err := callHook("AfterPlan", i, func() error { h.AfterPlan(ctx, req, resp, planErr); return nil }); err != nil {
			r.hookFailed(err)
		}
	}
}

// beforeTool runs the BeforeTool hooks for an allowed call. It returns the
// context for the tool, or the reason the call is blocked.
func (r *run) beforeTool(ctx context.Context, inv *ToolCall) (context.Context, string, *hookError) {
	for i, h := range r.p.hooks {
		if h.BeforeTool == nil {
			continue
		}
		if err := callHook("BeforeTool", i, func() error {
			c, err := h.BeforeTool(ctx, inv)
			if c != nil {
				ctx = c
			}
			return err
		}); err != nil {
			// A returned error is the hook's way to block the call; a panic
			// or Goexit is a failure of the hook, reported as such.
			var pe *PanicError
			reason, herr := err.Err.Error(), (*hookError)(nil)
			if errors.As(err.Err, &pe) {
				reason, herr = fmt.Sprintf("blocked: a hook failed: %v", err.Err), err
			}
			// The hooks that saw the call start see it end.
			res := ToolResult{Turn: inv.Turn, Tool: inv.Tool.Name, Message: NewToolMessage(inv.ToolUseID, reason, true),
				Err: &ToolError{Tool: inv.Tool.Name, ToolUseID: inv.ToolUseID, Err: &blockedError{Reason: reason}}}
			for _, e := range r.afterToolN(ctx, inv, &res, i) {
				r.hookFailed(e)
			}
			return ctx, reason, herr
		}
	}
	return ctx, "", nil
}

// afterTool runs the AfterTool hooks; failures are returned to be reported
// by the run's goroutine.
func (r *run) afterTool(ctx context.Context, inv *ToolCall, res *ToolResult) []*hookError {
	return r.afterToolN(ctx, inv, res, len(r.p.hooks))
}

// afterToolN runs the AfterTool hooks of the first n Hooks, last first.
func (r *run) afterToolN(ctx context.Context, inv *ToolCall, res *ToolResult, n int) []*hookError {
	var errs []*hookError
	for i := n - 1; i >= 0; i-- {
		h := r.p.hooks[i]
		if h.AfterTool == nil {
			continue
		}
		if err := callHook("AfterTool", i, func() error { h.AfterTool(ctx, inv, res); return nil }); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
