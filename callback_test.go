package agentrt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// rangeEnd is how a range over Run on a goroutine of its own ended.
type rangeEnd struct {
	events    []agentrt.Event
	err       error
	normal    bool // the range statement returned
	recovered any  // a panic that escaped
}

// rangeOnGoroutine ranges over seq on a goroutine of its own, so that a
// runtime.Goexit ends that goroutine and not the test's.
func rangeOnGoroutine(seq func(func(agentrt.Event, error) bool)) rangeEnd {
	ch := make(chan rangeEnd, 1)
	go func() {
		var e rangeEnd
		defer func() {
			e.recovered = recover()
			ch <- e
		}()
		for ev, err := range seq {
			if ev != nil {
				e.events = append(e.events, ev)
			}
			if err != nil {
				e.err = err
			}
		}
		e.normal = true
	}()
	return <-ch
}

// exitingCompressor calls runtime.Goexit.
type exitingCompressor struct{}

func (exitingCompressor) Compress(context.Context, *agentrt.CompressRequest) (*agentrt.CompressResult, error) {
	runtime.Goexit()
	return nil, nil
}

// A runtime.Goexit in any callback on the goroutine that ranges over Run
// ends that goroutine, as Go defines: no Done, no error. Before it ends,
// Run's deferred cleanup answers every open tool_use as interrupted, syncs
// the session and unlocks it, so a later Run on the same session resumes.
func TestGoexitOnTheCallersGoroutineEndsIt(t *testing.T) {
	t.Parallel()
	exitTool := agentrt.NewTool("write", "Writes.", func(context.Context, WriteIn) (string, error) {
		runtime.Goexit()
		return "", nil
	})
	okTool := agentrt.NewTool("write", "Writes.", func(context.Context, WriteIn) (string, error) { return "written", nil })
	exitUnmarshal := agentrt.NewTool("write", "Writes.", func(context.Context, goexitInput) (string, error) { return "ran", nil })
	exit := func() { runtime.Goexit() }
	tests := []struct {
		name     string
		tool     agentrt.Tool
		input    string
		setup    func(*agentrt.Agent)
		openCall bool // the Goexit leaves the call open: the cleanup answers it
	}{
		{name: "tool", tool: exitTool, openCall: true},
		{name: "decoder", tool: exitUnmarshal, input: `{"v":"goexit"}`, openCall: true},
		{name: "permission checker", tool: okTool, openCall: true, setup: func(ag *agentrt.Agent) {
			ag.Permission = agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
				exit()
				return agentrt.Decision{}, nil
			})
		}},
		{name: "BeforeTool hook", tool: okTool, openCall: true, setup: func(ag *agentrt.Agent) {
			ag.Hooks = []agentrt.Hooks{{BeforeTool: func(ctx context.Context, _ *agentrt.ToolCall) (context.Context, error) {
				exit()
				return ctx, nil
			}}}
		}},
		{name: "AfterTool hook", tool: okTool, openCall: true, setup: func(ag *agentrt.Agent) {
			ag.Hooks = []agentrt.Hooks{{AfterTool: func(context.Context, *agentrt.ToolCall, *agentrt.ToolResult) { exit() }}}
		}},
		{name: "OnTurnStart hook", tool: okTool, setup: func(ag *agentrt.Agent) {
			ag.Hooks = []agentrt.Hooks{{OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, _ int) context.Context {
				exit()
				return ctx
			}}}
		}},
		{name: "compressor", tool: okTool, setup: func(ag *agentrt.Agent) { ag.Compressor = exitingCompressor{} }},
		{name: "planner", tool: okTool, setup: func(ag *agentrt.Agent) {
			ag.Planner = agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				exit()
				return nil, nil
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, err := agentrt.NewJSONLStore(t.TempDir(), nil)
			require.NoError(t, err)
			input := tt.input
			if input == "" {
				input = `{"path":"a.txt"}`
			}
			ag := &agentrt.Agent{Tools: []agentrt.Tool{tt.tool}, Store: store, Permission: agentrt.AllowAll(),
				Planner: agenttest.Script(agenttest.Respond(agentrt.NewAssistantMessage(use("w1", "write", input))), agenttest.Reply("done"))}
			if tt.setup != nil {
				tt.setup(ag)
			}
			end := rangeOnGoroutine(ag.Run(context.Background(), "s", "go"))
			require.False(t, end.normal, "the range returned: the Goexit was contained")
			require.Nil(t, end.recovered)
			_, done := agenttest.Done(end.events)
			assert.False(t, done, "no Done after a Goexit")

			msgs, err := store.Load(context.Background(), "s")
			require.NoError(t, err)
			agenttest.AssertInvariants(t, msgs)
			if tt.openCall {
				r := resultOf(t, msgs, "w1")
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, "interrupted")
			}

			// The session is unlocked and resumes.
			again := &agentrt.Agent{Tools: []agentrt.Tool{okTool}, Store: store, Planner: agenttest.Script(agenttest.Reply("resumed"))}
			events, err := agenttest.Collect(again.Run(context.Background(), "s", "again"))
			require.NoError(t, err)
			d, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, agentrt.StopComplete, d.Reason)
			msgs, err = store.Load(context.Background(), "s")
			require.NoError(t, err)
			agenttest.AssertInvariants(t, msgs)
		})
	}
}

