package agentrt_test

// TestRunExtraProperties extends the property test of property_test.go to
// what it leaves out: Budget stops (tokens and time), LoopGuard stops,
// Compressors (Window, summarize.Compressor, a faulty one), RunTyped, sub-agents
// (AgentTool), planner retries (*agentrt.ProviderError of every kind, with
// and without RetryAfter), ErrContextLength compaction, a tiny
// MaxToolOutput, a JSONLStore with a tiny MaxLineSize and hooks around
// parallel read-only groups, each with faults: panics and runtime.Goexit in
// the Compressor, in the summarizer's provider, in a sub-agent's tools and
// planner, planner errors, cancellation at random points and the consumer
// breaking out.
//
// After every run it checks the contract as TestRunProperties does (protocol,
// stored session, events against the session, hooks), plus every child
// session of a sub-agent (named parent~tool~tool_use_id), and that
// Done.Reason and Done.Layer are those of what was injected: the first
// fatal fault when one fired, otherwise what the scenario's mode leads to
// (complete, budget_exceeded/limit, loop_detected/limit). Then it reloads
// and resumes the session. Each store's batch ends with goleak.VerifyNone.
//
// CI runs AGENTRT_PROPERTY_RUNS runs per store (default 600, about 10 s
// with -race on 2 cores). By hand, and to replay one seed:
//
//	AGENTRT_PROPERTY_RUNS=20000 go test -run TestRunExtraProperties -count=1 .
//	AGENTRT_PROPERTY_SEED=<seed> go test -race -run 'TestRunExtraProperties/jsonl' -count=1 -v .

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/summarize"
)

// xMode is what a run leads to when no fault stops it.
type xMode string

const (
	xNormal   xMode = "normal"   // tool turns, then an answer: complete
	xTokens   xMode = "tokens"   // endless tool turns, Budget.MaxTokens
	xDuration xMode = "duration" // the planner waits past Budget.MaxDuration
	xLoop     xMode = "loop"     // the same call again and again: LoopGuard
)

// xStep is one planner step: a response, maybe after failures.
type xStep struct {
	fault  propFault // fPanic, fGoexit, fError, fNil: the step's call fails so
	kind   error     // a ProviderError kind: the step fails fails times first
	fails  int
	after  time.Duration // ProviderError.RetryAfter
	cancel bool          // the planner cancels the run and returns ctx.Err()
	hang   bool          // the planner waits for its context (duration mode)
	badOut bool          // typed: an answer that does not decode
	msg    agentrt.Message
}

type xScenario struct {
	seed        uint64
	store       string
	mode        xMode
	typed       bool
	typedRetry  int // TypedOptions.MaxRetries
	steps       []xStep
	maxTurns    int
	maxPar      int
	maxOut      int // Agent.MaxToolOutput
	lineSize    int // JSONLOptions.MaxLineSize, 0 default
	attempts    int // Retry.MaxAttempts
	guardWarn   int
	guardStop   int
	maxTokens   int
	maxDur      time.Duration
	noFinal     bool
	compressor  string // "none", "window", "summarizer", "faulty-window", "faulty-summarizer"
	ctxTokens   int
	compFaultAt int // the Compress call that faults (faulty-*), 0 never
	compFault   propFault
	sumFaultAt  int // the Summarizer provider call that faults, 0 never
	sumFault    propFault
	hooks       bool
	rates       map[string]propRate
	breakAt     int
	cancelAt    int
}

func (sc *xScenario) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "  seed=%d store=%s mode=%s typed=%v(retries %d) maxTurns=%d maxPar=%d maxToolOutput=%d lineSize=%d attempts=%d guard=%d/%d maxTokens=%d maxDuration=%v noFinal=%v\n",
		sc.seed, sc.store, sc.mode, sc.typed, sc.typedRetry, sc.maxTurns, sc.maxPar, sc.maxOut, sc.lineSize, sc.attempts, sc.guardWarn, sc.guardStop, sc.maxTokens, sc.maxDur, sc.noFinal)
	fmt.Fprintf(&sb, "  compressor=%s contextTokens=%d compressFault=%s@%d summarizerFault=%s@%d hooks=%v breakAt=%d cancelAt=%d rates=%v\n",
		sc.compressor, sc.ctxTokens, sc.compFault, sc.compFaultAt, sc.sumFault, sc.sumFaultAt, sc.hooks, sc.breakAt, sc.cancelAt, sc.rates)
	for i, s := range sc.steps {
		fmt.Fprintf(&sb, "  step %d", i+1)
		if s.fault != fNone {
			fmt.Fprintf(&sb, " [%s]", s.fault)
		}
		if s.kind != nil {
			fmt.Fprintf(&sb, " [%v x%d retryAfter=%v]", s.kind, s.fails, s.after)
		}
		if s.cancel {
			sb.WriteString(" [cancel]")
		}
		if s.hang {
			sb.WriteString(" [hang]")
		}
		if s.badOut {
			sb.WriteString(" [bad typed answer]")
		}
		fmt.Fprintf(&sb, ": %s\n", propMsg(s.msg))
	}
	return sb.String()
}

