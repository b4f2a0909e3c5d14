package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentrt/agentrt/internal/durable"
)

// The root package's API stays what users call: the durable runtime of
// this repository (package temporal) reaches durableLoop through package
// internal/durable, whose New is set here.
func init() {
	durable.OutputSchema, durable.ParseOutput = outputSchema, parseOutput
	durable.New = func(agent any, sessionID string, permission any) (any, error) {
		var pc PermissionChecker
		if permission != nil {
			pc = permission.(PermissionChecker)
		}
		d, err := newDurableLoop(agent.(*Agent), sessionID, pc)
		if err != nil {
			return nil, err // not d: a nil *durableLoop in an any is not nil
		}
		return d, nil
	}
}

// durableLoop is the turn logic of one run for a runtime that performs
// every step itself and records it, so that it can replay the run after a
// crash: a durable runtime on a workflow engine (the temporal package is
// one, through internal/durable). It is the loop [Agent.Run] drives, with
// the same decisions: unique tool_use ids, what cannot run, the output
// cap, the loop guard, the budget, max turns and the final answer, and the
// repair of a resumed session, and the check of a typed final answer
// (ExpectOutput).
//
// It has two sides. The loop side (Begin, Request, Accept, Batch, Runs,
// Settle, Next, Stop) is deterministic: no clock, no goroutine, no I/O and
// no user callback, so a workflow may call it and get the same answers on
// replay. The step side (Plan, Decide, Execute) runs the user's callbacks
// exactly as Run does, with panics contained (and a runtime.Goexit too:
// each step runs on a goroutine of its own); call it
// where side effects belong (a workflow engine's activities), with a
// durableLoop made for that step.
//
// A run goes: Begin; then per turn Request, Plan (on the step side),
// Accept, and for each group of calls (Batch) Decide and Execute the calls
// that Runs, Settle each in order; then Next, until it returns Done. Stop
// ends a run early (cancellation, a failed planner call). Store the
// messages Begin, Accept, Settle and Stop return, in that order: they are
// the session.
//
// The loop side is not safe for concurrent use. The step side is: each
// step keeps its own state, so several may run at once (the tools of a
// parallel group).
type durableLoop struct {
	p          *prepared // the Agent's, without its Store: the runtime stores
	permission PermissionChecker
	l          loop
	last       Message // the current turn's assistant message
	calls      []ToolCall
}

// newDurableLoop returns the loop of one run of a on sessionID. permission,
// when non-nil, replaces Agent.Permission in Decide and for the sub-agents
// an AgentTool runs in Execute. It fails like Run for an invalid Agent.
func newDurableLoop(a *Agent, sessionID string, permission PermissionChecker) (*durableLoop, error) {
	p := a.prepare()
	if p.err != nil {
		return nil, p.err
	}
	own := *p
	own.store, own.records, own.syncer = nil, nil, nil
	d := &durableLoop{p: &own, permission: p.permission}
	if permission != nil {
		d.permission = permission
	}
	d.l.init(&own, sessionID, nil)
	return d, nil
}

// Begin starts the run on the stored session history: it returns the
// messages to store before the first turn ("interrupted" results for
// tool_uses a crash left unanswered, then input as a user message unless
// it is empty). It fails with [ErrEmptyInput] when both are empty.
func (d *durableLoop) Begin(history []Message, input string) ([]Message, error) {
	repairs, user, hasUser, err := d.l.begin(slices.Clone(history), input)
	if err != nil {
		return nil, err
	}
	if hasUser {
		repairs = append(repairs, user)
	}
	for _, m := range repairs {
		d.l.add(m)
	}
	d.l.turn = 1
	return repairs, nil
}

// Request returns the next planner call's request: the whole session (the
// Compressor runs in Plan), the tools, and, for the final answer after a
// limit, no tools and the instruction to answer now. Its Messages must not
// be modified.
func (d *durableLoop) Request() *ModelRequest {
	n := len(d.l.history)
	return d.l.request(d.l.history[:n:n])
}

// Accept takes the planner's response and returns the assistant message to
// store (every tool_use with an id unique in the session and a valid JSON
// input) and the turn's calls, in order, as the ToolCall events Run
// yields. The slice is valid until the next Accept.
func (d *durableLoop) Accept(resp *ModelResponse) (Message, []ToolCall) {
	msg := d.l.accept(resp)
	d.l.add(msg)
	d.last = msg
	d.calls = d.calls[:0]
	for i := range d.l.calls {
		d.calls = append(d.calls, d.l.callEvent(&d.l.calls[i]))
	}
	return msg, d.calls
}

