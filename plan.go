package agentrt

import (
	"errors"
	"fmt"
)

// plan makes the turn's planner call: the view the Compressor chooses,
// the BeforePlan and AfterPlan hooks, the planner itself, retries of
// transient failures and one harder compaction after a context-length
// error. It returns false when the run has stopped.
func (r *run) plan() (*ModelResponse, bool) {
	n := len(r.l.history)
	full := r.l.history[:n:n]
	view, err := r.compress(full, false)
	if err != nil {
		return nil, r.stop(StopError, LayerPlanner, "", err)
	}
	r.tracePlan(view, full)
	compacted := false
	for attempt := 1; ; attempt++ {
		// A fresh request per attempt: the planner and hooks may keep it.
		req := r.l.request(view)
		req.OnText = r.onText
		resp, layer, planErr, fatal, live := r.planAttempt(req, view)
		if fatal != nil {
			return nil, r.stop(StopError, layer, "", fatal)
		}
		if r.stopped { // the consumer broke out during streaming
			return nil, r.stopCancelled()
		}
		if planErr == nil {
			return resp, true
		}
		compact, retry := planRetry(r.p.retry, attempt, compacted, planErr)
		// A failure after the run was cancelled is the cancellation's, and
		// a cancelled run makes no further attempt; but a failure the
		// planner returned while the run was live is its own, even when the
		// run is cancelled before it is handled (by the consumer, on an
		// event of the AfterPlan hooks).
		if r.ctx.Err() != nil && (!live || compact || retry) {
			return nil, r.stopCancelled()
		}
		if compact {
			// Too long for the model: compact harder and try once more.
			compacted = true
			if view, err = r.compress(full, true); err != nil {
				return nil, r.stop(StopError, LayerPlanner, "", err)
			}
			r.tracePlan(view, full)
			attempt--
			continue
		}
		if !retry {
			return nil, r.stop(StopError, layerOf(planErr), "", wrapf(planErr, "planner (turn %d)", r.l.turn))
		}
		d, asked := r.p.retry.delay(attempt, planErr)
		r.traceRetry(attempt, planErr, d)
		if !r.emit(PlannerRetry{Turn: r.l.turn, Attempt: attempt, Delay: d, Asked: asked, Err: planErr}) {
			return nil, r.stopCancelled()
		}
		if sleep(r.ctx, d) != nil {
			return nil, r.stopCancelled()
		}
	}
}

// planRetry says what follows a failed planner attempt: a harder
// compaction and the same attempt again (once per turn, after a
// context-length error), or a retry after a delay (a transient error, while
// attempts remain), or neither: the run stops.
func planRetry(p RetryPolicy, attempt int, compacted bool, err error) (compact, retry bool) {
	if !compacted && errors.Is(err, ErrContextLength) {
		return true, false
	}
	return false, attempt < p.attempts() && retryable(err)
}

// planAttempt makes one planner call: the BeforePlan hooks, the planner
// and the AfterPlan hooks. It returns the response, or the planner's error
// or panic (an error may be retried), or an error that ends the run
// (fatal: a BeforePlan hook refused, or panicked) with its layer. live
// reports whether the run was still live when the planner returned. The
// trace fingerprints the request the planner gets (view is its messages
// from the session).
func (r *run) planAttempt(req *ModelRequest, view []Message) (resp *ModelResponse, layer Layer, planErr, fatal error, live bool) {
	ctx := r.turnCtx
	if len(r.p.hooks) > 0 {
		r.planStage = "BeforePlan"
		var hookErr error
		if ctx, hookErr = r.beforePlan(ctx, req); hookErr != nil {
			return nil, LayerHook, nil, fmt.Errorf("agentrt: a BeforePlan hook refused the planner call (turn %d): %w", req.Turn, hookErr), false
		}
		r.tr.span = spanOf(ctx)
	}
	if r.tr.on {
		r.tr.fp.take(req, view, r.p.toolPrint)
	}
	r.planStage = "Plan"
	if perr := protect(&r.left, func() { resp, planErr = r.p.planner.Plan(ctx, req) }); perr != nil {
		// A failure like an error it returned (never retried), which plan
		// makes the run's error, or the cancellation's when the run was no
		// longer live.
		resp, planErr = nil, perr
	}
	live = r.ctx.Err() == nil
	if planErr == nil && resp == nil {
		planErr = errors.New("planner returned no response")
	}
	if len(r.p.hooks) > 0 {
		r.planStage = "AfterPlan"
		r.afterPlan(ctx, req, resp, planErr)
	}
	return resp, "", planErr, nil, live
}

// layerOf says whether a planner error came from the model provider.
func layerOf(err error) Layer {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return LayerProvider
	}
	return LayerPlanner
}

// compress returns what the planner sees this turn: the history itself,
// or what the Compressor makes of it. force is set after a context-length
// error; without a Compressor a Window then keeps the recent half.
func (r *run) compress(msgs []Message, force bool) ([]Message, error) {
	c := r.p.compressor
	if c == nil {
		if !force {
			return msgs, nil
		}
		c = Window{}
	}
	count := r.p.tokenCounter
	if count == nil {
		count = estimateTokens
	}
	req := &CompressRequest{
		SessionID: r.sessionID,
		Messages:  msgs,
		Budget:    r.p.contextTokens,
		Count:     count,
		Previous:  r.compact,
		Force:     force,
		State:     r.compState,
	}
	var res *CompressResult
	var err error
	if perr := protect(nil, func() {
		res, err = c.Compress(r.turnCtx, req)
		// The trace's token count of what the planner is shown (Count is
		// user code too).
		if err == nil && res != nil && r.tr.on && !sameSlice(res.Messages, msgs) {
			r.tr.viewTokens = viewTokens(res, count, r.p.tokenCounter == nil)
		}
	}); perr != nil {
		err = perr
	}
	if err == nil && res == nil {
		err = errors.New("the compressor returned no result")
	}
	if err != nil {
		return nil, wrapf(err, "compress")
	}
	r.compState = res.State
	if res.Compaction != nil {
		r.compact = res.Compaction
		if ra := r.p.records; ra != nil {
			if err := ra.AppendRecord(r.sctx, r.sessionID, compactionRecord(res.Compaction)); err != nil {
				return nil, wrapf(err, "record compaction")
			}
		}
	}
	return res.Messages, nil
}

// sameSlice reports whether a and b are the same slice: same length, same
// first element.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