var xKinds = []error{agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrBadResponse, agentrt.ErrAuth, agentrt.ErrInvalidRequest, agentrt.ErrContextLength}

// xGenerate makes the scenario of a seed.
func xGenerate(seed uint64, store string) *xScenario {
	r := rand.New(rand.NewPCG(seed, seed^0x51ed2701f3a5c7b9))
	sc := &xScenario{seed: seed, store: store, maxTurns: 40, compressor: "none"}
	sc.mode = []xMode{xNormal, xNormal, xTokens, xDuration, xLoop}[r.IntN(5)]
	sc.typed = r.IntN(4) == 0
	sc.typedRetry = r.IntN(3) - 1 // -1 none, 0 default (2), 1
	sc.maxPar = r.IntN(5)
	sc.maxOut = []int{0, 0, -1, 1 + r.IntN(64), 200}[r.IntN(5)]
	if store == "jsonl" && r.IntN(2) == 0 {
		sc.lineSize = []int{1500, 4096}[r.IntN(2)]
	}
	sc.attempts = []int{0, 1, 2, 4}[r.IntN(4)]
	sc.guardWarn = 2 + r.IntN(2)
	sc.guardStop = sc.guardWarn + r.IntN(3)
	sc.noFinal = r.IntN(3) == 0
	switch r.IntN(6) {
	case 1:
		sc.compressor = "window"
	case 2:
		sc.compressor = "summarizer"
	case 3:
		sc.compressor = "faulty-window"
	case 4:
		sc.compressor = "faulty-summarizer"
	}
	if sc.compressor != "none" {
		sc.ctxTokens = []int{0, 60, 200, 1000}[r.IntN(4)]
	}
	if strings.HasPrefix(sc.compressor, "faulty") && r.IntN(2) == 0 {
		sc.compFaultAt = 1 + r.IntN(6)
		sc.compFault = []propFault{fPanic, fGoexit, fError, fNil}[r.IntN(4)]
	}
	if strings.HasSuffix(sc.compressor, "summarizer") && r.IntN(2) == 0 {
		sc.sumFaultAt = 1 + r.IntN(3)
		sc.sumFault = []propFault{fPanic, fGoexit, fError, fNil}[r.IntN(4)]
	}
	sc.hooks = r.IntN(3) == 0 && sc.mode != xLoop // a blocked ping would never loop
	sc.rates = map[string]propRate{
		"exec":       propRandRate(r, fPanic, fGoexit, fError),
		"child-plan": propRandRate(r, fPanic, fGoexit, fError, fRewrite), // fRewrite: a retryable ProviderError
		"child-exec": propRandRate(r, fPanic, fGoexit, fError),
	}
	if sc.hooks {
		for _, st := range []string{"BeforeTool", "AfterTool", "AfterPlan", "OnTurnEnd"} {
			if r.IntN(2) == 0 {
				modes := []propFault{fPanic, fGoexit}
				if st == "BeforeTool" {
					modes = append(modes, fError, fBlock)
				}
				sc.rates["hook:"+st] = propRate{Pct: []uint64{10, 30}[r.IntN(2)], Modes: modes}
			}
		}
		if r.IntN(8) == 0 {
			sc.rates["hook:BeforePlan"] = propRate{Pct: 20, Modes: []propFault{fPanic, fGoexit, fError}}
		}
	}

	k := 0
	toolMsg := func() agentrt.Message {
		n := 1 + r.IntN(4)
		if r.IntN(5) == 0 {
			n = 5 + r.IntN(6)
		}
		var blocks []agentrt.Block
		for range n {
			k++
			var b agentrt.Block
			switch r.IntN(6) {
			case 0, 1:
				b = agentrt.ToolUseBlock("", "lookup", json.RawMessage(fmt.Sprintf(`{"k":"x%d"}`, k)))
			case 2:
				b = agentrt.ToolUseBlock("", "big", json.RawMessage(fmt.Sprintf(`{"k":"x%d","n":%d}`, k, r.IntN(16))))
			case 3:
				b = agentrt.ToolUseBlock("", "write", json.RawMessage(fmt.Sprintf(`{"k":"x%d"}`, k)))
			default:
				b = agentrt.ToolUseBlock("", "agent", json.RawMessage(fmt.Sprintf(`{"task":"x%d"}`, k)))
			}
			b.ID = fmt.Sprintf("call_%d", k)
			blocks = append(blocks, b)
		}
		return agentrt.NewAssistantMessage(blocks...)
	}
	answer := func(bad bool) agentrt.Message {
		if bad {
			return agentrt.NewAssistantMessage(agentrt.TextBlock(`{"answer": 7}`))
		}
		return agentrt.NewAssistantMessage(agentrt.TextBlock(`{"answer":"done"}`))
	}
	switch sc.mode {
	case xNormal:
		for range r.IntN(5) {
			sc.steps = append(sc.steps, xStep{msg: toolMsg()})
		}
		if sc.typed {
			for range r.IntN(3) {
				sc.steps = append(sc.steps, xStep{msg: answer(true), badOut: true})
			}
		}
		sc.steps = append(sc.steps, xStep{msg: answer(false)})
	case xTokens, xLoop:
		sc.maxTokens = 20 * (1 + r.IntN(6))
		if sc.mode == xLoop {
			sc.maxTokens = 0
		}
		for range 30 {
			m := toolMsg()
			if sc.mode == xLoop {
				k++
				m = agentrt.NewAssistantMessage(agentrt.ToolUseBlock(fmt.Sprintf("call_%d", k), "ping", json.RawMessage(`{"k":"same"}`)))
			}
			sc.steps = append(sc.steps, xStep{msg: m})
		}
	case xDuration:
		sc.maxDur = time.Duration(1+r.IntN(3)) * time.Millisecond
		n := r.IntN(4)
		for range n {
			sc.steps = append(sc.steps, xStep{msg: toolMsg()})
		}
		sc.steps = append(sc.steps, xStep{hang: true})
	}
	for i := range sc.steps {
		if sc.steps[i].hang {
			continue
		}
		odds := 16
		if len(sc.steps) > 10 {
			odds = 60 // long scripts: leave room for the budget and the loop guard
		}
		switch r.IntN(odds) {
		case 0:
			sc.steps[i].fault = []propFault{fPanic, fGoexit, fError, fNil}[r.IntN(4)]
		case 1, 2, 3:
			sc.steps[i].kind = xKinds[r.IntN(len(xKinds))]
			sc.steps[i].fails = 1 + r.IntN(4)
			if r.IntN(3) == 0 {
				sc.steps[i].after = time.Duration(1+r.IntN(300)) * time.Microsecond
			}
		case 4:
			if r.IntN(3) == 0 {
				sc.steps[i].cancel = true
			}
		}
	}
	if !sc.typed && r.IntN(6) == 0 {
		sc.breakAt = 1 + r.IntN(40)
	}
	if r.IntN(6) == 0 {
		sc.cancelAt = 1 + r.IntN(40)
	}
	return sc
}

