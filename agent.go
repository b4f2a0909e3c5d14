package agentrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Runtime runs an agent on a session. [*Agent] is the in-process runtime;
// other runtimes (a durable one on a workflow engine, say) implement the
// same method with the same guarantees.
type Runtime interface {
	// Run appends input to the session and drives the loop until the model
	// answers without calling a tool, a limit is reached, ctx is cancelled
	// or a fatal error occurs. See [Agent.Run] for the contract.
	Run(ctx context.Context, sessionID, input string) iter.Seq2[Event, error]
}

var _ Runtime = (*Agent)(nil)

// DefaultMaxTurns is the turn limit of an Agent whose MaxTurns is 0.
const DefaultMaxTurns = 20

// DefaultMaxParallelTools bounds the read-only tools run at once when
// Agent.MaxParallelTools is 0.
const DefaultMaxParallelTools = 4

// Agent is an agent definition: instructions, tools, the planner that picks
// the next step, the permission checker that guards tool calls, the store
// that keeps sessions, and limits. Its zero value is not usable: Planner is
// required.
//
// Fill the fields, then call Run as often as needed, concurrently for
// different sessions: an Agent is safe for concurrent use. Do not modify its
// fields after the first Run: the tool index and the tool specs sent to the
// model are built once, at the first Run, and reused.
type Agent struct {
	// Name identifies the agent in events, logs and traces. Optional.
	Name string
	// Instructions is the system prompt.
	Instructions string
	// Tools are the tools the model may call. Names must be unique.
	Tools []Tool
	// Planner chooses each next step; usually ModelPlanner(provider).
	Planner Planner
	// Permission decides whether each tool call may run. Nil means
	// AllowReadOnly(): read-only tools run, write tools are denied.
	Permission PermissionChecker
	// Store keeps the sessions. Nil means an in-memory store owned by this
	// Agent (sessions live as long as the Agent value).
	Store SessionStore
	// MaxTurns caps the planner calls of one Run; 0 means DefaultMaxTurns.
	MaxTurns int
	// MaxParallelTools bounds how many read-only tools of one assistant
	// message run at once; 0 means DefaultMaxParallelTools, 1 runs them one
	// at a time.
	MaxParallelTools int
	// ToolTimeout bounds each tool call whose tool has no timeout of its
	// own; 0 means no limit.
	ToolTimeout time.Duration
	// MaxToolOutput caps the size of a tool result the model sees, in
	// bytes; a longer output is cut with a note saying how much was cut
	// (the whole output stays in ToolResult.FullOutput). 0 means
	// DefaultMaxToolOutput; negative means no cap.
	MaxToolOutput int
	// LoopGuard stops a model that repeats itself; on by default.
	LoopGuard LoopGuard
	// Retry says how transient planner failures are retried.
	Retry RetryPolicy
	// Budget limits the tokens, cost and time of each run.
	Budget Budget
	// Compressor chooses what the planner sees of a long session; nil
	// sends the whole session. See Window and Summarizer.
	Compressor Compressor
	// ContextTokens is the token budget of the messages sent to the
	// planner, passed to the Compressor; 0 means none.
	ContextTokens int
	// TokenCounter counts the tokens of messages for the Compressor; nil
	// means EstimateTokens.
	TokenCounter func([]Message) int
	// Hooks are called around runs, turns, planner calls and tool calls;
	// see Hooks. With none, the hook machinery costs nothing.
	Hooks []Hooks
	// NoFinalAnswer turns off the last planner call, asking for an answer
	// without tools, that a run makes when it reaches MaxTurns or its token
	// or cost budget.
	NoFinalAnswer bool

	once sync.Once
	prep *prepared
}

// toolEntry is a tool with its spec, read once per Agent.
type toolEntry struct {
	tool Tool
	spec ToolSpec
}

// prepared is what Run derives from the Agent once.
type prepared struct {
	err        error
	tools      map[string]*toolEntry
	specs      []ToolSpec
	names      string // "a", "b" for the unknown-tool message
	store      SessionStore
	permission PermissionChecker
	maxTurns   int
	maxPar     int
}

func (a *Agent) prepare() *prepared {
	a.once.Do(func() {
		p := &prepared{
			tools:      make(map[string]*toolEntry, len(a.Tools)),
			specs:      make([]ToolSpec, 0, len(a.Tools)),
			store:      a.Store,
			permission: a.Permission,
			maxTurns:   a.MaxTurns,
			maxPar:     a.MaxParallelTools,
		}
		a.prep = p
		names := make([]string, 0, len(a.Tools))
		for i, t := range a.Tools {
			if t == nil {
				p.err = fmt.Errorf("agentrt: Agent.Tools[%d] is nil", i)
				return
			}
			s := t.Spec()
			if _, dup := p.tools[s.Name]; dup {
				p.err = fmt.Errorf("agentrt: two tools are named %q", s.Name)
				return
			}
			p.tools[s.Name] = &toolEntry{tool: t, spec: s}
			p.specs = append(p.specs, s)
			names = append(names, strconv.Quote(s.Name))
		}
		slices.Sort(names)
		p.names = strings.Join(names, ", ")
		if p.store == nil {
			p.store = NewMemoryStore()
		}
		if p.permission == nil {
			p.permission = AllowReadOnly()
		}
		if p.maxTurns <= 0 {
			p.maxTurns = DefaultMaxTurns
		}
		if p.maxPar <= 0 {
			p.maxPar = DefaultMaxParallelTools
		}
	})
	return a.prep
}

