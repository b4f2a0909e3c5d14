package agentrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/agentrt/agentrt/internal/textcut"
)

// runOptions are what RunTyped and agent tools change about a run.
type runOptions struct {
	output     *outputSpec       // the final answer must pass this check
	permission PermissionChecker // replaces the Agent's checker
	approvals  []Decision        // Resume's decisions
	resume     bool              // Resume: the session must be pending
	parts      []Block           // the user turn's parts after its text (RunParts)
}

func (a *Agent) run(ctx context.Context, sessionID, input string, opts runOptions) iter.Seq2[Event, error] {
	used := false
	return func(yield func(Event, error) bool) {
		if used {
			yield(nil, ErrRunReused)
			return
		}
		used = true
		p := a.prepare()
		if p.err != nil {
			yield(nil, p.err)
			return
		}
		r := &run{
			p:          p,
			permission: p.permission,
			sessionID:  sessionID,
			yield:      yield,
			sctx:       context.WithoutCancel(ctx),
		}
		r.ctx, r.cancel = context.WithCancelCause(ctx)
		defer r.cancel(nil)
		r.turnCtx = r.ctx
		r.l.init(p, sessionID, opts.output)
		r.l.parts = opts.parts
		if opts.resume {
			r.appr.resume = true
			r.appr.data().approvals = opts.approvals
		}
		if opts.permission != nil {
			r.permission = opts.permission
		}
		r.main(input)
	}
}

// run is the in-process runtime of one Run: it drives the loop, performs
// its effects (planner and tool calls, the store) and yields the events.
type run struct {
	p          *prepared
	l          loop // the turn logic (loop.go)
	permission PermissionChecker
	sessionID  string
	yield      func(Event, error) bool

	ctx     context.Context         // the run's: cancelled when the caller stops ranging
	cancel  context.CancelCauseFunc // of ctx
	turnCtx context.Context         // the current turn's (hooks may extend it)
	sctx    context.Context         // the context of store writes: never cancelled

	info     *RunInfo // for the hooks, when there are any
	stopped  bool     // the consumer broke out of the loop
	left     bool     // the consumer's loop body is running (see protect)
	started  bool     // run-start hooks were called
	turnOpen bool     // turn-start hooks were called, turn-end not yet
	ended    bool     // the run reached stopWith, its one way out
	// What a planner call is in ("BeforePlan", "Plan", "AfterPlan"), for a
	// durable step's Goexit.
	planStage string
	// The parallel group in flight: its channel and the calls not done.
	group     chan groupMsg
	groupLeft int
	compact   *Compaction // the session's last compaction
	compState any         // the Compressor's state from the last turn
	onText    func(string)
	appr      approvalState
	tr        tracer // the run's trace records (trace.go)
}

// main runs the loop. Every stop after the session is loaded goes through
// r.stop, the one way out.
func (r *run) main(input string) {
	store := r.p.store
	if l, ok := store.(Locker); ok {
		unlock, err := l.Lock(r.ctx, r.sessionID)
		if err != nil {
			r.yield(nil, wrapf(err, "lock session %q", r.sessionID))
			return
		}
		defer unlock()
	}
	repairs, user, hasUser, err := r.load(input)
	if err != nil {
		r.yield(nil, err)
		return
	}
	defer func() {
		if !r.ended {
			r.abandon()
		}
	}()
	r.traceStart()
	// The time budget counts from here: locking and loading the session
	// are not the run's work, and a failure there is an early one.
	if d := r.p.budget.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		r.ctx, cancel = context.WithTimeoutCause(r.ctx, d, ErrBudgetExceeded)
		defer cancel()
		r.turnCtx = r.ctx
	}
	for _, m := range repairs {
		if err := r.append(m); err != nil {
			r.stop(StopError, LayerStore, "", err)
			return
		}
	}
	if hasUser {
		if err := r.append(user); err != nil {
			r.stop(StopError, LayerStore, "", err)
			return
		}
	}
	r.onText = func(delta string) { r.traceText(); r.emit(TextDelta{Turn: r.l.turn, Text: delta}) }
	if len(r.p.hooks) > 0 {
		r.info = &RunInfo{Agent: r.p.name, SessionID: r.sessionID, Input: input, Start: r.tr.start, Provider: r.p.provider}
		r.started = true
		r.runStartHooks()
	}
	r.l.turn = 1
	if r.appr.resuming() && !r.resumeTurn() {
		return
	}
	for r.turn() {
	}
}