// xOracle records, in order, what an injected fault must end the run
// with, and what disturbs the expectation (a cancellation).
type xOracle struct {
	mu        sync.Mutex
	fatal     []xFatal
	cancelled bool
	retries   int // retryable failures that must be retried
	children  map[string]bool
}

type xFatal struct {
	what   string
	reason agentrt.StopReason
	layer  agentrt.Layer
	is     error // the run's error must match (errors.Is), or nil
	panic  bool  // the run's error must wrap a *PanicError
	output bool  // the run's error must be an *OutputError
}

func (o *xOracle) add(f xFatal) {
	o.mu.Lock()
	o.fatal = append(o.fatal, f)
	o.mu.Unlock()
}

// xTyped is the output type of typed runs.
type xTyped struct {
	Answer string `json:"answer"`
}

// xCompressor wraps a Compressor with a fault at one call.
type xCompressor struct {
	inner  agentrt.Compressor
	plan   *propPlan
	at     int
	fault  propFault
	oracle *xOracle
	mu     sync.Mutex
	n      int
}

func (c *xCompressor) Compress(ctx context.Context, req *agentrt.CompressRequest) (*agentrt.CompressResult, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	if n == c.at && c.fault != fNone {
		f := xFatal{what: "compressor " + c.fault.String(), reason: agentrt.StopError, layer: agentrt.LayerPlanner, panic: c.fault == fPanic || c.fault == fGoexit}
		if c.fault == fError {
			f.is = errPropInjected
		}
		c.oracle.add(f)
		c.plan.record(propFired{Kind: "compressor", Key: fmt.Sprint(n), Mode: c.fault})
		switch c.fault {
		case fPanic:
			panic("injected panic in compressor")
		case fGoexit:
			runtime.Goexit()
		case fError:
			return nil, errPropInjected
		case fNil:
			return nil, nil
		}
	}
	return c.inner.Compress(ctx, req)
}

func (sc *xScenario) propSeed() uint64 { return sc.seed }

func (sc *xScenario) prefilled() []agentrt.Message { return nil }

// open opens the scenario's store in dir.
func (sc *xScenario) open(dir string, mem *agentrt.MemoryStore) (agentrt.SessionStore, func(), error) {
	if sc.store == "memory" {
		return mem, func() {}, nil
	}
	s, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{MaxLineSize: sc.lineSize})
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

