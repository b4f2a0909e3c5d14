package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	durableloop "github.com/agentrt/agentrt/internal/durable/loop"
	"github.com/agentrt/agentrt/summarize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// The same Agent definition runs in-process (Agent.Run on a MemoryStore)
// and on Temporal (the workflow on the SDK's test environment): the
// sessions, the Done events and the requests the planner saw must be the
// same.

// outcome is what a run left: the session, its Done, its error and the
// planner's requests (message count and system prompt).
type outcome struct {
	msgs []agentrt.Message
	done agentrt.Done
	err  error
	reqs []string
}

// normalize passes messages through JSON, as the workflow's result does.
func normalize(t *testing.T, msgs []agentrt.Message) []agentrt.Message {
	t.Helper()
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	var out []agentrt.Message
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// recorder wraps a planner and records what it was asked.
type recorder struct {
	mu   sync.Mutex
	p    agentrt.Planner
	reqs []string
}

func (r *recorder) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	r.mu.Lock()
	first := ""
	if len(req.Messages) > 0 {
		first = req.Messages[0].Content
	}
	r.reqs = append(r.reqs, fmt.Sprintf("turn %d: %d messages, %d tools, system %q, first %q", req.Turn, len(req.Messages), len(req.Tools), req.System, first))
	r.mu.Unlock()
	return r.p.Plan(ctx, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

func runInProcess(t *testing.T, ag *agentrt.Agent, session, input string) outcome {
	t.Helper()
	rec := &recorder{p: ag.Planner}
	ag.Planner = rec
	ag.Store = &agentrt.MemoryStore{}
	evs, err := agenttest.Collect(ag.Run(context.Background(), session, input))
	msgs, lerr := ag.Store.Load(context.Background(), session)
	require.NoError(t, lerr)
	done, ok := agenttest.Done(evs)
	require.True(t, ok, "no Done in-process (err %v)", err)
	return outcome{msgs: normalize(t, msgs), done: done, err: err, reqs: rec.requests()}
}

func runOnTemporal(t *testing.T, ag *agentrt.Agent, opts Options, session, input string) outcome {
	t.Helper()
	rec, shared := ag.Planner.(*recorder)
	if !shared {
		rec = &recorder{p: ag.Planner}
		ag.Planner = rec
	}
	env := newEnv(t, ag, opts)
	env.ExecuteWorkflow(WorkflowName(ag.Name), RunInput{SessionID: session, Input: input})
	require.True(t, env.IsWorkflowCompleted())
	st := queryState(t, env)
	require.NotNil(t, st.Done, "no Done on Temporal")
	out := outcome{msgs: normalize(t, st.Messages), done: *st.Done, err: env.GetWorkflowError(), reqs: rec.requests()}
	if out.err == nil {
		var res Result
		require.NoError(t, env.GetWorkflowResult(&res))
		assert.Equal(t, out.msgs, normalize(t, res.Messages), "the result's messages are the state's")
		assert.Equal(t, res.Done(), out.done)
	}
	return out
}

// requireSame checks that two runs of one definition agree.
func requireSame(t *testing.T, in, tp outcome) {
	t.Helper()
	require.NotEmpty(t, in.msgs)
	require.NoError(t, agenttest.CheckInvariants(tp.msgs), "Temporal")
	require.NoError(t, agenttest.CheckInvariants(in.msgs), "in-process")
	require.Equal(t, agenttest.Diff(in.msgs, tp.msgs), agenttest.Diff(in.msgs, in.msgs), "sessions differ")
	require.Equal(t, in.msgs, tp.msgs)
	require.Equal(t, in.done, tp.done)
	require.Equal(t, in.reqs, tp.reqs)
	if in.err == nil {
		require.NoError(t, tp.err)
	} else {
		require.Error(t, tp.err, "in-process: %v", in.err)
		require.Contains(t, tp.err.Error(), in.err.Error())
	}
}

type modeIn struct {
	Mode string `json:"mode"`
	N    int    `json:"n"`
}

// faultyTools behave as their input's mode says, so that both runtimes
// see the same behaviour: ok, error, panic, goexit or big.
func faultyTools() []agentrt.Tool {
	run := func(name string) func(context.Context, modeIn) (string, error) {
		return func(_ context.Context, in modeIn) (string, error) {
			switch in.Mode {
			case "error":
				return "", errors.New("failed " + strconv.Itoa(in.N))
			case "panic":
				panic("tool panic " + strconv.Itoa(in.N))
			case "goexit":
				runtime.Goexit()
			case "big":
				return strings.Repeat("x", 3000), nil
			}
			return name + " " + strconv.Itoa(in.N), nil
		}
	}
	return []agentrt.Tool{
		agentrt.NewTool("read", "Read.", run("read"), agentrt.ReadOnly()),
		agentrt.NewTool("read2", "Read more.", run("read2"), agentrt.ReadOnly()),
		agentrt.NewTool("write", "Write.", run("write")),
	}
}

// faultyChecker decides by mode: deny, rewrite, checkpanic, checkgoexit;
// anything else is allowed.
var faultyChecker = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	in, _ := req.Input.(modeIn)
	switch in.Mode {
	case "deny":
		return agentrt.Decision{Reason: "denied " + strconv.Itoa(in.N)}, nil
	case "rewrite":
		return agentrt.Decision{Allow: true, Input: json.RawMessage(`{"mode":"ok","n":99}`)}, nil
	case "rewritevalue":
		return agentrt.Decision{Allow: true, Input: modeIn{Mode: "ok", N: 98}}, nil
	case "checkerror":
		return agentrt.Decision{}, errors.New("checker broke")
	case "checkpanic":
		panic("checker panic")
	case "checkgoexit":
		runtime.Goexit()
	}
	return agentrt.Decision{Allow: true, Source: "custom"}, nil
})

