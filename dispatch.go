package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/textcut"
)

// Dispatch: each tool_use of a turn is announced (ToolCall), decided
// (lookup, decode, permission, BeforeTool hooks), executed (with its
// timeout; AfterTool hooks), settled by the loop (output cap, loop guard)
// and its result appended and yielded, in tool_use order. A write tool
// runs alone; consecutive read-only tools run together, at most
// MaxParallelTools at once, and each result is appended as soon as it and
// every call before it are done.

// stage is the callback a call is in, so that a panic or Goexit is
// reported as what it is.
type stage uint8

const (
	stageDecode stage = iota
	stageCheck
	stageBeforeTool
	stageExecute
	stageAfterTool
)

// defaultMaxToolOutput is the cap on a tool result's size, in bytes, when
// Agent.MaxToolOutput is 0.
const defaultMaxToolOutput = 64 << 10

// runTools handles every call of the turn. It returns false when the run
// has stopped.
func (r *run) runTools() bool {
	calls := r.l.calls
	for i := 0; i < len(calls); {
		if r.stopped || r.ctx.Err() != nil {
			return r.stopCancelled() // stop answers the calls left
		}
		j := r.l.batch(i)
		if j == i+1 {
			// A call that runs alone: decided and executed here.
			c := &calls[i]
			r.emit(r.l.callEvent(c))
			if c.note == "" && r.decide(c) {
				r.execute(c)
			}
			if r.appr.deferring {
				return r.holdRest(calls)
			}
			if err := r.settle(c); err != nil {
				return r.stop(StopError, LayerStore, "", err)
			}
			i = j
			continue
		}
		if !r.runParallel(calls[i:j]) {
			return false
		}
		if r.appr.deferring {
			return r.holdRest(calls)
		}
		i = j
	}
	if err := r.sync(); err != nil {
		return r.stop(StopError, LayerStore, "", err)
	}
	return true
}

// contained gives c the result of a panic or Goexit that ended the
// goroutine the runtime started for it (a parallel group's, a durable
// step's), in the stage it was in.
func (r *run) contained(c *call, perr *PanicError) {
	name := c.use.Name
	switch c.stage {
	case stageDecode:
		c.decide(fmt.Sprintf("tool %q: %v", name, decoderPanic{perr}), perr)
	case stageCheck:
		r.checkerPanicked(c, perr)
	case stageBeforeTool:
		c.decide(fmt.Sprintf("blocked: a hook failed: %v", perr), perr)
		r.emit(hookFailedEvent(r.l.turn, &hookError{Stage: "BeforeTool", Index: -1, Err: perr}))
	case stageExecute:
		c.panicked(perr)
		c.ran = true
		c.needAfter = c.inv != nil
	case stageAfterTool:
		// The result stands; the hook's failure is reported.
		c.herrs = append(c.herrs, &hookError{Stage: "AfterTool", Index: -1, Err: perr})
	}
}

// runParallel decides a group of read-only calls in order, runs the
// allowed ones together and appends each result once it and every call
// before it are done.
func (r *run) runParallel(group []call) bool {
	group = r.decideGroup(group)
	done, running := r.startGroup(group)
	if err := r.settleGroup(group, done, running); err != nil {
		// Every tool of the group has returned: stop answers those left.
		return r.stop(StopError, LayerStore, "", err)
	}
	return true
}

// decideGroup announces each call of the group and decides, in order,
// whether it runs; a call that does not is marked skip. It returns the
// calls before the first one left to a person (all of them, usually).
func (r *run) decideGroup(group []call) []call {
	for k := range group {
		c := &group[k]
		r.emit(r.l.callEvent(c))
		if !r.stopped && r.ctx.Err() == nil {
			c.skip = c.note != "" || !r.decide(c)
		} else {
			c.decide(notRunText(c.use), r.ctx.Err())
			c.skip = true
		}
		if c.pending {
			return group[:k]
		}
	}
	return group
}

// startGroup runs the calls of the group that were not skipped, at most
// maxPar at a time, each in a goroutine of its own. The channel it
// returns carries their events, then for every call of the group one
// message that it is done.
func (r *run) startGroup(group []call) (done chan groupMsg, running int) {
	done = make(chan groupMsg, len(group))
	sem := make(chan struct{}, r.p.maxPar)
	for k := range group {
		c := &group[k]
		if c.skip { // decided without running: settled without waiting
			continue
		}
		running++
		c.group = done
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			guard(func() { r.execute(c) }, func(perr *PanicError) {
				if perr != nil {
					r.contained(c, perr)
				}
				done <- groupMsg{k: k, done: true}
			})
		}()
	}
	return done, running
}

