package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

type AddIn struct {
	A int `json:"a" jsonschema:"description=first addend" validate:"required"`
	B int `json:"b" validate:"required"`
}

func addTool() agentrt.Tool {
	return agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in AddIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())
}

type WriteIn struct {
	Path string `json:"path" validate:"required"`
	Text string `json:"text,omitempty"`
}

// newAgent returns an agent with a fresh memory store, the script as
// planner and the given tools.
func newAgent(script *agenttest.Planner, tools ...agentrt.Tool) (*agentrt.Agent, *agentrt.MemoryStore) {
	store := &agentrt.MemoryStore{}
	return &agentrt.Agent{
		Instructions: "test",
		Tools:        tools,
		Planner:      script,
		Store:        store,
	}, store
}

// runAgent runs one input and returns events, error and the stored session,
// after checking both invariants on it.
func runAgent(t *testing.T, ag *agentrt.Agent, store agentrt.SessionStore, input string) ([]agentrt.Event, []agentrt.Message, error) {
	t.Helper()
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", input))
	msgs, lerr := store.Load(context.Background(), "s1")
	require.NoError(t, lerr)
	agenttest.AssertInvariants(t, msgs)
	return events, msgs, err
}

func lastResults(events []agentrt.Event) []agentrt.ToolResult {
	return agenttest.Filter[agentrt.ToolResult](events)
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunSimpleToolTurn(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.CallTool("add", `{"a":2,"b":40}`), agenttest.Reply("42"))
	ag, store := newAgent(script, addTool())
	events, msgs, err := runAgent(t, ag, store, "What is 2+40?")
	require.NoError(t, err)
	script.AssertDone(t)

	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "42", done.FinalText)
	assert.Equal(t, 2, done.Turns)
	require.NoError(t, done.Err())

	require.Len(t, msgs, 4)
	assert.Equal(t, agentrt.NewUserMessage("What is 2+40?"), msgs[0])
	assert.Equal(t, agentrt.NewToolMessage("call_1", "42", false), msgs[2])
	assert.Equal(t, "42", msgs[3].Text())

	// The second request shows the model the tool result, and the tools.
	reqs := script.Requests()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[1].Messages, 3)
	assert.Equal(t, "test", reqs[1].System)
	require.Len(t, reqs[1].Tools, 1)
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`, string(reqs[1].Tools[0].InputSchema))

	// Event order of a tool turn.
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, fmt.Sprintf("%T", ev))
	}
	assert.Equal(t, []string{"agentrt.AssistantMessage", "agentrt.ToolCall", "agentrt.PermissionDecision", "agentrt.ToolResult", "agentrt.AssistantMessage", "agentrt.Done"}, kinds)
}

func TestRunToolFailuresBecomeErrorResults(t *testing.T) {
	t.Parallel()
	failing := agentrt.NewTool("fail", "Always fails.", func(context.Context, struct{}) (string, error) {
		return "", errors.New("disk on fire")
	}, agentrt.ReadOnly())
	panicking := agentrt.NewTool("boom", "Panics.", func(context.Context, struct{}) (string, error) {
		panic("kaboom")
	}, agentrt.ReadOnly())
	write := agentrt.NewTool("write", "Writes.", func(context.Context, WriteIn) (string, error) {
		return "written", nil
	})
	tests := []struct {
		name    string
		step    agenttest.Step
		wantIn  string // substring of the is_error result the model sees
		checkEr func(t *testing.T, err error)
	}{
		{"unknown tool", agenttest.CallTool("sub", `{}`), `unknown tool "sub"; the available tools are: "add", "boom", "fail", "write"`, nil},
		{"wrong type", agenttest.CallTool("add", `{"a":"two","b":40}`), `field "a" must be an integer, got string`, nil},
		{"unknown field", agenttest.CallTool("add", `{"a":1,"b":2,"c":3}`), `unknown field "c" (valid fields: "a", "b")`, nil},
		{"validation", agenttest.CallTool("add", `{"a":0,"b":40}`), `field "a" is required`, nil},
		{"null input", agenttest.CallTool("add", `null`), `input is null; expected a JSON object`, nil},
		{"not an object", agenttest.CallTool("add", `[1,2]`), `input must be a JSON object, got an array`, nil},
		{"invalid JSON", agenttest.CallTool("add", `{"a":1,`), `input is not valid JSON`, nil},
		{"tool error", agenttest.CallTool("fail", `{}`), `disk on fire`, func(t *testing.T, err error) {
			var te *agentrt.ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "fail", te.Tool)
			assert.EqualError(t, te.Err, "disk on fire")
		}},
		{"tool panic", agenttest.CallTool("boom", `{}`), `tool "boom" panicked: kaboom`, func(t *testing.T, err error) {
			var pe *agentrt.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "kaboom", pe.Value)
			assert.Contains(t, string(pe.Stack), "agent_test.go", "the stack reaches the caller")
		}},
		{"default policy denies write", agenttest.CallTool("write", `{"path":"a.txt","text":"x"}`), `"write" is a write tool and this agent only allows read-only tools`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := agenttest.Script(tc.step, agenttest.Reply("ok"))
			ag, store := newAgent(script, addTool(), failing, panicking, write)
			events, msgs, err := runAgent(t, ag, store, "go")
			require.NoError(t, err, "a tool failure never ends the run")
			script.AssertDone(t)
			results := lastResults(events)
			require.Len(t, results, 1)
			assert.True(t, results[0].Message.IsError)
			assert.Contains(t, results[0].Message.Content, tc.wantIn)
			assert.NotContains(t, results[0].Message.Content, "goroutine", "no stack for the model")
			require.Error(t, results[0].Err)
			if tc.checkEr != nil {
				tc.checkEr(t, results[0].Err)
			}
			// The model saw the error and answered.
			require.Len(t, msgs, 4)
			assert.Equal(t, "ok", msgs[3].Text())
			done, _ := agenttest.Done(events)
			assert.Equal(t, agentrt.StopComplete, done.Reason)
		})
	}
}

func TestRunCoercesLenientInput(t *testing.T) {
	t.Parallel()
	type In struct {
		N    int     `json:"n"`
		F    float64 `json:"f"`
		Flag bool    `json:"flag"`
	}
	var got In
	tool := agentrt.NewTool("t", "t", func(_ context.Context, in In) (string, error) { got = in; return "ok", nil }, agentrt.ReadOnly())
	for _, input := range []string{
		`{"n":"42","f":"1.5","flag":"true"}`,
		`"{\"n\":42,\"f\":1.5,\"flag\":true}"`, // an object sent as a JSON string
	} {
		script := agenttest.Script(agenttest.CallTool("t", input), agenttest.Reply("done"))
		ag, store := newAgent(script, tool)
		events, _, err := runAgent(t, ag, store, "go")
		require.NoError(t, err)
		res := lastResults(events)
		require.Len(t, res, 1)
		assert.False(t, res[0].Message.IsError, res[0].Message.Content)
		assert.Equal(t, In{N: 42, F: 1.5, Flag: true}, got, input)
	}
}

func TestRunDuplicateToolUseIDs(t *testing.T) {
	t.Parallel()
	msg := agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("x", "add", []byte(`{"a":1,"b":2}`)),
		agentrt.ToolUseBlock("x", "add", []byte(`{"a":3,"b":4}`)),
	)
	script := agenttest.Script(agenttest.Respond(msg), agenttest.Reply("ok"))
	ag, store := newAgent(script, addTool())
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 2)
	assert.Equal(t, agentrt.NewToolMessage("x", "3", false), res[0].Message)
	assert.True(t, res[1].Message.IsError)
	assert.Contains(t, res[1].Message.Content, `duplicate id "x"`)
	assert.NotEqual(t, "x", res[1].Message.ToolUseID)
	// The planner's own message was not modified.
	assert.Equal(t, "x", msg.Blocks[1].ID)
	require.Len(t, msgs, 5)
}

func TestRunPermissionCustomDenyAndRewrite(t *testing.T) {
	t.Parallel()
	var wrote []WriteIn
	var mu sync.Mutex
	write := agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		wrote = append(wrote, in)
		return "written " + in.Path, nil
	})
	checker := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		in := req.Input.(WriteIn)
		switch {
		case strings.HasPrefix(in.Path, "/etc"):
			return agentrt.Decision{Reason: "writing under /etc is not allowed"}, nil
		case strings.HasPrefix(in.Path, "raw:"):
			return agentrt.Decision{Allow: true, Input: []byte(`{"path":"sandbox/raw.txt","text":"r"}`)}, nil
		case strings.HasPrefix(in.Path, "bad:"):
			return agentrt.Decision{Allow: true, Input: []byte(`{"text":"no path"}`)}, nil
		case strings.HasPrefix(in.Path, "err:"):
			return agentrt.Decision{}, errors.New("policy service down")
		}
		in.Path = "sandbox/" + in.Path
		return agentrt.Decision{Allow: true, Input: in}, nil
	})
	script := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("write", `{"path":"/etc/passwd","text":"x"}`),
			agenttest.ToolUse("write", `{"path":"notes.txt","text":"hi"}`),
			agenttest.ToolUse("write", `{"path":"raw:x","text":"hi"}`),
			agenttest.ToolUse("write", `{"path":"bad:x","text":"hi"}`),
			agenttest.ToolUse("write", `{"path":"err:x","text":"hi"}`),
		),
		agenttest.Reply("done"))
	ag, store := newAgent(script, write)
	ag.Permission = checker
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 5)
	assert.Equal(t, `permission denied: the permission policy refused this call of "write": writing under /etc is not allowed`, res[0].Message.Content)
	assert.True(t, res[0].Message.IsError)
	assert.Equal(t, "written sandbox/notes.txt", res[1].Message.Content)
	assert.Equal(t, "written sandbox/raw.txt", res[2].Message.Content)
	assert.Contains(t, res[3].Message.Content, `rewrote the input, and the new input is invalid: invalid input: field "path" is required`)
	assert.Equal(t, `permission denied: the permission check of tool "write" failed: policy service down`, res[4].Message.Content)
	assert.Equal(t, []WriteIn{{"sandbox/notes.txt", "hi"}, {"sandbox/raw.txt", "r"}}, wrote)

	decisions := agenttest.Filter[agentrt.PermissionDecision](events)
	require.Len(t, decisions, 5)
	assert.False(t, decisions[0].Decision.Allow)
	assert.True(t, decisions[1].Decision.Allow)
	// Every decision is in the session's audit records.
	recs := allRecords(t, store, "s1")
	n := 0
	for _, r := range recs {
		if r.Kind == agentrt.RecordPermission {
			n++
		}
	}
	assert.Equal(t, 5, n)
}

func TestAskOnWriteRemembersAlways(t *testing.T) {
	t.Parallel()
	write := agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) { return "ok", nil })
	answers := []agentrt.Decision{{}, {Allow: true}, {Allow: true, Always: true}}
	asked := 0
	ask := func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		asked++
		return answers[asked-1], nil
	}
	uses := make([]agenttest.Use, 5)
	for i := range uses {
		uses[i] = agenttest.ToolUse("write", fmt.Sprintf(`{"path":"f%d"}`, i))
	}
	script := agenttest.Script(
		agenttest.CallTools(uses...),
		agenttest.CallTool("add", `{"a":1,"b":1}`),
		agenttest.Reply("done"))
	ag, store := newAgent(script, write, addTool())
	ag.Permission = agentrt.AskOnWrite(ask)
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.Equal(t, 3, asked, "read-only tools and remembered tools are not asked about")
	var sources []string
	for _, d := range agenttest.Filter[agentrt.PermissionDecision](events) {
		sources = append(sources, fmt.Sprintf("%s:%v", d.Decision.Source, d.Decision.Allow))
	}
	assert.Equal(t, []string{"user:false", "user:true", "user:true", "remembered:true", "remembered:true", "policy:true"}, sources)
}

func TestRunMaxTurns(t *testing.T) {
	t.Parallel()
	for _, noFinal := range []bool{false, true} {
		steps := make([]agenttest.Step, 3)
		for i := range steps {
			steps[i] = agenttest.CallTool("add", fmt.Sprintf(`{"a":%d,"b":1}`, i+1))
		}
		if !noFinal {
			steps = append(steps, agenttest.Reply("best effort: 4"))
		}
		script := agenttest.Script(steps...)
		ag, store := newAgent(script, addTool())
		ag.MaxTurns = 3
		ag.NoFinalAnswer = noFinal
		events, msgs, err := runAgent(t, ag, store, "loop")
		require.NoError(t, err)
		done, _ := agenttest.Done(events)
		assert.Equal(t, agentrt.StopMaxTurns, done.Reason)
		assert.ErrorIs(t, done.Err(), agentrt.ErrMaxTurns)
		script.AssertDone(t)
		if noFinal {
			assert.Contains(t, done.Detail, "3 turns")
			assert.Equal(t, 3, done.Turns)
			assert.Len(t, msgs, 7)
		} else {
			assert.Equal(t, "best effort: 4", done.FinalText)
			assert.Equal(t, 4, done.Turns)
			last := script.Requests()[3]
			prev := script.Requests()[2]
			assert.Equal(t, prev.System, last.System, "the note does not touch the system prompt (the prompt cache)")
			note := last.Messages[len(last.Messages)-1]
			assert.Equal(t, agentrt.RoleUser, note.Role)
			assert.Contains(t, note.Content, "Do not call any tool")
			for _, m := range msgs {
				assert.NotContains(t, m.Content, "Do not call any tool", "the note is the request's, not the session's")
			}
		}
	}
}

func TestRunParallelReadOnlyInOrder(t *testing.T) {
	t.Parallel()
	// Each call waits until all three are running: this only finishes if
	// they run concurrently. Results must still come in tool_use order.
	var started sync.WaitGroup
	started.Add(3)
	type In struct {
		N int `json:"n"`
	}
	slow := agentrt.NewTool("slow", "Waits for its peers.", func(ctx context.Context, in In) (int, error) {
		started.Done()
		started.Wait()
		return in.N * 10, nil
	}, agentrt.ReadOnly())
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("slow", `{"n":1}`), agenttest.ToolUse("slow", `{"n":2}`), agenttest.ToolUse("slow", `{"n":3}`)),
		agenttest.Reply("done"))
	ag, store := newAgent(script, slow)
	events, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 3)
	for i, r := range res {
		assert.Equal(t, fmt.Sprint((i+1)*10), r.Message.Content)
		assert.Equal(t, fmt.Sprintf("call_%d", i+1), r.Message.ToolUseID)
	}
	assert.Len(t, msgs, 6)
}

func TestRunWriteToolsSequential(t *testing.T) {
	t.Parallel()
	var running, maxRunning atomic.Int32
	var order []string
	var mu sync.Mutex
	write := agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, in.Path)
		mu.Unlock()
		return "ok", nil
	})
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("write", `{"path":"1"}`), agenttest.ToolUse("write", `{"path":"2"}`), agenttest.ToolUse("write", `{"path":"3"}`)),
		agenttest.Reply("done"))
	ag, store := newAgent(script, write)
	ag.Permission = agentrt.AllowAll()
	_, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3"}, order)
	assert.Equal(t, int32(1), maxRunning.Load())
}

func TestRunToolTimeout(t *testing.T) {
	defer goleak.VerifyNone(t)
	hang := agentrt.NewTool("hang", "Hangs until cancelled.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly(), agentrt.WithTimeout(time.Millisecond))
	script := agenttest.Script(agenttest.CallTool("hang", `{}`), agenttest.Reply("gave up"))
	ag, store := newAgent(script, hang)
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 1)
	assert.Equal(t, `tool "hang" timed out after 1ms`, res[0].Message.Content)
	assert.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
}

func TestRunCancelWhileToolRuns(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	entered := make(chan struct{})
	hang := agentrt.NewTool("hang", "Hangs until cancelled.", func(ctx context.Context, _ struct{}) (string, error) {
		close(entered)
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly())
	go func() { <-entered; cancel() }()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("hang", `{}`), agenttest.ToolUse("hang", `{}`)),
		agenttest.Reply("never"))
	ag, store := newAgent(script, hang)
	ag.MaxParallelTools = 1
	events, err := agenttest.Collect(ag.Run(ctx, "s1", "go"))
	require.ErrorIs(t, err, context.Canceled)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	msgs, _ := store.Load(context.Background(), "s1")
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 4)
	assert.Contains(t, msgs[2].Content, "cancelled: the run was stopped while tool")
	assert.Contains(t, msgs[3].Content, "cancelled: the run was stopped before tool")
	assert.Equal(t, 1, script.Remaining(), "no planner call after cancellation")
}

func TestRunBreakOutOfLoop(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, stopAt := range []string{"agentrt.AssistantMessage", "agentrt.ToolCall", "agentrt.PermissionDecision", "agentrt.ToolResult", "agentrt.TextDelta"} {
		t.Run(stopAt, func(t *testing.T) {
			script := agenttest.Script(
				agenttest.CallTools(agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":4}`)),
				agenttest.StreamReply("a", "b"),
				agenttest.Reply("never"))
			ag, store := newAgent(script, addTool())
			n := 0
			for ev, err := range ag.Run(context.Background(), "s1", "go") {
				require.NoError(t, err)
				n++
				if fmt.Sprintf("%T", ev) == stopAt {
					break
				}
			}
			assert.Positive(t, n)
			msgs, _ := store.Load(context.Background(), "s1")
			agenttest.AssertInvariants(t, msgs)
			assert.GreaterOrEqual(t, len(msgs), 4, "both tool_uses have results")
		})
	}
}