// faultyHooks block, panic or Goexit by mode, and mark every result they
// see, so that a hook not run shows in the session.
func faultyHooks() []agentrt.Hooks {
	return []agentrt.Hooks{
		{
			BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
				in, _ := call.Input.(modeIn)
				switch in.Mode {
				case "block":
					return ctx, errors.New("blocked " + strconv.Itoa(in.N))
				case "hookpanic":
					panic("hook panic")
				case "hookgoexit":
					runtime.Goexit()
				case "hookrewrite":
					call.Input = modeIn{Mode: "ok", N: 77}
				}
				return ctx, nil
			},
			AfterTool: func(_ context.Context, call *agentrt.ToolCall, out *agentrt.ToolResult) {
				in, _ := call.Input.(modeIn)
				if in.Mode == "afterpanic" {
					panic("after panic")
				}
				out.Message.Content += " [seen]"
			},
			AfterPlan: func(_ context.Context, req *agentrt.ModelRequest, _ *agentrt.ModelResponse, _ error) {
				if req.Turn == 3 {
					panic("afterplan panic")
				}
			},
		},
	}
}

func use(id, name, input string) agentrt.Block {
	var raw json.RawMessage
	if input != "" {
		raw = json.RawMessage(input)
	}
	return agentrt.ToolUseBlock(id, name, raw)
}