// A runtime.Goexit in a call of a parallel group ends a goroutine the
// runtime started, so it is contained like a panic: the call's result is
// an error, and the run goes on.
func TestGoexitInAParallelCallIsContained(t *testing.T) {
	t.Parallel()
	read := agentrt.NewTool("read", "Reads.", func(_ context.Context, in struct {
		Exit bool `json:"exit"`
	}) (string, error) {
		if in.Exit {
			runtime.Goexit()
		}
		return "read", nil
	}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{read}, Store: store, Planner: agenttest.Script(
		agenttest.Respond(agentrt.NewAssistantMessage(use("r1", "read", `{"exit":true}`), use("r2", "read", `{"exit":false}`))),
		agenttest.Reply("done"))}
	end := rangeOnGoroutine(ag.Run(context.Background(), "s", "go"))
	require.True(t, end.normal)
	require.NoError(t, end.err)
	msgs, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	r1 := resultOf(t, msgs, "r1")
	assert.True(t, r1.IsError)
	assert.Contains(t, r1.Content, "runtime.Goexit called")
	var pe *agentrt.PanicError
	for _, r := range agenttest.Filter[agentrt.ToolResult](end.events) {
		if r.Message.ToolUseID == "r1" {
			assert.ErrorAs(t, r.Err, &pe)
		}
	}
	assert.Equal(t, "read", resultOf(t, msgs, "r2").Content)
}

// t.FailNow in a tool stops the test, as it does anywhere else, and a
// later Run on the same session resumes it. The failing test runs in a
// child process (TestFailNowInAToolChild).
func TestFailNowInAToolStopsTheTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailNowInAToolChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTRT_FAILNOW_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	require.True(t, errors.As(err, &exitErr), "the child test passed:\n%s", out)
	assert.Contains(t, string(out), "--- FAIL: TestFailNowInAToolChild")
	assert.Contains(t, string(out), "the tool failed the test")
	assert.NotContains(t, string(out), "after the run", "the test went on after FailNow")

	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	msgs, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	r := resultOf(t, msgs, "w1")
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "interrupted")
	ag := &agentrt.Agent{Store: store, Planner: agenttest.Script(agenttest.Reply("resumed"))}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "again"))
	require.NoError(t, err)
	d, _ := agenttest.Done(events)
	assert.Equal(t, "resumed", d.FinalText)
}