// load loads the session (and its last compaction) and returns what the
// loop appends before the first turn. An error here is an early failure.
func (r *run) load(input string) (repairs []Message, user Message, hasUser bool, err error) {
	hist, err := r.p.store.Load(r.ctx, r.sessionID)
	if err != nil {
		return nil, Message{}, false, wrapf(err, "load session %q", r.sessionID)
	}
	if len(hist) == 0 && r.appr.resume {
		return nil, Message{}, false, fmt.Errorf("%w: session %q does not exist", ErrNotPending, r.sessionID)
	}
	if len(hist) == 0 {
		r.appr.loaded = true // a new session remembers nothing
	}
	repairs, user, hasUser, err = r.l.begin(hist, input)
	if err != nil {
		return nil, Message{}, false, err
	}
	if repairs != nil || r.appr.resume {
		if repairs, err = r.loadPending(repairs, input); err != nil {
			return nil, Message{}, false, err
		}
	}
	if err := r.loadCompaction(); err != nil {
		return nil, Message{}, false, err
	}
	return repairs, user, hasUser, nil
}

// turn runs one turn: a planner call and the tools it asks for. It
// returns false when the run has stopped.
func (r *run) turn() bool {
	if r.ctx.Err() != nil {
		return r.stopCancelled()
	}
	r.turnCtx = r.ctx
	if len(r.p.hooks) > 0 {
		r.turnCtx = r.turnStartHooks()
		r.turnOpen = true
	}
	if !r.turnBody() {
		return false
	}
	r.endTurn()
	return true
}

// endTurn runs the turn-end hooks of an open turn.
func (r *run) endTurn() {
	if r.turnOpen {
		r.turnOpen = false
		r.turnEndHooks(r.turnCtx)
	}
	r.turnCtx = r.ctx
}

func (r *run) turnBody() bool {
	resp, ok := r.plan()
	if !ok {
		return false
	}
	msg := r.l.accept(resp)
	if err := r.append(msg); err != nil {
		return r.stop(StopError, LayerStore, "", err)
	}
	r.traceModelCall(resp, nil, "")
	if resp.Usage != (Usage{}) {
		if err := r.record(RecordUsage, usageRecord{Turn: r.l.turn, Usage: resp.Usage}); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
	}
	if len(r.l.calls) > 0 {
		// Write-ahead: the calls are durable before any of them runs.
		if err := r.sync(); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
	}
	if !r.emit(AssistantMessage{Turn: r.l.turn, Message: msg, Usage: resp.Usage, Finish: resp.Finish}) {
		return r.stopCancelled()
	}
	if len(r.l.calls) > 0 {
		// After a limit, the final answer's tool_uses get "not run".
		if !r.runTools() {
			return false
		}
		if r.l.limit == nil && r.ctx.Err() != nil {
			return r.stopCancelled()
		}
	}
	o := r.l.next(msg)
	switch {
	case o.stop:
		return r.stopWith(o)
	case o.retry != "":
		// The answer failed the output check: the turn ends with the
		// correction, synced as every turn's end is.
		if err := r.append(NewUserMessage(o.retry)); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
		if err := r.sync(); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
	}
	return true
}

type usageRecord struct {
	Turn  int   `json:"turn"`
	Usage Usage `json:"usage"`
}

// emit yields an event unless the consumer has stopped. While the
// consumer's loop body runs, r.left is set: if it panics or calls
// runtime.Goexit, no protect on the way out takes that for a callback's.
func (r *run) emit(ev Event) bool {
	if r.stopped {
		return false
	}
	r.left = true
	more := r.yield(ev, nil)
	r.left = false
	if !more {
		r.stopped = true
		r.cancel(context.Canceled)
		return false
	}
	return true
}

// stop is the one way out of a run that started: every tool_use not yet
// answered gets an error result, the session is synced, the turn-end and
// run-end hooks run, Done is yielded and then the error, if any. It
// returns false.
func (r *run) stop(reason StopReason, layer Layer, text string, err error, detail ...string) bool {
	o := outcome{stop: true, reason: reason, layer: layer, text: text, err: err}
	if len(detail) > 0 {
		o.detail = detail[0]
	}
	return r.stopWith(o)
}

func (r *run) stopWith(o outcome) bool {
	r.ended = true
	if o.reason != StopPending { // the pending record holds them
		if aerr := r.answerOpen(r.l.stoppedResult); aerr != nil {
			o.storeFailed(aerr)
		}
	}
	if serr := r.sync(); serr != nil {
		o.storeFailed(serr)
	}
	done := r.l.done(o)
	if o.reason == StopPending {
		done.Pending = r.appr.data().pending
	}
	r.traceRun(&o, &done)
	r.endTurn()
	if r.started {
		r.started = false
		r.runEndHooks(done, o.err)
	}
	if r.emit(done) && o.err != nil {
		r.yield(nil, o.err)
	}
	return false
}