// run runs one scenario on store. Its checks are TestRunProperties'
// (protocol, stored session, events against the session, hooks) plus
// xCheckOutcome, xCheckTyped, xCheckResults and xCheckChildren.
func (sc *xScenario) run(r *propRun, store agentrt.SessionStore) (propOutcome, func(agentrt.SessionStore) bool) {
	ctx, sid := r.ctx, r.sid
	oracle := &xOracle{children: map[string]bool{}}
	cancel := func() {
		oracle.mu.Lock()
		oracle.cancelled = true
		oracle.mu.Unlock()
		r.cancel(nil)
	}
	plan := newPropPlan(sc.seed, sc.rates)
	retry := agentrt.RetryPolicy{MaxAttempts: sc.attempts, BaseDelay: time.Microsecond, MaxDelay: time.Millisecond}
	attempts := sc.attempts
	if attempts == 0 {
		attempts = 3
	}

	// The planner: steps in order; a step's failures come first.
	var smu sync.Mutex
	step, fails, badOuts := 0, 0, 0
	maxBad := map[int]int{-1: 0, 0: 2, 1: 1}[sc.typedRetry]
	tokens := 0
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		r.checkRequest(req)
		smu.Lock()
		live := ctx.Err() == nil
		var st xStep
		if step < len(sc.steps) {
			st = sc.steps[step]
		} else {
			st = xStep{msg: agentrt.NewAssistantMessage(agentrt.TextBlock(`{"answer":"done"}`))}
		}
		final := req.Tools == nil // a limit was reached: the answer without tools
		if final {
			st.msg, st.badOut, st.hang = agentrt.NewAssistantMessage(agentrt.TextBlock(`{"answer":"final"}`)), false, false
		}
		if st.kind != nil && fails < st.fails {
			fails++
			f := fails
			smu.Unlock()
			retryable := st.kind != agentrt.ErrAuth && st.kind != agentrt.ErrInvalidRequest && st.kind != agentrt.ErrContextLength
			fatal := !retryable || f >= attempts
			if st.kind == agentrt.ErrContextLength {
				fatal = f >= 2
			}
			if live {
				if fatal {
					oracle.add(xFatal{what: "provider " + st.kind.Error(), reason: agentrt.StopError, layer: agentrt.LayerProvider, is: st.kind})
				} else if retryable {
					oracle.mu.Lock()
					oracle.retries++
					oracle.mu.Unlock()
				}
			}
			return nil, &agentrt.ProviderError{Provider: "xprop", Kind: st.kind, RetryAfter: st.after, Message: "injected"}
		}
		step++
		fails = 0
		if st.badOut {
			badOuts++
		}
		tokens += 10
		bad := badOuts
		smu.Unlock()
		if live {
			switch st.fault {
			case fPanic, fGoexit:
				oracle.add(xFatal{what: "planner " + st.fault.String(), reason: agentrt.StopError, layer: agentrt.LayerPlanner, panic: true})
			case fError:
				oracle.add(xFatal{what: "planner error", reason: agentrt.StopError, layer: agentrt.LayerPlanner, is: errPropPlanner})
			case fNil:
				oracle.add(xFatal{what: "planner nil", reason: agentrt.StopError, layer: agentrt.LayerPlanner})
			}
			if st.fault == fNone && sc.typed && st.badOut && bad > maxBad && !final {
				oracle.add(xFatal{what: "typed output", reason: agentrt.StopError, layer: agentrt.LayerPlanner, output: true})
			}
		}
		switch st.fault {
		case fPanic:
			panic("injected planner panic")
		case fGoexit:
			plan.record(propFired{Kind: "planner", Key: "step", Mode: fGoexit})
			runtime.Goexit()
		case fError:
			return nil, errPropPlanner
		case fNil:
			return nil, nil
		}
		if st.cancel {
			cancel()
			return nil, ctx.Err()
		}
		if st.hang {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &agentrt.ModelResponse{Message: st.msg, Usage: agentrt.Usage{InputTokens: 5, OutputTokens: 5}}, nil
	})

	// The sub-agent: a lookup, then an answer; faults per task.
	childTool := agentrt.NewTool("clookup", "child lookup", func(_ context.Context, in propIn) (string, error) {
		if err := plan.act("child-exec", in.K, plan.pick("child-exec", in.K)); err != nil {
			return "", err
		}
		return "c:" + in.K, nil
	}, agentrt.ReadOnly())
	childPlanner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		task := req.Messages[0].Content
		n := 0
		for _, m := range req.Messages {
			if m.Role == agentrt.RoleAssistant {
				n++
			}
		}
		key := fmt.Sprintf("%s/%d", task, n)
		f := plan.pick("child-plan", key)
		if f == fRewrite { // a transient failure, retried
			plan.record(propFired{Kind: "child-plan", Key: key, Mode: f})
			return nil, &agentrt.ProviderError{Kind: agentrt.ErrOverloaded}
		}
		if f != fNone {
			plan.record(propFired{Kind: "child-plan", Key: task, Mode: f, Live: ctx.Err() == nil})
			oracle.mu.Lock()
			oracle.children[task] = true
			oracle.mu.Unlock()
		}
		if err := plan.act("child-plan-act", key, f); err != nil {
			return nil, err
		}
		if n == 0 {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock("", "clookup", json.RawMessage(fmt.Sprintf(`{"k":"c%s"}`, task))))}, nil
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("child answer " + task))}, nil
	})
	child := &agentrt.Agent{Name: "child", Tools: []agentrt.Tool{childTool}, Planner: childPlanner, Store: store, MaxTurns: 3,
		Retry: agentrt.RetryPolicy{BaseDelay: time.Microsecond, MaxDelay: time.Millisecond}}

	big := agentrt.NewTool("big", "big output", func(_ context.Context, in propIn) (string, error) {
		if err := plan.act("exec", in.K, plan.pick("exec", in.K)); err != nil {
			return "", err
		}
		return strings.Repeat("é", in.N*300), nil // 600 bytes per n
	}, agentrt.ReadOnly())
	ping := agentrt.NewTool("ping", "always the same", func(context.Context, propIn) (string, error) { return "pong", nil }, agentrt.ReadOnly())
	tools := []agentrt.Tool{
		newPropTool(plan, "lookup", true, 0, 0),
		newPropTool(plan, "write", false, 0, 0),
		big, ping,
		agentrt.AgentTool(child, "agent", "a sub-agent"),
	}

	var comp agentrt.Compressor
	sumCalls := 0
	var sumMu sync.Mutex
	summarizer := &summarize.Compressor{Threshold: 80, Keep: 30, Planner: agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		sumMu.Lock()
		sumCalls++
		n := sumCalls
		sumMu.Unlock()
		if n == sc.sumFaultAt && sc.sumFault != fNone {
			oracle.add(xFatal{what: "summarizer provider " + sc.sumFault.String(), reason: agentrt.StopError, layer: agentrt.LayerPlanner, panic: sc.sumFault == fPanic || sc.sumFault == fGoexit})
			plan.record(propFired{Kind: "summarizer", Key: fmt.Sprint(n), Mode: sc.sumFault})
			switch sc.sumFault {
			case fPanic:
				panic("injected panic in summarizer provider")
			case fGoexit:
				runtime.Goexit()
			case fError:
				return nil, errPropInjected
			case fNil:
				return &agentrt.ModelResponse{}, nil // an empty summary
			}
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprintf("summary %d", n)))}, nil
	})}
	switch sc.compressor {
	case "window", "faulty-window":
		comp = agentrt.Window{MaxMessages: 4 + int(sc.seed%8)}
	case "summarizer", "faulty-summarizer":
		comp = summarizer
	}
	if strings.HasPrefix(sc.compressor, "faulty") {
		comp = &xCompressor{inner: comp, plan: plan, at: sc.compFaultAt, fault: sc.compFault, oracle: oracle}
	}

	ag := &agentrt.Agent{
		Name: "xprop", Tools: tools, Planner: planner, Store: store, Permission: agentrt.AllowAll(),
		MaxTurns: sc.maxTurns, MaxParallelTools: sc.maxPar, MaxToolOutput: sc.maxOut,
		LoopGuard: agentrt.LoopGuard{Warn: sc.guardWarn, Stop: sc.guardStop},
		Retry:     retry, Budget: agentrt.Budget{MaxTokens: sc.maxTokens, MaxDuration: sc.maxDur},
		Compressor: comp, ContextTokens: sc.ctxTokens, NoFinalAnswer: sc.noFinal,
	}
	if sc.hooks {
		ag.Hooks = []agentrt.Hooks{propHooks(plan)}
	}

	var out propOutcome
	var typedVal xTyped
	var typedErr error
	if sc.typed {
		out = xCollectTyped(func(onEvent func(agentrt.Event)) (xTyped, error) {
			return agentrt.RunTyped[xTyped](ctx, ag, sid, "go", &agentrt.TypedOptions{MaxRetries: sc.typedRetry, OnEvent: onEvent})
		}, sc.cancelAt, cancel, &typedVal, &typedErr)
	} else {
		out = propCollect(ag.Run(ctx, sid, "go"), sc.breakAt, sc.cancelAt, cancel)
	}
	return out, func(reload agentrt.SessionStore) bool {
		ps, after := &r.ps, r.after
		escaped := propCheckEscape(ps, "run", out, plan)
		early := len(out.items) == 1 && out.items[0].ev == nil && out.items[0].err != nil
		if early && sc.maxDur > 0 && errors.Is(out.items[0].err, context.DeadlineExceeded) {
			// Lock and Load run under the time budget's deadline: a budget that
			// expires there makes an early failure of a run that never started.
			ps.add("budget: the time budget expired during Lock/Load: an early error, not Done{budget_exceeded}", "values %s", propItems(out.items))
		} else if out.normal && out.panicked == nil {
			propCheckProtocol(ps, out, false)
			propCheckEvents(ps, out, after, false)
			propCheckHooksAndPlanner(ps, plan, out)
			for _, f := range plan.firedList() {
				if f.Kind == "hook:BeforePlan" && f.Mode.stops() {
					oracle.add(xFatal{what: "BeforePlan hook " + f.Mode.String(), reason: agentrt.StopError, layer: agentrt.LayerHook})
				}
			}
			xCheckOutcome(ps, sc, out, oracle, attempts)
			if sc.typed {
				xCheckTyped(ps, out, typedVal, typedErr)
			}
		}
		propCheckSession(ps, "session", after, true)
		xCheckResults(ps, sc, after, oracle)
		xCheckChildren(ps, reload, sid, after)
		var resumeWith agentrt.Compressor
		if strings.HasSuffix(sc.compressor, "summarizer") {
			// Resume with a well-behaved Summarizer: it starts from the
			// compaction recorded by the run, if any.
			resumeWith = &summarize.Compressor{Threshold: 80, Keep: 30, Planner: agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("resumed summary"))}, nil
			})}
		}
		propResume(ps, reload, sid, after, resumeWith)
		if d, ok, _ := out.done(); ok {
			xTally(sc, d)
		}
		return escaped
	}
}