// Run appends input as a user message to the session and runs the loop:
// ask the planner for the next assistant message, run the tools it calls,
// append their results, and again, until the model answers without calling
// a tool. Each step is yielded as an [Event]; the last event is always
// [Done], whose Reason says why the run ended.
//
// Nothing happens until the returned iterator is ranged over. Sessions are
// loaded from the Agent's Store: Run on an existing session continues it
// (an empty input then adds no user message). If the stored session ends
// with tool_uses that have no result (a process died mid-tool), each first
// gets an is_error "interrupted" result; no tool is run again by itself.
//
// Errors. A tool that fails in any way (unknown name, invalid input,
// permission denied, error, panic, timeout, cancellation) never ends the
// run: the model gets an is_error result and tries again. What ends the run
// with an error is what only the programmer can act on: a planner error, a
// store error, a cancelled ctx, a busy session ([ErrSessionBusy]), an
// invalid Agent. The error is yielded once, with a nil event, as the last
// value, right after the Done event when the run had started; errors.Is
// works with ctx.Err() for cancellation. Reaching MaxTurns is not an error:
// Done.Reason is StopMaxTurns and Done.Err() returns [ErrMaxTurns].
//
// Guarantees. At every yield and after every stop, each tool_use in an
// assistant message has exactly one result, appended right after that
// message, before the next planner call. Breaking out of the range loop
// cancels the run: tools that are running see their context cancelled and
// Run waits for them, so no goroutine outlives the loop; every tool_use
// already in the session still gets its (error) result in the store.
func (a *Agent) Run(ctx context.Context, sessionID, input string) iter.Seq2[Event, error] {
	return a.run(ctx, sessionID, input, runOptions{})
}

// runOptions are what RunTyped and agent tools change about a run.
type runOptions struct {
	output     *outputSpec       // the final answer must pass this check
	permission PermissionChecker // replaces the Agent's checker
}

func (a *Agent) run(ctx context.Context, sessionID, input string, opts runOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p := a.prepare()
		if p.err != nil {
			yield(nil, p.err)
			return
		}
		if a.Planner == nil {
			yield(nil, ErrNoPlanner)
			return
		}
		var cancel context.CancelFunc
		if d := a.Budget.MaxDuration; d > 0 {
			ctx, cancel = context.WithTimeoutCause(ctx, d, ErrBudgetExceeded)
		} else {
			ctx, cancel = context.WithCancel(ctx)
		}
		defer cancel()
		r := &run{
			agent:     a,
			p:         p,
			opts:      opts,
			ctx:       ctx,
			cancel:    cancel,
			sessionID: sessionID,
			yield:     yield,
		}
		r.main(input)
	}
}

// run is the state of one Run.
type run struct {
	agent     *Agent
	p         *prepared
	opts      runOptions
	outputTry int // corrective re-asks made for the output check
	ctx       context.Context
	cancel    context.CancelFunc
	sessionID string
	yield     func(Event, error) bool
	stopped   bool // the consumer broke out of the loop

	history   []Message
	turn      int // the current turn, from 1
	turns     int // planner calls that returned a message
	usage     Usage
	req       ModelRequest
	preq      PermissionRequest
	calls     []call
	decoded   []decoded // per tool_use of the current message, from sanitize
	decBuf    [4]decoded
	notes     map[string]string // tool_use id → why it must not run (see sanitize)
	onText    func(string)
	loops     loopState
	looping   int // highest repeat count seen this turn
	info      RunInfo
	started   bool            // run-start hooks were called
	turnCtx   context.Context // the context of the current turn (hooks may extend it)
	compact   *Compaction     // the session's last compaction
	compState any             // the Compressor's state from the last turn
	creq      CompressRequest
	final     string // a note for the system prompt of the final-answer call
}

// storeCtx is the context of store writes: they must happen even after the
// run was cancelled, to leave the session valid.
func (r *run) storeCtx() context.Context {
	if r.ctx.Err() != nil {
		return context.WithoutCancel(r.ctx)
	}
	return r.ctx
}

// emit yields an event unless the consumer has stopped.
func (r *run) emit(ev Event) bool {
	if r.stopped {
		return false
	}
	if !r.yield(ev, nil) {
		r.stopped = true
		r.cancel()
		return false
	}
	return true
}