func TestParity(t *testing.T) {
	t.Parallel()
	loop := func(n int) []agenttest.Step {
		var steps []agenttest.Step
		for range n {
			steps = append(steps, agenttest.CallTool("read", `{"mode":"ok","n":1}`))
		}
		return steps
	}
	tests := []struct {
		name  string
		steps []agenttest.Step
		agent func(*agentrt.Agent)
	}{
		{name: "a hook blocks a call", steps: []agenttest.Step{
			agenttest.CallTools(agenttest.ToolUse("write", `{"mode":"block","n":1}`), agenttest.ToolUse("read", `{"mode":"ok","n":2}`)),
			agenttest.Reply("ok"),
		}, agent: func(ag *agentrt.Agent) { ag.Hooks = faultyHooks(); ag.Permission = faultyChecker }},
		{name: "a hook replaces the input", steps: []agenttest.Step{
			agenttest.CallTool("read", `{"mode":"hookrewrite","n":1}`), agenttest.Reply("ok"),
		}, agent: func(ag *agentrt.Agent) { ag.Hooks = faultyHooks() }},
		{name: "a checker denies or rewrites", steps: []agenttest.Step{
			agenttest.CallTools(
				agenttest.ToolUse("write", `{"mode":"deny","n":1}`),
				agenttest.ToolUse("write", `{"mode":"rewrite","n":2}`),
				agenttest.ToolUse("write", `{"mode":"rewritevalue","n":3}`),
				agenttest.ToolUse("write", `{"mode":"checkerror","n":4}`),
				agenttest.ToolUse("write", `{"mode":"checkpanic","n":5}`),
			),
			agenttest.Reply("ok"),
		}, agent: func(ag *agentrt.Agent) { ag.Permission = faultyChecker }},
		{name: "the default policy denies writes", steps: []agenttest.Step{
			agenttest.CallTools(agenttest.ToolUse("write", `{"mode":"ok","n":1}`), agenttest.ToolUse("read", `{"mode":"ok","n":2}`)),
			agenttest.Reply("ok"),
		}},
		// A Goexit in a call of a parallel group is contained on both
		// runtimes; one on the goroutine that ranges over Run is not
		// (TestGoexitIsContainedOnTemporal).
		{name: "tools fail, panic and Goexit", steps: []agenttest.Step{
			agenttest.CallTools(
				agenttest.ToolUse("read", `{"mode":"error","n":1}`),
				agenttest.ToolUse("read", `{"mode":"panic","n":2}`),
				agenttest.ToolUse("read2", `{"mode":"goexit","n":3}`),
				agenttest.ToolUse("write", `{"mode":"panic","n":4}`),
				agenttest.ToolUse("read", `{"mode":"big","n":5}`),
				agenttest.ToolUse("read", `{"mode":"afterpanic","n":6}`),
				agenttest.ToolUse("read", `{"mode":"hookpanic","n":7}`),
			),
			agenttest.Reply("ok"),
		}, agent: func(ag *agentrt.Agent) {
			ag.Permission = agentrt.AllowAll()
			ag.Hooks = faultyHooks()
			ag.MaxToolOutput = 1000
		}},
		{name: "the loop guard stops a loop", steps: loop(8)},
		{name: "max turns gives the final answer", steps: append(loop(3), agenttest.Reply("best effort")),
			agent: func(ag *agentrt.Agent) { ag.MaxTurns = 3; ag.LoopGuard.Disabled = true }},
		{name: "max turns without a final answer", steps: loop(2),
			agent: func(ag *agentrt.Agent) { ag.MaxTurns = 2; ag.NoFinalAnswer = true }},
		{name: "the token budget gives the final answer", steps: []agenttest.Step{
			agenttest.CallTool("read", `{"mode":"ok","n":1}`).WithUsage(agentrt.Usage{InputTokens: 80, OutputTokens: 30}),
			agenttest.CallTool("read", `{"mode":"ok","n":2}`).WithUsage(agentrt.Usage{InputTokens: 10}),
		}, agent: func(ag *agentrt.Agent) { ag.Budget.MaxTokens = 100 }},
		{name: "the cost budget", steps: []agenttest.Step{
			agenttest.CallTool("read", `{"mode":"ok","n":1}`).WithUsage(agentrt.Usage{InputTokens: 1_000_000}),
			agenttest.Reply("spent"),
		}, agent: func(ag *agentrt.Agent) {
			ag.Budget = agentrt.Budget{MaxCost: 1, Prices: agentrt.Prices{Input: 2}}
		}},
		{name: "transient planner errors are retried", steps: []agenttest.Step{
			agenttest.Fail(&agentrt.ProviderError{Provider: "test", StatusCode: 529, Kind: agentrt.ErrOverloaded}),
			agenttest.Reply("hello"),
		}, agent: func(ag *agentrt.Agent) { ag.Retry = agentrt.RetryPolicy{BaseDelay: time.Millisecond} }},
		{name: "a context-length error compacts once", steps: []agenttest.Step{
			agenttest.CallTool("read", `{"mode":"ok","n":1}`),
			agenttest.Fail(&agentrt.ProviderError{Provider: "test", StatusCode: 400, Kind: agentrt.ErrContextLength}),
			agenttest.Reply("shorter"),
		}},
		{name: "the planner fails", steps: []agenttest.Step{
			agenttest.CallTool("read", `{"mode":"ok","n":1}`), agenttest.Fail(errors.New("no model")),
		}},
		{name: "the planner panics", steps: []agenttest.Step{
			agenttest.CallTools(agenttest.ToolUse("read", `{"mode":"ok","n":1}`)),
			agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) { panic("planner panic") }),
		}},
		{name: "a BeforePlan hook refuses", steps: []agenttest.Step{agenttest.Reply("never")}, agent: func(ag *agentrt.Agent) {
			ag.Hooks = []agentrt.Hooks{{BeforePlan: func(ctx context.Context, _ *agentrt.ModelRequest) (context.Context, error) {
				return ctx, errors.New("not now")
			}}}
		}},
		{name: "a window compressor", steps: append(loop(4), agenttest.Reply("done")), agent: func(ag *agentrt.Agent) {
			ag.Compressor = agentrt.Window{MaxMessages: 3}
			ag.LoopGuard.Disabled = true
		}},
		{name: "a summarizer's compaction travels between turns", steps: append(loop(5), agenttest.Reply("done")), agent: func(ag *agentrt.Agent) {
			var summaries []agenttest.Step
			for i := range 6 {
				summaries = append(summaries, agenttest.Reply("summary "+strconv.Itoa(i)))
			}
			ag.Compressor = &summarize.Compressor{Planner: agenttest.Script(summaries...), Threshold: 40, Keep: 20}
			ag.LoopGuard.Disabled = true
		}},
		{name: "a tool result with an image", steps: []agenttest.Step{
			agenttest.CallTool("shot", `{}`), agenttest.Reply("a pixel"),
		}, agent: func(ag *agentrt.Agent) {
			ag.Tools = append(ag.Tools, agentrt.NewTool("shot", "Screenshot.", func(context.Context, struct{}) ([]agentrt.Block, error) {
				return []agentrt.Block{agentrt.TextBlock("the screen"), agentrt.ImageBlock("image/png", agenttest.PNG)}, nil
			}, agentrt.ReadOnly()))
		}},
		{name: "adversarial ids and inputs", steps: []agenttest.Step{
			agenttest.Respond(agentrt.NewAssistantMessage(
				use("x", "read", `{"mode":"ok","n":1}`),
				use("x", "read", `{"mode":"ok","n":2}`),
				use("", "read2", `{"mode":"ok","n":3}`),
				use("agentrt_t1_1", "nope", `{}`),
				use("a\xff", "read", `{"mode":"ok","n":4}`),
				use("a\xfe", "read", `{"mode":"ok","n":5}`),
				use("y", "Read", `{"mode":"ok","n":6}`),
				use("z", "read", `{bad`),
				use("w", "read", `null`),
				use("v", "read", `[1]`),
				use("u", "read", `"{\"mode\":\"ok\"}"`),
			)),
			agenttest.Respond(agentrt.NewAssistantMessage(use("x", "read", `{"mode":"ok","n":7}`))),
			agenttest.Reply("ok"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mk := func() *agentrt.Agent {
				ag := &agentrt.Agent{Instructions: "Be careful.", Tools: faultyTools(), Planner: agenttest.Script(tt.steps...)}
				if tt.agent != nil {
					tt.agent(ag)
				}
				return ag
			}
			in := runInProcess(t, mk(), "s1", "go")
			tp := runOnTemporal(t, mk(), Options{}, "s1", "go")
			requireSame(t, in, tp)
		})
	}
}