// Batch returns the end of the group of calls that starts at call i: i+1
// for a call that runs alone, or the end of a run of read-only calls that
// may run together (at most Agent.MaxParallelTools at once).
func (d *durableLoop) Batch(i int) int { return d.l.batch(i) }

// Runs reports whether call i is to be decided and executed. A call that
// does not run (a malformed, duplicate or unknown call, or a call of the
// final answer) is settled with the loop's own result.
func (d *durableLoop) Runs(i int) bool { return d.l.calls[i].note == "" }

// Settle gives call i its result (from Decide or Execute; ignored for a
// call that Runs reports false for) and returns its ToolResult event, whose
// Message is the result to store: the output cut to Agent.MaxToolOutput
// and the loop guard's note added. ran says whether the tool's Execute
// returned. Settle the calls of a turn in order.
func (d *durableLoop) Settle(i int, out ToolResult, ran bool) ToolResult {
	c := &d.l.calls[i]
	if c.note != "" {
		c.decide(c.note, nil)
	} else {
		c.result = NewToolMessage(c.use.ID, out.Message.Content, out.Message.IsError)
		c.result.Blocks = out.Message.Blocks
		c.err, c.dur, c.ran = out.Err, out.Duration, ran
		if _, ok := c.err.(*ToolError); c.err != nil && !ok {
			c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: c.err}
		}
	}
	d.l.settle(c)
	d.l.add(c.result)
	return ToolResult{Turn: d.l.turn, Tool: c.use.Name, Message: c.result, Err: c.err, Duration: c.dur, FullOutput: c.full}
}

// Next decides what follows the turn once its calls are settled: with a
// nil done the run goes on with the next Request, after storing msgs (the
// correction sent back for a final answer that does not match the output
// expected, see ExpectOutput); otherwise the run is over, done is its Done
// event and err its error, if any.
func (d *durableLoop) Next() (msgs []Message, done *Done, err error) {
	o := d.l.next(d.last)
	if o.retry != "" {
		m := NewUserMessage(o.retry)
		d.l.add(m)
		return []Message{m}, nil, nil
	}
	if !o.stop {
		return nil, nil, nil
	}
	dn := d.l.done(o)
	return nil, &dn, o.err
}

// ExpectOutput makes the run's final answer a JSON value that matches
// schema, as [RunTyped] does in-process (outputSchema gives a Go type's):
// the schema goes with every planner request, and an answer that does not
// match is sent back with what was wrong (see Next), up to maxRetries times
// (0 means 2, negative none); then the run ends with an [*OutputError].
// parseOutput decodes the final answer. The check is deterministic. Call
// it before Begin.
func (d *durableLoop) ExpectOutput(schema json.RawMessage, maxRetries int) error {
	spec, err := schemaOutputSpec(schema)
	if err != nil {
		return err
	}
	spec.maxRetries = maxRetries
	d.l.output = spec
	return nil
}

// Stop ends the run early, for reason and from layer, with err (nil for a
// time budget that ran out: StopBudgetExceeded). It returns the results
// to store for the tool_uses not yet answered, in order, and the Done event.
func (d *durableLoop) Stop(reason StopReason, layer Layer, err error) ([]Message, Done) {
	o := outcome{stop: true, reason: reason, layer: layer, err: err}
	if reason == StopBudgetExceeded && err == nil {
		o = d.l.timeBudget()
	}
	msgs := unanswered(d.l.history, d.l.stoppedResult)
	for _, m := range msgs {
		d.l.add(m)
	}
	return msgs, d.l.done(o)
}

// planOutcome is the outcome of one planner attempt made by
// [durableLoop.Plan]: internal/durable's PlanOutcome, generic there because
// that package cannot import this one.
type planOutcome = durable.PlanOutcome[*ModelResponse, *Compaction, Layer]