// finish emits Done and, for a failed run, the error.
func (r *run) finish(reason StopReason, text string, err error) {
	done := Done{Reason: reason, FinalText: text, Usage: r.usage, Turns: r.turns}
	if r.started && len(r.agent.Hooks) > 0 {
		r.started = false
		r.runEndHooks(done, err)
	}
	if r.stopped {
		return
	}
	if !r.yield(done, nil) {
		r.stopped = true
		return
	}
	if err != nil {
		r.yield(nil, err)
	}
}

func (r *run) main(input string) {
	store := r.p.store
	if l, ok := store.(Locker); ok {
		unlock, err := l.Lock(r.ctx, r.sessionID)
		if err != nil {
			r.yield(nil, fmt.Errorf("agentrt: lock session: %w", err))
			return
		}
		defer unlock()
	}
	hist, err := store.Load(r.ctx, r.sessionID)
	if err != nil {
		r.yield(nil, fmt.Errorf("agentrt: load session %q: %w", r.sessionID, err))
		return
	}
	// Room for this run's first turns without regrowing.
	r.history = slices.Grow(hist, 4)
	if err := r.repair(); err != nil {
		r.yield(nil, err)
		return
	}
	if err := r.loadCompaction(); err != nil {
		r.yield(nil, err)
		return
	}
	if input != "" {
		if err := r.append(NewUserMessage(input)); err != nil {
			r.yield(nil, err)
			return
		}
	} else if len(r.history) == 0 {
		r.yield(nil, ErrEmptyInput)
		return
	}
	r.onText = func(delta string) { r.emit(TextDelta{Turn: r.turn, Text: delta}) }
	r.turnCtx = r.ctx
	if len(r.agent.Hooks) > 0 {
		r.info = RunInfo{Agent: r.agent.Name, SessionID: r.sessionID, Input: input, Start: time.Now()}
		if d, ok := r.agent.Planner.(Describer); ok {
			r.info.Provider = d.Describe()
		}
		r.started = true
		r.runStartHooks()
	}

	for r.turn = 1; r.turn <= r.p.maxTurns; r.turn++ {
		if r.ctx.Err() != nil {
			r.stopCancelled()
			return
		}
		r.turnCtx = r.ctx
		if len(r.agent.Hooks) > 0 {
			r.turnCtx = r.turnStartHooks()
		}
		msg, ok := r.plan()
		if !ok {
			r.endTurn()
			return
		}
		if !msg.HasToolUse() {
			r.endTurn()
			if o := r.opts.output; o != nil {
				if err := o.check(msg.Text()); err != nil {
					if r.outputTry < o.retries() && r.turn < r.p.maxTurns {
						r.outputTry++
						if err := r.append(NewUserMessage(fmt.Sprintf(outputRetryText, err))); err != nil {
							r.finish(StopError, "The run stopped: the session store failed.", err)
							return
						}
						continue
					}
					r.sync()
					r.finish(StopError, "The run stopped: the final answer did not match the expected output.", &OutputError{Raw: msg.Text(), Err: err})
					return
				}
			}
			r.sync()
			r.finish(StopComplete, msg.Text(), nil)
			return
		}
		ok = r.runTools(msg)
		r.endTurn()
		if !ok {
			return
		}
		if r.ctx.Err() != nil {
			r.stopCancelled()
			return
		}
		if _, stop := r.agent.LoopGuard.limits(); !r.agent.LoopGuard.Disabled && r.looping >= stop {
			r.finish(StopLoopDetected, fmt.Sprintf("The run stopped: the model made the same tool call with the same result %d times, after it was told to stop (loop_detected).", r.looping), nil)
			return
		}
		if why := r.agent.Budget.exceeded(r.usage); why != "" {
			r.stopWithFinalAnswer(StopBudgetExceeded, "The run stopped: it reached "+why+" (budget_exceeded).")
			return
		}
	}
	r.stopWithFinalAnswer(StopMaxTurns, fmt.Sprintf("The run stopped after %d turns without a final answer (max_turns).", r.p.maxTurns))
}

func (r *run) endTurn() {
	if len(r.agent.Hooks) > 0 {
		r.turnEndHooks(r.turnCtx)
	}
	r.turnCtx = r.ctx
}

// stopWithFinalAnswer ends a run that reached a limit: unless
// NoFinalAnswer is set it first asks the model once more, for a final
// answer without tool calls, so that the user gets the best answer there is.
func (r *run) stopWithFinalAnswer(reason StopReason, why string) {
	text := why
	if !r.agent.NoFinalAnswer {
		r.turn++
		r.final = "This run has reached a limit and is about to stop: " + why +
			" Do not call any tool. Answer the user now, as well as you can with what you have found so far, and say what is left undone."
		msg, ok := r.plan()
		if !ok {
			return
		}
		if msg.HasToolUse() {
			r.abandon(msg, 0, "not run: the run reached a limit and is over")
			if err := r.sync(); err != nil {
				r.finish(StopError, "The run stopped: the session store failed.", err)
				return
			}
		}
		if t := msg.Text(); t != "" {
			text = t
		}
	}
	r.finish(reason, text, nil)
}