// TestParitySubAgents: two parent runs (two workflows) each delegate two
// tasks in parallel to one sub-agent: every child run has a session of
// its own, and no delegation fails as busy.
func TestParitySubAgents(t *testing.T) {
	t.Parallel()
	// mk returns a parent and its child agent whose n child runs wait
	// for each other: the last to start releases all.
	var overlapped atomic.Bool
	mk := func(n int32) (*agentrt.Agent, *agentrt.Agent) {
		release := make(chan struct{})
		var started atomic.Int32
		wait := agentrt.NewTool("wait", "Wait for the others.", func(ctx context.Context, _ struct{}) (string, error) {
			if started.Add(1) == n {
				if n == 4 {
					overlapped.Store(true)
				}
				close(release)
			}
			select {
			case <-release:
				return "waited", nil
			case <-time.After(10 * time.Second):
				return "", errors.New("the other child runs never started")
			}
		}, agentrt.ReadOnly())
		child := &agentrt.Agent{
			Name:  "helper",
			Tools: []agentrt.Tool{wait},
			Store: &agentrt.MemoryStore{},
			Planner: agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				if len(req.Messages) == 1 {
					return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock("w1", "wait", json.RawMessage(`{}`)))}, nil
				}
				return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("did: " + req.Messages[0].Content))}, nil
			}),
		}
		parent := &agentrt.Agent{
			Tools: []agentrt.Tool{agentrt.AgentTool(child, "delegate", "Delegate a task.")},
			Planner: agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				if len(req.Messages) == 1 {
					task := req.Messages[0].Content
					return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
						agentrt.ToolUseBlock("d1", "delegate", json.RawMessage(`{"task":"`+task+` part 1"}`)),
						agentrt.ToolUseBlock("d2", "delegate", json.RawMessage(`{"task":"`+task+` part 2"}`)),
					)}, nil
				}
				return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("all done"))}, nil
			}),
		}
		return parent, child
	}

	// Two workflows of one worker (one Agent value) at the same time.
	parent, child := mk(4)
	parent.Planner = &recorder{p: parent.Planner}
	var wg sync.WaitGroup
	outs := make([]outcome, 2)
	for i, session := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runOnTemporal(t, parent, Options{}, session, "task of "+session)
		}()
	}
	wg.Wait()
	for i, session := range []string{"alice", "bob"} {
		tp := outs[i]
		require.NoError(t, tp.err)
		assert.Equal(t, agentrt.StopComplete, tp.done.Reason)
		results := toolResults(tp.msgs)
		require.Len(t, results, 2)
		for k, r := range results {
			assert.False(t, r.IsError, r.Content)
			assert.Equal(t, fmt.Sprintf("did: task of %s part %d", session, k+1), r.Content)
		}
		// The same definition in-process gives the same session.
		inParent, _ := mk(2)
		in := runInProcess(t, inParent, session, "task of "+session)
		in.reqs, tp.reqs = nil, nil // the workflows shared one planner
		requireSame(t, in, tp)
	}
	assert.True(t, overlapped.Load(), "the four child runs of the two workflows ran at the same time")
	// Four child sessions, one per parent session and call.
	sessions, err := child.Store.List(context.Background())
	require.NoError(t, err)
	var ids []string
	for _, s := range sessions {
		ids = append(ids, s.ID)
	}
	assert.ElementsMatch(t, []string{"alice~delegate~d1", "alice~delegate~d2", "bob~delegate~d1", "bob~delegate~d2"}, ids)
}

