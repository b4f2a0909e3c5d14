package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// The seed's task: the weather in two cities, then their sum.

type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Beijing" validate:"required"`
}

type weatherOut struct {
	City        string  `json:"city"`
	TempCelsius float64 `json:"temp_celsius"`
	Sky         string  `json:"sky"`
}

type calcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div" validate:"oneof=add sub mul div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

type noteIn struct {
	Text string `json:"text" validate:"required"`
}

// fixture holds the tools of a test agent and what they saw.
type fixture struct {
	mu    sync.Mutex
	notes []string // what save_note saved
	// slowStarted is closed when the slow tool starts; slowErr receives
	// the error its context ended with.
	slowStarted chan struct{}
	slowErr     chan error
}

func newFixture() *fixture {
	return &fixture{slowStarted: make(chan struct{}), slowErr: make(chan error, 1)}
}

func (f *fixture) tools() []agentrt.Tool {
	today := map[string]weatherOut{
		"beijing":  {City: "Beijing", TempCelsius: 12, Sky: "clear"},
		"shanghai": {City: "Shanghai", TempCelsius: 17.5, Sky: "cloudy"},
	}
	return []agentrt.Tool{
		agentrt.NewTool("weather", "Today's weather in a city.", func(_ context.Context, in weatherIn) (weatherOut, error) {
			w, ok := today[strings.ToLower(in.City)]
			if !ok {
				return weatherOut{}, fmt.Errorf("no weather data for %q", in.City)
			}
			return w, nil
		}, agentrt.ReadOnly()),
		agentrt.NewTool("calculator", "Apply op to a and b.", func(_ context.Context, in calcIn) (float64, error) {
			switch in.Op {
			case "add":
				return in.A + in.B, nil
			case "sub":
				return in.A - in.B, nil
			case "mul":
				return in.A * in.B, nil
			}
			return in.A / in.B, nil
		}, agentrt.ReadOnly()),
		agentrt.NewTool("save_note", "Save a note.", func(_ context.Context, in noteIn) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.notes = append(f.notes, in.Text)
			return "saved", nil
		}),
		agentrt.NewTool("slow", "Wait until cancelled.", func(ctx context.Context, _ struct{}) (string, error) {
			close(f.slowStarted)
			<-ctx.Done()
			f.slowErr <- ctx.Err()
			return "", ctx.Err()
		}, agentrt.ReadOnly()),
	}
}

func (f *fixture) savedNotes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notes...)
}

func seedScript() *agenttest.Planner {
	return agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("weather", `{"city":"Beijing"}`),
			agenttest.ToolUse("weather", `{"city":"Shanghai"}`),
		).WithUsage(agentrt.Usage{InputTokens: 100, OutputTokens: 20}),
		agenttest.CallTool("calculator", `{"op":"add","a":12,"b":17.5}`).WithUsage(agentrt.Usage{InputTokens: 150, OutputTokens: 10}),
		agenttest.Reply("Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.").WithUsage(agentrt.Usage{InputTokens: 180, OutputTokens: 30}),
	)
}

const seedQuestion = "What is the sum of today's temperatures in Beijing and Shanghai?"

func newAgent(f *fixture, p agentrt.Planner) *agentrt.Agent {
	return &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools:        f.tools(),
		Planner:      p,
	}
}

func newEnv(t *testing.T, ag *agentrt.Agent, opts Options) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(20 * time.Second)
	require.NoError(t, Register(env, ag, opts))
	return env
}

func runResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) *Result {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res Result
	require.NoError(t, env.GetWorkflowResult(&res))
	agenttest.AssertInvariants(t, res.Messages)
	return &res
}

func queryEvents(t *testing.T, env *testsuite.TestWorkflowEnvironment) []agentrt.Event {
	t.Helper()
	v, err := env.QueryWorkflow(QueryEvents, 0)
	require.NoError(t, err)
	var page EventsPage
	require.NoError(t, v.Get(&page))
	evs := make([]agentrt.Event, 0, len(page.Events))
	for _, r := range page.Events {
		ev := r.Event()
		require.NotNil(t, ev, "record %+v", r)
		evs = append(evs, ev)
	}
	assert.Equal(t, len(page.Events), page.Next)
	return evs
}

