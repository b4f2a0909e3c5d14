package agentrt_test

// TestRunProperties is the adversarial property test of Agent.Run: seeded
// random planner scripts (1 to 64 tool_uses per message; duplicate, empty,
// reused, look-alike, non-UTF-8 and runtime-like ids; unknown and
// case-variant tool names; null, array, double-encoded, invalid, wrong-typed
// and rarely 1 MB inputs; stray Content; endless tool calls) run against
// panics, runtime.Goexit and errors in every callback (Tool.Decode,
// Tool.Execute inline and in parallel batches, the permission checker,
// every hook, the planner), tools that ignore their context past a
// timeout, stores that cancel the run from inside Append or fail an
// Append, a Sync or an AppendRecord, cancellations and early breaks, on a
// MemoryStore and on a JSONLStore. After every run it reloads the session
// (a new JSONLStore on the same directory), checks the contract (see
// propScenario.run), resumes it with a well-behaved planner, and checks
// again. Each store's batch ends with goleak.VerifyNone. The driver,
// propTest and propDrive, is TestRunExtraProperties' too.
//
// CI runs AGENTRT_PROPERTY_RUNS runs per store (default 300, under a
// minute with -race on 2 cores). By hand:
//
//	AGENTRT_PROPERTY_RUNS=100000 go test -run TestRunProperties -count=1 .
//
// Every failure prints its seed; replay one run (with the same script and
// faults) with
//
//	AGENTRT_PROPERTY_SEED=<seed> go test -race -run 'TestRunProperties/memory' -count=1 -v .
//
// Failures are grouped by the rule they break: the first run breaking each
// rule is printed in full (seed, script, values yielded, stored session),
// later ones are counted in the summary.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/timeline"
)

// propScenario is one generated run.
type propScenario struct {
	seed  uint64
	store string // "memory" or "jsonl"
	// early is an early failure to provoke: "nil-planner", "nil-tool",
	// "dup-tool", "spec-panic", "spec-goexit", "busy", "load-fail",
	// "empty-input"; "" for a normal run.
	early      string
	prefill    []agentrt.Message
	input      string
	turns      []propTurn
	maxTurns   int
	maxPar     int
	noFinal    bool
	toolTO     time.Duration // Agent.ToolTimeout
	searchTO   time.Duration // the "search" tool's own timeout
	checker    string        // "default", "allow-all", "faulty"
	hooks      int           // Hooks entries: 0, 1 (faulty) or 2 (observer + faulty)
	rates      map[string]propRate
	breakAt    int // break out of the range loop at this value (1-based, 0 never)
	cancelAt   int // cancel the run's ctx at this value
	withCause  bool
	storeFault propStoreFault
	durability agentrt.Durability
}

type propStoreFault struct{ cancelAt, failAppendAt, failSyncAt, failRecordAt int }

type propTurn struct {
	fault propFault // planner fault at this call
	msg   agentrt.Message
}

func (sc *propScenario) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "  seed=%d store=%s early=%q input=%q maxTurns=%d maxPar=%d noFinal=%v toolTimeout=%v searchTimeout=%v checker=%s hooks=%d\n",
		sc.seed, sc.store, sc.early, propCut(sc.input, 40), sc.maxTurns, sc.maxPar, sc.noFinal, sc.toolTO, sc.searchTO, sc.checker, sc.hooks)
	fmt.Fprintf(&sb, "  breakAt=%d cancelAt=%d withCause=%v store faults=%+v durability=%v\n", sc.breakAt, sc.cancelAt, sc.withCause, sc.storeFault, sc.durability)
	var kinds []string
	for k, r := range sc.rates {
		if r.Pct > 0 {
			kinds = append(kinds, fmt.Sprintf("%s:%d%%%v", k, r.Pct, r.Modes))
		}
	}
	sort.Strings(kinds)
	fmt.Fprintf(&sb, "  fault rates: %s\n", strings.Join(kinds, " "))
	if len(sc.prefill) > 0 {
		sb.WriteString("  prefilled session:\n")
		sb.WriteString(propMsgs(sc.prefill))
	}
	for i, t := range sc.turns {
		fmt.Fprintf(&sb, "  planner call %d", i+1)
		if t.fault != fNone {
			fmt.Fprintf(&sb, " [%s]", t.fault)
		}
		fmt.Fprintf(&sb, ": %s\n", propMsg(t.msg))
	}
	return sb.String()
}

