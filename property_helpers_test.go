package agentrt_test

// Plumbing and checks of the property tests in property_test.go and
// property_extra_test.go: the driver both use (propTest runs the batches,
// propDrive one run: store, agent, collect, reload, checks), fault
// injection (tools, checker, hooks, store), the run collector that catches
// panics and runtime.Goexit, and the checks of the contract.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// propCase is one generated scenario of a property test: propDrive opens
// its store, stores its prefill and has it run, then closes the store,
// reloads the session through a new one and has the case check it.
type propCase interface {
	fmt.Stringer
	propSeed() uint64
	// open opens the case's store in dir; mem is the "memory" store, the
	// same for the run and for the reload.
	open(dir string, mem *agentrt.MemoryStore) (agentrt.SessionStore, func(), error)
	// prefilled returns the messages stored in the session before the run.
	prefilled() []agentrt.Message
	// run builds the agent on store and runs it under r.ctx. It returns
	// what the run yielded and the checks of the run, which propDrive
	// calls with the reloaded store once the session is reloaded
	// (r.after), holding r.mu; they return whether a panic or Goexit
	// escaped Run.
	run(r *propRun, store agentrt.SessionStore) (propOutcome, func(reload agentrt.SessionStore) (escaped bool))
}

// propRun is one run that propDrive drives.
type propRun struct {
	dir, sid string
	mem      *agentrt.MemoryStore
	ctx      context.Context
	cancel   context.CancelCauseFunc // cancels ctx
	mu       sync.Mutex              // guards ps against the planner's checks
	ps       propProblems
	out      propOutcome
	// The session before the run (the case's prefill) and after it,
	// reloaded through a new store.
	before, after []agentrt.Message
}

// addf adds a problem, under r.mu.
func (r *propRun) addf(key, format string, args ...any) {
	r.mu.Lock()
	r.ps.add(key, format, args...)
	r.mu.Unlock()
}

// checkRequest checks the messages of a planner request as a session.
func (r *propRun) checkRequest(req *agentrt.ModelRequest) {
	var rp propProblems
	propCheckSession(&rp, "planner request", req.Messages, true)
	for _, p := range rp {
		r.addf(p.key, "%s\nrequest messages:\n%s", p.detail, propMsgs(req.Messages))
	}
}

// propDrive runs one scenario: it opens the store, stores the prefill,
// runs the case, closes the store, reloads the session through a new store
// and runs the case's checks. It returns the problems, a function printing
// the run, and whether the run hung.
func propDrive(c propCase, dir, sid string) (propProblems, func() string, bool) {
	r := &propRun{dir: dir, sid: sid, mem: &agentrt.MemoryStore{}}
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	defer r.cancel(nil)
	report := func() string {
		return fmt.Sprintf("values yielded: %s\nsession before the run:\n%ssession after the run:\n%s", propItems(r.out.items), propMsgs(r.before), propMsgs(r.after))
	}
	store, closeStore, err := c.open(dir, r.mem)
	if err != nil {
		r.ps.add("setup", "%v", err)
		return r.ps, report, false
	}
	bg := context.Background()
	for _, m := range c.prefilled() {
		if err := store.Append(bg, sid, m); err != nil {
			r.ps.add("setup", "%v", err)
		}
	}
	before, _ := store.Load(bg, sid)
	r.before = append([]agentrt.Message(nil), before...)

	var checks func(agentrt.SessionStore) bool
	r.out, checks = c.run(r, store)
	if r.out.hung {
		r.mu.Lock() // the run's goroutines may still add problems
		defer r.mu.Unlock()
		r.ps.add("Run hung", "no return within %v", propHangTimeout)
		return append(propProblems(nil), r.ps...), report, true
	}
	closeStore()

	// Reload through a new store.
	reload, closeReload, err := c.open(dir, r.mem)
	if err != nil {
		r.addf("setup", "%v", err)
		return r.ps, report, false
	}
	defer closeReload()
	after, err := reload.Load(bg, sid)
	if err != nil {
		r.addf("session: reload failed", "%v", err)
		return r.ps, report, false
	}
	r.after = append([]agentrt.Message(nil), after...)

	r.mu.Lock()
	defer r.mu.Unlock()
	escaped := checks(reload)
	return propTidy(r.ps, escaped), report, false
}

// propTest runs a property test: per store, AGENTRT_PROPERTY_RUNS
// scenarios (runs by default) of random seeds, or the one of
// AGENTRT_PROPERTY_SEED, each made by generate and run by propDrive.
// Failures are grouped by the rule they break (propAgg). After three runs
// that hung it stops. Each store's batch ends with goleak.VerifyNone.
func propTest(t *testing.T, runs uint64, generate func(seed uint64, store string) propCase) {
	runs, _ = propEnv("AGENTRT_PROPERTY_RUNS", runs)
	base := uint64(time.Now().UnixNano())
	one, replay := propEnv("AGENTRT_PROPERTY_SEED", 0)
	if !replay {
		t.Logf("base seed %d, %d runs per store", base, runs)
	}
	test := t.Name()
	for _, store := range []string{"memory", "jsonl"} {
		t.Run(store, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			dir := t.TempDir()
			agg := newPropAgg(store)
			hangs := 0
			for i := range runs {
				seed := propSplitMix(base + i)
				if replay {
					seed = one
				}
				sc := generate(seed, store)
				ps, report, hung := propDrive(sc, dir, fmt.Sprintf("s%d", i))
				agg.add(t, test, sc.propSeed(), sc, ps, report)
				if hung {
					// Its goroutines stay blocked (goleak reports them); go on
					// for a few more, so that a long batch still counts.
					hangs++
					t.Errorf("seed %d: a run did not return within %v\n%s", seed, propHangTimeout, sc)
					if hangs == 3 {
						t.Fatalf("3 runs hung; stopping")
					}
				}
				if replay {
					break
				}
			}
			agg.summary(t)
		})
	}
}