func queryState(t *testing.T, env *testsuite.TestWorkflowEnvironment) State {
	t.Helper()
	v, err := env.QueryWorkflow(QueryState)
	require.NoError(t, err)
	var st State
	require.NoError(t, v.Get(&st))
	return st
}

func toolResults(msgs []agentrt.Message) []agentrt.Message {
	var out []agentrt.Message
	for _, m := range msgs {
		if m.Role == agentrt.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func TestSeedTask(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := seedScript()
	env := newEnv(t, newAgent(f, script), Options{})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: seedQuestion})
	res := runResult(t, env)

	assert.Equal(t, agentrt.StopComplete, res.Reason)
	assert.Equal(t, "Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.", res.FinalText)
	assert.Equal(t, 3, res.Turns)
	assert.Equal(t, agentrt.Usage{InputTokens: 430, OutputTokens: 60}, res.Usage)
	require.Len(t, res.Messages, 7)
	assert.Equal(t, agentrt.NewUserMessage(seedQuestion), res.Messages[0])
	assert.Equal(t, []agentrt.Message{
		agentrt.NewToolMessage("call_1", `{"city":"Beijing","temp_celsius":12,"sky":"clear"}`, false),
		agentrt.NewToolMessage("call_2", `{"city":"Shanghai","temp_celsius":17.5,"sky":"cloudy"}`, false),
		agentrt.NewToolMessage("call_3", "29.5", false),
	}, toolResults(res.Messages))
	script.AssertDone(t)

	// The planner saw the instructions, the tools and the whole session.
	reqs := script.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "You are a careful assistant. Use the tools for facts and arithmetic.", reqs[0].System)
	assert.Len(t, reqs[0].Tools, 4)
	assert.Len(t, reqs[1].Messages, 4)
	assert.Len(t, reqs[2].Messages, 6)
	assert.Equal(t, 3, reqs[2].Turn)
	assert.Equal(t, "s1", reqs[2].SessionID)

	// The events are those of an in-process run.
	evs := queryEvents(t, env)
	kinds := make([]string, len(evs))
	for i, ev := range evs {
		kinds[i] = fmt.Sprintf("%T", ev)
	}
	assert.Equal(t, []string{
		"agentrt.AssistantMessage",
		"agentrt.ToolCall", "agentrt.PermissionDecision", "agentrt.ToolCall", "agentrt.PermissionDecision",
		"agentrt.ToolResult", "agentrt.ToolResult",
		"agentrt.AssistantMessage",
		"agentrt.ToolCall", "agentrt.PermissionDecision", "agentrt.ToolResult",
		"agentrt.AssistantMessage", "agentrt.Done",
	}, kinds)
	done, ok := agenttest.Done(evs)
	require.True(t, ok)
	assert.Equal(t, res.Done(), done)

	// The same Agent definition gives the same session in-process.
	f2 := newFixture()
	inproc := newAgent(f2, seedScript())
	inproc.Store = &agentrt.MemoryStore{}
	inprocEvents, err := agenttest.Collect(inproc.Run(context.Background(), "s1", seedQuestion))
	require.NoError(t, err)
	want, err := inproc.Store.Load(context.Background(), "s1")
	require.NoError(t, err)
	assert.Equal(t, want, res.Messages)
	inprocDone, _ := agenttest.Done(inprocEvents)
	assert.Equal(t, inprocDone, done)
}