func TestRunPlannerErrorLeavesSessionValid(t *testing.T) {
	t.Parallel()
	boom := errors.New("model exploded")
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Fail(boom))
	ag, store := newAgent(script, addTool())
	events, msgs, err := runAgent(t, ag, store, "go")
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "planner (turn 2)")
	done, ok := agenttest.Done(events)
	require.True(t, ok, "Done comes before the error")
	assert.Equal(t, agentrt.StopError, done.Reason)
	assert.Len(t, msgs, 3)
}

func TestRunResumeRepairsDanglingToolUse(t *testing.T) {
	t.Parallel()
	store := &agentrt.MemoryStore{}
	ctx := context.Background()
	require.NoError(t, store.Append(ctx, "s1", agentrt.NewUserMessage("write two files")))
	require.NoError(t, store.Append(ctx, "s1", agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("w1", "write", []byte(`{"path":"a"}`)),
		agentrt.ToolUseBlock("w2", "write", []byte(`{"path":"b"}`)))))
	require.NoError(t, store.Append(ctx, "s1", agentrt.NewToolMessage("w1", "ok", false)))
	// The process died before w2 finished.
	var ran atomic.Int32
	write := agentrt.NewTool("write", "Writes.", func(context.Context, WriteIn) (string, error) { ran.Add(1); return "ok", nil })
	script := agenttest.Script(agenttest.Reply("resumed"))
	ag := &agentrt.Agent{Tools: []agentrt.Tool{write}, Planner: script, Store: store, Permission: agentrt.AllowAll()}
	_, err := agenttest.Collect(ag.Run(ctx, "s1", ""))
	require.NoError(t, err)
	assert.Zero(t, ran.Load(), "a write tool is never re-run by itself")
	req := script.Requests()[0]
	agenttest.AssertInvariants(t, req.Messages)
	require.Len(t, req.Messages, 4)
	assert.True(t, req.Messages[3].IsError)
	assert.Contains(t, req.Messages[3].Content, "interrupted")
}

