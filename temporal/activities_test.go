package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

func TestMalformedPlannerMessages(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.Respond(agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("dup", "weather", json.RawMessage(`{"city":"Beijing"}`)),
			agentrt.ToolUseBlock("dup", "weather", json.RawMessage(`{"city":"Shanghai"}`)),
			agentrt.ToolUseBlock("", "calculator", json.RawMessage(`{"op":"add","a":1,"b":2}`)),
			agentrt.ToolUseBlock("bad_json", "calculator", json.RawMessage(`{"op":`)),
			agentrt.ToolUseBlock("unknown", "sub", json.RawMessage(`{}`)),
			agentrt.ToolUseBlock("invalid", "calculator", json.RawMessage(`{"op":"pow","a":1,"b":2}`)),
			agentrt.ToolUseBlock("missing", "weather", nil),
		)),
		agenttest.Reply("sorry"),
	)
	env := newEnv(t, newAgent(f, script), Options{})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "go"})
	res := runResult(t, env)

	results := toolResults(res.Messages)
	require.Len(t, results, 7)
	want := []struct {
		id      string
		isError bool
		text    string
	}{
		{"dup", false, `"Beijing"`},
		{"agentrt_t1_2", true, `invalid tool_use: duplicate id "dup"`},
		{"agentrt_t1_3", false, "3"}, // an empty id is replaced, and the call runs
		{"bad_json", true, `tool "calculator": input is not valid JSON: {"op":`},
		{"unknown", true, `unknown tool "sub"; the available tools are: "calculator", "save_note", "slow", "weather"`},
		{"invalid", true, `tool "calculator": `},
		{"missing", true, `tool "weather": `},
	}
	for i, w := range want {
		assert.Equal(t, w.id, results[i].ToolUseID, "result %d", i)
		assert.Equal(t, w.isError, results[i].IsError, "result %d: %s", i, results[i].Content)
		assert.Contains(t, results[i].Content, w.text, "result %d", i)
	}
	// The message in the session is the sanitized one: valid JSON inputs.
	for _, u := range res.Messages[1].ToolUses() {
		if len(u.Input) > 0 {
			assert.True(t, json.Valid(u.Input), "%s", u.Input)
		}
	}
}

func TestToolFailuresBecomeResults(t *testing.T) {
	t.Parallel()
	tools := []agentrt.Tool{
		agentrt.NewTool("fails", "", func(context.Context, struct{}) (string, error) { return "", errors.New("disk full") }, agentrt.ReadOnly()),
		agentrt.NewTool("panics", "", func(context.Context, struct{}) (string, error) { panic("boom") }, agentrt.ReadOnly()),
		agentrt.NewTool("hangs", "", func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, agentrt.ReadOnly(), agentrt.WithTimeout(50*time.Millisecond)),
		agentrt.NewTool("big", "", func(context.Context, struct{}) (string, error) { return strings.Repeat("é", 100), nil }, agentrt.ReadOnly()),
	}
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("fails", `{}`), agenttest.ToolUse("panics", `{}`),
			agenttest.ToolUse("hangs", `{}`), agenttest.ToolUse("big", `{}`)),
		agenttest.Reply("ok"),
	)
	ag := &agentrt.Agent{Tools: tools, Planner: script, MaxToolOutput: 40}
	env := newEnv(t, ag, Options{})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "go"})
	res := runResult(t, env)
	results := toolResults(res.Messages)
	require.Len(t, results, 4)
	assert.Equal(t, agentrt.NewToolMessage("call_1", `tool "fails": disk full`, true), results[0])
	assert.Equal(t, agentrt.NewToolMessage("call_2", `tool "panics" panicked: boom`, true), results[1])
	assert.Equal(t, agentrt.NewToolMessage("call_3", `tool "hangs" timed out after 50ms`, true), results[2])
	assert.Equal(t, strings.Repeat("é", 20)+"\n[agentrt: output truncated: showing the first 40 of 200 bytes]", results[3].Content)

	evs := agenttest.Filter[agentrt.ToolResult](queryEvents(t, env))
	require.Len(t, evs, 4)
	var te *agentrt.ToolError
	require.ErrorAs(t, evs[0].Err, &te)
	assert.Equal(t, "fails", te.Tool)
	assert.Equal(t, "call_1", te.ToolUseID)
	assert.EqualError(t, te.Err, "disk full")
	assert.Equal(t, strings.Repeat("é", 100), evs[3].FullOutput)
	assert.NoError(t, evs[3].Err)
}

func TestPlannerRetries(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.Fail(&agentrt.ProviderError{Provider: "test", StatusCode: 429, Kind: agentrt.ErrRateLimited, RetryAfter: time.Second}),
		agenttest.Fail(&agentrt.ProviderError{Provider: "test", StatusCode: 529, Kind: agentrt.ErrOverloaded}),
		agenttest.Reply("hello"),
	)
	env := newEnv(t, newAgent(f, script), Options{})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "hi"})
	res := runResult(t, env)
	assert.Equal(t, "hello", res.FinalText)
	assert.Equal(t, 1, res.Turns)
	script.AssertDone(t)
}