// propEnv reads a positive integer from the environment.
func propEnv(name string, def uint64) (uint64, bool) {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 0, 64)
		if err == nil {
			return n, true
		}
	}
	return def, false
}

// propSplitMix spreads consecutive run numbers over seeds.
func propSplitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// propAgg groups failures by rule.
type propAgg struct {
	store string
	runs  int
	count map[string]int
	first map[string]uint64
	order []string
}

func newPropAgg(store string) *propAgg {
	return &propAgg{store: store, count: map[string]int{}, first: map[string]uint64{}}
}

// add counts a run's problems and reports the first run that breaks each
// rule in full, with how to replay it (test is the test's name).
func (a *propAgg) add(t *testing.T, test string, seed uint64, sc fmt.Stringer, ps propProblems, report func() string) {
	t.Helper()
	a.runs++
	seen := map[string]bool{}
	for _, p := range ps {
		a.count[p.key]++
		if _, ok := a.first[p.key]; ok || seen[p.key] {
			continue
		}
		seen[p.key] = true
		a.first[p.key] = seed
		a.order = append(a.order, p.key)
		t.Errorf("RULE BROKEN: %s\n%s\nreplay: AGENTRT_PROPERTY_SEED=%d go test -race -run '%s/%s' -count=1 -v .\nscenario:\n%s%s",
			p.key, p.detail, seed, test, a.store, sc, report())
	}
}

func (a *propAgg) summary(t *testing.T) {
	if len(a.order) == 0 {
		t.Logf("%d runs, every check passed", a.runs)
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d runs; rules broken (problems, first seed):\n", a.runs)
	for _, k := range a.order {
		fmt.Fprintf(&sb, "  %5d  %-20d %s\n", a.count[k], a.first[k], k)
	}
	t.Log(sb.String())
}

// propTidy drops the problems that repeat one already found in the stored
// session (what the planner or the resumed run saw of the same defect) and
// marks those that follow a panic or Goexit escaping Run, so that failures
// group by their cause.
func propTidy(ps propProblems, escaped bool) propProblems {
	inSession := map[string]bool{}
	for _, p := range ps {
		if rest, ok := strings.CutPrefix(p.key, "session: "); ok {
			inSession[rest] = true
		}
	}
	var out propProblems
	for _, p := range ps {
		rule := p.key
		for _, pre := range []string{"planner request: ", "resume: planner request: ", "resume: session: "} {
			if rest, ok := strings.CutPrefix(p.key, pre); ok {
				rule = rest
				break
			}
		}
		if rule != p.key && (inSession[rule] || strings.HasPrefix(p.key, "resume: ") && len(inSession) > 0) {
			continue // the same defect, or one the resume cannot repair
		}
		if escaped && !strings.HasPrefix(p.key, "run: ") {
			p.key = "after an escape from Run: " + p.key
		}
		out = append(out, p)
	}
	return out
}

func slicesEqualMsgs(a, b []agentrt.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !propMsgEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// propResume runs the session again with "continue", a planner that
// answers and comp as the Compressor (nil for none): it must complete and
// leave a valid session that extends the one it started from.
func propResume(ps *propProblems, store agentrt.SessionStore, sid string, start []agentrt.Message, comp agentrt.Compressor) {
	var mu sync.Mutex
	var pp propProblems
	planner := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		mu.Lock()
		propCheckSession(&pp, "resume: planner request", req.Messages, true)
		mu.Unlock()
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("resumed"))}, nil
	})
	plan := newPropPlan(0, nil)
	ag := &agentrt.Agent{
		Tools:   []agentrt.Tool{newPropTool(plan, "lookup", true, 0, 0), newPropTool(plan, "search", true, 0, 0), newPropTool(plan, "write", false, 0, 0)},
		Planner: planner, Store: store, MaxTurns: 3, Compressor: comp,
	}
	out := propCollect(ag.Run(context.Background(), sid, "continue"), 0, 0, nil)
	if out.hung {
		ps.add("resume: Run hung", "no return within %v", propHangTimeout)
		return
	}
	propCheckEscape(ps, "resume", out, nil)
	mu.Lock()
	*ps = append(*ps, pp...)
	mu.Unlock()
	d, ok, err := out.done()
	if !ok || d.Reason != agentrt.StopComplete || err != nil || len(out.items) == 0 {
		ps.add("resume: the run did not complete", "Done %v (%v), error %v; values %s", d.Reason, ok, err, propItems(out.items))
	} else if _, last := out.items[len(out.items)-1].ev.(agentrt.Done); !last {
		ps.add("resume: Done is not the last value", "values %s", propItems(out.items))
	}
	msgs, err := store.Load(context.Background(), sid)
	if err != nil {
		ps.add("resume: load failed", "%v", err)
		return
	}
	propCheckSession(ps, "resume: session", msgs, true)
	if len(msgs) < len(start) || !slicesEqualMsgs(msgs[:len(start)], start) {
		ps.add("resume: the run changed earlier messages", "%d messages before, %d after", len(start), len(msgs))
	}
}

// propFault is what an injected fault does.
type propFault uint8

const (
	fNone propFault = iota
	fPanic
	fGoexit
	fError
	fBlock        // checker: deny; BeforeTool: return an error
	fNil          // planner: nil response and nil error
	fSlow         // Execute: ignore ctx, sleep past the timeout, succeed
	fHang         // Execute: wait for ctx (only for calls with a deadline)
	fRewrite      // checker: allow with a raw JSON rewrite
	fRewriteTyped // checker: allow with a typed rewrite
	fRewriteBad   // checker: allow with a rewrite that does not decode
)