// TestFailNowInAToolChild fails on purpose, in the child process of
// TestFailNowInAToolStopsTheTest only.
func TestFailNowInAToolChild(t *testing.T) {
	dir := os.Getenv("AGENTRT_FAILNOW_DIR")
	if dir == "" {
		t.Skip("runs as the child of TestFailNowInAToolStopsTheTest")
	}
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	write := agentrt.NewTool("write", "Writes.", func(context.Context, WriteIn) (string, error) {
		require.Fail(t, "the tool failed the test")
		return "unreachable", nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{write}, Store: store, Permission: agentrt.AllowAll(),
		Planner: agenttest.Script(agenttest.Respond(agentrt.NewAssistantMessage(use("w1", "write", `{"path":"a"}`))), agenttest.Reply("done"))}
	for range ag.Run(context.Background(), "s", "go") {
	}
	t.Log("after the run")
}

// The iterator of one Run is single-use, like sql.Rows: a second range
// yields ErrRunReused alone and changes nothing.
func TestRunIteratorIsSingleUse(t *testing.T) {
	t.Parallel()
	runs := 0
	tool := agentrt.NewTool("add", "Adds.", func(_ context.Context, in AddIn) (int, error) { runs++; return in.A + in.B, nil }, agentrt.ReadOnly())
	ag, store := newAgent(agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("3")), tool)
	seq := ag.Run(context.Background(), "s", "go")
	_, err := agenttest.Collect(seq)
	require.NoError(t, err)
	before, _ := store.Load(context.Background(), "s")

	events, err := agenttest.Collect(seq)
	require.ErrorIs(t, err, agentrt.ErrRunReused)
	assert.Empty(t, events)
	after, _ := store.Load(context.Background(), "s")
	assert.Equal(t, before, after)
	assert.Equal(t, 1, runs)
}

// A typed nil Planner is no planner: every Run says so before anything
// runs, instead of a nil-pointer panic reported as a planner failure.
func TestRunTypedNilPlannerIsInvalid(t *testing.T) {
	t.Parallel()
	var script *agenttest.Planner
	var fn agentrt.PlannerFunc
	for _, p := range []agentrt.Planner{script, fn} {
		ag := &agentrt.Agent{Planner: p, Store: &agentrt.MemoryStore{}}
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.ErrorIs(t, err, agentrt.ErrNoPlanner)
		require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
		assert.Empty(t, events)
	}
}

// The AfterTool hooks of a parallel call that ended with runtime.Goexit
// run on a goroutine the runtime starts, so a Goexit there is contained
// too: the calls of the group that finished first keep their results.
// (Found by the property test: the first call's success became
// "interrupted".)
func TestGoexitInAfterToolOfAParallelCallIsContained(t *testing.T) {
	t.Parallel()
	secondDone := make(chan struct{})
	read := agentrt.NewTool("read", "Reads.", func(_ context.Context, in struct {
		Exit bool `json:"exit"`
	}) (string, error) {
		if in.Exit {
			defer close(secondDone)
			runtime.Goexit()
		}
		<-secondDone // finishes after the call that exits
		return "read", nil
	}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{read}, Store: store,
		Hooks: []agentrt.Hooks{{AfterTool: func(_ context.Context, call *agentrt.ToolCall, _ *agentrt.ToolResult) {
			if call.ToolUseID == "r2" {
				runtime.Goexit()
			}
		}}},
		Planner: agenttest.Script(
			agenttest.Respond(agentrt.NewAssistantMessage(use("r1", "read", `{"exit":false}`), use("r2", "read", `{"exit":true}`))),
			agenttest.Reply("done"))}
	end := rangeOnGoroutine(ag.Run(context.Background(), "s", "go"))
	require.True(t, end.normal, "a Goexit escaped Run")
	require.NoError(t, end.err)
	msgs, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	assert.Equal(t, "read", resultOf(t, msgs, "r1").Content)
	r2 := resultOf(t, msgs, "r2")
	assert.True(t, r2.IsError)
	assert.Contains(t, r2.Content, "runtime.Goexit called")
	failed := agenttest.Filter[agentrt.HookFailed](end.events)
	require.Len(t, failed, 1)
	assert.Equal(t, "AfterTool", failed[0].Stage)
}