func TestRunSessionBusy(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	script := agenttest.Script(agenttest.Func(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		close(entered)
		<-release
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("first"))}, nil
	}))
	ag, _ := newAgent(script)
	errc := make(chan error, 1)
	go func() { _, err := agenttest.Collect(ag.Run(context.Background(), "s1", "one")); errc <- err }()
	<-entered
	_, err := agenttest.Collect(ag.Run(context.Background(), "s1", "two"))
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	close(release)
	require.NoError(t, <-errc)
}

func TestRunConcurrentSessionsShareAgent(t *testing.T) {
	t.Parallel()
	step := 0
	var mu sync.Mutex
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		mu.Lock()
		step++
		mu.Unlock()
		if req.Messages[len(req.Messages)-1].Role == agentrt.RoleUser {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c", "add", []byte(`{"a":1,"b":2}`)))}, nil
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("3"))}, nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			events, err := agenttest.Collect(ag.Run(context.Background(), fmt.Sprintf("s%d", i), "1+2"))
			assert.NoError(t, err)
			done, _ := agenttest.Done(events)
			assert.Equal(t, "3", done.FinalText)
		})
	}
	wg.Wait()
	assert.Equal(t, 32, step)
}

func TestRunStreamsTextDeltas(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.StreamReply("Hel", "lo"))
	ag, store := newAgent(script)
	events, _, err := runAgent(t, ag, store, "hi")
	require.NoError(t, err)
	deltas := agenttest.Filter[agentrt.TextDelta](events)
	require.Len(t, deltas, 2)
	assert.Equal(t, "Hel", deltas[0].Text)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "Hello", done.FinalText)
}