func (r *run) stopCancelled() {
	r.sync()
	err := context.Cause(r.ctx)
	if errors.Is(err, ErrBudgetExceeded) && !r.stopped {
		r.finish(StopBudgetExceeded, fmt.Sprintf("The run stopped: it reached its time budget of %v (budget_exceeded).", r.agent.Budget.MaxDuration), nil)
		return
	}
	if err == nil {
		err = context.Canceled
	}
	r.finish(StopCancelled, "The run was cancelled.", fmt.Errorf("agentrt: run cancelled: %w", err))
}

// append adds a message to the store and the history.
func (r *run) append(m Message) error {
	if err := r.p.store.Append(r.storeCtx(), r.sessionID, m); err != nil {
		return fmt.Errorf("agentrt: append to session %q: %w", r.sessionID, err)
	}
	r.history = append(r.history, m)
	return nil
}

func (r *run) record(kind string, v any) error {
	ra, ok := r.p.store.(RecordAppender)
	if !ok {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := ra.AppendRecord(r.storeCtx(), r.sessionID, Record{Kind: kind, Data: data}); err != nil {
		return fmt.Errorf("agentrt: append record to session %q: %w", r.sessionID, err)
	}
	return nil
}

func (r *run) sync() error {
	if s, ok := r.p.store.(Syncer); ok {
		if err := s.Sync(r.storeCtx(), r.sessionID); err != nil {
			return fmt.Errorf("agentrt: sync session %q: %w", r.sessionID, err)
		}
	}
	return nil
}

// compress returns what the planner sees this turn: the history itself,
// or what the Compressor makes of it. force is set after a context-length
// error; without a Compressor a Window then keeps the recent half.
func (r *run) compress(msgs []Message, force bool) ([]Message, error) {
	c := r.agent.Compressor
	if c == nil {
		if !force {
			return msgs, nil
		}
		c = Window{}
	}
	count := r.agent.TokenCounter
	if count == nil {
		count = EstimateTokens
	}
	r.creq = CompressRequest{
		SessionID: r.sessionID,
		Messages:  msgs,
		Budget:    r.agent.ContextTokens,
		Count:     count,
		Previous:  r.compact,
		Force:     force,
		State:     r.compState,
	}
	res, err := c.Compress(r.ctx, &r.creq)
	r.creq = CompressRequest{}
	if err != nil {
		return nil, fmt.Errorf("agentrt: compress: %w", err)
	}
	r.compState = res.State
	if res.Compaction != nil {
		r.compact = res.Compaction
		if ra, ok := r.p.store.(RecordAppender); ok {
			if err := ra.AppendRecord(r.storeCtx(), r.sessionID, compactionRecord(res.Compaction)); err != nil {
				return nil, fmt.Errorf("agentrt: record compaction: %w", err)
			}
		}
	}
	return res.Messages, nil
}

// loadCompaction finds the last compaction recorded in a resumed session.
func (r *run) loadCompaction() error {
	if r.agent.Compressor == nil || len(r.history) == 0 {
		return nil
	}
	rl, ok := r.p.store.(RecordLoader)
	if !ok {
		return nil
	}
	recs, err := rl.LoadRecords(r.ctx, r.sessionID)
	if err != nil {
		return fmt.Errorf("agentrt: load records of session %q: %w", r.sessionID, err)
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

// repair gives an "interrupted" result to every tool_use of the last
// assistant message that has none, so that a session left by a crash
// satisfies the invariants before the planner sees it.
func (r *run) repair() error {
	for _, msg := range InterruptedResults(r.history) {
		if err := r.append(msg); err != nil {
			return err
		}
	}
	return nil
}

// InterruptedResults returns the results that repair a session left by a
// crash: an is_error "interrupted" result for every tool_use of the last
// assistant message that has no result after it, in tool_use order. Run
// appends them before the planner sees a resumed session; other runtimes
// use it to do the same. It returns nil for a session that needs none.
func InterruptedResults(msgs []Message) []Message {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 || !msgs[last].HasToolUse() {
		return nil
	}
	answered := msgs[last+1:]
	var out []Message
	for _, b := range msgs[last].Blocks {
		if b.Type != BlockToolUse || slices.ContainsFunc(answered, func(m Message) bool {
			return m.Role == RoleTool && m.ToolUseID == b.ID
		}) {
			continue
		}
		out = append(out, NewToolResult(b.ID, interruptedText, true))
	}
	return out
}

// notRunText is the result of a call the run stopped before it started.
func notRunText(tool string) string {
	return fmt.Sprintf("cancelled: the run was stopped before tool %q ran", tool)
}

const interruptedText = "interrupted: the previous run stopped before this tool finished; it may or may not have taken effect"

// plan asks the planner for the next assistant message, sanitizes it and
// appends it. ok is false when the run has ended.
func (r *run) plan() (msg Message, ok bool) {
	n := len(r.history)
	system := r.agent.Instructions
	if o := r.opts.output; o != nil {
		system += o.instructions
	}
	if r.final != "" {
		system += "\n\n" + r.final
	}
	view, err := r.compress(r.history[:n:n], false)
	if err != nil {
		r.finish(StopError, "The run stopped: the compressor failed.", err)
		return Message{}, false
	}
	var resp *ModelResponse
	compacted := false
	for attempt := 1; ; attempt++ {
		r.req = ModelRequest{
			SessionID: r.sessionID,
			Turn:      r.turn,
			System:    system,
			Messages:  view,
			Tools:     r.p.specs,
			OnText:    r.onText,
		}
		if r.opts.output != nil {
			r.req.ResponseSchema = r.opts.output.schema
		}
		planCtx := r.turnCtx
		if len(r.agent.Hooks) > 0 {
			var herr error
			if planCtx, herr = r.beforePlan(planCtx, &r.req); herr != nil {
				r.finish(StopError, "The run stopped: a hook refused the planner call.", herr)
				return Message{}, false
			}
		}
		resp, err = r.agent.Planner.Plan(planCtx, &r.req)
		if err == nil && resp == nil {
			err = errors.New("planner returned no response")
		}
		if len(r.agent.Hooks) > 0 {
			r.afterPlan(planCtx, &r.req, resp, err)
		}
		if err != nil && !compacted && errors.Is(err, ErrContextLength) && r.ctx.Err() == nil && !r.stopped {
			// Too long for the model: compact harder and try once more.
			compacted = true
			if view, err = r.compress(r.history[:n:n], true); err != nil {
				break
			}
			attempt--
			continue
		}
		if err == nil || attempt >= r.agent.Retry.attempts() || !retryable(err) || r.ctx.Err() != nil || r.stopped {
			break
		}
		d := r.agent.Retry.delay(attempt, err)
		if !r.emit(PlannerRetry{Turn: r.turn, Attempt: attempt, Delay: d, Err: err}) {
			break
		}
		if sleep(r.ctx, d) != nil {
			break
		}
	}
	if err != nil {
		if r.ctx.Err() != nil {
			r.stopCancelled()
			return Message{}, false
		}
		r.finish(StopError, "The run stopped: the planner failed.", fmt.Errorf("agentrt: planner (turn %d): %w", r.turn, err))
		return Message{}, false
	}
	if r.stopped { // the consumer broke out during streaming
		r.stopCancelled()
		return Message{}, false
	}
	r.turns++
	msg, r.notes = r.sanitize(resp.Message)
	r.usage = r.usage.Add(resp.Usage)
	if err := r.append(msg); err != nil {
		r.finish(StopError, "The run stopped: the session store failed.", err)
		return Message{}, false
	}
	if resp.Usage != (Usage{}) {
		if err := r.record(RecordUsage, usageRecord{Turn: r.turn, Usage: resp.Usage}); err != nil {
			r.fail(msg, err)
			return Message{}, false
		}
	}
	if msg.HasToolUse() {
		// Write-ahead: the calls are durable before any of them runs.
		if err := r.sync(); err != nil {
			r.fail(msg, err)
			return Message{}, false
		}
	}
	if !r.emit(AssistantMessage{Turn: r.turn, Message: msg, Usage: resp.Usage, Finish: resp.Finish}) {
		r.abandon(msg, 0, "")
		r.stopCancelled()
		return Message{}, false
	}
	return msg, true
}

type usageRecord struct {
	Turn  int   `json:"turn"`
	Usage Usage `json:"usage"`
}

// fail ends the run on a store error after msg was appended: its tool_uses
// still get results (best effort), then Done and the error.
func (r *run) fail(msg Message, err error) {
	r.abandon(msg, 0, "")
	r.finish(StopError, "The run stopped: the session store failed.", err)
}

// SanitizeAssistant makes a planner's message a well-formed assistant
// message, as Run does before storing it: role set, stray Content moved into
// a text block, and every tool_use given a non-empty id unique within the
// message and an input that is valid JSON (an invalid one is kept as a JSON
// string). The planner's Blocks are copied before any change. notes maps
// the id of each tool_use that must not run to the error text the model is
// to see; it is nil when nothing was wrong. Other runtimes use it to keep
// the same guarantees.
func SanitizeAssistant(m Message, turn int) (_ Message, notes map[string]string) {
	return sanitizeMessage(m, turn, nil)
}

// sanitize is SanitizeAssistant that also decodes each tool_use's input
// with its tool, once, before the message is stored: Decode both validates
// the JSON and gives the value the call will use, so valid JSON is scanned
// once; only when Decode fails is the JSON checked on its own.
func (r *run) sanitize(m Message) (Message, map[string]string) {
	if r.decoded == nil {
		r.decoded = r.decBuf[:0]
	}
	r.decoded = r.decoded[:0]
	return sanitizeMessage(m, r.turn, func(b *Block, fixID bool) bool {
		var d decoded
		if e, ok := r.p.tools[b.Name]; ok && !fixID {
			d.entry, d.done = e, true
			d.input, d.err = e.tool.Decode(b.Input)
		}
		r.decoded = append(r.decoded, d)
		return d.done && d.err == nil
	})
}

// sanitizeMessage is SanitizeAssistant; inspect, if set, is called for
// every tool_use, in order, and reports whether its input is known to be
// valid JSON.
func sanitizeMessage(m Message, turn int, inspect func(b *Block, fixID bool) (validJSON bool)) (_ Message, notes map[string]string) {
	m.Role = RoleAssistant
	m.ToolUseID, m.IsError = "", false
	if m.Content != "" {
		m.Blocks = append([]Block{TextBlock(m.Content)}, m.Blocks...)
		m.Content = ""
	}
	copied := false
	for i := range m.Blocks {
		b := &m.Blocks[i]
		if b.Type != BlockToolUse {
			continue
		}
		fixID := b.ID == "" || slices.ContainsFunc(m.Blocks[:i], func(o Block) bool { return o.Type == BlockToolUse && o.ID == b.ID })
		valid := inspect != nil && inspect(b, fixID)
		fixInput := len(b.Input) > 0 && !valid && !json.Valid(b.Input)
		if !fixID && !fixInput {
			continue
		}
		if !copied {
			m.Blocks = slices.Clone(m.Blocks)
			b = &m.Blocks[i]
			copied = true
		}
		if notes == nil {
			notes = map[string]string{}
		}
		var note string
		if fixID {
			if b.ID == "" {
				note = "invalid tool_use: empty id; this call was not run. Give every tool_use a unique id."
			} else {
				note = fmt.Sprintf("invalid tool_use: duplicate id %q; this call was not run. Give every tool_use a unique id.", b.ID)
			}
			b.ID = fmt.Sprintf("agentrt_t%d_%d", turn, i)
		}
		if fixInput {
			if !fixID {
				note = fmt.Sprintf("tool %q: input is not valid JSON: %s; send the input as one JSON object", b.Name, truncate(string(b.Input), 200))
			}
			// Kept as a JSON string so that the session stays valid JSON.
			q, _ := json.Marshal(string(b.Input))
			b.Input = q
		}
		notes[b.ID] = note
	}
	return m, notes
}

// truncate shortens s to at most n bytes, without splitting a rune, and
// marks the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "…"
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does
// not end inside a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// decoded is a tool_use's input as its tool decoded it in sanitize.
type decoded struct {
	entry *toolEntry
	done  bool // Decode was called
	input any
	err   error
}

// call is one tool_use being handled.
type call struct {
	use     Block
	tool    Tool
	spec    ToolSpec
	input   any
	done    bool // result decided without running the tool
	result  Message
	err     error
	dur     time.Duration
	pre     decoded         // the input as decoded by sanitize
	ctx     context.Context // the tool's context, when a hook extended it
	inv     *ToolInvocation // for AfterTool hooks
	herrs   []*HookError    // AfterTool failures, reported by finishCall
	pending []Event         // sub-agent events to yield before the result
	inline  bool            // runs on the run's goroutine
}

// runTools handles every tool_use of msg and appends the results in order.
// Read-only tools that follow each other run concurrently (bounded);
// a write tool runs alone, in order. It returns false when the run ended.
func (r *run) runTools(msg Message) bool {
	r.calls = r.calls[:0]
	r.looping = 0
	for _, b := range msg.Blocks {
		if b.Type == BlockToolUse {
			c := call{use: b}
			if k := len(r.calls); k < len(r.decoded) {
				c.pre = r.decoded[k]
			}
			r.calls = append(r.calls, c)
		}
	}
	calls := r.calls
	for i := 0; i < len(calls); {
		if r.stopped || r.ctx.Err() != nil {
			return r.skipRest(calls[i:])
		}
		c := &calls[i]
		r.check(c)
		if c.done || !c.spec.ReadOnly || r.p.maxPar == 1 {
			if !c.done {
				c.inline = true
				r.execute(c)
			}
			if !r.finishCall(c) {
				return false
			}
			i++
			continue
		}
		// A run of read-only calls: check them all, run them together.
		j := i + 1
		for j < len(calls) && !r.stopped {
			e, ok := r.p.tools[calls[j].use.Name]
			if _, bad := r.notes[calls[j].use.ID]; bad || !ok || !e.spec.ReadOnly {
				break
			}
			r.check(&calls[j])
			j++
		}
		r.executeBatch(calls[i:j])
		for k := i; k < j; k++ {
			if !r.finishCall(&calls[k]) {
				return false
			}
		}
		i = j
	}
	if err := r.sync(); err != nil {
		r.finish(StopError, "The run stopped: the session store failed.", err)
		return false
	}
	return true
}

// check announces a call, looks its tool up, decodes its input and asks the
// permission checker. A failure decides the call's (error) result.
func (r *run) check(c *call) {
	e, ok := r.p.tools[c.use.Name]
	r.emit(ToolCall{Turn: r.turn, ToolUse: c.use, ReadOnly: ok && e.spec.ReadOnly})
	if note, bad := r.notes[c.use.ID]; bad {
		r.decide(c, note, nil)
		return
	}
	if !ok {
		msg := fmt.Sprintf("unknown tool %q; the available tools are: %s", c.use.Name, r.p.names)
		if r.p.names == "" {
			msg = fmt.Sprintf("unknown tool %q; no tools are available", c.use.Name)
		}
		r.decide(c, msg, nil)
		return
	}
	t := e.tool
	c.tool = t
	c.spec = e.spec
	in, err := c.pre.input, c.pre.err
	if !c.pre.done || c.pre.entry != e {
		in, err = t.Decode(c.use.Input)
	}
	if err != nil {
		r.decide(c, fmt.Sprintf("tool %q: %v", c.use.Name, err), err)
		return
	}
	r.preq = PermissionRequest{
		SessionID: r.sessionID,
		ToolUseID: c.use.ID,
		Tool:      c.spec,
		Input:     in,
		RawInput:  c.use.Input,
	}
	checker := r.p.permission
	if r.opts.permission != nil {
		checker = r.opts.permission
	}
	d, err := checker.Check(r.ctx, &r.preq)
	r.preq = PermissionRequest{}
	if err != nil {
		d = Decision{Reason: fmt.Sprintf("permission check failed: %v", err), Source: "error"}
	}
	if d.Allow && d.Input != nil {
		if raw, ok := rawJSON(d.Input); ok {
			in, err = t.Decode(raw)
			if err != nil {
				d = Decision{Reason: fmt.Sprintf("the permission checker rewrote the input, and the new input is invalid: %v", err), Source: d.Source}
			}
		} else {
			in = d.Input
		}
	}
	r.emit(PermissionDecision{Turn: r.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
	// The audit trail: every decision but the plain allowing of a
	// read-only tool by policy.
	if !d.Allow || !c.spec.ReadOnly || d.Input != nil || d.Source != "policy" {
		rec := permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Allow: d.Allow, Reason: d.Reason, Source: d.Source}
		if raw, ok := rawJSON(d.Input); ok {
			rec.Input = raw
		} else if d.Input != nil {
			rec.Input, _ = json.Marshal(d.Input)
		}
		if err := r.record(RecordPermission, rec); err != nil {
			// The audit trail could not be written: do not run the tool.
			r.decide(c, "permission denied: the decision could not be recorded", err)
			return
		}
	}
	if !d.Allow {
		reason := d.Reason
		if reason == "" {
			reason = fmt.Sprintf("permission denied for tool %q", c.use.Name)
		}
		r.decide(c, reason, nil)
		return
	}
	if len(r.agent.Hooks) > 0 {
		inv := &ToolInvocation{SessionID: r.sessionID, Turn: r.turn, ToolUseID: c.use.ID, Tool: c.spec, Input: in, RawInput: c.use.Input}
		ctx, reason, herr := r.beforeTool(r.turnCtx, inv)
		if herr != nil {
			r.hookFailed(herr)
		}
		if reason != "" {
			d := Decision{Reason: reason, Source: "hook"}
			r.emit(PermissionDecision{Turn: r.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
			if err := r.record(RecordPermission, permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Reason: reason, Source: "hook"}); err != nil {
				reason = "permission denied: the decision could not be recorded"
			}
			r.decide(c, reason, &BlockedError{Reason: reason})
			return
		}
		in = inv.Input
		c.ctx, c.inv = ctx, inv
	}
	c.input = in
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

// decide gives c an error result without running it.
func (r *run) decide(c *call, text string, err error) {
	c.done = true
	c.result = NewToolResult(c.use.ID, text, true)
	if err == nil {
		err = errors.New(text)
	}
	c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
}

// executeBatch runs read-only calls concurrently, at most maxPar at once,
// and waits for all of them.
func (r *run) executeBatch(batch []call) {
	pending := 0
	for i := range batch {
		if !batch[i].done {
			pending++
		}
	}
	if pending <= 1 {
		for i := range batch {
			if !batch[i].done {
				batch[i].inline = true
				r.execute(&batch[i])
			}
		}
		return
	}
	sem := make(chan struct{}, r.p.maxPar)
	var wg sync.WaitGroup
	for i := range batch {
		c := &batch[i]
		if c.done {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.execute(c)
		}()
	}
	wg.Wait()
}

// execute runs one allowed call with its timeout, turning an error, a
// panic, a timeout or a cancellation into an is_error result. It is safe
// to call concurrently for different calls.
func (r *run) execute(c *call) {
	if err := r.ctx.Err(); err != nil {
		c.result = NewToolResult(c.use.ID, notRunText(c.use.Name), true)
		c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
		return
	}
	ctx := r.turnCtx
	if c.ctx != nil {
		ctx = c.ctx
	}
	timeout := c.spec.Timeout
	if timeout == 0 {
		timeout = r.agent.ToolTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if _, ok := c.tool.(*agentTool); ok {
		ctx = context.WithValue(ctx, toolCallKey{}, &toolCallCtx{r: r, c: c, inline: c.inline})
	}
	start := time.Now()
	if c.inv != nil {
		c.inv.Start = start
		defer r.afterToolHooks(ctx, c)
	}
	defer func() {
		if v := recover(); v != nil {
			c.dur = time.Since(start)
			c.result = NewToolResult(c.use.ID, fmt.Sprintf("tool %q panicked: %v", c.use.Name, v), true)
			c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	out, err := c.tool.Execute(ctx, c.input)
	c.dur = time.Since(start)
	if err == nil {
		c.result = NewToolResult(c.use.ID, out, false)
		return
	}
	var text string
	switch {
	case r.ctx.Err() != nil:
		text = fmt.Sprintf("cancelled: the run was stopped while tool %q was running; it may or may not have taken effect", c.use.Name)
	case timeout > 0 && ctx.Err() == context.DeadlineExceeded:
		text = fmt.Sprintf("tool %q timed out after %v", c.use.Name, timeout)
		err = fmt.Errorf("timed out after %v: %w", timeout, err)
	default:
		text = err.Error()
	}
	c.result = NewToolResult(c.use.ID, text, true)
	c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
}

// afterToolHooks lets the AfterTool hooks see and change c's result. It
// runs on the tool's goroutine; failures are kept for finishCall.
func (r *run) afterToolHooks(ctx context.Context, c *call) {
	out := ToolOutcome{Content: c.result.Content, IsError: c.result.IsError, Err: c.err, Duration: c.dur}
	c.herrs = r.afterTool(ctx, c.inv, &out)
	c.result.Content, c.result.IsError = out.Content, out.IsError
}

// finishCall appends a call's result and emits it. It returns false when
// the run has ended (store failure); a stopped consumer does not end the
// appending of results.
func (r *run) finishCall(c *call) bool {
	for _, herr := range c.herrs {
		r.hookFailed(herr)
	}
	for _, ev := range c.pending {
		r.emit(ev)
	}
	var full string
	limit := r.agent.MaxToolOutput
	if limit == 0 {
		limit = DefaultMaxToolOutput
	}
	if cut, ok := TruncateOutput(c.result.Content, limit); ok {
		full = c.result.Content
		c.result.Content = cut
	}
	if g := r.agent.LoopGuard; !g.Disabled && !c.done {
		warn, _ := g.limits()
		if n := r.loops.observe(c.use.Name, c.use.Input, c.result); n >= warn {
			c.result.Content += loopNote(n)
			r.looping = max(r.looping, n)
		}
	}
	if err := r.append(c.result); err != nil {
		r.finish(StopError, "The run stopped: the session store failed.", err)
		return false
	}
	r.emit(ToolResult{Turn: r.turn, Tool: c.use.Name, Message: c.result, Err: c.err, Duration: c.dur, FullOutput: full})
	return true
}

// skipRest gives every call not yet handled a "cancelled" result, then
// ends the run as cancelled. It returns false.
func (r *run) skipRest(rest []call) bool {
	for i := range rest {
		c := &rest[i]
		c.result = NewToolResult(c.use.ID, notRunText(c.use.Name), true)
		if err := r.p.store.Append(r.storeCtx(), r.sessionID, c.result); err != nil {
			r.finish(StopError, "The run stopped: the session store failed.", err)
			return false
		}
		r.history = append(r.history, c.result)
	}
	r.stopCancelled()
	return false
}

// abandon gives every tool_use of msg from index from on an error result
// (text, or "cancelled" if empty), for a run that ends before running them.
func (r *run) abandon(msg Message, from int, text string) {
	i := 0
	for _, b := range msg.Blocks {
		if b.Type != BlockToolUse {
			continue
		}
		if i >= from {
			t := text
			if t == "" {
				t = notRunText(b.Name)
			}
			res := NewToolResult(b.ID, t, true)
			if r.p.store.Append(r.storeCtx(), r.sessionID, res) != nil {
				return
			}
			r.history = append(r.history, res)
		}
		i++
	}
}