// propGen generates scenarios.
type propGen struct {
	r     *rand.Rand
	used  []string // ids of earlier turns
	nextK int
	nextC int
}

var propNames = []string{"lookup", "lookup", "lookup", "search", "search", "write", "write", "Lookup", "WRITE", "lookup ", "unknown_tool", ""}

func (g *propGen) id(inMsg []string) string {
	r := g.r
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	switch r.IntN(24) {
	case 0:
		return ""
	case 1, 2:
		if len(inMsg) > 0 {
			return pick(inMsg)
		}
	case 3, 4:
		if len(g.used) > 0 {
			return pick(g.used)
		}
	case 5, 6:
		all := append(append([]string(nil), g.used...), inMsg...)
		if len(all) > 0 {
			base := pick(all)
			if r.IntN(2) == 0 {
				return base + " "
			}
			if up := strings.ToUpper(base); up != base {
				return up
			}
			return strings.ToLower(base) + "X"
		}
	case 7:
		return pick([]string{"a\xff", "a\xfe", "\xff", "ok\xc3"})
	case 8, 9:
		return fmt.Sprintf("agentrt_t%d_%d", 1+r.IntN(3), r.IntN(6))
	}
	g.nextC++
	return fmt.Sprintf("call_%d", g.nextC)
}

func (g *propGen) input() json.RawMessage {
	r := g.r
	g.nextK++
	k := fmt.Sprintf("u%d", g.nextK)
	obj := func(extra string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"k":%q,"n":%d%s}`, k, r.IntN(9), extra))
	}
	switch r.IntN(26) {
	case 0:
		return json.RawMessage(`null`)
	case 1:
		return json.RawMessage(`[1,{"k":"x"}]`)
	case 2, 3:
		s, _ := json.Marshal(string(obj("")))
		return s
	case 4:
		return json.RawMessage(`{"k":`)
	case 5:
		return json.RawMessage(`{"k":1,"n":"many"}`)
	case 6:
		return nil
	case 7:
		return json.RawMessage(`"just text"`)
	case 8:
		return obj(`,"zzz":true`)
	case 9:
		return json.RawMessage(fmt.Sprintf(`{"k":%q,"n":"7"}`, k))
	case 10:
		return json.RawMessage(`{}`)
	case 11:
		if r.IntN(40) == 0 {
			return obj(fmt.Sprintf(`,"s":%q`, strings.Repeat("x", 1<<20)))
		}
	case 12:
		return json.RawMessage(fmt.Sprintf("{\"k\":\"%s\xff\"}", k))
	}
	return obj("")
}

func (g *propGen) message(turn int, final bool) agentrt.Message {
	r := g.r
	var m agentrt.Message
	if r.IntN(5) == 0 {
		m.Content = "stray content"
		if r.IntN(100) == 0 {
			m.Content = strings.Repeat("y", 1<<20)
		}
	}
	switch r.IntN(12) {
	case 0:
		m.Role = agentrt.RoleUser
	case 1:
		m.Role, m.ToolUseID, m.IsError = agentrt.RoleTool, "x", true
	default:
		m.Role = agentrt.RoleAssistant
	}
	if final {
		m.Blocks = append(m.Blocks, agentrt.TextBlock(fmt.Sprintf("answer %d", turn)))
		return m
	}
	n := 1 + r.IntN(4)
	if r.IntN(4) == 0 {
		n = 1 + r.IntN(64)
	}
	var ids []string
	for range n {
		if r.IntN(8) == 0 {
			m.Blocks = append(m.Blocks, agentrt.TextBlock("thinking"))
		}
		id := g.id(ids)
		ids = append(ids, id)
		m.Blocks = append(m.Blocks, agentrt.ToolUseBlock(id, propNames[r.IntN(len(propNames))], g.input()))
	}
	g.used = append(g.used, ids...)
	return m
}

func propRandRate(r *rand.Rand, modes ...propFault) propRate {
	if r.IntN(2) == 0 {
		return propRate{}
	}
	return propRate{Pct: []uint64{5, 20, 50}[r.IntN(3)], Modes: modes}
}

// propGenerate makes the scenario of a seed; the same seed gives the same
// scenario.
func propGenerate(seed uint64, store string) *propScenario {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &propGen{r: r}
	sc := &propScenario{seed: seed, store: store, input: "go", durability: agentrt.SyncNever}
	if r.IntN(4) == 0 {
		sc.durability = []agentrt.Durability{agentrt.SyncEveryTurn, agentrt.SyncEveryAppend}[r.IntN(2)]
	}
	if r.IntN(12) == 0 {
		sc.early = []string{"nil-planner", "nil-tool", "dup-tool", "spec-panic", "spec-goexit", "busy", "load-fail", "empty-input"}[r.IntN(8)]
		if sc.early == "empty-input" {
			sc.input = ""
		}
		return sc
	}
	if r.IntN(6) == 0 {
		// A session left by an earlier run, maybe cut short by a crash.
		m := 1 + r.IntN(4)
		var blocks []agentrt.Block
		for i := range m {
			id := fmt.Sprintf("old_%d", i)
			g.used = append(g.used, id)
			blocks = append(blocks, agentrt.ToolUseBlock(id, "lookup", json.RawMessage(`{"k":"old"}`)))
		}
		sc.prefill = append(sc.prefill, agentrt.NewUserMessage("earlier"), agentrt.NewAssistantMessage(blocks...))
		for i := range r.IntN(m + 1) {
			sc.prefill = append(sc.prefill, agentrt.NewToolMessage(blocks[i].ID, "old result", false))
		}
		if r.IntN(2) == 0 {
			sc.input = ""
		}
	}
	sc.maxTurns = 1 + r.IntN(6)
	sc.maxPar = r.IntN(5)
	sc.noFinal = r.IntN(3) == 0
	if r.IntN(4) == 0 {
		sc.toolTO = time.Duration(1+r.IntN(4)) * time.Millisecond
	}
	if r.IntN(2) == 0 {
		sc.searchTO = time.Duration(1+r.IntN(3)) * time.Millisecond
	}
	sc.checker = []string{"default", "allow-all", "faulty", "faulty"}[r.IntN(4)]
	sc.hooks = r.IntN(3)
	sc.rates = map[string]propRate{
		"decode": propRandRate(r, fPanic, fGoexit, fError),
		"exec":   propRandRate(r, fPanic, fGoexit, fError, fSlow, fHang),
		"perm":   propRandRate(r, fPanic, fGoexit, fError, fBlock, fRewrite, fRewriteTyped, fRewriteBad),
	}
	if sc.hooks > 0 {
		for _, st := range propHookStages {
			modes := []propFault{fPanic, fGoexit}
			switch st {
			case "BeforePlan":
				modes = append(modes, fError)
			case "BeforeTool":
				modes = append(modes, fError, fBlock)
			}
			if r.IntN(3) == 0 {
				sc.rates["hook:"+st] = propRate{Pct: []uint64{10, 30}[r.IntN(2)], Modes: modes}
			}
		}
	}
	// The script: tool turns, then an answer; or tool calls forever.
	endless := r.IntN(4) == 0
	toolTurns := r.IntN(sc.maxTurns + 1)
	if endless {
		toolTurns = sc.maxTurns + 1
	}
	for t := 1; t <= toolTurns; t++ {
		sc.turns = append(sc.turns, propTurn{msg: g.message(t, false)})
	}
	if !endless {
		sc.turns = append(sc.turns, propTurn{msg: g.message(toolTurns+1, true)})
	}
	for i := range sc.turns {
		if r.IntN(14) == 0 {
			sc.turns[i].fault = []propFault{fPanic, fGoexit, fError, fNil}[r.IntN(4)]
		}
	}
	if r.IntN(6) == 0 {
		sc.breakAt = 1 + r.IntN(40)
	}
	if r.IntN(6) == 0 {
		sc.cancelAt = 1 + r.IntN(40)
		sc.withCause = r.IntN(2) == 0
	}
	if r.IntN(8) == 0 {
		sc.storeFault.cancelAt = 1 + r.IntN(12)
	}
	if r.IntN(10) == 0 {
		sc.storeFault.failAppendAt = 1 + r.IntN(12)
	}
	if r.IntN(12) == 0 {
		sc.storeFault.failSyncAt = 1 + r.IntN(4)
	}
	if r.IntN(12) == 0 {
		sc.storeFault.failRecordAt = 1 + r.IntN(6)
	}
	return sc
}

func TestRunProperties(t *testing.T) {
	propTest(t, 300, func(seed uint64, store string) propCase { return propGenerate(seed, store) })
}

func (sc *propScenario) propSeed() uint64 { return sc.seed }

func (sc *propScenario) prefilled() []agentrt.Message { return sc.prefill }

// open opens the scenario's store in dir.
func (sc *propScenario) open(dir string, mem *agentrt.MemoryStore) (agentrt.SessionStore, func(), error) {
	if sc.store == "memory" {
		return mem, func() {}, nil
	}
	s, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{Durability: sc.durability})
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

// run runs one scenario on inner, through a propStore with the scenario's
// store faults. Its checks check the contract:
//
//  1. an early failure yields exactly one (nil, err) and no event, every
//     time Run is called, and leaves the session unchanged;
//  2. otherwise events, one Done last, then at most one error (for
//     Done{cancelled}, wrapping the cancellation); no panic or Goexit
//     escapes Run;
//  3. the stored session (reloaded) passes agenttest.CheckInvariants, and
//     its tool_use ids are unique in the whole session, non-empty and valid
//     UTF-8;
//  4. ToolCall/ToolResult events come in tool_use order, paired, and match
//     the stored messages;
//  5. callback failures become is_error results, denials or HookFailed
//     events; planner failures end the run with Done{error} and the error;
//  6. the session resumes: Run with "continue" and a planner that answers
//     completes and leaves a valid session.
func (sc *propScenario) run(r *propRun, inner agentrt.SessionStore) (propOutcome, func(agentrt.SessionStore) bool) {
	cancel := func() {
		if sc.withCause {
			r.cancel(errPropCancel)
		} else {
			r.cancel(nil)
		}
	}
	plan := newPropPlan(sc.seed, sc.rates)
	store := &propStore{inner: inner, cancel: cancel,
		cancelAt: sc.storeFault.cancelAt, failAppendAt: sc.storeFault.failAppendAt,
		failSyncAt: sc.storeFault.failSyncAt, failRecordAt: sc.storeFault.failRecordAt}
	tools := []agentrt.Tool{
		newPropTool(plan, "lookup", true, 0, sc.toolTO),
		newPropTool(plan, "search", true, sc.searchTO, sc.toolTO),
		newPropTool(plan, "write", false, 0, sc.toolTO),
	}
	deadline := map[string]bool{"lookup": sc.toolTO > 0, "search": sc.toolTO > 0 || sc.searchTO > 0, "write": sc.toolTO > 0}
	calls := 0
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		r.checkRequest(req)
		i := calls
		calls++
		tr := propTurn{msg: agentrt.NewAssistantMessage(agentrt.TextBlock("final answer"))}
		if i < len(sc.turns) {
			tr = sc.turns[i]
		}
		live := ctx.Err() == nil
		if tr.fault != fNone {
			plan.record(propFired{Kind: "planner", Key: strconv.Itoa(i), Mode: tr.fault, Live: live})
		}
		switch tr.fault {
		case fPanic:
			panic("injected planner panic")
		case fGoexit:
			runtime.Goexit()
		case fError:
			return nil, errPropPlanner
		case fNil:
			return nil, nil
		}
		if req.OnText != nil && !tr.msg.HasToolUse() {
			for _, b := range tr.msg.Blocks {
				if b.Type == agentrt.BlockText {
					for _, w := range strings.SplitAfter(b.Text, " ") {
						req.OnText(w)
					}
				}
			}
		}
		return &agentrt.ModelResponse{Message: tr.msg, Usage: agentrt.Usage{InputTokens: 1, OutputTokens: 1}}, nil
	})
	ag := &agentrt.Agent{
		Name: "prop", Instructions: "property test", Tools: tools, Planner: planner, Store: store,
		MaxTurns: sc.maxTurns, MaxParallelTools: sc.maxPar, ToolTimeout: sc.toolTO, NoFinalAnswer: sc.noFinal,
	}
	switch sc.checker {
	case "allow-all":
		ag.Permission = agentrt.AllowAll()
	case "faulty":
		ag.Permission = propChecker(plan)
	}
	switch sc.hooks {
	case 1:
		ag.Hooks = []agentrt.Hooks{propHooks(plan)}
	case 2:
		ag.Hooks = []agentrt.Hooks{{OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, _ int) context.Context { return ctx }}, propHooks(plan)}
	}

	if sc.early != "" {
		return sc.runEarly(r, ag, store, inner)
	}

	out := propCollect(ag.Run(r.ctx, r.sid, sc.input), sc.breakAt, sc.cancelAt, cancel)
	return out, func(reload agentrt.SessionStore) bool {
		ps, before, after := &r.ps, r.before, r.after
		escaped := propCheckEscape(ps, "run", out, plan)
		store.mu.Lock()
		appendFailed, syncFailed := store.appendFailed, store.syncFailed
		store.mu.Unlock()
		if out.normal && out.panicked == nil {
			propCheckProtocol(ps, out, appendFailed)
			if (appendFailed || syncFailed) && !out.broke {
				if _, _, err := out.done(); err == nil {
					ps.add("store: a failed Append or Sync did not end the run with an error", "append failed=%v, sync failed=%v", appendFailed, syncFailed)
				}
			}
		}
		propCheckSession(ps, "session", after, !appendFailed)
		if len(after) < len(before) || !slicesEqualMsgs(after[:len(before)], before) {
			ps.add("session: the run changed messages stored before it", "before %d messages, after %d", len(before), len(after))
			return escaped
		}
		added := after[len(before):]
		if out.normal && out.panicked == nil {
			propCheckEvents(ps, out, added, appendFailed)
			propCheckHooksAndPlanner(ps, plan, out)
		}
		propCheckFaults(ps, plan, added, deadline)
		propResume(ps, reload, r.sid, after, nil)
		store.mu.Lock()
		recordFailed := store.recordFailed
		store.mu.Unlock()
		if sc.store == "jsonl" && !appendFailed && !syncFailed && !recordFailed {
			// A store that failed a write may leave what verify reports (a
			// run that ended with calls its failed appends did not answer,
			// a trace record it dropped): the next run repairs the first, and
			// the checks above hold either way.
			propVerifyFile(ps, r.dir, r.sid)
		}
		return escaped
	}
}

// propVerifyFile checks a JSONL session file as `agentrt verify` does
// (format, seq, invariants, and records that agree with the messages),
// after the run and its resume: what the runtime wrote passes, whatever
// the planner and the faults did. A warning (what a crash leaves) is not a
// problem.
func propVerifyFile(ps *propProblems, dir, sid string) {
	findings, err := timeline.Verify(context.Background(), dir, sid, nil)
	if err != nil {
		ps.add("verify: the file cannot be verified", "%v", err)
		return
	}
	for _, f := range findings {
		if !f.Warning {
			data, _ := os.ReadFile(f.File)
			ps.add("verify: "+f.Rule, "%s\nthe file:\n%s", f, propCut(string(data), 6000))
		}
	}
}

// runEarly provokes an early failure and checks it, twice.
func (sc *propScenario) runEarly(r *propRun, ag *agentrt.Agent, store *propStore, inner agentrt.SessionStore) (propOutcome, func(agentrt.SessionStore) bool) {
	bg := context.Background()
	var want error
	var unlock func()
	switch sc.early {
	case "nil-planner":
		ag.Planner = nil
	case "nil-tool":
		ag.Tools = append(ag.Tools, nil)
	case "dup-tool":
		ag.Tools = append(ag.Tools, newPropTool(newPropPlan(0, nil), "lookup", false, 0, 0))
	case "spec-panic":
		ag.Tools = append(ag.Tools, propBadSpecTool{})
	case "spec-goexit":
		ag.Tools = append(ag.Tools, propBadSpecTool{goexit: true})
	case "busy":
		u, err := inner.(agentrt.Locker).Lock(bg, r.sid)
		if err != nil {
			return propOutcome{}, func(agentrt.SessionStore) bool {
				r.ps.add("setup", "%v", err)
				return false
			}
		}
		unlock = u
		want = agentrt.ErrSessionBusy
	case "load-fail":
		store.failLoad = true
	case "empty-input":
		want = agentrt.ErrEmptyInput
	}
	var out propOutcome
	for attempt := 1; attempt <= 2; attempt++ {
		out = propCollect(ag.Run(bg, r.sid, sc.input), 0, 0, nil)
		if out.hung {
			return out, nil
		}
		r.mu.Lock()
		propCheckEarly(&r.ps, fmt.Sprintf("early failure (%s, Run #%d)", sc.early, attempt), out, want)
		r.mu.Unlock()
	}
	if unlock != nil {
		unlock()
	}
	return out, func(reload agentrt.SessionStore) bool {
		if !slicesEqualMsgs(r.after, r.before) {
			r.ps.add("early failure: the session changed", "%s", sc.early)
		}
		propResume(&r.ps, reload, r.sid, r.after, nil)
		return false
	}
}

// The checks must be able to fail: feed them broken runs and sessions.
func TestRunPropertyChecksCatchBreakage(t *testing.T) {
	use := func(id string) agentrt.Block {
		return agentrt.ToolUseBlock(id, "lookup", json.RawMessage(`{"k":"u1"}`))
	}
	user := agentrt.NewUserMessage("go")
	asst := agentrt.NewAssistantMessage(use("a"), use("b"))
	ra, rb := agentrt.NewToolMessage("a", "ok:u1", false), agentrt.NewToolMessage("b", "x", false)
	sessions := map[string][]agentrt.Message{
		"missing result":   {user, asst, ra},
		"swapped results":  {user, asst, rb, ra},
		"id reused later":  {user, agentrt.NewAssistantMessage(use("a")), ra, agentrt.NewAssistantMessage(use("a")), ra},
		"invalid UTF-8 id": {user, agentrt.NewAssistantMessage(use("a\xff")), agentrt.NewToolMessage("a\xff", "", true)},
		"stray result":     {user, ra},
	}
	for name, msgs := range sessions {
		var ps propProblems
		propCheckSession(&ps, "session", msgs, true)
		if len(ps) == 0 {
			t.Errorf("propCheckSession passed a session with a %s", name)
		}
	}
	var ps propProblems
	propCheckSession(&ps, "session", []agentrt.Message{user, asst, ra, rb, agentrt.NewAssistantMessage(agentrt.TextBlock("done"))}, true)
	if len(ps) != 0 {
		t.Errorf("propCheckSession failed a valid session: %v", ps)
	}

	done := agentrt.Done{Reason: agentrt.StopComplete}
	am := agentrt.AssistantMessage{Message: asst}
	call := func(id string) agentrt.Event {
		u := use(id)
		return agentrt.ToolCall{ToolUseID: u.ID, Tool: agentrt.ToolSpec{Name: u.Name}, RawInput: u.Input}
	}
	res := func(m agentrt.Message) agentrt.Event { return agentrt.ToolResult{Message: m} }
	outcomes := map[string][]propItem{
		"no Done":               {{ev: am}},
		"event after Done":      {{ev: done}, {ev: am}},
		"error before Done":     {{err: errPropStore}, {ev: done}},
		"two errors":            {{ev: agentrt.Done{Reason: agentrt.StopError}}, {err: errPropStore}, {err: errPropStore}},
		"error after complete":  {{ev: done}, {err: errPropStore}},
		"cancelled, wrong err":  {{ev: agentrt.Done{Reason: agentrt.StopCancelled}}, {err: errPropStore}},
		"event with error":      {{ev: done, err: errPropStore}},
		"results out of order":  {{ev: am}, {ev: call("a")}, {ev: call("b")}, {ev: res(rb)}, {ev: res(ra)}, {ev: done}},
		"call without result":   {{ev: am}, {ev: call("a")}, {ev: call("b")}, {ev: res(ra)}, {ev: done}},
		"result differs":        {{ev: am}, {ev: call("a")}, {ev: res(agentrt.NewToolMessage("a", "other", false))}, {ev: call("b")}, {ev: res(rb)}, {ev: done}},
		"calls out of tool_use": {{ev: am}, {ev: call("b")}, {ev: res(rb)}, {ev: call("a")}, {ev: res(ra)}, {ev: done}},
	}
	for name, items := range outcomes {
		var ps propProblems
		o := propOutcome{items: items, normal: true}
		propCheckProtocol(&ps, o, false)
		propCheckEvents(&ps, o, []agentrt.Message{asst, ra, rb}, false)
		if len(ps) == 0 {
			t.Errorf("the protocol and event checks passed a run with %s", name)
		}
	}

	// Fault checks: a panic that did not become an is_error result, a
	// denied call that ran anyway.
	plan := newPropPlan(1, nil)
	plan.record(propFired{Kind: "exec", Key: "u1", Mode: fPanic})
	ps = nil
	propCheckFaults(&ps, plan, []agentrt.Message{agentrt.NewAssistantMessage(use("a")), ra}, nil)
	if len(ps) == 0 {
		t.Error("propCheckFaults passed a tool panic with a successful result")
	}
	plan = newPropPlan(1, nil)
	plan.record(propFired{Kind: "perm", Key: "u1", Mode: fBlock})
	plan.execs["u1"] = 1
	ps = nil
	propCheckFaults(&ps, plan, []agentrt.Message{agentrt.NewAssistantMessage(use("a")), agentrt.NewToolMessage("a", "denied", true)}, nil)
	if len(ps) == 0 {
		t.Error("propCheckFaults passed a denied call that ran")
	}

	// A real run on a store that silently drops one append.
	for drop := 2; drop <= 4; drop++ {
		store := &propStore{inner: &agentrt.MemoryStore{}, dropAt: drop}
		plan := newPropPlan(1, nil)
		ag := &agentrt.Agent{
			Tools:      []agentrt.Tool{newPropTool(plan, "lookup", true, 0, 0)},
			Planner:    agenttest.Script(agenttest.CallTools(agenttest.ToolUse("lookup", `{"k":"u1"}`), agenttest.ToolUse("lookup", `{"k":"u2"}`)), agenttest.Reply("done")),
			Store:      store,
			Permission: agentrt.AllowAll(),
		}
		out := propCollect(ag.Run(context.Background(), "s", "go"), 0, 0, nil)
		msgs, _ := store.Load(context.Background(), "s")
		var ps propProblems
		propCheckProtocol(&ps, out, false)
		propCheckSession(&ps, "session", msgs, true)
		propCheckEvents(&ps, out, msgs[min(1, len(msgs)):], false)
		if len(ps) == 0 {
			t.Errorf("no check caught a store that dropped append %d: %s", drop, propMsgs(msgs))
		}
	}
}