var (
	xTallyMu sync.Mutex
	xTallies = map[string]int{}
)

// xTally counts how runs ended, per mode, for the summary: a check that
// never sees a budget or loop stop would pass for the wrong reason.
func xTally(sc *xScenario, d agentrt.Done) {
	xTallyMu.Lock()
	xTallies[fmt.Sprintf("%s/%s/%s", sc.mode, d.Reason, d.Layer)]++
	xTallyMu.Unlock()
}

// xCollectTyped runs RunTyped on a goroutine of its own and turns what it
// saw into a propOutcome: the events, then the error when Done is an
// error or a cancellation (RunTyped also returns Done.Err() for limits).
func xCollectTyped(run func(func(agentrt.Event)) (xTyped, error), cancelAt int, cancel func(), val *xTyped, errp *error) propOutcome {
	ch := make(chan propOutcome, 1)
	go func() {
		var o propOutcome
		defer func() {
			if v := recover(); v != nil {
				o.panicked, o.stack = v, string(debug.Stack())
			}
			ch <- o
		}()
		n := 0
		v, err := run(func(ev agentrt.Event) {
			o.items = append(o.items, propItem{ev: ev})
			n++
			if n == cancelAt {
				cancel()
			}
		})
		*val, *errp = v, err
		d, ok, _ := o.done()
		if err != nil && (!ok || d.Reason == agentrt.StopError || d.Reason == agentrt.StopCancelled) {
			o.items = append(o.items, propItem{err: err})
		}
		o.normal = true
	}()
	select {
	case o := <-ch:
		return o
	case <-time.After(propHangTimeout):
		return propOutcome{hung: true}
	}
}