func TestPlannerFatalError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int // planner calls
	}{
		{"auth", &agentrt.ProviderError{Provider: "test", StatusCode: 401, Kind: agentrt.ErrAuth}, 1},
		{"plain error", errors.New("no model"), 1},
		{"retries exhausted", &agentrt.ProviderError{Provider: "test", StatusCode: 500, Kind: agentrt.ErrOverloaded}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			script := agenttest.Script(agenttest.Fail(tt.err), agenttest.Fail(tt.err), agenttest.Fail(tt.err))
			ag := newAgent(f, script)
			ag.Retry = agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}
			env := newEnv(t, ag, Options{})
			env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "hi"})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "agentrt: planner (turn 1)")
			assert.Len(t, script.Requests(), tt.want)
			var app *temporal.ApplicationError
			assert.ErrorAs(t, err, &app)
			st := queryState(t, env)
			require.NotNil(t, st.Done)
			assert.Equal(t, agentrt.StopError, st.Done.Reason)
			assert.Equal(t, []agentrt.Message{agentrt.NewUserMessage("hi")}, st.Messages)
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	loop := func() agenttest.Step { return agenttest.CallTool("weather", `{"city":"Beijing"}`) }
	tests := []struct {
		name   string
		agent  func(*agentrt.Agent)
		steps  []agenttest.Step
		reason agentrt.StopReason
		text   string
		detail string
		turns  int
	}{
		{
			name:   "max turns with final answer",
			agent:  func(ag *agentrt.Agent) { ag.MaxTurns = 2 },
			steps:  []agenttest.Step{loop(), loop(), agenttest.Reply("best effort")},
			reason: agentrt.StopMaxTurns, text: "best effort", turns: 3,
			detail: "The run stopped: it made 2 turns without a final answer (max_turns).",
		},
		{
			name:   "max turns without final answer",
			agent:  func(ag *agentrt.Agent) { ag.MaxTurns = 1; ag.NoFinalAnswer = true },
			steps:  []agenttest.Step{loop()},
			reason: agentrt.StopMaxTurns, detail: "The run stopped: it made 1 turns without a final answer (max_turns).", turns: 1,
		},
		{
			name:   "token budget",
			agent:  func(ag *agentrt.Agent) { ag.Budget.MaxTokens = 100 },
			steps:  []agenttest.Step{loop().WithUsage(agentrt.Usage{InputTokens: 90, OutputTokens: 20}), agenttest.CallTool("weather", `{"city":"Shanghai"}`)},
			reason: agentrt.StopBudgetExceeded, text: "", detail: "The run stopped: it reached its token budget (110 of 100 tokens used) (budget_exceeded).", turns: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			script := agenttest.Script(tt.steps...)
			ag := newAgent(f, script)
			tt.agent(ag)
			env := newEnv(t, ag, Options{})
			env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "go"})
			res := runResult(t, env)
			assert.Equal(t, tt.reason, res.Reason)
			assert.Equal(t, tt.text, res.FinalText)
			assert.Equal(t, tt.detail, res.Detail)
			assert.Equal(t, tt.turns, res.Turns)
			script.AssertDone(t)
		})
	}
}

func TestHistoryIsRepairedAndContinued(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(agenttest.Reply("continued"))
	env := newEnv(t, newAgent(f, script), Options{})
	history := []agentrt.Message{
		agentrt.NewUserMessage("save two notes"),
		agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("a", "save_note", json.RawMessage(`{"text":"1"}`)),
			agentrt.ToolUseBlock("b", "save_note", json.RawMessage(`{"text":"2"}`))),
		agentrt.NewToolMessage("a", "saved", false),
	}
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", History: history})
	res := runResult(t, env)
	require.Len(t, res.Messages, 5)
	assert.Equal(t, agentrt.NewToolMessage("b", interruptedText, true), res.Messages[3])
	assert.Equal(t, "continued", res.Messages[4].Text())
	assert.Len(t, script.Requests()[0].Messages, 4, "no user message for an empty input")
	assert.Empty(t, f.savedNotes(), "no tool is run again by itself")
}