// storeFailed notes a store failure at the run's stop: it makes the stop
// an error at the store layer, or, when the run already stops with an
// error (a cancellation, a planner failure), joins it to that error, so
// that the caller learns that the session may have calls left open (the
// next run answers them) without losing the first cause.
func (o *outcome) storeFailed(err error) {
	if o.err == nil {
		o.reason, o.layer, o.err = StopError, LayerStore, err
		return
	}
	o.err = errors.Join(o.err, err)
}

// abandon leaves the session valid when the run is left without reaching
// stopWith: a callback or the consumer's loop body called runtime.Goexit,
// or the loop body panicked. The run is cancelled, the calls of a parallel
// group still running are waited for, and every tool_use left open gets
// the "interrupted" result the next Run would give it, before the session
// is unlocked; nothing more is yielded.
func (r *run) abandon() {
	r.ended = true
	r.cancel(context.Canceled) // tools still running see their context done
	for r.groupLeft > 0 {
		if m := <-r.group; m.done {
			r.groupLeft--
		}
	}
	if r.answerOpen(interruptedResult) == nil {
		_ = r.sync()
	}
}

// answerOpen appends the result that result gives every tool_use of the
// history still unanswered, in order, and stops at a store failure.
func (r *run) answerOpen(result func(Block) Message) error {
	for _, m := range unanswered(r.l.history, result) {
		if err := r.append(m); err != nil {
			return err
		}
		r.traceAnswered(m.ToolUseID)
	}
	return nil
}

// traceAnswered adds a call of the turn that the stop answered to the
// turn's trace: one that ran as it ran, one that did not as cancelled.
func (r *run) traceAnswered(id string) {
	for i := range r.l.calls {
		if c := &r.l.calls[i]; c.use.ID == id {
			if c.ran {
				r.traceToolCall(c)
			} else {
				r.traceToolCall(&call{use: c.use, err: context.Canceled})
			}
			return
		}
	}
}

// stopCancelled ends a cancelled run: the caller's context, the caller
// breaking out of the range loop, or the time budget.
func (r *run) stopCancelled() bool {
	cause := context.Cause(r.ctx)
	if errors.Is(cause, ErrBudgetExceeded) && !r.stopped {
		return r.stopWith(r.l.timeBudget())
	}
	if cause == nil {
		cause = context.Canceled
	}
	return r.stop(StopCancelled, LayerCancellation, "", fmt.Errorf("agentrt: run cancelled: %w", cause))
}

// append adds a message to the store and the history.
func (r *run) append(m Message) error {
	if err := r.p.store.Append(r.sctx, r.sessionID, m); err != nil {
		return wrapf(err, "append to session %q", r.sessionID)
	}
	r.l.add(m)
	return nil
}

// appendResult stores a tool result. A result the store refuses as too
// long ([ErrLineTooLong]) is replaced by an error result saying so, so that
// the call is still answered; any other store error ends the run.
func (r *run) appendResult(c *call) error {
	err := r.append(c.result)
	if err == nil || !errors.Is(err, ErrLineTooLong) {
		return err
	}
	c.full = ""
	c.result = NewToolMessage(c.use.ID, fmt.Sprintf("tool %q: its result could not be stored in the session (%d bytes): %v", c.use.Name, len(c.result.Content), textcut.Ellipsis(err.Error(), 300)), true)
	c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
	return r.append(c.result)
}

func (r *run) record(kind RecordKind, v any) error {
	ra := r.p.records
	if ra == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := ra.AppendRecord(r.sctx, r.sessionID, Record{Kind: kind, Data: data}); err != nil {
		return wrapf(err, "append record to session %q", r.sessionID)
	}
	return nil
}

func (r *run) sync() error {
	if s := r.p.syncer; s != nil {
		if err := s.Sync(r.sctx, r.sessionID); err != nil {
			return wrapf(err, "sync session %q", r.sessionID)
		}
	}
	return nil
}

// loadCompaction finds the last compaction recorded in a resumed session.
func (r *run) loadCompaction() error {
	if r.p.compressor == nil || len(r.l.history) == 0 {
		return nil
	}
	rl, ok := r.p.store.(RecordStore)
	if !ok {
		return nil
	}
	recs, err := rl.LoadRecords(r.ctx, r.sessionID)
	if err != nil {
		return wrapf(err, "load records of session %q", r.sessionID)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == RecordCompaction {
			var c Compaction
			if err := json.Unmarshal(recs[i].Data, &c); err != nil {
				return fmt.Errorf("agentrt: session %q: bad compaction record: %w", r.sessionID, err)
			}
			r.compact = &c
			return nil
		}
	}
	return nil
}