func TestRunConfigErrors(t *testing.T) {
	t.Parallel()
	_, err := agenttest.Collect((&agentrt.Agent{}).Run(context.Background(), "s", "x"))
	require.ErrorIs(t, err, agentrt.ErrNoPlanner)
	ag := &agentrt.Agent{Planner: agenttest.Script(), Tools: []agentrt.Tool{addTool(), addTool()}}
	_, err = agenttest.Collect(ag.Run(context.Background(), "s", "x"))
	require.ErrorContains(t, err, `two tools are named "add"`)
	ag = &agentrt.Agent{Planner: agenttest.Script()}
	_, err = agenttest.Collect(ag.Run(context.Background(), "../etc", "x"))
	require.ErrorIs(t, err, agentrt.ErrInvalidSessionID)
	_, err = agenttest.Collect(ag.Run(context.Background(), "new", ""))
	require.ErrorIs(t, err, agentrt.ErrEmptyInput)
}

func TestRunUsageAccounting(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`).WithUsage(agentrt.Usage{InputTokens: 10, OutputTokens: 5}),
		agenttest.Reply("3").WithUsage(agentrt.Usage{InputTokens: 20, OutputTokens: 2, CacheReadTokens: 8}))
	ag, store := newAgent(script, addTool())
	events, _, err := runAgent(t, ag, store, "1+2")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: 8}, done.Usage)
	am := agenttest.Filter[agentrt.AssistantMessage](events)
	require.Len(t, am, 2)
	assert.Equal(t, 15, am[0].Usage.Total())
	n := 0
	for _, r := range allRecords(t, store, "s1") {
		if r.Kind == agentrt.RecordUsage {
			n++
		}
	}
	assert.Equal(t, 2, n)
}

// TestDefaultMaxTurns shows Agent.MaxTurns' "0 means 20": a planner
// that always calls a tool is stopped after 20 turns with max_turns (plus
// the final answer without tools, unless NoFinalAnswer).
func TestDefaultMaxTurns(t *testing.T) {
	t.Parallel()
	for _, noFinal := range []bool{true, false} {
		t.Run(fmt.Sprintf("NoFinalAnswer=%v", noFinal), func(t *testing.T) {
			t.Parallel()
			var calls, final atomic.Int32
			planner := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				n := calls.Add(1)
				if req.ToolChoice.Mode == "none" {
					final.Add(1)
					return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("best effort"))}, nil
				}
				// A new input every turn: the loop guard never fires.
				use := agentrt.ToolUseBlock(fmt.Sprintf("call_%d", n), "add", fmt.Appendf(nil, `{"a":%d,"b":1}`, n))
				return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(use), Finish: agentrt.FinishToolUse}, nil
			})
			ag := &agentrt.Agent{Planner: planner, Tools: []agentrt.Tool{addTool()}, NoFinalAnswer: noFinal}
			events, err := agenttest.Collect(ag.Run(context.Background(), "s", "loop forever"))
			require.NoError(t, err)
			done, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, agentrt.StopMaxTurns, done.Reason)
			assert.ErrorIs(t, done.Err(), agentrt.ErrMaxTurns)
			assert.Contains(t, done.Detail, "it made 20 turns without a final answer")
			assert.Len(t, agenttest.Filter[agentrt.ToolResult](events), 20, "20 turns of tool calls")
			if noFinal {
				assert.Equal(t, int32(20), calls.Load())
				assert.Equal(t, 20, done.Turns)
				assert.Zero(t, final.Load())
			} else {
				assert.Equal(t, int32(21), calls.Load())
				assert.Equal(t, 21, done.Turns)
				assert.Equal(t, int32(1), final.Load())
				assert.Equal(t, "best effort", done.FinalText)
			}
		})
	}
}

// badNameTool is a hand-written Tool whose name the model could not call.
type badNameTool struct{}

func (badNameTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "read file", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (badNameTool) Decode(raw json.RawMessage) (any, error) { return raw, nil }

func (badNameTool) Execute(context.Context, any) (string, error) { return "", nil }

// TestInvalidToolNameIsAnInvalidAgent: a Tool whose Spec has a name
// outside ^[a-zA-Z0-9_-]{1,64}$ makes the Agent invalid (ErrInvalidAgent),
// reported by every Run, with no planner call.
func TestInvalidToolNameIsAnInvalidAgent(t *testing.T) {
	t.Parallel()
	script := agenttest.Script()
	ag := &agentrt.Agent{Planner: script, Tools: []agentrt.Tool{badNameTool{}}}
	for range 2 {
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
		assert.Contains(t, err.Error(), `"read file"`)
		assert.Empty(t, events)
	}
	assert.Empty(t, script.Requests())
}

// TestSettingsThatCannotHoldAreRefused: a limit that the runtime would
// otherwise drop or misread (a negative count or duration, a cost budget
// without prices) makes the Agent invalid, reported by every Run with the
// field named and no planner call; the same settings within range run,
// and so does a loop guard that stops before its first warning.
func TestSettingsThatCannotHoldAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(*agentrt.Agent)
		want string
	}{
		{"negative MaxTurns", func(a *agentrt.Agent) { a.MaxTurns = -1 }, "MaxTurns is -1"},
		{"negative MaxParallelTools", func(a *agentrt.Agent) { a.MaxParallelTools = -2 }, "MaxParallelTools is -2"},
		{"negative ToolTimeout", func(a *agentrt.Agent) { a.ToolTimeout = -time.Second }, "ToolTimeout is"},
		{"negative ContextTokens", func(a *agentrt.Agent) { a.ContextTokens = -1 }, "ContextTokens is -1"},
		{"negative LoopGuard.Stop", func(a *agentrt.Agent) { a.LoopGuard.Stop = -1 }, "LoopGuard.Stop is -1"},
		{"negative Retry.MaxAttempts", func(a *agentrt.Agent) { a.Retry.MaxAttempts = -1 }, "Retry.MaxAttempts is -1"},
		{"negative Retry.BaseDelay", func(a *agentrt.Agent) { a.Retry.BaseDelay = -time.Millisecond }, "Retry.BaseDelay is"},
		{"negative Budget.MaxTokens", func(a *agentrt.Agent) { a.Budget.MaxTokens = -100 }, "Budget.MaxTokens is -100"},
		{"negative Budget.MaxDuration", func(a *agentrt.Agent) { a.Budget.MaxDuration = -time.Minute }, "Budget.MaxDuration is"},
		{"cost budget without prices", func(a *agentrt.Agent) { a.Budget.MaxCost = 0.5 }, "Budget.Prices is zero"},
		{"NaN cost budget", func(a *agentrt.Agent) {
			a.Budget = agentrt.Budget{MaxCost: math.NaN(), Prices: agentrt.Prices{Input: 1}}
		}, "Budget.MaxCost is NaN"},
		{"negative price", func(a *agentrt.Agent) { a.Budget.Prices.Output = -3 }, "Budget.Prices.Output is -3"},
		{"infinite price", func(a *agentrt.Agent) { a.Budget.Prices.CacheRead = math.Inf(1) }, "Budget.Prices.CacheRead is +Inf"},
		{"tool with a negative timeout", func(a *agentrt.Agent) {
			a.Tools = []agentrt.Tool{agentrt.NewTool("add", "", func(_ context.Context, in AddIn) (int, error) { return in.A + in.B, nil }, agentrt.WithTimeout(-time.Second))}
		}, `tool "add" has a negative timeout`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := agenttest.Script(agenttest.Reply("hi"))
			ag := &agentrt.Agent{Planner: script}
			tc.set(ag)
			for range 2 {
				events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
				require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
				assert.Contains(t, err.Error(), tc.want)
				assert.Empty(t, events)
			}
			assert.Empty(t, script.Requests())
		})
	}
	t.Run("within range", func(t *testing.T) {
		t.Parallel()
		ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("hi")), MaxTurns: 3, LoopGuard: agentrt.LoopGuard{Stop: 2},
			Budget: agentrt.Budget{MaxCost: 0.5, Prices: agentrt.Prices{Input: 1}}, Retry: agentrt.RetryPolicy{MaxAttempts: 1}}
		_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.NoError(t, err)
	})
}

// requestTexts returns the messages of a request as "role:text".
func requestTexts(req agentrt.ModelRequest) []string {
	var out []string
	for _, m := range req.Messages {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return out
}

// TestNilStoreKeepsSessionsInMemory shows Agent.Store's "Nil means an
// in-memory store owned by this Agent (sessions live as long as the Agent
// value)": a second Run on the same session id continues the first run's
// conversation, and another session id starts afresh.
func TestNilStoreKeepsSessionsInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	script := agenttest.Script(agenttest.Reply("one"), agenttest.Reply("two"), agenttest.Reply("three"))
	ag := &agentrt.Agent{Planner: script}
	for _, run := range []struct{ session, input string }{{"s1", "first"}, {"s1", "second"}, {"s2", "other"}} {
		_, err := agenttest.Collect(ag.Run(ctx, run.session, run.input))
		require.NoError(t, err)
	}
	reqs := script.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"user:first"}, requestTexts(reqs[0]))
	assert.Equal(t, []string{"user:first", "assistant:one", "user:second"}, requestTexts(reqs[1]), "the second run sees the first run's messages")
	assert.Equal(t, []string{"user:other"}, requestTexts(reqs[2]), "another session starts empty")
	// An empty input continues the session, which the Agent still holds.
	script2 := agenttest.Script(agenttest.Reply("again"))
	ag2 := &agentrt.Agent{Planner: script2}
	_, err := agenttest.Collect(ag2.Run(ctx, "s1", "hello"))
	require.NoError(t, err)
	_, err = agenttest.Collect(ag2.Run(ctx, "s1", ""))
	require.ErrorIs(t, err, agenttest.ErrScriptExhausted, "the empty input did not fail with ErrEmptyInput: the session exists")
}

// TestAgentToolsAndLimitsFrozenAtTheFirstRun shows Agent's "Every field is
// read once, at the first Run": after it, a change to the Planner, Name,
// Retry, Instructions, Tools or MaxTurns is not seen.
func TestAgentToolsAndLimitsFrozenAtTheFirstRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var names []string
	first := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("one"),
		agenttest.Fail(rateLimited()), agenttest.CallTool("add", `{"a":3,"b":4}`), agenttest.CallTool("add", `{"a":5,"b":6}`), agenttest.Reply("done"))
	ag := &agentrt.Agent{Name: "first", Instructions: "original", Planner: first, Tools: []agentrt.Tool{addTool()}, MaxTurns: 5,
		Retry: agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond},
		Hooks: []agentrt.Hooks{{OnRunStart: func(ctx context.Context, run *agentrt.RunInfo) context.Context {
			names = append(names, run.Agent)
			return ctx
		}}}}
	_, err := agenttest.Collect(ag.Run(ctx, "s1", "first"))
	require.NoError(t, err)

	second := agenttest.Script(agenttest.Reply("never"))
	ag.Planner = second
	ag.Name = "renamed"
	ag.Retry = agentrt.RetryPolicy{MaxAttempts: 1} // no retry
	ag.Instructions = "changed"
	ag.Tools = []agentrt.Tool{agentrt.NewTool("other", "Other.", func(context.Context, struct{}) (string, error) { return "", nil }, agentrt.ReadOnly())}
	ag.MaxTurns = 1
	ag.Permission = agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		return agentrt.Decision{Reason: "the new checker"}, nil
	})
	ag.Compressor = agentrt.Window{MaxMessages: 1}
	ag.Hooks = nil
	events, err := agenttest.Collect(ag.Run(ctx, "s1", "second"))
	require.NoError(t, err, "the frozen Retry (2 attempts) retried the rate limit")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason, "the frozen MaxTurns (5), not 1")
	assert.Len(t, agenttest.Filter[agentrt.PlannerRetry](events), 1)
	res := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, res, 2)
	assert.Equal(t, "7", res[0].Message.Content, "the frozen tool index: add, not other")
	assert.Empty(t, second.Requests(), "the frozen Planner")
	req := first.Requests()[len(first.Requests())-1]
	assert.Equal(t, "original", req.System, "the frozen instructions")
	require.Len(t, req.Tools, 1)
	assert.Equal(t, "add", req.Tools[0].Name, "the frozen tool specs")
	assert.Equal(t, "user:first", requestTexts(req)[0], "the same in-memory sessions")
	assert.Equal(t, []string{"first", "first"}, names, "the frozen Name and Hooks")
	assert.Greater(t, len(req.Messages), 1, "the frozen Compressor (none), not a Window of one message")
}