// Plan makes one planner attempt (attempt counts from 1) of req, a
// Request, as Run does: the Compressor's view of req.Messages given the
// previous compaction prev (force after a context-length error; its State
// is always nil), the BeforePlan hooks, the planner and the AfterPlan
// hooks. A panic or Goexit in any of them becomes an Err wrapping
// *PanicError. Events (HookFailed, and TextDelta as the text streams in) go
// to emit, if non-nil. The delay of a retry has jitter: Plan is not
// deterministic.
func (d *durableLoop) Plan(ctx context.Context, req *ModelRequest, prev *Compaction, force bool, attempt int, emit func(Event)) planOutcome {
	r := d.runner(ctx, req.Turn, emit)
	r.compact = prev
	var view []Message
	var err error
	if perr := contain(func() { view, err = r.compress(req.Messages, force) }); perr != nil {
		err = wrapf(perr, "compress")
	}
	if err != nil {
		return planOutcome{Err: err, Layer: LayerPlanner}
	}
	var out planOutcome
	if r.compact != prev {
		out.Compaction = r.compact
	}
	q := *req
	q.Messages = view
	if q.OnText == nil && emit != nil {
		q.OnText = func(delta string) { r.emit(TextDelta{Turn: req.Turn, Text: delta}) }
	}
	var resp *ModelResponse
	var layer Layer
	var planErr, fatal error
	if perr := contain(func() { resp, layer, planErr, fatal, _ = r.planAttempt(&q, q.Messages) }); perr != nil {
		// A Goexit: a panic was recovered where it happened.
		switch r.planStage {
		case "Plan":
			resp, planErr = nil, perr
		case "AfterPlan":
			r.emit(hookFailedEvent(req.Turn, &hookError{Stage: r.planStage, Index: -1, Err: perr}))
		default:
			fatal, layer = fmt.Errorf("agentrt: a BeforePlan hook refused the planner call (turn %d): %w", req.Turn, &hookError{Stage: r.planStage, Index: -1, Err: perr}), LayerHook
		}
	}
	switch {
	case fatal != nil:
		out.Err, out.Layer = fatal, layer
	case planErr != nil:
		out.Compact, out.Retry = planRetry(d.p.retry, attempt, force, planErr)
		if out.Retry {
			out.Delay, _ = d.p.retry.delay(attempt, planErr)
		}
		out.Err, out.Layer = wrapf(planErr, "planner (turn %d)", req.Turn), layerOf(planErr)
	default:
		out.Response = resp
	}
	return out
}

// Decide decides whether a call may run, as Run does: the tool's Decode,
// then the permission checker. It returns the input to pass to Execute
// (the model's, or the checker's replacement as JSON), or, when the call
// may not run, its result (is_error). A panic or Goexit in Decode or the
// checker denies the call. Events (PermissionDecision) go to emit, if
// non-nil. The BeforeTool hooks run in Execute, with the tool.
//
// A call the checker leaves to a person ([Decision.Pending]) is returned with the
// model's input and a PermissionDecision event whose Decision.Pending is
// set: the runtime must then ask the person (the temporal package waits
// for a person's [Decision]) and run the call only if they allow it. With a nil
// emit such a call is denied, since the runtime could not know.
func (d *durableLoop) Decide(ctx context.Context, turn int, use Block, emit func(Event)) (input json.RawMessage, denied *ToolResult) {
	c, out := d.lookup(turn, use)
	if out != nil {
		return nil, out
	}
	r := d.runner(ctx, turn, emit)
	allowed := false
	if perr := contain(func() { allowed = r.check(c) }); perr != nil {
		r.contained(c, perr)
	}
	if !allowed {
		return nil, outcomeOf(turn, c)
	}
	input = use.Input
	if c.rewrite != nil {
		if raw, ok := rawJSON(c.rewrite); ok {
			input = raw
		} else if input, ok = marshal(c.rewrite); !ok {
			c.decide(fmt.Sprintf("permission denied: the permission checker's input for tool %q could not be encoded as JSON", use.Name), nil)
			return nil, outcomeOf(turn, c)
		}
	}
	return input, nil
}

// Personal returns a person's decision dec on a call of tool as Resume
// applies it: Source "user" by default, a denial without Input and with a
// standard reason.
func (d *durableLoop) Personal(tool string, dec Decision) Decision { return personal(dec, tool) }

// Denial returns what the model sees of a person's denial d of a call of
// tool, as Resume gives it: who refused, then the reason given.
func (d *durableLoop) Denial(tool string, dec Decision) string {
	return denialText(tool, personal(dec, tool))
}

