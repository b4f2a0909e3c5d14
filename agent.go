package agentrt

import (
	"context"
	"fmt"
	"iter"
	"math"
	"reflect"
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

// defaultMaxTurns is the turn limit of an Agent whose MaxTurns is 0.
const defaultMaxTurns = 20

// defaultMaxParallelTools bounds the read-only tools run at once when
// Agent.MaxParallelTools is 0.
const defaultMaxParallelTools = 4

// Agent is an agent definition: instructions, tools, the planner that picks
// the next step, the permission checker that guards tool calls, the store
// that keeps sessions, and limits. Its zero value is not usable: Planner is
// required.
//
// Fill the fields, then call Run as often as needed, concurrently for
// different sessions: an Agent is safe for concurrent use. Every field is
// read once, at the first Run, and a change made afterwards is not seen:
// to change anything, build a new Agent value. A setting that cannot hold
// (a negative limit, a cost budget without prices) makes every Run fail
// with [ErrInvalidAgent].
type Agent struct {
	// Name identifies the agent in events, logs and traces. Optional.
	Name string
	// Instructions is the system prompt.
	Instructions string
	// Tools are the tools the model may call. Names must be unique.
	Tools []Tool
	// Planner chooses each next step; usually a provider adapter, such
	// as openai.New(client, "gpt-4.1-mini", nil).
	Planner Planner
	// Permission decides whether each tool call may run. Nil means
	// AllowReadOnly(): read-only tools run, write tools are denied.
	Permission PermissionChecker
	// Store keeps the sessions. Nil means an in-memory store made at the
	// first Run (sessions live as long as the Agent value).
	Store SessionStore
	// MaxTurns caps the planner calls of one Run; 0 means 20.
	MaxTurns int
	// MaxParallelTools bounds how many read-only tools of one assistant
	// message run at once; 0 means 4, 1 runs them one
	// at a time.
	MaxParallelTools int
	// ToolTimeout bounds each tool call whose tool has no timeout of its
	// own; 0 means no limit.
	ToolTimeout time.Duration
	// MaxToolOutput caps the size of a tool result the model sees, in
	// bytes; a longer output is cut with a note saying how much was cut
	// (the whole output stays in ToolResult.FullOutput). 0 means
	// 64 KiB; negative means no cap.
	MaxToolOutput int
	// LoopGuard stops a model that repeats itself; on by default.
	LoopGuard LoopGuard
	// Retry says how transient planner failures are retried.
	Retry RetryPolicy
	// Budget limits the tokens, cost and time of each run.
	Budget Budget
	// Compressor chooses what the planner sees of a long session; nil
	// sends the whole session. See Window and package summarize.
	Compressor Compressor
	// ContextTokens is the token budget of the messages sent to the
	// planner, passed to the Compressor; 0 means none.
	ContextTokens int
	// TokenCounter counts the tokens of messages for the Compressor; nil
	// means an estimate of about four bytes a token, plus a few per
	// message and block (it over-estimates more often than not).
	TokenCounter func([]Message) int
	// Hooks are called around runs, turns, planner calls and tool calls;
	// see Hooks. With none, a Run skips the hook machinery.
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

// prepared is what Run derives from the Agent once, at the first Run.
type prepared struct {
	err           error
	instructions  string
	tools         map[string]*toolEntry
	specs         []ToolSpec
	names         string // "a", "b" for the unknown-tool message
	store         SessionStore
	permission    PermissionChecker
	maxTurns      int
	maxPar        int
	maxOutput     int
	toolTimeout   time.Duration
	guard         LoopGuard
	budget        Budget
	noFinal       bool
	hooks         []Hooks
	name          string
	planner       Planner
	retry         RetryPolicy
	compressor    Compressor
	contextTokens int
	tokenCounter  func([]Message) int
	provider      ProviderInfo // the Planner's Describe, if it has one
	// The store's abilities, asserted once (nil when it lacks one), and,
	// for the trace, the provider and model as each planner call's record
	// gives them.
	records       RecordStore
	syncer        Syncer
	traceProvider []byte
	toolPrint     toolPrint // the fingerprint of specs (fingerprint.go)
}

// prepareTrace works out once what every run's store writes and trace
// need.
func (p *prepared) prepareTrace() {
	p.records, _ = p.store.(RecordStore)
	p.syncer, _ = p.store.(Syncer)
	var b []byte
	if p.provider.Name != "" {
		b = append(b, `,"provider":`...)
		b = appendJSONString(b, p.provider.Name)
	}
	if p.provider.Model != "" {
		b = append(b, `,"model":`...)
		b = appendJSONString(b, p.provider.Model)
	}
	p.traceProvider = b
}

// unknownTool is the result text of a call of a tool that does not exist.
func (p *prepared) unknownTool(name string) string {
	if p.names == "" {
		return fmt.Sprintf("unknown tool %q; no tools are available", name)
	}
	return fmt.Sprintf("unknown tool %q; the available tools are: %s", name, p.names)
}

func (a *Agent) prepare() *prepared {
	a.once.Do(func() {
		// Tool.Spec and the Planner's Describe are user code: a panic or
		// Goexit in them makes the Agent invalid, reported by every Run.
		// It runs once per Agent, on a goroutine of its own (contain), so
		// that a Goexit there cannot leave the Agent half prepared.
		if isNil(a.Planner) {
			a.prep = &prepared{err: ErrNoPlanner}
			return
		}
		var p *prepared
		what := "a tool's Spec"
		if perr := contain(func() {
			if p = a.prepareTools(); p.err == nil {
				if d, ok := a.Planner.(describer); ok {
					what = "the Planner's Describe"
					p.provider = d.Describe()
				}
				p.prepareTrace()
			}
		}); perr != nil {
			p = &prepared{err: fmt.Errorf("%w: %s panicked: %v", ErrInvalidAgent, what, perr.Value)}
		}
		a.prep = p
	})
	return a.prep
}

func (a *Agent) prepareTools() *prepared {
	if err := a.checkSettings(); err != nil {
		return &prepared{err: err}
	}
	p := &prepared{
		instructions:  a.Instructions,
		tools:         make(map[string]*toolEntry, len(a.Tools)),
		specs:         make([]ToolSpec, 0, len(a.Tools)),
		store:         a.Store,
		permission:    a.Permission,
		maxTurns:      a.MaxTurns,
		maxPar:        a.MaxParallelTools,
		maxOutput:     a.MaxToolOutput,
		toolTimeout:   a.ToolTimeout,
		guard:         a.LoopGuard,
		budget:        a.Budget,
		noFinal:       a.NoFinalAnswer,
		hooks:         slices.Clone(a.Hooks),
		name:          a.Name,
		planner:       a.Planner,
		retry:         a.Retry,
		compressor:    a.Compressor,
		contextTokens: a.ContextTokens,
		tokenCounter:  a.TokenCounter,
	}
	names := make([]string, 0, len(a.Tools))
	for i, t := range a.Tools {
		if t == nil {
			return &prepared{err: fmt.Errorf("%w: Tools[%d] is nil", ErrInvalidAgent, i)}
		}
		s := t.Spec()
		if !toolNameRE.MatchString(s.Name) {
			return &prepared{err: fmt.Errorf("%w: Tools[%d] has an invalid name %q: must match ^[a-zA-Z0-9_-]{1,64}$", ErrInvalidAgent, i, s.Name)}
		}
		if s.Timeout < 0 {
			return &prepared{err: fmt.Errorf("%w: tool %q has a negative timeout (%v)", ErrInvalidAgent, s.Name, s.Timeout)}
		}
		if _, dup := p.tools[s.Name]; dup {
			return &prepared{err: fmt.Errorf("%w: two tools are named %q", ErrInvalidAgent, s.Name)}
		}
		p.tools[s.Name] = &toolEntry{tool: t, spec: s}
		p.specs = append(p.specs, s)
		names = append(names, strconv.Quote(s.Name))
	}
	slices.Sort(names)
	p.names = strings.Join(names, ", ")
	p.toolPrint = printTools(p.specs)
	if p.store == nil {
		p.store = &MemoryStore{}
	}
	if p.permission == nil {
		p.permission = AllowReadOnly()
	}
	if p.maxTurns <= 0 {
		p.maxTurns = defaultMaxTurns
	}
	if p.maxPar <= 0 {
		p.maxPar = defaultMaxParallelTools
	}
	if p.maxOutput == 0 {
		p.maxOutput = defaultMaxToolOutput
	}
	return p
}

// checkSettings refuses a limit that would otherwise be dropped or
// misread without a word: a negative count or duration, a cost budget
// without prices.
func (a *Agent) checkSettings() error {
	var bad []string
	negative := func(name string, v int64) {
		if v < 0 {
			bad = append(bad, fmt.Sprintf("%s is %d; it must not be negative", name, v))
		}
	}
	negative("MaxTurns", int64(a.MaxTurns))
	negative("MaxParallelTools", int64(a.MaxParallelTools))
	negative("ToolTimeout", int64(a.ToolTimeout))
	negative("ContextTokens", int64(a.ContextTokens))
	negative("LoopGuard.Warn", int64(a.LoopGuard.Warn))
	negative("LoopGuard.Stop", int64(a.LoopGuard.Stop))
	negative("Retry.MaxAttempts", int64(a.Retry.MaxAttempts))
	negative("Retry.BaseDelay", int64(a.Retry.BaseDelay))
	negative("Retry.MaxDelay", int64(a.Retry.MaxDelay))
	negative("Budget.MaxTokens", int64(a.Budget.MaxTokens))
	negative("Budget.MaxDuration", int64(a.Budget.MaxDuration))
	b := a.Budget
	for _, m := range []struct {
		name string
		v    float64
	}{{"Budget.MaxCost", b.MaxCost}, {"Budget.Prices.Input", b.Prices.Input}, {"Budget.Prices.Output", b.Prices.Output},
		{"Budget.Prices.CacheRead", b.Prices.CacheRead}, {"Budget.Prices.CacheWrite", b.Prices.CacheWrite}} {
		if !(m.v >= 0) || math.IsInf(m.v, 1) { // NaN fails v >= 0
			bad = append(bad, fmt.Sprintf("%s is %v; it must be a finite number, not negative", m.name, m.v))
		}
	}
	if b.MaxCost > 0 && b.Prices == (Prices{}) {
		bad = append(bad, "Budget.MaxCost is set but Budget.Prices is zero, so the cost cannot be counted")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidAgent, strings.Join(bad, "; "))
	}
	return nil
}

// Run appends input as a user message to the session and runs the loop
// (see the package documentation): planner, tools, results, again, until
// the model answers without calling a tool. Each step is yielded as an
// [Event]. Nothing happens until the iterator is ranged over; Run on an
// existing session continues it (an empty input then adds no user message).
//
// Four early failures yield one error and nothing else, the session
// untouched: [ErrInvalidAgent], [ErrSessionBusy], a session that cannot be
// loaded, and [ErrEmptyInput]. Every other run ends in one place: each open
// tool_use gets an is_error result (except the calls a [StopPending] run
// leaves to a person: see [Decision.Pending] and [Agent.Resume]), the session is
// synced, and [Done] is the last event, saying why and in which [Layer]; for StopError and
// StopCancelled the error follows, once, with a nil event. A limit is not
// an error ([Done.Err]). Tool failures never end a run; a panic in the
// planner ends it with an error wrapping [*PanicError], the session valid.
// The invariants hold at every yield: see "Two invariants" in the package
// documentation.
//
// Breaking out of the range loop cancels the run; Run waits for the tools
// still running, so no goroutine outlives it. A panic in the loop body, or a
// runtime.Goexit in it or in a callback on this goroutine, goes on as Go
// defines once the session is left valid: the run is cancelled, the tools
// still running are waited for, each tool_use left open gets an
// "interrupted" result, and the session is unlocked; nothing more is
// yielded. The iterator runs once: ranging over it again yields
// [ErrRunReused].
func (a *Agent) Run(ctx context.Context, sessionID, input string) iter.Seq2[Event, error] {
	return a.run(ctx, sessionID, input, runOptions{})
}

// isNil reports whether p is nil or a nil pointer (or map, func, chan)
// in an interface: a Planner that would panic on its first call.
func isNil(p Planner) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}