// settleGroup emits the events of the group's calls as they come and,
// once a call and every call before it are done, settles it. It returns
// the first error of settle, after every call is done.
func (r *run) settleGroup(group []call, done chan groupMsg, running int) error {
	finished := make([]bool, len(group))
	for k := range group {
		finished[k] = group[k].skip
	}
	next := 0
	var err error
	settleReady := func() {
		for err == nil && next < len(group) && finished[next] {
			err = r.settle(&group[next])
			next++
		}
	}
	settleReady()
	// r.group and r.groupLeft let abandon wait for the calls still
	// running if the consumer's loop body panics in r.emit.
	r.group, r.groupLeft = done, running
	for r.groupLeft > 0 {
		m := <-done
		for !m.done {
			r.emit(m.ev)
			m = <-done
		}
		r.groupLeft--
		r.afterGoexit(&group[m.k])
		finished[m.k] = true
		settleReady()
	}
	r.group = nil
	// After a store failure the calls left are answered by stop; their
	// hooks' failures are still reported.
	for ; err != nil && next < len(group); next++ {
		for _, herr := range group[next].herrs {
			r.emit(hookFailedEvent(r.l.turn, herr))
		}
	}
	return err
}

// groupMsg is an event from a tool of a parallel group, or the end of
// its k-th call.
type groupMsg struct {
	k    int
	ev   Event
	done bool
}

// decide looks the call's input over and asks whether it may run: check,
// then the BeforeTool hooks. A call that may not gets its (error) result;
// decide reports whether it may run.
func (r *run) decide(c *call) bool {
	return r.check(c) && (len(r.p.hooks) == 0 || r.beforeToolHooks(c))
}

// check decodes the call's input and asks the permission checker whether
// it may run; c.input is then the input the tool gets, and c.rewrite the
// checker's replacement, if any.
func (r *run) check(c *call) bool {
	if c.held != nil || c.pending {
		return r.checkHeld(c)
	}
	in, err := r.decode(c, c.use.Input)
	if err != nil {
		c.decide(fmt.Sprintf("tool %q: %v", c.use.Name, err), err)
		return false
	}
	d, in, perr := r.askPermission(c, in)
	if perr != nil {
		r.checkerPanicked(c, perr)
		return false
	}
	if d.Pending {
		return r.deferCall(c, d, in)
	}
	r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
	if !r.audit(c, d) {
		return false
	}
	r.remember(c, d)
	if !d.Allow {
		c.decide(denialText(c.use.Name, d), nil)
		return false
	}
	c.input, c.rewrite = in, d.Input
	return true
}

// decode decodes raw as the input of c's tool. A panic of the decoder
// comes back as an error saying so.
func (r *run) decode(c *call, raw json.RawMessage) (in any, err error) {
	c.stage = stageDecode
	if perr := protect(nil, func() { in, err = c.entry.tool.Decode(raw) }); perr != nil {
		return nil, decoderPanic{perr}
	}
	return in, err
}

// decoderPanic is the error of a decoder that panicked.
type decoderPanic struct{ p *PanicError }

func (e decoderPanic) Error() string {
	return fmt.Sprintf("the input could not be decoded: the decoder panicked: %v", e.p.Value)
}
func (e decoderPanic) Unwrap() error { return e.p }

// askPermission asks the permission checker about the call with its
// decoded input in; it returns the decision and the input the tool would
// get (the checker's rewrite, decoded, if it made one), or the checker's
// panic.
func (r *run) askPermission(c *call, in any) (Decision, any, *PanicError) {
	c.stage = stageCheck
	req := &ToolCall{
		SessionID: r.sessionID,
		ToolUseID: c.use.ID,
		Tool:      c.entry.spec,
		Input:     in,
		RawInput:  c.use.Input,
	}
	var perr *PanicError
	d := r.askRemembered(c, req, func() (d Decision) {
		var err error
		if perr = protect(nil, func() { d, err = r.permission.Check(r.ctx, req) }); perr != nil {
			return Decision{}
		}
		if err != nil {
			d = Decision{Reason: fmt.Sprintf("permission denied: the permission check of tool %q failed: %v", c.use.Name, err), Source: "error"}
		}
		return d
	})
	if perr != nil {
		return Decision{}, nil, perr
	}
	if d.Allow && d.Input != nil {
		if raw, ok := rawJSON(d.Input); ok {
			var err error
			if in, err = r.decode(c, raw); err != nil {
				d = Decision{Reason: fmt.Sprintf("the permission checker rewrote the input, and the new input is invalid: %v", err), Source: d.Source}
			}
		} else {
			in = d.Input
		}
	}
	return d, in, nil
}