// xCheckTyped checks RunTyped's value and error against its Done.
func xCheckTyped(ps *propProblems, o propOutcome, v xTyped, err error) {
	d, ok, _ := o.done()
	if !ok {
		return
	}
	switch d.Reason {
	case agentrt.StopComplete:
		if err != nil || v.Answer != "done" {
			ps.add("typed: a complete run did not return the answer", "value %+v, error %v", v, err)
		}
	case agentrt.StopError, agentrt.StopCancelled:
		if err == nil {
			ps.add("typed: a failed run returned no error", "Done %s", d.Reason)
		}
	default:
		if err == nil || !errors.Is(err, d.Err()) {
			ps.add("typed: a run stopped at a limit did not return Done.Err()", "Done %s, error %v", d.Reason, err)
		}
	}
}

// xCheckOutcome checks Done.Reason and Done.Layer against what was
// injected: the first fatal fault if one fired, else the mode's outcome.
// A cancellation or a break relaxes it to "a cancelled run says where".
func xCheckOutcome(ps *propProblems, sc *xScenario, o propOutcome, oracle *xOracle, attempts int) {
	d, ok, err := o.done()
	if !ok {
		return
	}
	if d.Reason == agentrt.StopCancelled && d.Layer != agentrt.LayerCancellation {
		ps.add("outcome: Done cancelled with a layer other than cancellation", "layer %q", d.Layer)
	}
	if (d.Reason == agentrt.StopBudgetExceeded || d.Reason == agentrt.StopLoopDetected || d.Reason == agentrt.StopMaxTurns) && d.Layer != agentrt.LayerLimit {
		ps.add("outcome: a limit stop with a layer other than limit", "Done %s layer %q", d.Reason, d.Layer)
	}
	oracle.mu.Lock()
	fatal := append([]xFatal(nil), oracle.fatal...)
	cancelled, retries := oracle.cancelled, oracle.retries
	oracle.mu.Unlock()
	if cancelled || o.broke {
		return
	}
	if sc.mode == xDuration && d.Reason == agentrt.StopBudgetExceeded && d.Layer == agentrt.LayerLimit {
		return // the time budget may expire at any point, even during a fault
	}
	nRetry := 0
	for _, ev := range o.events() {
		if pr, isRetry := ev.(agentrt.PlannerRetry); isRetry {
			nRetry++
			var pe *agentrt.ProviderError
			if !errors.As(pr.Err, &pe) || !pe.Retryable() {
				ps.add("retry: a PlannerRetry for an error that is not retryable", "%v", pr.Err)
			}
			if pr.Attempt < 1 || pr.Attempt >= attempts {
				ps.add("retry: PlannerRetry.Attempt out of range", "attempt %d of %d", pr.Attempt, attempts)
			}
			if pe != nil && pe.RetryAfter > 0 && pr.Delay != pe.RetryAfter || (pe == nil || pe.RetryAfter == 0) && (pr.Delay <= 0 || pr.Delay > time.Millisecond) {
				ps.add("retry: PlannerRetry.Delay is neither RetryAfter nor within the policy", "delay %v, error %v", pr.Delay, pr.Err)
			}
		}
	}
	if nRetry != retries {
		ps.add("retry: PlannerRetry events do not match the retryable failures", "%d events, %d retryable failures retried", nRetry, retries)
	}
	var want xFatal
	switch {
	case len(fatal) > 1:
		ps.add("outcome: the run went on after a fatal fault", "faults %+v", fatal)
		want = fatal[0]
	case len(fatal) == 1:
		want = fatal[0]
	case sc.mode == xNormal:
		want = xFatal{what: "a normal run", reason: agentrt.StopComplete, layer: agentrt.LayerNone}
	case sc.mode == xTokens:
		want = xFatal{what: "the token budget", reason: agentrt.StopBudgetExceeded, layer: agentrt.LayerLimit}
	case sc.mode == xDuration:
		want = xFatal{what: "the time budget", reason: agentrt.StopBudgetExceeded, layer: agentrt.LayerLimit}
	case sc.mode == xLoop:
		want = xFatal{what: "the loop guard", reason: agentrt.StopLoopDetected, layer: agentrt.LayerLimit}
	}
	if d.Reason != want.reason || d.Layer != want.layer {
		ps.add(fmt.Sprintf("outcome: %s did not end the run with %s/%s", want.what, want.reason, want.layer), "Done %s/%q, error %v", d.Reason, d.Layer, err)
		return
	}
	if want.is != nil && !errors.Is(err, want.is) {
		ps.add("outcome: the run's error does not wrap the injected error ("+want.what+")", "error %v, want %v", err, want.is)
	}
	var pe *agentrt.PanicError
	if want.panic && !errors.As(err, &pe) {
		ps.add("outcome: the run's error does not wrap a *PanicError ("+want.what+")", "error %v", err)
	}
	var oe *agentrt.OutputError
	if want.output && !errors.As(err, &oe) {
		ps.add("outcome: an invalid typed answer did not end the run with an *OutputError", "error %v", err)
	}
}