var propFaultNames = [...]string{"none", "panic", "goexit", "error", "block", "nil-response", "slow", "hang", "rewrite-raw", "rewrite-typed", "rewrite-invalid"}

func (f propFault) String() string { return propFaultNames[f] }

// stops reports whether f is a failure of the callback (it must become an
// is_error result, a denial or a HookFailed).
func (f propFault) stops() bool { return f == fPanic || f == fGoexit || f == fError }

var (
	errPropInjected = errors.New("injected failure")
	errPropPlanner  = errors.New("injected planner failure")
	errPropCancel   = errors.New("injected cancel cause")
	errPropStore    = errors.New("injected store failure")
)

// propRate is how often a callback kind faults, and how.
type propRate struct {
	Pct   uint64
	Modes []propFault
}

type propFired struct {
	Kind, Key string
	Mode      propFault
	Live      bool // planner: ctx was not done at the call
}

// propPlan decides the faults of one run from its seed and records what
// fired. Decisions are a pure function of (seed, kind, key), so they are the
// same on every goroutine and on replay; keys are the "k" field of tool
// inputs (unique per generated tool_use) or a per-kind call counter.
type propPlan struct {
	seed  uint64
	rates map[string]propRate // read-only once the run starts

	mu       sync.Mutex
	fired    []propFired
	execs    map[string]int
	execOK   map[string]bool
	sawRW    map[string]bool
	counters map[string]int
}

func newPropPlan(seed uint64, rates map[string]propRate) *propPlan {
	return &propPlan{seed: seed, rates: rates, execs: map[string]int{}, execOK: map[string]bool{}, sawRW: map[string]bool{}, counters: map[string]int{}}
}

func (p *propPlan) pick(kind, key string) propFault {
	r, ok := p.rates[kind]
	if !ok || r.Pct == 0 || len(r.Modes) == 0 || key == "" {
		return fNone
	}
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], p.seed)
	h.Write(b[:])
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(key))
	v := h.Sum64()
	if v%100 >= r.Pct {
		return fNone
	}
	return r.Modes[(v/100)%uint64(len(r.Modes))]
}

func (p *propPlan) next(kind string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counters[kind]++
	return strconv.Itoa(p.counters[kind])
}

func (p *propPlan) record(f propFired) {
	p.mu.Lock()
	p.fired = append(p.fired, f)
	p.mu.Unlock()
}

// act records and performs a fault: panic, Goexit, or an error returned.
func (p *propPlan) act(kind, key string, f propFault) error {
	if f == fNone {
		return nil
	}
	p.record(propFired{Kind: kind, Key: key, Mode: f})
	switch f {
	case fPanic:
		panic(fmt.Sprintf("injected panic in %s %s", kind, key))
	case fGoexit:
		runtime.Goexit()
	case fError:
		return fmt.Errorf("%s %s: %w", kind, key, errPropInjected)
	}
	return nil
}

func (p *propPlan) firedList() []propFired {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.fired)
}

// propIn is the input of every tool of the test. K identifies the
// generated tool_use; RW marks an input rewritten by the checker.
type propIn struct {
	K  string `json:"k"`
	N  int    `json:"n,omitempty"`
	S  string `json:"s,omitempty"`
	RW bool   `json:"rw,omitempty"`
}

// propTool is a NewTool tool (so that inputs go through the real decoder)
// with faults in Decode and Execute.
type propTool struct {
	inner    agentrt.Tool
	plan     *propPlan
	deadline bool // every call has a timeout, so fHang ends
	slow     time.Duration
}

var _ agentrt.Tool = (*propTool)(nil)

func newPropTool(plan *propPlan, name string, readOnly bool, timeout, agentTimeout time.Duration) *propTool {
	var opts []agentrt.ToolOption
	if readOnly {
		opts = append(opts, agentrt.ReadOnly())
	}
	if timeout > 0 {
		opts = append(opts, agentrt.WithTimeout(timeout))
	}
	inner := agentrt.NewTool(name, "A tool of the property test.", func(_ context.Context, in propIn) (string, error) {
		return "ok:" + in.K, nil
	}, opts...)
	eff := timeout
	if eff == 0 {
		eff = agentTimeout
	}
	return &propTool{inner: inner, plan: plan, deadline: eff > 0, slow: eff + 2*time.Millisecond}
}

func (t *propTool) Spec() agentrt.ToolSpec { return t.inner.Spec() }

