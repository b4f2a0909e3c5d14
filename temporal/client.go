package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable/loop"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// ErrCancelledElsewhere is the error of a run whose workflow was
// cancelled by another client (the temporal CLI, a UI, [client.Client]
// CancelWorkflow), not by the caller: it does not match context.Canceled.
var ErrCancelledElsewhere = errors.New("the workflow was cancelled by another client")

// StartOptions say where a run is started: the task queue the workers of
// the agent poll and the agent's name (the Agent.Name given to
// [Register]).
type StartOptions struct {
	// TaskQueue is the workers' task queue. Required.
	TaskQueue string
	// Agent is the registered agent's name; "" means [DefaultAgentName].
	Agent string
	// WorkflowIDPrefix is put before the session id to make the workflow
	// id; "" means none: the workflow id is the session id.
	WorkflowIDPrefix string
	// ExecutionTimeout bounds the whole run, approvals included; 0 means
	// no limit.
	ExecutionTimeout time.Duration
}

// WorkflowID returns the workflow id of a session's runs.
func (o StartOptions) WorkflowID(sessionID string) string { return o.WorkflowIDPrefix + sessionID }

// Start starts a run of the agent on a session and returns its workflow
// run without waiting for it. One session has at most one open run: if a
// run of the session is open, Start returns an error wrapping
// [agentrt.ErrSessionBusy].
//
// A session whose last run has ended is continued: its messages (the
// Result of a completed run, or the state of a cancelled or failed one,
// read with [QueryState], which needs a worker) become the new run's
// history, and an empty input then adds no user message.
func Start(ctx context.Context, c client.Client, opts StartOptions, sessionID, input string) (client.WorkflowRun, error) {
	return start(ctx, c, opts, RunInput{SessionID: sessionID, Input: input})
}

func start(ctx context.Context, c client.Client, opts StartOptions, in RunInput) (client.WorkflowRun, error) {
	sessionID, input := in.SessionID, in.Input
	if opts.TaskQueue == "" {
		return nil, errors.New("agentrt/temporal: StartOptions.TaskQueue is required")
	}
	if sessionID == "" {
		return nil, fmt.Errorf("%w: empty", agentrt.ErrInvalidSessionID)
	}
	id := opts.WorkflowID(sessionID)
	history, rules, err := previousHistory(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if input == "" && len(history) == 0 {
		return nil, agentrt.ErrEmptyInput
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                opts.TaskQueue,
		WorkflowExecutionTimeout:                 opts.ExecutionTimeout,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, WorkflowName(opts.Agent), RunInput{SessionID: sessionID, Input: input, History: history, Output: in.Output, OutputRetries: in.OutputRetries, Rules: rules})
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, fmt.Errorf("%w: workflow %q is running", agentrt.ErrSessionBusy, id)
		}
		return nil, fmt.Errorf("agentrt/temporal: start workflow %q: %w", id, err)
	}
	return run, nil
}

// previousHistory returns the messages and remembered decisions of the
// last run of workflow id, or nil if there is none.
func previousHistory(ctx context.Context, c client.Client, id string) ([]agentrt.Message, []Rule, error) {
	d, err := c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("agentrt/temporal: describe workflow %q: %w", id, err)
	}
	info := d.RawResponse.GetWorkflowExecutionInfo()
	runID := info.GetExecution().GetRunId()
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return nil, nil, fmt.Errorf("%w: workflow %q is running", agentrt.ErrSessionBusy, id)
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var res Result
		if err := c.GetWorkflow(ctx, id, runID).Get(ctx, &res); err != nil {
			return nil, nil, fmt.Errorf("agentrt/temporal: result of workflow %q: %w", id, err)
		}
		return res.Messages, res.Rules, nil
	}
	v, err := c.QueryWorkflow(ctx, id, runID, QueryState)
	if err != nil {
		return nil, nil, fmt.Errorf("agentrt/temporal: state of ended workflow %q: %w", id, err)
	}
	var st State
	if err := v.Get(&st); err != nil {
		return nil, nil, err
	}
	return st.Messages, st.Rules, nil
}