// xCheckResults checks the tool results: a result too long for the store
// became an is_error result saying so, results of tiny MaxToolOutput are
// cut, and a sub-agent whose planner failed gave an is_error result.
func xCheckResults(ps *propProblems, sc *xScenario, msgs []agentrt.Message, oracle *xOracle) {
	oracle.mu.Lock()
	failedChild := propClone(oracle.children)
	oracle.mu.Unlock()
	for i, m := range msgs {
		for k, u := range m.ToolUses() {
			j := i + 1 + k
			if j >= len(msgs) || msgs[j].Role != agentrt.RoleTool {
				continue
			}
			res := msgs[j]
			if sc.lineSize > 0 && len(res.Content) > sc.lineSize {
				ps.add("store: a result longer than MaxLineSize was stored", "%d bytes, MaxLineSize %d", len(res.Content), sc.lineSize)
			}
			if sc.maxOut > 0 && !res.IsError && len(res.Content) > sc.maxOut+400 {
				ps.add("tools: a result longer than MaxToolOutput", "%d bytes, MaxToolOutput %d: %s", len(res.Content), sc.maxOut, propMsg(res))
			}
			switch u.Name {
			case "big":
				if strings.Contains(res.Content, "could not be stored") {
					xTallyMu.Lock()
					xTallies["results too long for the store"]++
					xTallyMu.Unlock()
				}
				var in propIn
				_ = json.Unmarshal(u.Input, &in)
				size := in.N * 600
				if sc.maxOut > 0 {
					size = min(size, sc.maxOut)
				}
				if sc.maxOut == 0 {
					size = min(size, 64<<10)
				}
				if sc.lineSize > 0 && size > sc.lineSize && !res.IsError {
					ps.add("store: a result too long for the store is not an is_error result", "%d bytes, MaxLineSize %d: %s", size, sc.lineSize, propMsg(res))
				}
			case "agent":
				var in struct {
					Task string `json:"task"`
				}
				_ = json.Unmarshal(u.Input, &in)
				if failedChild[in.Task] && !res.IsError && !strings.HasPrefix(res.Content, "cancelled") {
					ps.add("subagent: a sub-agent whose planner failed gave a successful result", "%s", propMsg(res))
				}
			}
		}
	}
}