func (t *propTool) Decode(raw json.RawMessage) (any, error) {
	v, err := t.inner.Decode(raw)
	if err != nil {
		return nil, err
	}
	if in, ok := v.(propIn); ok && in.K != "" {
		if err := t.plan.act("decode", in.K, t.plan.pick("decode", in.K)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (t *propTool) Execute(ctx context.Context, input any) (string, error) {
	in, ok := input.(propIn)
	if !ok {
		return "", fmt.Errorf("input of type %T", input)
	}
	f := t.plan.pick("exec", in.K)
	if f == fHang && !t.deadline {
		f = fNone
	}
	if in.K != "" {
		t.plan.mu.Lock()
		t.plan.execs[in.K]++
		if in.RW {
			t.plan.sawRW[in.K] = true
		}
		t.plan.mu.Unlock()
	}
	switch f {
	case fPanic, fGoexit, fError:
		return "", t.plan.act("exec", in.K, f)
	case fSlow:
		t.plan.record(propFired{Kind: "exec", Key: in.K, Mode: f})
		time.Sleep(t.slow) // ignores ctx on purpose
		return "ok:" + in.K, nil
	case fHang:
		t.plan.record(propFired{Kind: "exec", Key: in.K, Mode: f})
		<-ctx.Done()
		return "", ctx.Err()
	}
	out, err := t.inner.Execute(ctx, input)
	if err == nil && in.K != "" {
		t.plan.mu.Lock()
		t.plan.execOK[in.K] = true
		t.plan.mu.Unlock()
	}
	return out, err
}

// propBadSpecTool is a tool whose Spec panics or calls runtime.Goexit.
type propBadSpecTool struct{ goexit bool }

func (t propBadSpecTool) Spec() agentrt.ToolSpec {
	if t.goexit {
		runtime.Goexit()
	}
	panic("injected panic in Tool.Spec")
}
func (propBadSpecTool) Decode(json.RawMessage) (any, error)          { return nil, nil }
func (propBadSpecTool) Execute(context.Context, any) (string, error) { return "", nil }

// propChecker is a permission checker that allows, denies, fails, panics,
// calls Goexit or rewrites the input, per tool_use.
func propChecker(plan *propPlan) agentrt.PermissionChecker {
	return agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		in, _ := req.Input.(propIn)
		f := plan.pick("perm", in.K)
		switch f {
		case fPanic, fGoexit, fError:
			return agentrt.Decision{}, plan.act("perm", in.K, f)
		case fNone:
			return agentrt.Decision{Allow: true}, nil
		}
		plan.record(propFired{Kind: "perm", Key: in.K, Mode: f})
		switch f {
		case fBlock:
			return agentrt.Decision{Reason: "injected denial"}, nil
		case fRewrite:
			in.RW = true
			raw, _ := json.Marshal(in)
			return agentrt.Decision{Allow: true, Input: json.RawMessage(raw)}, nil
		case fRewriteTyped:
			in.RW = true
			return agentrt.Decision{Allow: true, Input: in}, nil
		default: // fRewriteBad
			return agentrt.Decision{Allow: true, Input: json.RawMessage(`{"k":1}`)}, nil
		}
	})
}

// propHookStages are the fields of agentrt.Hooks.
var propHookStages = []string{"OnRunStart", "OnRunEnd", "OnTurnStart", "OnTurnEnd", "BeforePlan", "AfterPlan", "BeforeTool", "AfterTool"}

// propHooks returns hooks that fault as the plan says ("hook:Stage").
func propHooks(plan *propPlan) agentrt.Hooks {
	stage := func(name string) error {
		kind := "hook:" + name
		key := plan.next(kind)
		return plan.act(kind, key, plan.pick(kind, key))
	}
	toolStage := func(name string, input any) (propFault, string) {
		in, _ := input.(propIn)
		return plan.pick("hook:"+name, in.K), in.K
	}
	return agentrt.Hooks{
		OnRunStart: func(ctx context.Context, _ *agentrt.RunInfo) context.Context {
			_ = stage("OnRunStart")
			return ctx
		},
		OnRunEnd: func(context.Context, *agentrt.RunInfo, agentrt.Done, error) { _ = stage("OnRunEnd") },
		OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, _ int) context.Context {
			_ = stage("OnTurnStart")
			return ctx
		},
		OnTurnEnd: func(context.Context, *agentrt.RunInfo, int) { _ = stage("OnTurnEnd") },
		BeforePlan: func(ctx context.Context, _ *agentrt.ModelRequest) (context.Context, error) {
			return ctx, stage("BeforePlan")
		},
		AfterPlan: func(context.Context, *agentrt.ModelRequest, *agentrt.ModelResponse, error) { _ = stage("AfterPlan") },
		BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
			f, key := toolStage("BeforeTool", call.Input)
			if f == fBlock {
				plan.record(propFired{Kind: "hook:BeforeTool", Key: key, Mode: f})
				return ctx, errors.New("injected block")
			}
			return ctx, plan.act("hook:BeforeTool", key, f)
		},
		AfterTool: func(_ context.Context, call *agentrt.ToolCall, _ *agentrt.ToolResult) {
			f, key := toolStage("AfterTool", call.Input)
			_ = plan.act("hook:AfterTool", key, f)
		},
	}
}

// propStore wraps a store with faults: cancel the run from inside an
// Append, fail an Append, a Sync or an AppendRecord, fail Load, or (for the
// self-test) drop an Append while reporting success. Counts are 1-based;
// 0 means never.
type propStore struct {
	inner agentrt.SessionStore

	cancelAt, failAppendAt, failSyncAt, failRecordAt, dropAt int
	failLoad                                                 bool
	cancel                                                   func()

	mu                                  sync.Mutex
	appends, syncs, records             int
	appendFailed, syncFailed, cancelled bool
	recordFailed                        bool
}

var _ interface {
	agentrt.SessionStore
	agentrt.Locker
	agentrt.RecordStore
	agentrt.Syncer
} = (*propStore)(nil)

func (s *propStore) Append(ctx context.Context, id string, m agentrt.Message) error {
	s.mu.Lock()
	s.appends++
	n := s.appends
	s.mu.Unlock()
	if n == s.cancelAt && s.cancel != nil {
		s.mu.Lock()
		s.cancelled = true
		s.mu.Unlock()
		s.cancel()
	}
	if n == s.failAppendAt {
		s.mu.Lock()
		s.appendFailed = true
		s.mu.Unlock()
		return fmt.Errorf("append %d: %w", n, errPropStore)
	}
	if n == s.dropAt {
		return nil
	}
	return s.inner.Append(ctx, id, m)
}

func (s *propStore) Load(ctx context.Context, id string) ([]agentrt.Message, error) {
	if s.failLoad {
		return nil, fmt.Errorf("load: %w", errPropStore)
	}
	return s.inner.Load(ctx, id)
}

func (s *propStore) List(ctx context.Context) ([]agentrt.SessionInfo, error) {
	return s.inner.List(ctx)
}