// Approve sends an approval to the open run of a session (workflow id
// opts.WorkflowID(sessionID)) as the update [UpdateApprove], and returns
// once the workflow has taken it. An approval of a call that is unknown
// or already decided is refused with an error wrapping
// [agentrt.ErrNotPending]. The same can be sent from a shell, as the
// signal (which reports no error):
//
//	temporal workflow signal --workflow-id SESSION --name agentrt.approve \
//	    --input '{"tool_use_id":"call_3","allow":true}'
func Approve(ctx context.Context, c client.Client, workflowID string, a agentrt.Decision) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   UpdateApprove,
		Args:         []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	return approveError(workflowID, a, err)
}

// approveError is Approve's error for the update's err: one wrapping
// agentrt.ErrNotPending, whose text the workflow's message already starts
// with, for a refused approval.
func approveError(workflowID string, a agentrt.Decision, err error) error {
	if err == nil {
		return nil
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrorTypeNotPending {
		why := strings.TrimPrefix(ae.Message(), agentrt.ErrNotPending.Error()+": ")
		return fmt.Errorf("agentrt/temporal: approve %s in workflow %q: %w: %s", a.ToolUseID, workflowID, agentrt.ErrNotPending, why)
	}
	return fmt.Errorf("agentrt/temporal: approve %s in workflow %q: %w", a.ToolUseID, workflowID, err)
}

// Runtime runs an agent registered on Temporal workers, with the
// [agentrt.Runtime] contract: code written against agentrt.Runtime runs on
// an *agentrt.Agent in-process or on a Runtime durably, unchanged.
//
// Run starts the session's workflow ([Start]) and streams its events by
// polling the [QueryEvents] query every PollInterval. Queries are answered
// by workers: while no worker runs the workflow (all were stopped) the
// stream pauses and resumes when one is back. TextDelta and PlannerRetry
// events are not produced: the planner's text arrives whole in
// AssistantMessage, and retries show in the workflow history.
//
// The fields must be set before the first Run and not changed after; a
// Runtime is then safe for concurrent use.
type Runtime struct {
	// Client connects to the Temporal service. Required; owned by the
	// caller, who closes it.
	Client client.Client
	// Options say where runs are started.
	Options StartOptions
	// Ask, when set, answers the run's pending approvals from the caller's
	// process (terminal.Asker, say): each pending call is asked once,
	// from the goroutine ranging over Run, and the answer sent as a signal
	// (a decision with Always allows the tool for the rest of the session; an error from
	// Ask denies the call). The request carries the tool's name and the raw
	// input (as Input and RawInput) only. When nil, approvals must come from
	// elsewhere ([Approve], the temporal CLI, a UI).
	Ask agentrt.PermissionFunc
	// PollInterval is the time between two queries; 0 means 200ms.
	PollInterval time.Duration
	// Detach, with a nil Ask, makes Run and Resume end when the run
	// waits for approvals, as an in-process run stops with
	// agentrt.StopPending: they yield a Done with that reason, Layer
	// agentrt.LayerPermission and the calls in Pending, and return. The
	// workflow goes on waiting, durably, with nothing held by the caller;
	// [Runtime.Resume] answers the calls and streams the rest of the run.
	Detach bool

	output        json.RawMessage // set by RunTyped on its copy
	outputRetries int
}

// RunTyped runs the session on Temporal like [agentrt.RunTyped] runs it
// in-process, with the same checks: the final answer must be a JSON value
// matching T's schema (the one agentrt.RunTyped sends); an answer that does not is
// sent back with what was wrong, up to opts.MaxRetries times, and is then
// an [*agentrt.OutputError]. The answer is decoded as agentrt.RunTyped
// decodes it. opts.OnEvent, if set, sees every event.
func RunTyped[T any](ctx context.Context, rt *Runtime, sessionID, input string, opts *agentrt.TypedOptions) (T, error) {
	var zero T
	if opts == nil {
		opts = &agentrt.TypedOptions{}
	}
	schema, err := loop.OutputSchema[T]()
	if err != nil {
		return zero, err
	}
	typed := *rt
	typed.output, typed.outputRetries = schema, opts.MaxRetries
	var done *agentrt.Done
	for ev, err := range typed.Run(ctx, sessionID, input) {
		if err != nil {
			return zero, err
		}
		if opts.OnEvent != nil {
			opts.OnEvent(ev)
		}
		if d, ok := ev.(agentrt.Done); ok {
			done = &d
		}
	}
	if done == nil {
		return zero, errors.New("agentrt/temporal: run ended without a Done event")
	}
	if err := done.Err(); err != nil {
		return zero, err
	}
	return loop.ParseOutput[T](done.FinalText)
}

var _ agentrt.Runtime = (*Runtime)(nil)

// Run starts a run of the session and yields its events, ending with
// [agentrt.Done], as [agentrt.Agent.Run] does. Errors (a failed start, a
// planner failure, a cancelled ctx) are yielded once, last, with a nil
// event.
//
// Cancelling ctx or breaking out of the loop cancels the workflow: a running
// tool sees its context cancelled (through its heartbeat), every tool_use
// gets its result, and the workflow ends as cancelled. When ctx is
// cancelled, Run waits up to 30s for the workflow's Done event to yield it
// before the error.
func (r *Runtime) Run(ctx context.Context, sessionID, input string) iter.Seq2[agentrt.Event, error] {
	return func(yield func(agentrt.Event, error) bool) {
		if r.Client == nil {
			yield(nil, errors.New("agentrt/temporal: Runtime.Client is nil"))
			return
		}
		run, err := start(ctx, r.Client, r.Options, RunInput{SessionID: sessionID, Input: input, Output: r.output, OutputRetries: r.outputRetries})
		if err != nil {
			yield(nil, err)
			return
		}
		s := &stream{r: r, run: run, session: sessionID, yield: yield, asked: map[string]bool{}}
		s.main(ctx)
	}
}

// Resume answers calls that the session's open run waits for, as
// [agentrt.Agent.Resume] does in-process, and yields the run's events
// from there on, to its end (or, with Detach, until it waits for
// approvals again). Every decision must name a call that is pending now:
// otherwise Resume yields an error wrapping [agentrt.ErrNotPending] and
// sends none. With no Approvals and calls pending, it yields (with
// Detach) a Done with agentrt.StopPending at once; a session with no
// call pending is an ErrNotPending error.
func (r *Runtime) Resume(ctx context.Context, sessionID string, approvals ...agentrt.Decision) iter.Seq2[agentrt.Event, error] {
	return func(yield func(agentrt.Event, error) bool) {
		if r.Client == nil {
			yield(nil, errors.New("agentrt/temporal: Runtime.Client is nil"))
			return
		}
		id := r.Options.WorkflowID(sessionID)
		notPending := func(why string) {
			yield(nil, fmt.Errorf("agentrt/temporal: resume %q: %w: %s", id, agentrt.ErrNotPending, why))
		}
		v, err := r.queryEvents(ctx, id)
		if err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				notPending("no such session")
				return
			}
			yield(nil, fmt.Errorf("agentrt/temporal: resume %q: %w", id, err))
			return
		}
		var page EventsPage
		if err := v.Get(&page); err != nil {
			yield(nil, err)
			return
		}
		pending := map[string]bool{}
		for _, p := range page.Pending {
			pending[p.ToolUseID] = true
		}
		if len(pending) == 0 {
			notPending("the run has no call waiting for a decision")
			return
		}
		for _, a := range approvals {
			if !pending[a.ToolUseID] {
				notPending(fmt.Sprintf("%q is not pending (unknown, already decided, or decided twice)", a.ToolUseID))
				return
			}
			delete(pending, a.ToolUseID)
		}
		for _, a := range approvals {
			if err := Approve(ctx, r.Client, id, a); err != nil {
				yield(nil, err)
				return
			}
		}
		s := &stream{r: r, run: r.Client.GetWorkflow(ctx, id, ""), session: sessionID, yield: yield, asked: map[string]bool{}, next: page.Next}
		s.main(ctx)
	}
}