// TestProperties runs random adversarial planner output with random
// faults on both runtimes: the Temporal run's session satisfies the
// invariants and equals the in-process one. AGENTRT_PROPERTY_RUNS sets
// the number of runs (default 40).
func TestProperties(t *testing.T) {
	t.Parallel()
	runs := 40
	if s := os.Getenv("AGENTRT_PROPERTY_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		runs = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTRT_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	t.Logf("seed %d, %d runs (AGENTRT_PROPERTY_SEED, AGENTRT_PROPERTY_RUNS)", seed, runs)
	for i := range runs {
		s := seed + uint64(i)
		ok := t.Run(strconv.FormatUint(s, 10), func(t *testing.T) {
			mk := randomAgent(s)
			in := runInProcess(t, mk(), "s", "go")
			tp := runOnTemporal(t, mk(), Options{}, "s", "go")
			requireSame(t, in, tp)
		})
		if !ok {
			t.Fatalf("run %d failed: reproduce with AGENTRT_PROPERTY_SEED=%d AGENTRT_PROPERTY_RUNS=1", i, s)
		}
	}
}

// randomAgent returns a maker of Agents with the same random definition:
// limits, checker, hooks and a script of adversarial planner output.
func randomAgent(seed uint64) func() *agentrt.Agent {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	turns := 1 + rng.IntN(6)
	var steps []agenttest.Step
	var used []string
	for turn := 1; turn <= turns; turn++ {
		switch rng.IntN(12) {
		case 0:
			steps = append(steps, agenttest.Fail(errors.New("planner broke")))
			continue
		case 1:
			steps = append(steps, agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				panic("planner panic")
			}))
			continue
		case 2, 3:
			steps = append(steps, agenttest.Reply("answer "+strconv.Itoa(turn)))
			continue
		}
		n := 1 + rng.IntN(6)
		blocks := []agentrt.Block{}
		if rng.IntN(3) == 0 {
			blocks = append(blocks, agentrt.TextBlock("thinking"))
		}
		for k := range n {
			id := pick("", "a", "b", "a\xff", "a\xfe", "agentrt_t1_1", "agentrt_t"+strconv.Itoa(turn)+"_"+strconv.Itoa(k+1), "c"+strconv.Itoa(turn)+strconv.Itoa(k), "c"+strconv.Itoa(turn)+strconv.Itoa(k))
			if len(used) > 0 && rng.IntN(6) == 0 {
				id = used[rng.IntN(len(used))]
			}
			used = append(used, id)
			name := pick("read", "read", "read2", "write", "nope", "Read")
			// No Goexit: in-process, one on the caller's goroutine ends it
			// (TestGoexitIsContainedOnTemporal covers Temporal).
			mode := pick("ok", "ok", "ok", "error", "panic", "big", "deny", "rewrite", "rewritevalue", "checkerror",
				"checkpanic", "block", "hookpanic", "hookrewrite", "afterpanic")
			input := pick(
				`{"mode":"`+mode+`","n":`+strconv.Itoa(rng.IntN(3))+`}`,
				`{"mode":"`+mode+`","n":`+strconv.Itoa(rng.IntN(3))+`}`,
				`{"mode":"`+mode+`","n":`+strconv.Itoa(rng.IntN(3))+`}`,
				`{bad`, `null`, `[1]`, `"{\"mode\":\"ok\"}"`, "", `{"mode": "ok", "n": 1}`, `{"mode":"ok","n":1,"x":2}`)
			blocks = append(blocks, use(id, name, input))
		}
		u := agentrt.Usage{InputTokens: rng.IntN(100), OutputTokens: rng.IntN(50)}
		steps = append(steps, agenttest.Respond(agentrt.NewAssistantMessage(blocks...)).WithUsage(u))
	}
	steps = append(steps, agenttest.Reply("final"))
	maxTurns := 1 + rng.IntN(6)
	maxPar := rng.IntN(4)
	noFinal := rng.IntN(4) == 0
	budget := 0
	if rng.IntN(4) == 0 {
		budget = 100 + rng.IntN(200)
	}
	withHooks := rng.IntN(2) == 0
	checker := rng.IntN(3)
	guard := agentrt.LoopGuard{Warn: 2, Stop: 2 + rng.IntN(3)}
	return func() *agentrt.Agent {
		ag := &agentrt.Agent{
			Instructions:     "Be careful.",
			Tools:            faultyTools(),
			Planner:          agenttest.Script(steps...),
			MaxTurns:         maxTurns,
			MaxParallelTools: maxPar,
			MaxToolOutput:    1000,
			NoFinalAnswer:    noFinal,
			LoopGuard:        guard,
			Budget:           agentrt.Budget{MaxTokens: budget},
			Retry:            agentrt.RetryPolicy{MaxAttempts: 1},
		}
		switch checker {
		case 1:
			ag.Permission = faultyChecker
		case 2:
			ag.Permission = agentrt.AllowAll()
		}
		if withHooks {
			ag.Hooks = faultyHooks()
		}
		return ag
	}
}