func (s *propStore) Delete(ctx context.Context, id string) error { return s.inner.Delete(ctx, id) }

func (s *propStore) Lock(ctx context.Context, id string) (func(), error) {
	if l, ok := s.inner.(agentrt.Locker); ok {
		return l.Lock(ctx, id)
	}
	return func() {}, nil
}

func (s *propStore) AppendRecord(ctx context.Context, id string, rec agentrt.Record) error {
	s.mu.Lock()
	s.records++
	n := s.records
	if n == s.failRecordAt {
		s.recordFailed = true
	}
	s.mu.Unlock()
	if n == s.failRecordAt {
		return fmt.Errorf("record %d: %w", n, errPropStore)
	}
	if ra, ok := s.inner.(agentrt.RecordStore); ok {
		return ra.AppendRecord(ctx, id, rec)
	}
	return nil
}

func (s *propStore) LoadRecords(ctx context.Context, id string) ([]agentrt.Record, error) {
	if rl, ok := s.inner.(agentrt.RecordStore); ok {
		return rl.LoadRecords(ctx, id)
	}
	return nil, nil
}

func (s *propStore) Sync(ctx context.Context, id string) error {
	s.mu.Lock()
	s.syncs++
	n := s.syncs
	if n == s.failSyncAt {
		s.syncFailed = true
	}
	s.mu.Unlock()
	if n == s.failSyncAt {
		return fmt.Errorf("sync %d: %w", n, errPropStore)
	}
	if sy, ok := s.inner.(agentrt.Syncer); ok {
		return sy.Sync(ctx, id)
	}
	return nil
}

// propItem is one value yielded by Run.
type propItem struct {
	ev  agentrt.Event
	err error
}

// propOutcome is how a range over Run went.
type propOutcome struct {
	items    []propItem
	broke    bool // the consumer broke out of the loop
	normal   bool // the range statement returned (no panic, no Goexit)
	panicked any
	stack    string
	hung     bool
}

func (o propOutcome) events() []agentrt.Event {
	var evs []agentrt.Event
	for _, it := range o.items {
		if it.ev != nil {
			evs = append(evs, it.ev)
		}
	}
	return evs
}

// done returns the first Done event and the last error yielded.
func (o propOutcome) done() (d agentrt.Done, ok bool, err error) {
	for _, it := range o.items {
		if dd, isDone := it.ev.(agentrt.Done); isDone && !ok {
			d, ok = dd, true
		}
		if it.err != nil {
			err = it.err
		}
	}
	return d, ok, err
}

const propHangTimeout = 20 * time.Second