type stream struct {
	r        *Runtime
	run      client.WorkflowRun
	session  string // the session's id
	yield    func(agentrt.Event, error) bool
	next     int
	asked    map[string]bool
	detached bool // ended at a StopPending Done, the workflow waiting
}

func (s *stream) interval() time.Duration { return s.r.pollInterval() }

func (r *Runtime) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return 200 * time.Millisecond
}

func (s *stream) main(ctx context.Context) {
	for n := 1; ; n++ {
		done, ok, queried := s.poll(ctx)
		if s.detached {
			return
		}
		if !ok { // the consumer stopped
			s.cancel()
			return
		}
		if done {
			s.result(ctx)
			return
		}
		if ctx.Err() != nil {
			s.cancelled(ctx)
			return
		}
		// A workflow that ended without its Done event (terminated, timed
		// out, failed in its own code) must not keep us polling forever.
		if (!queried || n%25 == 0) && s.closed(ctx) {
			s.endedWithoutDone(ctx)
			return
		}
		t := time.NewTimer(s.interval())
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// closed reports whether the workflow run is known to have ended.
func (s *stream) closed(ctx context.Context) bool {
	d, err := s.r.Client.DescribeWorkflow(ctx, s.run.GetID(), s.run.GetRunID())
	if err != nil {
		return false
	}
	return d.RawResponse.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// endedWithoutDone yields the last events, if a query still gets them, and
// otherwise a Done event with StopError, then the workflow's error.
func (s *stream) endedWithoutDone(ctx context.Context) {
	done, ok, _ := s.poll(ctx)
	if !ok {
		return
	}
	if !done {
		if !s.yield(agentrt.Done{Reason: agentrt.StopError, FinalText: "The run stopped: its workflow ended without finishing the run."}, nil) {
			return
		}
	}
	var res Result
	err := s.run.Get(ctx, &res)
	if err == nil {
		if !done {
			s.yield(nil, fmt.Errorf("agentrt/temporal: run %s: the workflow ended without a Done event", s.run.GetID()))
		}
		return
	}
	s.yield(nil, fmt.Errorf("agentrt/temporal: run %s: %w", s.run.GetID(), runError(err)))
}

// runError returns the error of a failed run workflow with the typed
// errors it carries (see errshape.go), so that errors.As finds an
// *agentrt.ProviderError, *agentrt.OutputError or *agentrt.PanicError as
// it does in-process.
func runError(err error) error {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return err
	}
	if sentinel := sentinelErrors[ae.Type()]; sentinel != nil {
		return &shapedError{err: err, typed: []error{sentinel}}
	}
	if ae.Type() != runErrorType || !ae.HasDetails() {
		return err
	}
	var shape errorShape
	if ae.Details(&shape) != nil {
		return err
	}
	return withShape(err, &shape)
}

// queryEvents queries a run's events for Resume. A query that times out
// or finds no worker (right after a worker restart, the query waits on
// the old worker's sticky queue until the server gives up on it) is tried
// again, every PollInterval, until ctx ends; other errors are returned at
// once.
func (r *Runtime) queryEvents(ctx context.Context, id string) (converter.EncodedValue, error) {
	for {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := r.Client.QueryWorkflow(qctx, id, "", QueryEvents, math.MaxInt32)
		cancel()
		if err == nil || ctx.Err() != nil || !transientQueryError(err) {
			return v, err
		}
		t := time.NewTimer(r.pollInterval())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// transientQueryError reports whether a failed query may succeed when
// tried again: it timed out, no worker could answer it yet, or the worker
// it reached was stopping (the query comes back cancelled while the
// caller's ctx is not: queryEvents checks that first).
func transientQueryError(err error) bool {
	var dl *serviceerror.DeadlineExceeded
	var un *serviceerror.Unavailable
	var ca *serviceerror.Canceled
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &dl) || errors.As(err, &un) || errors.As(err, &ca)
}

// poll queries the events once, yields the new ones and asks about new
// pending approvals. done is true after the Done event; ok is false when the
// consumer stopped; queried is false when the query failed. A failed query
// (no worker, a restart) is not an error: the next poll tries again.
func (s *stream) poll(ctx context.Context) (done, ok, queried bool) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	v, err := s.r.Client.QueryWorkflow(qctx, s.run.GetID(), s.run.GetRunID(), QueryEvents, s.next)
	cancel()
	if err != nil {
		return false, true, false
	}
	var page EventsPage
	if err := v.Get(&page); err != nil {
		return false, true, false
	}
	for _, rec := range page.Events {
		s.next++
		ev := rec.Event()
		if ev == nil {
			continue
		}
		if tc, ok := ev.(agentrt.ToolCall); ok {
			tc.SessionID = s.session
			ev = tc
		}
		if !s.yield(ev, nil) {
			return false, false, true
		}
		if rec.Kind == KindDone {
			return true, true, true
		}
	}
	if s.r.Ask == nil && s.r.Detach && len(page.Pending) > 0 {
		// The run waits for a person: stop here, as in-process.
		d := agentrt.Done{Reason: agentrt.StopPending, Layer: agentrt.LayerPermission,
			Detail: fmt.Sprintf("The run is waiting for a person's decision on %d tool call(s); resume it with Runtime.Resume or Approve.", len(page.Pending))}
		for _, p := range page.Pending {
			d.Pending = append(d.Pending, &agentrt.ToolCall{SessionID: s.session, ToolUseID: p.ToolUseID,
				Tool: agentrt.ToolSpec{Name: p.Tool}, Input: p.Input, RawInput: p.Input})
		}
		s.detached = true
		s.yield(d, nil)
		return false, true, true
	}
	if s.r.Ask != nil {
		for _, p := range page.Pending {
			if s.asked[p.ToolUseID] || ctx.Err() != nil {
				continue
			}
			s.asked[p.ToolUseID] = true
			if err := s.ask(ctx, p); err != nil {
				s.yield(nil, err)
				s.cancel()
				return false, false, true
			}
		}
	}
	return false, true, true
}

func (s *stream) ask(ctx context.Context, p PendingApproval) error {
	req := &agentrt.ToolCall{
		SessionID: s.session,
		ToolUseID: p.ToolUseID,
		Tool:      agentrt.ToolSpec{Name: p.Tool},
		Input:     p.Input,
		RawInput:  p.Input,
	}
	ans, err := s.r.Ask(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the run is being cancelled: main handles it
		}
		ans = agentrt.Decision{}
	}
	a := agentrt.Decision{ToolUseID: p.ToolUseID, Allow: ans.Allow, Reason: ans.Reason, Always: ans.Allow && ans.Always, AnyTool: ans.AnyTool, Pattern: ans.Pattern}
	return Approve(ctx, s.r.Client, s.run.GetID(), a)
}

// result yields the workflow's error, if it failed.
func (s *stream) result(ctx context.Context) {
	var res Result
	err := s.run.Get(ctx, &res)
	if err == nil {
		return
	}
	var cerr *temporal.CanceledError
	if errors.As(err, &cerr) {
		if cause := ctx.Err(); cause != nil {
			s.yield(nil, fmt.Errorf("agentrt: run cancelled: %w", cause))
			return
		}
		// Not our ctx: another client cancelled the workflow.
		s.yield(nil, fmt.Errorf("agentrt/temporal: run %s: %w: %w", s.run.GetID(), ErrCancelledElsewhere, err))
		return
	}
	s.yield(nil, fmt.Errorf("agentrt/temporal: run %s: %w", s.run.GetID(), runError(err)))
}

// cancel asks Temporal to cancel the workflow, without waiting.
func (s *stream) cancel() {
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_ = s.r.Client.CancelWorkflow(ctx, s.run.GetID(), s.run.GetRunID())
}

// cancelled cancels the workflow after ctx was cancelled, yields the events
// up to Done if they arrive within 30s, then the error.
func (s *stream) cancelled(ctx context.Context) {
	s.cancel()
	wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer stop()
	for wctx.Err() == nil {
		done, ok, _ := s.poll(wctx)
		if !ok {
			return
		}
		if done {
			break
		}
		t := time.NewTimer(s.interval())
		select {
		case <-wctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	s.yield(nil, fmt.Errorf("agentrt: run cancelled: %w", ctx.Err()))
}