// TestPropertiesCancelled runs the random definitions of TestProperties
// on Temporal, cancelling the workflow from inside a random planner call
// or tool call: whenever the cancellation lands, the session keeps the
// invariants, a cancelled run ends with a Done that says so, and every
// tool_use has its result.
func TestPropertiesCancelled(t *testing.T) {
	t.Parallel()
	runs := 20
	if s := os.Getenv("AGENTRT_PROPERTY_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		runs = max(1, n/2)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTRT_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	t.Logf("seed %d, %d runs", seed, runs)
	for i := range runs {
		s := seed + uint64(i)
		ok := t.Run(strconv.FormatUint(s, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(s, 7))
			at := int32(1 + rng.IntN(4))
			inTool := rng.IntN(2) == 0
			ag := randomAgent(s)()
			var env atomic.Pointer[testsuite.TestWorkflowEnvironment]
			var calls atomic.Int32
			cancelled := make(chan struct{})
			var once sync.Once
			maybeCancel := func() {
				if calls.Add(1) == at {
					once.Do(func() {
						go func() {
							defer close(cancelled)
							env.Load().CancelWorkflow()
						}()
					})
				}
			}
			if inTool {
				ag.Hooks = append(ag.Hooks, agentrt.Hooks{AfterTool: func(context.Context, *agentrt.ToolCall, *agentrt.ToolResult) { maybeCancel() }})
			} else {
				p := ag.Planner
				ag.Planner = agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
					maybeCancel()
					return p.Plan(ctx, req)
				})
			}
			e := newEnv(t, ag, Options{HeartbeatTimeout: time.Second})
			env.Store(e)
			e.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s", Input: "go"})
			require.True(t, e.IsWorkflowCompleted())
			once.Do(func() { close(cancelled) }) // never cancelled
			<-cancelled
			st := queryState(t, e)
			require.NoError(t, agenttest.CheckInvariants(st.Messages))
			require.NotNil(t, st.Done)
			if err := e.GetWorkflowError(); err != nil && temporal.IsCanceledError(err) {
				require.Equal(t, agentrt.StopCancelled, st.Done.Reason)
				require.Equal(t, agentrt.LayerCancellation, st.Done.Layer)
				t.Log("cancelled")
			} else {
				require.NotEqual(t, agentrt.StopCancelled, st.Done.Reason)
			}
		})
		if !ok {
			t.Fatalf("run %d failed: reproduce with AGENTRT_PROPERTY_SEED=%d AGENTRT_PROPERTY_RUNS=2", i, s)
		}
	}
}