func TestEmptyInput(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newAgent(newFixture(), agenttest.Script()), Options{})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1"})
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), agentrt.ErrEmptyInput.Error())
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	assert.ErrorIs(t, Register(env, &agentrt.Agent{}, Options{}), agentrt.ErrNoPlanner)
	assert.Error(t, Register(env, nil, Options{}))
	p := agenttest.Script()
	assert.ErrorContains(t, Register(env, &agentrt.Agent{Planner: p, Tools: []agentrt.Tool{nil}}, Options{}), "Tools[0] is nil")
	tool := newFixture().tools()[0]
	assert.ErrorContains(t, Register(env, &agentrt.Agent{Planner: p, Tools: []agentrt.Tool{tool, tool}}, Options{}), `two tools are named "weather"`)
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	p := agenttest.Script()
	tests := []struct {
		name  string
		agent *agentrt.Agent
		want  string
	}{
		{"store", &agentrt.Agent{Planner: p, Store: &agentrt.MemoryStore{}}, "Agent.Store"},
		{"run start hook", &agentrt.Agent{Planner: p, Hooks: []agentrt.Hooks{{}, {OnRunStart: func(ctx context.Context, _ *agentrt.RunInfo) context.Context { return ctx }}}}, "Agent.Hooks[1].OnRunStart"},
		{"run end hook", &agentrt.Agent{Planner: p, Hooks: []agentrt.Hooks{{OnRunEnd: func(context.Context, *agentrt.RunInfo, agentrt.Done, error) {}}}}, "Agent.Hooks[0].OnRunEnd"},
		{"turn start hook", &agentrt.Agent{Planner: p, Hooks: []agentrt.Hooks{{OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, _ int) context.Context { return ctx }}}}, "Agent.Hooks[0].OnTurnStart"},
		{"turn end hook", &agentrt.Agent{Planner: p, Hooks: []agentrt.Hooks{{OnTurnEnd: func(context.Context, *agentrt.RunInfo, int) {}}}}, "Agent.Hooks[0].OnTurnEnd"},
		{"panicking Spec", &agentrt.Agent{Planner: p, Tools: []agentrt.Tool{panicSpec{}}}, "Spec panicked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			assert.ErrorContains(t, Register(env, tt.agent, Options{}), tt.want)
		})
	}
}

type panicSpec struct{ agentrt.Tool }

func (panicSpec) Spec() agentrt.ToolSpec { panic("spec") }

func TestTimeBudget(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTool("weather", `{"city":"Beijing"}`),
		agenttest.CallTool("save_note", `{"text":"x"}`), // waits for an approval
		agenttest.Reply("unreachable"),
	)
	ag := newAgent(f, script)
	ag.Budget.MaxDuration = time.Hour
	env := newEnv(t, ag, Options{Policy: PolicyAsk})
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "go"})
	res := runResult(t, env)
	assert.Equal(t, agentrt.StopBudgetExceeded, res.Reason)
	assert.Equal(t, agentrt.LayerLimit, res.Layer)
	assert.Equal(t, "The run stopped: it reached its time budget of 1h0m0s (budget_exceeded).", res.Detail)
	results := toolResults(res.Messages)
	require.Len(t, results, 2)
	assert.False(t, results[0].IsError)
	assert.Equal(t, `cancelled: the run was stopped before tool "save_note" ran`, results[1].Content)
	assert.Empty(t, f.savedNotes())
	assert.Equal(t, 1, script.Remaining())
}

func TestNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "agentrt.agent", WorkflowName(""))
	assert.Equal(t, "agentrt.coder", WorkflowName("coder"))
	assert.Equal(t, "agentrt.coder.plan", planActivityName("coder"))
	assert.Equal(t, "agentrt.coder.decide", decideActivityName("coder"))
	assert.Equal(t, "agentrt.coder.tool", toolActivityName("coder"))
	assert.Equal(t, "p-s1", StartOptions{WorkflowIDPrefix: "p-"}.WorkflowID("s1"))
	assert.Equal(t, "ask", PolicyAsk.String())
	assert.Equal(t, "Policy(9)", Policy(9).String())
}

func TestEventRecordJSON(t *testing.T) {
	t.Parallel()
	msg := agentrt.NewToolMessage("c1", "boom", true)
	rec := EventRecord{Kind: KindToolResult, Turn: 2, Tool: "x", ToolUseID: "c1", Message: &msg, Error: "boom", Duration: time.Second}
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"tool_result","turn":2,"message":{"role":"tool","tool_use_id":"c1","content":"boom","is_error":true},
		"tool":"x","tool_use_id":"c1","error":"boom","duration":1000000000}`, string(b))
	var back EventRecord
	require.NoError(t, json.Unmarshal(b, &back))
	ev, ok := back.Event().(agentrt.ToolResult)
	require.True(t, ok)
	assert.Equal(t, msg, ev.Message)
	assert.Equal(t, time.Second, ev.Duration)
	assert.EqualError(t, ev.Err, `tool "x" (c1): boom`)
	assert.Nil(t, EventRecord{Kind: "unknown"}.Event())
}

// interruptedText is the result agentrt.InterruptedResults gives.
const interruptedText = "interrupted: the previous run stopped before this tool finished; it may or may not have taken effect"