// xCheckChildren checks every child session of an agent tool call: its
// name, and its invariants.
func xCheckChildren(ps *propProblems, store agentrt.SessionStore, sid string, msgs []agentrt.Message) {
	bg := context.Background()
	links := map[string]string{}
	if rl, ok := store.(agentrt.RecordStore); ok {
		recs, err := rl.LoadRecords(bg, sid)
		if err != nil {
			ps.add("subagent: records could not be loaded", "%v", err)
		}
		for _, rec := range recs {
			if rec.Kind != agentrt.RecordSubAgent {
				continue
			}
			var l struct {
				ToolUseID string `json:"tool_use_id"`
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal(rec.Data, &l); err != nil {
				ps.add("subagent: a bad link record", "%v: %s", err, rec.Data)
				continue
			}
			links[l.ToolUseID] = l.SessionID
		}
	}
	for _, m := range msgs {
		for _, u := range m.ToolUses() {
			if u.Name != "agent" {
				continue
			}
			want := sid + "~agent~" + u.ID
			if agentrt.ValidateSessionID(want) != nil {
				sum := sha256.Sum256([]byte(want))
				want = "sub-agent-" + hex.EncodeToString(sum[:12])
			}
			if got, ok := links[u.ID]; ok && got != want {
				ps.add("subagent: the child session is not named parent~tool~tool_use_id", "got %q, want %q", got, want)
			}
			child, err := store.Load(bg, want)
			if err != nil {
				ps.add("subagent: the child session could not be loaded", "%q: %v", want, err)
				continue
			}
			if len(child) > 0 {
				xTallyMu.Lock()
				xTallies["child sessions checked"]++
				xTallyMu.Unlock()
			}
			var cp propProblems
			propCheckSession(&cp, "child session", child, true)
			for _, p := range cp {
				ps.add("subagent: "+p.key, "child %q: %s\n%s", want, p.detail, propMsgs(child))
			}
		}
	}
}

func TestRunExtraProperties(t *testing.T) {
	propTest(t, 600, func(seed uint64, store string) propCase { return xGenerate(seed, store) })
	xTallyMu.Lock()
	keys := make([]string, 0, len(xTallies))
	for k := range xTallies {
		keys = append(keys, fmt.Sprintf("%s=%d", k, xTallies[k]))
	}
	clear(xTallies)
	xTallyMu.Unlock()
	sort.Strings(keys)
	t.Logf("mode/reason/layer of the runs: %s", strings.Join(keys, " "))
}

// The outcome check must be able to fail.
func TestRunExtraPropertyChecksCatchBreakage(t *testing.T) {
	sc := &xScenario{mode: xLoop}
	cases := map[string]struct {
		done   agentrt.Done
		err    error
		oracle *xOracle
	}{
		"loop mode ends complete":          {agentrt.Done{Reason: agentrt.StopComplete}, nil, &xOracle{}},
		"budget ends with layer planner":   {agentrt.Done{Reason: agentrt.StopBudgetExceeded, Layer: agentrt.LayerPlanner}, nil, &xOracle{}},
		"provider fault ends planner":      {agentrt.Done{Reason: agentrt.StopError, Layer: agentrt.LayerPlanner}, errPropStore, &xOracle{fatal: []xFatal{{reason: agentrt.StopError, layer: agentrt.LayerProvider}}}},
		"panic fault without a PanicError": {agentrt.Done{Reason: agentrt.StopError, Layer: agentrt.LayerPlanner}, errPropStore, &xOracle{fatal: []xFatal{{reason: agentrt.StopError, layer: agentrt.LayerPlanner, panic: true}}}},
		"retries not reported":             {agentrt.Done{Reason: agentrt.StopLoopDetected, Layer: agentrt.LayerLimit}, nil, &xOracle{retries: 2}},
	}
	for name, c := range cases {
		items := []propItem{{ev: c.done}}
		if c.err != nil {
			items = append(items, propItem{err: c.err})
		}
		var ps propProblems
		xCheckOutcome(&ps, sc, propOutcome{items: items, normal: true}, c.oracle, 3)
		if len(ps) == 0 {
			t.Errorf("xCheckOutcome passed a run where %s", name)
		}
	}
	var ps propProblems
	xCheckOutcome(&ps, sc, propOutcome{items: []propItem{{ev: agentrt.Done{Reason: agentrt.StopLoopDetected, Layer: agentrt.LayerLimit}}}, normal: true}, &xOracle{}, 3)
	if len(ps) != 0 {
		t.Errorf("xCheckOutcome failed a valid run: %v", ps)
	}
	big := agentrt.NewAssistantMessage(agentrt.ToolUseBlock("a", "big", json.RawMessage(`{"k":"x","n":10}`)))
	ps = nil
	xCheckResults(&ps, &xScenario{lineSize: 1500, maxOut: -1}, []agentrt.Message{big, agentrt.NewToolMessage("a", "short", false)}, &xOracle{})
	if len(ps) == 0 {
		t.Error("xCheckResults passed a too-long result that is not an error")
	}
}