type parityTrip struct {
	City string `json:"city"`
	Days int    `json:"days" validate:"min=1"`
}

// A typed final answer is checked and retried the same way on both
// runtimes: the same corrections reach the model, and the run ends the
// same when the answer never matches.
func TestParityTypedOutput(t *testing.T) {
	t.Parallel()
	schema, err := durableloop.OutputSchema[parityTrip]()
	require.NoError(t, err)
	scripts := map[string]func() []agenttest.Step{
		"retried then accepted": func() []agenttest.Step {
			return []agenttest.Step{
				agenttest.Reply(`not json`),
				agenttest.Reply(`{"city":"Lisbon"}`),
				agenttest.Reply("Here: ```json\n{\"city\":\"Lisbon\",\"days\":3}\n```"),
			}
		},
		"never matches": func() []agenttest.Step {
			return []agenttest.Step{
				agenttest.Reply(`{"city":1}`),
				agenttest.Reply(`{"town":"Lisbon"}`),
				agenttest.Reply(`[]`),
			}
		},
	}
	for name, steps := range scripts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mk := func() *agentrt.Agent {
				return &agentrt.Agent{Instructions: "Plan trips.", Planner: agenttest.Script(steps()...)}
			}
			// In-process, through agentrt.RunTyped.
			ag := mk()
			rec := &recorder{p: ag.Planner}
			ag.Planner = rec
			ag.Store = &agentrt.MemoryStore{}
			var done agentrt.Done
			trip, err := agentrt.RunTyped[parityTrip](context.Background(), ag, "s", "Plan Lisbon.", &agentrt.TypedOptions{
				OnEvent: func(ev agentrt.Event) {
					if d, ok := ev.(agentrt.Done); ok {
						done = d
					}
				},
			})
			msgs, lerr := ag.Store.Load(context.Background(), "s")
			require.NoError(t, lerr)
			in := outcome{msgs: normalize(t, msgs), done: done, err: err, reqs: rec.requests()}

			// On Temporal, with the schema of the same type.
			tag := mk()
			trec := &recorder{p: tag.Planner}
			tag.Planner = trec
			env := newEnv(t, tag, Options{})
			env.ExecuteWorkflow(WorkflowName(tag.Name), RunInput{SessionID: "s", Input: "Plan Lisbon.", Output: schema})
			require.True(t, env.IsWorkflowCompleted())
			st := queryState(t, env)
			require.NotNil(t, st.Done)
			tp := outcome{msgs: normalize(t, st.Messages), done: *st.Done, err: env.GetWorkflowError(), reqs: trec.requests()}
			requireSame(t, in, tp)
			if name == "retried then accepted" {
				require.NoError(t, err)
				assert.Equal(t, parityTrip{City: "Lisbon", Days: 3}, trip)
				var res Result
				require.NoError(t, env.GetWorkflowResult(&res))
				got, err := durableloop.ParseOutput[parityTrip](res.FinalText)
				require.NoError(t, err)
				assert.Equal(t, trip, got)
			} else {
				var oe *agentrt.OutputError
				require.ErrorAs(t, err, &oe)
			}
		})
	}
}