// denialText is what the model sees of the denial d of a call of tool: a
// text that says who refused the call, then the reason given, so that the
// model tells a refusal from a tool's error. A reason that is already such
// a text is kept.
func denialText(tool string, d Decision) string {
	if strings.HasPrefix(d.Reason, "permission denied") {
		return d.Reason
	}
	s := fmt.Sprintf("permission denied: %s refused this call of %q", refuser(d.Source), tool)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	return s
}

// refuser names, for the model, who made a denial of source.
func refuser(source string) string {
	switch source {
	case "", "policy":
		return "the permission policy"
	case "user":
		return "the user"
	case "remembered":
		return "the user, in an earlier answer,"
	case "hook":
		return "a BeforeTool hook"
	}
	return fmt.Sprintf("%q", source)
}

// checkerPanicked denies c because the permission checker panicked.
func (r *run) checkerPanicked(c *call, perr *PanicError) {
	c.decide(fmt.Sprintf("permission denied: the permission check of tool %q panicked", c.use.Name), perr)
	r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: Decision{Reason: "the permission checker panicked", Source: "error"}})
}

// audit records the permission decision d about the call in the audit
// trail: every decision but the plain allowing of a read-only tool by
// policy. If the record cannot be written, the call is denied and audit
// returns false.
func (r *run) audit(c *call, d Decision) bool {
	if d.Allow && c.entry.spec.ReadOnly && d.Input == nil && d.Source == "policy" {
		return true
	}
	rec := permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Allow: d.Allow, Reason: d.Reason, Source: d.Source,
		Always: d.Always, AnyTool: d.AnyTool, Pattern: d.Pattern}
	if raw, ok := rawJSON(d.Input); ok {
		rec.Input = raw
	} else if d.Input != nil {
		rec.Input, _ = json.Marshal(d.Input)
	}
	if err := r.record(RecordPermission, rec); err != nil {
		// The audit trail could not be written: do not run the tool.
		c.decide("permission denied: the decision could not be recorded", err)
		return false
	}
	return true
}

// beforeToolHooks runs the BeforeTool hooks of an allowed call, which may
// block it or replace c.input; it reports whether the call may run.
func (r *run) beforeToolHooks(c *call) bool {
	e := c.entry
	c.stage = stageBeforeTool
	inv := &ToolCall{SessionID: r.sessionID, Turn: r.l.turn, ToolUseID: c.use.ID, Tool: e.spec, Input: c.input, RawInput: c.use.Input}
	ctx, reason, herr := r.beforeTool(r.turnCtx, inv)
	if herr != nil {
		r.emit(hookFailedEvent(r.l.turn, herr))
	}
	if reason != "" {
		d := Decision{Reason: reason, Source: "hook"}
		r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
		if err := r.record(RecordPermission, permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Reason: reason, Source: "hook"}); err != nil {
			reason = "permission denied: the decision could not be recorded"
		}
		c.decide(reason, &blockedError{Reason: reason})
		return false
	}
	c.input = inv.Input
	c.ctx, c.inv = ctx, inv
	return true
}

// rawJSON reports whether a rewritten input is raw JSON (json.RawMessage
// or []byte) rather than a decoded value.
func rawJSON(v any) ([]byte, bool) {
	switch v := v.(type) {
	case json.RawMessage:
		return v, true
	case []byte:
		return v, true
	}
	return nil, false
}

// execute runs one allowed call with its timeout, turning an error, a
// panic, a timeout or a cancellation into an is_error result, then runs
// the AfterTool hooks. It runs on the run's goroutine, or on a goroutine
// of its own in a parallel group.
func (r *run) execute(c *call) {
	x, ok := r.executeStart(c)
	if !ok {
		return
	}
	left := &r.left // the run's goroutine may yield from inside Execute
	if c.group != nil {
		left = nil
	}
	var out string
	var parts []Block
	var err error
	perr := protect(left, func() { out, parts, err = executeTool(x.ctx, c.entry.tool, c.input) })
	r.executeEnd(c, &x, out, parts, perr, err)
}

// execution is a call's Execute in progress: its context and timeout.
type execution struct {
	ctx     context.Context
	cancel  context.CancelFunc // of the timeout; nil without one
	timeout time.Duration
}