func TestWorkerCrashBetweenActivities(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTool("weather", `{"city":"Beijing"}`),
		agenttest.CallTool("save_note", `{"text":"Beijing 12C"}`),
		agenttest.Reply("noted"),
	)
	ag := newAgent(f, script)
	env := newEnv(t, ag, Options{Policy: PolicyAllowAll})
	acts := &activities{d: mustDefinition(t, ag, Options{Policy: PolicyAllowAll})}

	// The first attempt of each tool activity dies with its worker: the
	// server sees a heartbeat timeout.
	var mu sync.Mutex
	attempts := map[string]int{}
	env.OnActivity(toolActivityName(""), mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in ToolInput) (*ToolOutput, error) {
			mu.Lock()
			attempts[in.Name]++
			n := attempts[in.Name]
			mu.Unlock()
			if n == 1 {
				return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, errors.New("worker killed"))
			}
			return acts.tool(ctx, in)
		})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "weather, then save it"})
	res := runResult(t, env)

	// The read-only tool was retried and succeeded; the write tool was not
	// retried and the model was told it was interrupted.
	assert.Equal(t, map[string]int{"weather": 2, "save_note": 1}, attempts)
	results := toolResults(res.Messages)
	require.Len(t, results, 2)
	assert.False(t, results[0].IsError)
	assert.Contains(t, results[0].Content, `"temp_celsius":12`)
	assert.True(t, results[1].IsError)
	assert.Contains(t, results[1].Content, `interrupted: tool "save_note" did not finish`)
	assert.Empty(t, f.savedNotes())
	// No planner call was repeated.
	assert.Len(t, script.Requests(), 3)
	script.AssertDone(t)
	last := script.Requests()[2].Messages
	assert.True(t, last[len(last)-1].IsError, "the model saw the interrupted result")
}

// Worker deaths during planner calls do not use up Agent.Retry: the
// planner activity is retried on timeouts by its own policy.
func TestPlannerWorkerDeaths(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(agenttest.Reply("hello"))
	ag := newAgent(f, script)
	ag.Retry = agentrt.RetryPolicy{MaxAttempts: 1}
	env := newEnv(t, ag, Options{})
	acts := &activities{d: mustDefinition(t, ag, Options{})}
	var mu sync.Mutex
	calls := 0
	env.OnActivity(planActivityName(""), mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in PlanInput) (*PlanOutput, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n <= 3 {
				return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, errors.New("worker killed"))
			}
			assert.Equal(t, 1, in.Attempt, "a worker death is not a planner attempt")
			return acts.plan(ctx, in)
		})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "hi"})
	res := runResult(t, env)
	assert.Equal(t, "hello", res.FinalText)
	assert.Equal(t, 4, calls)
	script.AssertDone(t)
}

func TestIdempotentWriteToolIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(agenttest.CallTool("save_note", `{"text":"x"}`), agenttest.Reply("ok"))
	ag := newAgent(f, script)
	opts := Options{Policy: PolicyAllowAll, Idempotent: []string{"save_note"}}
	env := newEnv(t, ag, opts)
	acts := &activities{d: mustDefinition(t, ag, opts)}
	calls := 0
	env.OnActivity(toolActivityName(""), mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in ToolInput) (*ToolOutput, error) {
			calls++
			if calls == 1 {
				return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
			}
			return acts.tool(ctx, in)
		})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save x"})
	res := runResult(t, env)
	assert.Equal(t, 2, calls)
	assert.Equal(t, []string{"x"}, f.savedNotes())
	assert.Equal(t, []agentrt.Message{agentrt.NewToolMessage("call_1", "saved", false)}, toolResults(res.Messages))
}

func mustDefinition(t *testing.T, ag *agentrt.Agent, opts Options) *definition {
	t.Helper()
	d, err := newDefinition(ag, opts)
	require.NoError(t, err)
	return d
}

func TestApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		approval *agentrt.Decision // nil: never sent
		timeout  time.Duration
		wantSave bool
		wantText string
		source   string
	}{
		{name: "late allow", approval: &agentrt.Decision{ToolUseID: "call_1", Allow: true}, wantSave: true, wantText: "saved", source: "user"},
		{name: "deny with reason", approval: &agentrt.Decision{ToolUseID: "call_1", Reason: "not today", Source: "alice"}, wantText: `permission denied: "alice" refused this call of "save_note": not today`, source: "alice"},
		{name: "deny", approval: &agentrt.Decision{ToolUseID: "call_1"}, wantText: `permission denied: the user refused this call of "save_note"`, source: "user"},
		{name: "timeout", timeout: time.Hour, wantText: `permission denied: no approval for this call of "save_note" within 1h0m0s`, source: "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			script := agenttest.Script(agenttest.CallTool("save_note", `{"text":"hello"}`), agenttest.Reply("done"))
			ag := newAgent(f, script)
			ag.Permission = agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
				panic("the in-process checker must not be called by the workflow")
			})
			env := newEnv(t, ag, Options{Policy: PolicyAsk, ApprovalTimeout: tt.timeout})
			start := env.Now()
			var pending State
			if tt.approval != nil {
				env.RegisterDelayedCallback(func() {
					pending = queryState(t, env)
					env.SignalWorkflow(SignalApprove, *tt.approval)
				}, 3*time.Hour)
			}
			env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save hello"})
			res := runResult(t, env)

			if tt.approval != nil {
				// While waiting, the call was listed as pending.
				require.Len(t, pending.Pending, 1)
				assert.Equal(t, PendingApproval{ToolUseID: "call_1", Tool: "save_note", Input: []byte(`{"text":"hello"}`), Turn: 1}, pending.Pending[0])
				assert.Len(t, pending.Messages, 2)
				assert.GreaterOrEqual(t, env.Now().Sub(start), 3*time.Hour, "the workflow waited for the signal")
			}
			assert.Empty(t, queryState(t, env).Pending)
			results := toolResults(res.Messages)
			require.Len(t, results, 1)
			assert.Equal(t, tt.wantText, results[0].Content)
			assert.Equal(t, !tt.wantSave, results[0].IsError)
			if tt.wantSave {
				assert.Equal(t, []string{"hello"}, f.savedNotes())
			} else {
				assert.Empty(t, f.savedNotes())
			}
			decisions := agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env))
			require.Len(t, decisions, 1)
			assert.Equal(t, tt.source, decisions[0].Decision.Source)
			assert.Equal(t, tt.wantSave, decisions[0].Decision.Allow)
		})
	}
}

// A person's edit is decided again by the Agent's checker, as in-process:
// a rule of the checker holds for the edit.
func TestApprovalEditIsCheckedAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		edit, wantText string
		wantSaved      []string
	}{
		{`{"text":"fine"}`, "saved", []string{"fine"}},
		{`{"text":"secret"}`, `permission denied: the permission policy refused the input of tool "save_note" as alice edited it: no secrets`, nil},
	} {
		t.Run(tt.edit, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			script := agenttest.Script(agenttest.CallTool("save_note", `{"text":"hello"}`), agenttest.Reply("done"))
			ag := newAgent(f, script)
			ag.Permission = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
				if req.EditedBy == "" {
					return agentrt.Decision{Pending: true}, nil
				}
				if strings.Contains(string(req.RawInput), "secret") {
					return agentrt.Decision{Reason: "no secrets"}, nil
				}
				return agentrt.Decision{Allow: true}, nil
			})
			env := newEnv(t, ag, Options{})
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalApprove, agentrt.Decision{ToolUseID: "call_1", Allow: true, Source: "alice", Input: json.RawMessage(tt.edit)})
			}, time.Minute)
			env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save hello"})
			res := runResult(t, env)
			results := toolResults(res.Messages)
			require.Len(t, results, 1)
			assert.Equal(t, tt.wantText, results[0].Content)
			assert.Equal(t, tt.wantSaved, f.savedNotes())
			decisions := agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env))
			require.NotEmpty(t, decisions)
			last := decisions[len(decisions)-1].Decision
			assert.Equal(t, tt.wantSaved != nil, last.Allow, "the event reports the final decision")
		})
	}
}