// propCollect ranges over seq on a goroutine of its own, so that a panic
// and a runtime.Goexit escaping Run are seen. At the cancelAt-th value it
// calls cancel; at the breakAt-th it breaks out of the loop (0: never).
func propCollect(seq iter.Seq2[agentrt.Event, error], breakAt, cancelAt int, cancel func()) propOutcome {
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
		for ev, err := range seq {
			o.items = append(o.items, propItem{ev, err})
			n++
			if n == cancelAt && cancel != nil {
				cancel()
			}
			if n == breakAt {
				o.broke = true
				break
			}
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

// propProblem is one broken rule: key names the rule (failures are grouped
// by it), detail says what happened.
type propProblem struct{ key, detail string }

type propProblems []propProblem

func (ps *propProblems) add(key, format string, args ...any) {
	*ps = append(*ps, propProblem{key, fmt.Sprintf(format, args...)})
}

// propCheckEscape reports a panic that escaped Run, or a range that did
// not return without a Goexit injected, and whether the range did not
// return. The rule names the callback that panicked (from the injected
// panic's value).
func propCheckEscape(ps *propProblems, what string, o propOutcome, plan *propPlan) bool {
	switch {
	case o.panicked != nil:
		src := "?"
		if s, ok := o.panicked.(string); ok {
			src = strings.TrimPrefix(strings.TrimPrefix(s, "injected "), "panic in ")
			src, _, _ = strings.Cut(src, " ")
		}
		ps.add(what+": a panic escaped Run (from "+src+")", "panic: %v\n%s", o.panicked, propCut(o.stack, 3000))
	case !o.normal:
		// A Goexit in a callback on the goroutine ranging over Run ends
		// that goroutine, as Go defines (one in a call of a parallel
		// group is contained): the run ends without Done, the session
		// valid (checked after), but only when a Goexit was injected.
		if plan != nil {
			for _, f := range plan.firedList() {
				if f.Mode == fGoexit {
					return true
				}
			}
		}
		ps.add(what+": the goroutine ranging over Run did not return normally", "no panic, and no runtime.Goexit was injected")
	default:
		return false
	}
	return true
}

// propCheckEarly checks a run that must fail before starting: exactly one
// (nil, err), no event.
func propCheckEarly(ps *propProblems, what string, o propOutcome, want error) {
	propCheckEscape(ps, what, o, nil)
	if len(o.items) != 1 || o.items[0].ev != nil || o.items[0].err == nil {
		ps.add(what+": not exactly one (nil, err)", "yielded %s", propItems(o.items))
		return
	}
	if want != nil && !errors.Is(o.items[0].err, want) {
		ps.add(what+": wrong error", "got %v, want errors.Is %v", o.items[0].err, want)
	}
}

// propCheckProtocol checks the shape of a run's values: events, one Done
// last, then at most one error, never an event with an error. earlyOK
// allows a single (nil, err) instead (a store failure before any event).
func propCheckProtocol(ps *propProblems, o propOutcome, earlyOK bool) {
	if earlyOK && len(o.items) == 1 && o.items[0].ev == nil && o.items[0].err != nil {
		return
	}
	dones, errs := 0, 0
	for i, it := range o.items {
		switch {
		case it.ev != nil && it.err != nil:
			ps.add("protocol: an event yielded with an error", "value %d: %T with %v", i, it.ev, it.err)
		case it.ev == nil && it.err == nil:
			ps.add("protocol: (nil, nil) yielded", "value %d", i)
		}
		if it.err != nil {
			errs++
			if dones == 0 {
				ps.add("protocol: an error before Done", "value %d: %v; values %s", i, it.err, propItems(o.items))
			}
			if errs > 1 {
				ps.add("protocol: more than one error", "value %d: %v", i, it.err)
			}
			continue
		}
		if dones > 0 && it.ev != nil {
			ps.add("protocol: an event after Done", "value %d: %T", i, it.ev)
		}
		if _, ok := it.ev.(agentrt.Done); ok {
			dones++
		}
	}
	if dones > 1 {
		ps.add("protocol: more than one Done", "%d Done events", dones)
	}
	if o.broke {
		return
	}
	d, ok, err := o.done()
	if !ok {
		ps.add("protocol: no Done event", "values %s", propItems(o.items))
		return
	}
	switch d.Reason {
	case agentrt.StopCancelled:
		if err == nil || !(errors.Is(err, context.Canceled) || errors.Is(err, errPropCancel)) {
			ps.add("protocol: Done cancelled without an error wrapping the cancellation", "error %v", err)
		}
	case agentrt.StopError:
		if err == nil {
			ps.add("protocol: Done error without an error", "Done %+v", d)
		}
	case agentrt.StopComplete, agentrt.StopMaxTurns, agentrt.StopLoopDetected, agentrt.StopBudgetExceeded:
		if err != nil {
			ps.add("protocol: an error after a Done that is not an error", "Done %s, error %v", d.Reason, err)
		}
	default:
		ps.add("protocol: unknown Done.Reason", "%q", d.Reason)
	}
}

// propCheckSession checks a stored session. full requires every tool_use
// answered; otherwise the last assistant message may lack results at the
// end (what a crash or a failed append leaves, and Run repairs).
func propCheckSession(ps *propProblems, what string, msgs []agentrt.Message, full bool) {
	check := msgs
	if !full {
		check = append(slices.Clone(msgs), propInterrupted(msgs)...)
	}
	if err := agenttest.CheckInvariants(check); err != nil {
		ps.add(what+": agenttest.CheckInvariants", "%v", err)
	}
	seen := map[string]int{}
	for i := 0; i < len(check); i++ {
		m := check[i]
		if m.Role == agentrt.RoleTool {
			ps.add(what+": a tool result that does not follow its assistant message", "message %d answers %q", i, m.ToolUseID)
			continue
		}
		if m.Role != agentrt.RoleAssistant {
			continue
		}
		uses := m.ToolUses()
		for k, u := range uses {
			switch {
			case u.ID == "":
				ps.add(what+": empty tool_use id", "message %d block %d", i, k)
			case !utf8.ValidString(u.ID):
				ps.add(what+": tool_use id is not valid UTF-8", "message %d: %q", i, u.ID)
			}
			if j, dup := seen[u.ID]; dup {
				ps.add(what+": tool_use id used twice in the session", "id %q in messages %d and %d", u.ID, j, i)
			}
			seen[u.ID] = i
			j := i + 1 + k
			if j >= len(check) || check[j].Role != agentrt.RoleTool || check[j].ToolUseID != u.ID {
				got := "nothing"
				if j < len(check) {
					got = propMsg(check[j])
				}
				ps.add(what+": results do not follow their tool_uses in order", "message %d tool_use %d %q: found %s", i, k, u.ID, got)
				break
			}
		}
		i += len(uses)
	}
}

// propMsgEqual compares messages as a store keeps them: JSON inputs
// compared compacted.
func propMsgEqual(a, b agentrt.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolUseID != b.ToolUseID || a.IsError != b.IsError || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		x, y := a.Blocks[i], b.Blocks[i]
		if x.Type != y.Type || x.Text != y.Text || x.ID != y.ID || x.Name != y.Name || !bytes.Equal(x.Signature, y.Signature) || !propJSONEqual(x.Input, y.Input) {
			return false
		}
	}
	return true
}

func propJSONEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// propCheckEvents checks the events against each other and against the
// messages the run appended (added). lost says a store Append failed: the
// result of the call in progress may then have no ToolResult event.
func propCheckEvents(ps *propProblems, o propOutcome, added []agentrt.Message, lost bool) {
	var asstAt []int // positions of the assistant messages in added
	for i, m := range added {
		if m.Role == agentrt.RoleAssistant {
			asstAt = append(asstAt, i)
		}
	}
	type call struct {
		id  string
		pos int // where its result must be in added, -1 if unknown
	}
	var uses []agentrt.Block // of the last AssistantMessage
	pos := -1                // its position in added
	nextCall := 0
	var pending []call // ToolCalls awaiting their ToolResult
	asst := 0
	closeTurn := func(at string) {
		if len(pending) > 0 && !lost {
			ps.add("events: a ToolCall without its ToolResult", "%d pending (first %q) at %s", len(pending), pending[0].id, at)
		}
		pending = nil
	}
	for i, ev := range o.events() {
		switch e := ev.(type) {
		case agentrt.AssistantMessage:
			closeTurn(fmt.Sprintf("event %d (AssistantMessage)", i))
			pos = -1
			if asst >= len(asstAt) {
				ps.add("events: an AssistantMessage that is not in the session", "event %d: %s", i, propMsg(e.Message))
			} else {
				pos = asstAt[asst]
				if !propMsgEqual(e.Message, added[pos]) {
					ps.add("events: AssistantMessage differs from the stored message", "event %d: %s\nstored: %s", i, propMsg(e.Message), propMsg(added[pos]))
				}
			}
			asst++
			uses, nextCall = e.Message.ToolUses(), 0
		case agentrt.ToolCall:
			if nextCall >= len(uses) {
				ps.add("events: a ToolCall that is not the next tool_use", "event %d: %q, %d tool_uses", i, e.ToolUseID, len(uses))
				continue
			}
			if u := uses[nextCall]; u.ID != e.ToolUseID || u.Name != e.Tool.Name {
				ps.add("events: ToolCalls out of tool_use order", "event %d: %q, want tool_use %d %q", i, e.ToolUseID, nextCall, u.ID)
			}
			c := call{id: e.ToolUseID, pos: -1}
			if pos >= 0 {
				c.pos = pos + 1 + nextCall
			}
			nextCall++
			pending = append(pending, c)
		case agentrt.ToolResult:
			if len(pending) == 0 {
				ps.add("events: a ToolResult without a ToolCall", "event %d: %q", i, e.Message.ToolUseID)
				continue
			}
			c := pending[0]
			pending = pending[1:]
			if c.id != e.Message.ToolUseID {
				ps.add("events: ToolResults out of tool_use order", "event %d: result for %q, want %q", i, e.Message.ToolUseID, c.id)
			}
			if c.pos < 0 {
				continue
			}
			if c.pos >= len(added) || added[c.pos].Role != agentrt.RoleTool {
				ps.add("events: a ToolResult that is not in the session", "event %d: %s", i, propMsg(e.Message))
				continue
			}
			if !propMsgEqual(e.Message, added[c.pos]) {
				ps.add("events: ToolResult message differs from the stored result", "event %d: %s\nstored: %s", i, propMsg(e.Message), propMsg(added[c.pos]))
			}
		case agentrt.Done:
			if !o.broke {
				closeTurn(fmt.Sprintf("event %d (Done)", i))
			}
		}
	}
}

// propKey returns the "k" of a tool input: an object, or an object
// encoded in a JSON string.
func propKey(raw json.RawMessage) string {
	var in struct {
		K string `json:"k"`
	}
	if json.Unmarshal(raw, &in) == nil && in.K != "" {
		return in.K
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Unmarshal([]byte(s), &in) == nil {
		return in.K
	}
	return ""
}

// propCheckFaults checks what the injected faults must have led to.
// toolRunsOK tells whether a successful tool call must show as a success
// (no deadline that could race with it).
func propCheckFaults(ps *propProblems, plan *propPlan, added []agentrt.Message, toolDeadline map[string]bool) {
	type use struct {
		res  *agentrt.Message
		name string
	}
	byKey := map[string]use{}
	for i, m := range added {
		for k, u := range m.ToolUses() {
			key := propKey(u.Input)
			if key == "" {
				continue
			}
			var res *agentrt.Message
			if j := i + 1 + k; j < len(added) && added[j].Role == agentrt.RoleTool && added[j].ToolUseID == u.ID {
				res = &added[j]
			}
			if _, dup := byKey[key]; !dup {
				byKey[key] = use{res, u.Name}
			}
		}
	}
	plan.mu.Lock()
	execs := propClone(plan.execs)
	execOK := propClone(plan.execOK)
	sawRW := propClone(plan.sawRW)
	plan.mu.Unlock()
	for k, n := range execs {
		if n > 1 {
			ps.add("tools: Execute called twice for one tool_use", "k=%q: %d calls", k, n)
		}
		if _, ok := byKey[k]; !ok {
			ps.add("tools: Execute ran for a call that is not in the session", "k=%q", k)
		}
	}
	faulted := map[string]bool{}
	for _, f := range plan.firedList() {
		if f.Key == "" || strings.HasPrefix(f.Kind, "hook:") && f.Kind != "hook:BeforeTool" && f.Kind != "hook:AfterTool" || f.Kind == "planner" {
			continue
		}
		faulted[f.Key] = true
		u := byKey[f.Key]
		mustError, mustNotRun := false, false
		switch f.Kind {
		case "decode":
			mustError, mustNotRun = true, true
		case "perm":
			switch f.Mode {
			case fRewrite, fRewriteTyped:
				if execs[f.Key] > 0 && !sawRW[f.Key] {
					ps.add("permission: the rewritten input was not used", "k=%q (%s)", f.Key, f.Mode)
				}
			default:
				mustError, mustNotRun = true, true
			}
		case "hook:BeforeTool":
			mustError, mustNotRun = true, true
		case "exec":
			mustError = f.Mode != fSlow
		}
		if mustNotRun && execs[f.Key] > 0 {
			ps.add("tools: a call ran although its "+f.Kind+" "+f.Mode.String()+" should have stopped it", "k=%q", f.Key)
		}
		if mustError && u.res != nil && !u.res.IsError {
			ps.add("tools: "+f.Kind+" "+f.Mode.String()+" did not give an is_error result", "k=%q: %s", f.Key, propMsg(*u.res))
		}
	}
	for k := range execOK {
		u := byKey[k]
		if faulted[k] || u.res == nil || toolDeadline[u.name] {
			continue
		}
		if u.res.IsError || u.res.Content != "ok:"+k {
			ps.add("tools: a successful call does not show as a success", "k=%q: %s", k, propMsg(*u.res))
		}
	}
}

func propClone[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// propCheckHooksAndPlanner checks that contained failures were reported
// and that planner failures ended the run as they must. Only for runs whose
// every value was seen.
func propCheckHooksAndPlanner(ps *propProblems, plan *propPlan, o propOutcome) {
	d, ok, err := o.done()
	if !ok || o.broke {
		return
	}
	failed := map[string]int{}
	for _, ev := range o.events() {
		if hf, ok := ev.(agentrt.HookFailed); ok && hf.Err != nil {
			failed[hf.Stage]++
		}
	}
	fired := map[string]int{}
	firedKeys := map[string][]string{}
	for _, f := range plan.firedList() {
		switch {
		case f.Kind == "planner":
			if !f.Live {
				continue
			}
			switch f.Mode {
			case fPanic, fGoexit:
				var pe *agentrt.PanicError
				if d.Reason != agentrt.StopError || !errors.As(err, &pe) {
					ps.add("planner: a "+f.Mode.String()+" did not end the run with Done{error} and a *PanicError", "Done %s, error %v", d.Reason, err)
				}
			case fError:
				if d.Reason != agentrt.StopError || !errors.Is(err, errPropPlanner) {
					ps.add("planner: an error did not end the run with Done{error} and that error", "Done %s, error %v", d.Reason, err)
				}
			case fNil:
				if d.Reason != agentrt.StopError || err == nil {
					ps.add("planner: a nil response did not end the run with Done{error} and an error", "Done %s, error %v", d.Reason, err)
				}
			}
		case f.Kind == "hook:BeforeTool" && f.Mode == fError:
			// A BeforeTool's error blocks its call; it is not a failure.
		case strings.HasPrefix(f.Kind, "hook:") && f.Mode.stops():
			fired[strings.TrimPrefix(f.Kind, "hook:")]++
			firedKeys[strings.TrimPrefix(f.Kind, "hook:")] = append(firedKeys[strings.TrimPrefix(f.Kind, "hook:")], f.Key+" "+f.Mode.String())
		}
	}
	for _, st := range propHookStages {
		if st == "BeforePlan" {
			// The run's error names the hook: "agentrt: hook 0 BeforePlan: ...".
			if fired[st] > 0 && failed[st] == 0 && (d.Reason != agentrt.StopError || err == nil || !strings.Contains(err.Error(), "BeforePlan")) {
				ps.add("hooks: a failed BeforePlan was neither a HookFailed nor the run's error", "Done %s, error %v", d.Reason, err)
			}
			continue
		}
		if fired[st] != failed[st] {
			ps.add("hooks: a failed "+st+" hook was not reported as one HookFailed", "%d failures (%v), %d HookFailed events", fired[st], firedKeys[st], failed[st])
		}
	}
}

// propMsg is a compact form of a message for failure reports.
func propMsg(m agentrt.Message) string {
	var sb strings.Builder
	switch m.Role {
	case agentrt.RoleTool:
		fmt.Fprintf(&sb, "tool %q", m.ToolUseID)
		if m.IsError {
			sb.WriteString(" (error)")
		}
		fmt.Fprintf(&sb, ": %s", propCut(m.Content, 120))
	case agentrt.RoleAssistant:
		sb.WriteString("assistant:")
		if m.Content != "" {
			fmt.Fprintf(&sb, " content=%q", propCut(m.Content, 40))
		}
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				fmt.Fprintf(&sb, " [use %q %q %s]", b.ID, b.Name, propCut(string(b.Input), 60))
			} else {
				fmt.Fprintf(&sb, " %q", propCut(b.Text, 40))
			}
		}
	default:
		fmt.Fprintf(&sb, "%s: %q", m.Role, propCut(m.Content, 80))
	}
	return sb.String()
}

func propMsgs(msgs []agentrt.Message) string {
	var sb strings.Builder
	for i, m := range msgs {
		if i == 120 {
			fmt.Fprintf(&sb, "  ... %d more\n", len(msgs)-i)
			break
		}
		fmt.Fprintf(&sb, "  %3d %s\n", i, propMsg(m))
	}
	return sb.String()
}

func propItems(items []propItem) string {
	var parts []string
	for i, it := range items {
		if i == 150 {
			parts = append(parts, fmt.Sprintf("... %d more", len(items)-i))
			break
		}
		switch e := it.ev.(type) {
		case nil:
			parts = append(parts, fmt.Sprintf("error(%v)", it.err))
		case agentrt.Done:
			parts = append(parts, fmt.Sprintf("Done(%s)", e.Reason))
		case agentrt.ToolCall:
			parts = append(parts, fmt.Sprintf("Call(%q)", e.ToolUseID))
		case agentrt.ToolResult:
			parts = append(parts, fmt.Sprintf("Result(%q err=%v)", e.Message.ToolUseID, e.Message.IsError))
		case agentrt.HookFailed:
			parts = append(parts, fmt.Sprintf("HookFailed(%s)", e.Stage))
		default:
			parts = append(parts, strings.TrimPrefix(fmt.Sprintf("%T", e), "agentrt."))
		}
		if it.ev != nil && it.err != nil {
			parts[len(parts)-1] += fmt.Sprintf("+error(%v)", it.err)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// propCut shortens s for a report, quoting it if it is not valid UTF-8.
func propCut(s string, n int) string {
	cut := s
	if len(s) > n {
		cut = s[:n]
	}
	if !utf8.ValidString(cut) {
		cut = strconv.Quote(cut)
	}
	if len(s) > n {
		cut += fmt.Sprintf("…(%d bytes)", len(s))
	}
	return cut
}

// propInterrupted returns the results a resumed run adds for the tool_uses
// of the last assistant message that have none.
func propInterrupted(msgs []agentrt.Message) []agentrt.Message {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentrt.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	var out []agentrt.Message
	for _, b := range msgs[last].ToolUses() {
		answered := false
		for _, m := range msgs[last+1:] {
			if m.Role == agentrt.RoleTool && m.ToolUseID == b.ID {
				answered = true
			}
		}
		if !answered {
			out = append(out, agentrt.NewToolMessage(b.ID, "interrupted", true))
		}
	}
	return out
}