// TestGoexitIsContainedOnTemporal: on Temporal every callback runs on a
// goroutine the runtime started (an activity's), so a runtime.Goexit in a
// tool, a decoder's checker, a hook or the planner is contained like a
// panic: the run ends with Done and a valid session. In-process such a
// Goexit ends the caller's goroutine (agentrt's callback_test.go).
func TestGoexitIsContainedOnTemporal(t *testing.T) {
	t.Parallel()
	t.Run("tools, checker and hooks", func(t *testing.T) {
		ag := &agentrt.Agent{Name: "goexit", Tools: faultyTools(), Hooks: faultyHooks(), Permission: faultyChecker,
			Planner: agenttest.Script(
				agenttest.CallTools(
					agenttest.ToolUse("write", `{"mode":"goexit","n":1}`),
					agenttest.ToolUse("write", `{"mode":"checkgoexit","n":2}`),
					agenttest.ToolUse("write", `{"mode":"hookgoexit","n":3}`),
				),
				agenttest.Reply("ok"))}
		tp := runOnTemporal(t, ag, Options{}, "s", "go")
		require.NoError(t, agenttest.CheckInvariants(tp.msgs))
		assert.Equal(t, agentrt.StopComplete, tp.done.Reason)
		results := toolResults(tp.msgs)
		require.Len(t, results, 3)
		for _, r := range results {
			assert.True(t, r.IsError, r.Content)
		}
		assert.Contains(t, results[0].Content, "runtime.Goexit called")
		assert.Contains(t, results[1].Content, "permission denied")
		assert.Contains(t, results[2].Content, "blocked: a hook failed")
	})
	t.Run("planner", func(t *testing.T) {
		ag := &agentrt.Agent{Name: "goexit-planner", Planner: agenttest.Script(
			agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				runtime.Goexit()
				return nil, nil
			}))}
		tp := runOnTemporal(t, ag, Options{}, "s", "go")
		require.NoError(t, agenttest.CheckInvariants(tp.msgs))
		assert.Equal(t, agentrt.StopError, tp.done.Reason)
		assert.Equal(t, agentrt.LayerPlanner, tp.done.Layer)
		require.Error(t, tp.err)
		assert.Contains(t, tp.err.Error(), "runtime.Goexit called")
	})
}