// Recheck decides again a call a person allowed with an edited input
// (dec.Input), as Resume does: the edit is decoded and validated, and the
// permission checker may refuse it ([ToolCall.EditedBy]). It returns the
// input to run with, or the call's result when it may not run, and emits
// the decision (PermissionDecision).
func (d *durableLoop) Recheck(ctx context.Context, turn int, use Block, dec Decision, emit func(Event)) (input json.RawMessage, denied *ToolResult) {
	c, out := d.lookup(turn, use)
	if out != nil {
		return nil, out
	}
	r := d.runner(ctx, turn, emit)
	dec = personal(dec, use.Name)
	final := dec
	perr := contain(func() { final, _ = r.decideHeld(c, dec) })
	if perr != nil {
		final = Decision{Reason: fmt.Sprintf("permission denied: the permission check of the edited input of tool %q panicked", use.Name), Source: "error"}
	}
	r.emit(PermissionDecision{Turn: turn, ToolUseID: use.ID, Tool: use.Name, Decision: final})
	if !final.Allow {
		c.decide(denialText(use.Name, final), nil)
		return nil, outcomeOf(turn, c)
	}
	return encodeInput(final.Input), nil
}

// Execute runs a call that Decide allowed, with input, as Run does: the
// BeforeTool hooks (which may block it), the tool with its timeout, and the
// AfterTool hooks. Every failure (an error, a panic or Goexit, a timeout, a
// block) is its is_error result; ran says whether the tool's Execute
// returned. Events (HookFailed, PermissionDecision for a block,
// SubAgentEvent) go to emit, if non-nil. An AgentTool's child session is
// named after this run's session and the call's id.
func (d *durableLoop) Execute(ctx context.Context, turn int, use Block, input json.RawMessage, emit func(Event)) (out ToolResult, ran bool) {
	c, denied := d.lookup(turn, use)
	if denied != nil {
		return *denied, false
	}
	r := d.runner(ctx, turn, emit)
	perr := contain(func() {
		in, err := r.decode(c, input)
		if err != nil {
			c.decide(fmt.Sprintf("tool %q: %v", use.Name, err), err)
			return
		}
		c.input = in
		if len(r.p.hooks) > 0 && !r.beforeToolHooks(c) {
			return
		}
		r.execute(c)
	})
	if perr != nil {
		r.contained(c, perr)
	}
	r.afterGoexit(c)
	for _, herr := range c.herrs {
		r.emit(hookFailedEvent(turn, herr))
	}
	return *outcomeOf(turn, c), c.ran
}

// lookup returns the call of use, or the result of a call of a tool the
// Agent does not have.
func (d *durableLoop) lookup(turn int, use Block) (*call, *ToolResult) {
	c := &call{use: use}
	e, ok := d.p.tools[use.Name]
	if !ok {
		c.decide(d.p.unknownTool(use.Name), nil)
		return nil, outcomeOf(turn, c)
	}
	c.entry = e
	return c, nil
}

// runner returns an in-process run that performs one step of a durable
// run: its callbacks run on a goroutine of the step's own (contain), its events go to emit, and it has
// no store.
func (d *durableLoop) runner(ctx context.Context, turn int, emit func(Event)) *run {
	r := &run{
		p:          d.p,
		permission: d.permission,
		ctx:        ctx,
		cancel:     func(error) {},
		turnCtx:    ctx,
		sessionID:  d.l.sessionID,
		yield: func(ev Event, _ error) bool {
			if ev != nil && emit != nil {
				emit(ev)
			}
			return true
		},
		sctx: context.WithoutCancel(ctx),
	}
	r.l.init(d.p, d.l.sessionID, nil)
	r.l.turn = turn
	r.appr.loaded = true     // the durable runtime keeps remembered decisions
	r.appr.ask = emit != nil // it sees a Pending decision and asks the person
	return r
}

// outcomeOf returns c's result, before Settle cuts it to size.
func outcomeOf(turn int, c *call) *ToolResult {
	return &ToolResult{Turn: turn, Tool: c.use.Name, Message: c.result, Err: c.err, Duration: c.dur}
}

func marshal(v any) (json.RawMessage, bool) {
	b, err := json.Marshal(v)
	return b, err == nil
}