func TestApprovalAlwaysAndEarly(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTool("save_note", `{"text":"a"}`),
		agenttest.CallTool("save_note", `{"text":"b"}`),
		agenttest.Reply("done"),
	)
	ag := newAgent(f, script)
	env := newEnv(t, ag, Options{Policy: PolicyAsk})
	// The approval arrives before the call asks for it.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalApprove, agentrt.Decision{ToolUseID: "call_1", Allow: true, Always: true})
	}, 0)
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save a and b"})
	runResult(t, env)
	assert.Equal(t, []string{"a", "b"}, f.savedNotes())
	decisions := agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env))
	require.Len(t, decisions, 2)
	assert.Equal(t, "user", decisions[0].Decision.Source)
	assert.Equal(t, "remembered", decisions[1].Decision.Source)
}

func TestPolicies(t *testing.T) {
	t.Parallel()
	custom := func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		return agentrt.Decision{Allow: true, Input: json.RawMessage(`{"text":"rewritten"}`), Source: "custom"}, nil
	}
	tests := []struct {
		name       string
		permission agentrt.PermissionChecker
		policy     Policy
		wantSaved  []string
		source     string
	}{
		{name: "nil is read-only", source: "policy"},
		{name: "AllowReadOnly", permission: agentrt.AllowReadOnly(), source: "policy"},
		{name: "AllowAll", permission: agentrt.AllowAll(), wantSaved: []string{"x"}, source: "policy"},
		{name: "the Agent's checker runs on the worker", permission: agentrt.PermissionFunc(custom), wantSaved: []string{"rewritten"}, source: "custom"},
		{name: "a panicking checker denies", permission: agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
			panic("checker")
		}), source: "error"},
		{name: "explicit overrides", permission: agentrt.AllowAll(), policy: PolicyReadOnly, source: "policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			ag := newAgent(f, agenttest.Script(agenttest.CallTool("save_note", `{"text":"x"}`), agenttest.Reply("done")))
			ag.Permission = tt.permission
			env := newEnv(t, ag, Options{Policy: tt.policy})
			env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save x"})
			res := runResult(t, env)
			results := toolResults(res.Messages)
			require.Len(t, results, 1)
			assert.Equal(t, tt.wantSaved == nil, results[0].IsError, results[0].Content)
			assert.Equal(t, tt.wantSaved, f.savedNotes())
			decisions := agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env))
			require.Len(t, decisions, 1)
			assert.Equal(t, tt.source, decisions[0].Decision.Source)
		})
	}
}

func TestCancelMidTool(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("slow", `{}`),
			agenttest.ToolUse("save_note", `{"text":"never"}`),
		),
		agenttest.Reply("unreachable"),
	)
	// The cancellation reaches the tool with its activity's next heartbeat.
	env := newEnv(t, newAgent(f, script), Options{Policy: PolicyAllowAll, HeartbeatTimeout: 300 * time.Millisecond})
	go func() {
		<-f.slowStarted
		env.CancelWorkflow()
	}()
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "wait"})

	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, temporal.IsCanceledError(err), "%v", err)
	select {
	case err := <-f.slowErr:
		assert.ErrorIs(t, err, context.Canceled, "the tool's context was cancelled")
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never saw the cancellation")
	}

	st := queryState(t, env)
	agenttest.AssertInvariants(t, st.Messages)
	results := toolResults(st.Messages)
	require.Len(t, results, 2)
	assert.True(t, results[0].IsError)
	assert.Equal(t, `cancelled: the run was stopped while tool "slow" was running; it may or may not have taken effect`, results[0].Content)
	assert.True(t, results[1].IsError)
	assert.Equal(t, `cancelled: the run was stopped before tool "save_note" ran`, results[1].Content)
	assert.Empty(t, f.savedNotes())
	require.NotNil(t, st.Done)
	assert.Equal(t, agentrt.StopCancelled, st.Done.Reason)
	assert.Equal(t, 1, script.Remaining())
}