// executeStart prepares c's Execute: its context, with the timeout, and
// its start time. It returns false when the run is cancelled; c then has
// its "not run" result.
func (r *run) executeStart(c *call) (x execution, ok bool) {
	if err := r.ctx.Err(); err != nil {
		c.decide(notRunText(c.use), err)
		return x, false
	}
	x.ctx = r.turnCtx
	if c.ctx != nil {
		x.ctx = c.ctx
	}
	x.timeout = c.entry.spec.Timeout
	if x.timeout == 0 {
		x.timeout = r.p.toolTimeout
	}
	if x.timeout > 0 {
		x.ctx, x.cancel = context.WithTimeout(x.ctx, x.timeout)
	}
	if _, ok := c.entry.tool.(*agentTool); ok {
		x.ctx = context.WithValue(x.ctx, toolCallKey{}, &toolCallCtx{r: r, c: c})
	}
	c.stage = stageExecute
	c.start = r.now()
	if c.inv != nil {
		c.inv.Start = c.start
	}
	return x, true
}

// executeEnd makes what c's Execute returned (or its panic) c's result,
// then runs the AfterTool hooks.
func (r *run) executeEnd(c *call, x *execution, out string, parts []Block, perr *PanicError, err error) {
	c.dur = time.Since(c.start)
	if x.cancel != nil {
		defer x.cancel()
	}
	c.ran = true
	switch {
	case perr != nil:
		c.panicked(perr)
	case r.ctx.Err() != nil && err != nil:
		c.result = NewToolMessage(c.use.ID, fmt.Sprintf("cancelled: the run was stopped while tool %q was running; it may or may not have taken effect", c.use.Name), true)
		c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
	case x.timeout > 0 && x.ctx.Err() == context.DeadlineExceeded && r.ctx.Err() == nil:
		// Past its timeout: whatever the tool returned late is discarded.
		if err == nil {
			err = context.DeadlineExceeded
		}
		c.result = NewToolMessage(c.use.ID, fmt.Sprintf("tool %q timed out after %v", c.use.Name, x.timeout), true)
		c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: fmt.Errorf("timed out after %v: %w", x.timeout, err)}
	case err != nil:
		c.result = NewToolMessage(c.use.ID, fmt.Sprintf("tool %q: %v", c.use.Name, err), true)
		c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
	default:
		c.result = NewToolMessage(c.use.ID, out, false)
		c.result.Blocks = parts
	}
	if c.inv != nil {
		r.afterToolHooks(x.ctx, c)
	}
}

// afterToolHooks lets the AfterTool hooks see and change c's result.
func (r *run) afterToolHooks(ctx context.Context, c *call) {
	c.stage = stageAfterTool
	res := ToolResult{Turn: c.inv.Turn, Tool: c.use.Name, Message: c.result, Err: c.err, Duration: c.dur}
	c.herrs = append(c.herrs, r.afterTool(ctx, c.inv, &res)...)
	c.result.Content, c.result.IsError, c.result.Blocks = res.Message.Content, res.Message.IsError, res.Message.Blocks
}

// afterGoexit runs the AfterTool hooks of a call whose tool ended the
// goroutine the runtime started for it with runtime.Goexit. They run on a
// goroutine of their own too (contain): the calls of its group that are
// done are not settled yet, and a Goexit here must not leave them
// unanswered.
func (r *run) afterGoexit(c *call) {
	if !c.needAfter {
		return
	}
	c.needAfter = false
	ctx := r.turnCtx
	if c.ctx != nil {
		ctx = c.ctx
	}
	if perr := contain(func() { r.afterToolHooks(ctx, c) }); perr != nil {
		c.herrs = append(c.herrs, &hookError{Stage: "AfterTool", Index: -1, Err: perr})
	}
}

// settle gives c its final result, appends it and emits it.
func (r *run) settle(c *call) error {
	if c.note != "" {
		c.decide(c.note, nil)
	}
	for _, herr := range c.herrs {
		r.emit(hookFailedEvent(r.l.turn, herr))
	}
	r.l.settle(c)
	if err := r.appendResult(c); err != nil {
		return err
	}
	r.emit(ToolResult{Turn: r.l.turn, Tool: c.use.Name, Message: c.result, Err: c.err, Duration: c.dur, FullOutput: c.full})
	r.traceToolCall(c)
	return nil
}

// truncateOutput cuts a tool's output to at most max bytes (without
// splitting a rune) and appends a note saying how much was cut; ok reports
// whether it cut. A negative max means no limit.
func truncateOutput(content string, max int) (_ string, ok bool) {
	if max < 0 || len(content) <= max {
		return content, false
	}
	cut := textcut.Prefix(content, max)
	return cut + fmt.Sprintf("\n[agentrt: output truncated: showing the first %d of %d bytes]", len(cut), len(content)), true
}
