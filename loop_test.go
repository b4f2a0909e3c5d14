package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentslog"
	"github.com/agentrt/agentrt/agenttest"
	durableloop "github.com/agentrt/agentrt/internal/durable/loop"
)

func use(id, name, input string) agentrt.Block {
	return agentrt.ToolUseBlock(id, name, json.RawMessage(input))
}

func resultOf(t *testing.T, msgs []agentrt.Message, id string) agentrt.Message {
	t.Helper()
	for _, m := range msgs {
		if m.Role == agentrt.RoleTool && m.ToolUseID == id {
			return m
		}
	}
	t.Fatalf("no result for %q in %v", id, msgs)
	return agentrt.Message{}
}

func TestRunInventedIDsNeverCollide(t *testing.T) {
	t.Parallel()
	// The runtime names an empty id's call agentrt_t1_2; the model used
	// that very id for the call before it.
	script := agenttest.Script(
		agenttest.Respond(agentrt.NewAssistantMessage(use("agentrt_t1_2", "add", `{"a":1,"b":2}`), use("", "add", `{"a":3,"b":4}`))),
		agenttest.Reply("done"),
	)
	ag, store := newAgent(script, addTool())
	_, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	uses := msgs[1].ToolUses()
	require.Len(t, uses, 2)
	assert.Equal(t, "agentrt_t1_2", uses[0].ID)
	assert.NotEmpty(t, uses[1].ID)
	assert.NotEqual(t, uses[0].ID, uses[1].ID)
	assert.Equal(t, "3", resultOf(t, msgs, "agentrt_t1_2").Content, "the well-formed call runs")
	assert.Equal(t, "7", resultOf(t, msgs, uses[1].ID).Content, "the call without an id gets one and runs")
}

// Servers, not models, give most ids, and some give the same ones every
// turn (TGI's "0"): a reused id, and one that is not UTF-8, are replaced
// and the call runs; the session keeps unique ids.
func TestRunReusedAndInvalidUTF8IDs(t *testing.T) {
	t.Parallel()
	store, err := agentrt.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	script := agenttest.Script(
		agenttest.Respond(agentrt.NewAssistantMessage(use("x1", "add", `{"a":1,"b":2}`))),
		agenttest.Respond(agentrt.NewAssistantMessage(
			use("x1", "add", `{"a":2,"b":2}`),      // reused from turn 1
			use("a\xff", "add", `{"a":3,"b":2}`),   // not UTF-8
			use("a\xfe", "add", `{"a":4,"b":2}`))), // not UTF-8, same on disk once replaced
		agenttest.Reply("done"),
	)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: script, Store: store}
	_, err = agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)

	reopened, err := agentrt.NewJSONLStore(store.Dir(), nil)
	require.NoError(t, err)
	msgs, err := reopened.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	uses := msgs[3].ToolUses()
	require.Len(t, uses, 3)
	seen := map[string]bool{"x1": true}
	for _, u := range uses {
		assert.False(t, seen[u.ID], "id %q appears twice on disk", u.ID)
		seen[u.ID] = true
	}
	for i, want := range []string{"4", "5", "6"} {
		res := resultOf(t, msgs, uses[i].ID)
		assert.False(t, res.IsError, "call %d: %s", i, res.Content)
		assert.Equal(t, want, res.Content)
	}
}

// A second call with the id of one before it in the same message may be
// that call repeated: it gets a new id and an is_error result, and does
// not run; the first runs.
func TestRunDuplicateIDInOneMessageNotRun(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	count := agentrt.NewTool("count", "Counts its calls.", func(context.Context, struct{}) (int, error) {
		return int(runs.Add(1)), nil
	})
	script := agenttest.Script(
		agenttest.Respond(agentrt.NewAssistantMessage(use("c1", "count", `{}`), use("c1", "count", `{}`))),
		agenttest.Reply("done"),
	)
	ag, store := newAgent(script, count)
	ag.Permission = agentrt.AllowAll()
	_, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	uses := msgs[1].ToolUses()
	require.Len(t, uses, 2)
	assert.Equal(t, "c1", uses[0].ID)
	assert.NotEqual(t, "c1", uses[1].ID)
	assert.Equal(t, int32(1), runs.Load(), "the repeated call does not run")
	assert.Equal(t, "1", resultOf(t, msgs, "c1").Content)
	dup := resultOf(t, msgs, uses[1].ID)
	assert.True(t, dup.IsError)
	assert.Contains(t, dup.Content, `duplicate id "c1" in this message`)
}

func TestRunResultTooLongForTheStoreBecomesAnErrorResult(t *testing.T) {
	t.Parallel()
	store, err := agentrt.NewJSONLStore(t.TempDir(), &agentrt.JSONLOptions{MaxLineSize: 4096})
	require.NoError(t, err)
	big := agentrt.NewTool("big", "Returns a lot.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", 10000), nil
	}, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTool("big", `{}`), agenttest.Reply("ok"))
	ag := &agentrt.Agent{Tools: []agentrt.Tool{big}, Planner: script, Store: store, MaxToolOutput: -1}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	res := lastResults(events)
	require.Len(t, res, 1)
	assert.True(t, res[0].Message.IsError)
	assert.Contains(t, res[0].Message.Content, "could not be stored")
	assert.ErrorIs(t, res[0].Err, agentrt.ErrLineTooLong)
}

// panicky is a tool whose Decode or Execute panics (or calls Goexit).
type panicky struct {
	name   string
	decode func()
	exec   func()
}

func (p *panicky) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: p.name, InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true}
}

func (p *panicky) Decode(json.RawMessage) (any, error) {
	if p.decode != nil {
		p.decode()
	}
	return nil, nil
}

func (p *panicky) Execute(context.Context, any) (string, error) {
	if p.exec != nil {
		p.exec()
	}
	return "ran", nil
}

// A panic in Decode or Execute is the call's is_error result, whether the
// call runs alone or in a parallel group (Goexit: see callback_test.go).
func TestRunContainsPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool *panicky
		want string
	}{
		{"decode panic", &panicky{name: "t", decode: func() { panic("bad decoder") }}, "decoder panicked"},
		{"execute panic", &panicky{name: "t", exec: func() { panic("boom") }}, "panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Twice in one message: once alone, once in a parallel group.
			script := agenttest.Script(
				agenttest.Respond(agentrt.NewAssistantMessage(use("c1", "t", `{}`))),
				agenttest.Respond(agentrt.NewAssistantMessage(use("c2", "t", `{}`), use("c3", "t", `{}`))),
				agenttest.Reply("done"))
			ag, store := newAgent(script, tt.tool)
			events, msgs, err := runAgent(t, ag, store, "go")
			require.NoError(t, err)
			for _, id := range []string{"c1", "c2", "c3"} {
				r := resultOf(t, msgs, id)
				assert.True(t, r.IsError, id)
				assert.Contains(t, r.Content, tt.want, id)
			}
			for _, r := range lastResults(events) {
				var pe *agentrt.PanicError
				assert.ErrorAs(t, r.Err, &pe)
			}
		})
	}
}

func TestRunCheckerPanicIsADenial(t *testing.T) {
	t.Parallel()
	var ran bool
	write := agentrt.NewTool("write", "Write.", func(context.Context, WriteIn) (string, error) { ran = true; return "ok", nil })
	script := agenttest.Script(agenttest.CallTool("write", `{"path":"a"}`), agenttest.Reply("done"))
	ag, store := newAgent(script, write)
	ag.Permission = agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		panic("checker bug")
	})
	_, msgs, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	assert.False(t, ran)
	r := msgs[2]
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "permission denied")
}

func TestRunPlannerPanicEndsTheRunWithAPanicError(t *testing.T) {
	t.Parallel()
	for _, f := range []func(){func() { panic("planner bug") }} {
		calls := 0
		planner := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			calls++
			if calls == 2 {
				f()
			}
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(use("", "add", `{"a":1,"b":1}`))}, nil
		})
		store := &agentrt.MemoryStore{}
		ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store}
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		var pe *agentrt.PanicError
		require.ErrorAs(t, err, &pe)
		done, ok := agenttest.Done(events)
		require.True(t, ok)
		assert.Equal(t, agentrt.StopError, done.Reason)
		assert.Equal(t, agentrt.LayerPlanner, done.Layer)
		msgs, _ := store.Load(context.Background(), "s")
		agenttest.AssertInvariants(t, msgs)
		// The session resumes.
		ag2 := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: agenttest.Script(agenttest.Reply("resumed")), Store: store}
		_, err = agenttest.Collect(ag2.Run(context.Background(), "s", "again"))
		require.NoError(t, err)
	}
}

type panickySpec struct{ *panicky }

func (panickySpec) Spec() agentrt.ToolSpec { panic("no spec") }

func TestRunSpecPanicIsAnInvalidAgentEveryTime(t *testing.T) {
	t.Parallel()
	ag, store := newAgent(agenttest.Script(agenttest.Reply("x")), panickySpec{&panicky{}})
	for range 2 {
		events, err := agenttest.Collect(ag.Run(context.Background(), "s1", "go"))
		require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
		assert.Empty(t, events)
	}
	msgs, _ := store.Load(context.Background(), "s1")
	assert.Empty(t, msgs, "an invalid agent writes nothing")
}

// failingStore fails Sync after n calls, or cancels a context in Append.
type failingStore struct {
	*agentrt.MemoryStore
	failSync bool
	onAppend func(agentrt.Message)
}

func (s *failingStore) Append(ctx context.Context, id string, m agentrt.Message) error {
	if s.onAppend != nil {
		s.onAppend(m)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryStore.Append(ctx, id, m)
}

func (s *failingStore) Sync(context.Context, string) error {
	if s.failSync {
		return errors.New("disk on fire")
	}
	return nil
}

func TestRunFailedFinalSyncIsAnError(t *testing.T) {
	t.Parallel()
	store := &failingStore{MemoryStore: &agentrt.MemoryStore{}, failSync: true}
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("hi")), Store: store}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.ErrorContains(t, err, "disk on fire")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopError, done.Reason)
	assert.Equal(t, agentrt.LayerStore, done.Layer)
}

func TestRunCancelDuringAppendEndsCancelledWithEveryResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &failingStore{MemoryStore: &agentrt.MemoryStore{}}
	store.onAppend = func(m agentrt.Message) {
		if m.HasToolUse() {
			cancel() // between the runtime's check and the store's
		}
	}
	script := agenttest.Script(agenttest.CallTools(
		agenttest.ToolUse("add", `{"a":1,"b":1}`), agenttest.ToolUse("add", `{"a":2,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":3}`)))
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: script, Store: store}
	events, err := agenttest.Collect(ag.Run(ctx, "s", "go"))
	require.ErrorIs(t, err, context.Canceled)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	msgs, _ := store.Load(context.Background(), "s")
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5, "the assistant message and its 3 results")
}

func TestRunCheckerMayKeepTheRequest(t *testing.T) {
	t.Parallel()
	var kept []*agentrt.ToolCall
	write := agentrt.NewTool("write", "Write.", func(context.Context, WriteIn) (string, error) { return "ok", nil })
	script := agenttest.Script(agenttest.CallTools(
		agenttest.ToolUse("write", `{"path":"a"}`), agenttest.ToolUse("write", `{"path":"b"}`)), agenttest.Reply("done"))
	ag, store := newAgent(script, write)
	ag.Permission = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		kept = append(kept, req)
		return agentrt.Decision{Allow: true}, nil
	})
	_, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	require.Len(t, kept, 2)
	assert.Equal(t, "a", kept[0].Input.(WriteIn).Path)
	assert.Equal(t, "b", kept[1].Input.(WriteIn).Path)
}

func TestRunParallelResultsAsTheyComplete(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := agentrt.NewTool("slow", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-release:
			return "slow done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, agentrt.ReadOnly())
	fast := agentrt.NewTool("fast", "Returns.", func(context.Context, struct{}) (string, error) { return "fast done", nil }, agentrt.ReadOnly())
	script := agenttest.Script(agenttest.CallTools(
		agenttest.ToolUse("fast", `{}`), agenttest.ToolUse("slow", `{}`), agenttest.ToolUse("fast", `{}`)), agenttest.Reply("ok"))
	ag, _ := newAgent(script, fast, slow)
	ag.ToolTimeout = 10 * time.Second // a stuck test fails instead of hanging
	var order []string
	for ev, err := range ag.Run(context.Background(), "s1", "go") {
		require.NoError(t, err)
		if r, ok := ev.(agentrt.ToolResult); ok {
			order = append(order, r.Message.Content)
			if len(order) == 1 {
				// The first result arrives while the slow call still runs.
				close(release)
			}
		}
	}
	assert.Equal(t, []string{"fast done", "slow done", "fast done"}, order)
}

func TestRunTimeoutDiscardsALateSuccess(t *testing.T) {
	t.Parallel()
	stubborn := agentrt.NewTool("stubborn", "Ignores its deadline.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "finished anyway", nil
	}, agentrt.ReadOnly(), agentrt.WithTimeout(time.Millisecond))
	script := agenttest.Script(agenttest.CallTool("stubborn", `{}`), agenttest.Reply("ok"))
	ag, store := newAgent(script, stubborn)
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	res := lastResults(events)
	require.Len(t, res, 1)
	assert.True(t, res[0].Message.IsError)
	assert.Contains(t, res[0].Message.Content, "timed out")
	assert.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
}

func TestRunConsumerPanicStopsAStreamingPlanner(t *testing.T) {
	t.Parallel()
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		for ctx.Err() == nil {
			req.OnText("x") // streams until cancelled
		}
		return nil, ctx.Err()
	})
	ag := &agentrt.Agent{Planner: planner}
	defer func() {
		assert.Equal(t, "consumer bug", recover(), "the consumer's own panic propagates")
	}()
	for ev := range ag.Run(context.Background(), "s", "go") {
		if _, ok := ev.(agentrt.TextDelta); ok {
			panic("consumer bug")
		}
	}
}

func TestRunRetryAfterIsCappedByMaxDelay(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(
		agenttest.Fail(&agentrt.ProviderError{Kind: agentrt.ErrRateLimited, RetryAfter: time.Hour}),
		agenttest.Reply("ok"))
	ag := &agentrt.Agent{Planner: script, Retry: agentrt.RetryPolicy{MaxDelay: time.Millisecond}}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	retries := agenttest.Filter[agentrt.PlannerRetry](events)
	require.Len(t, retries, 1)
	assert.Equal(t, time.Millisecond, retries[0].Delay, "the server's hour is cut to MaxDelay")
	assert.Equal(t, time.Hour, retries[0].Asked, "and the event says what was asked")
}

// slowLoad is a store whose Load takes a while.
type slowLoad struct {
	*agentrt.MemoryStore
	delay time.Duration
}

func (s slowLoad) Load(ctx context.Context, id string) ([]agentrt.Message, error) {
	time.Sleep(s.delay)
	return s.MemoryStore.Load(ctx, id)
}

func TestRunTimeBudgetCountsFromTheLoadedSession(t *testing.T) {
	t.Parallel()
	store := slowLoad{&agentrt.MemoryStore{}, 50 * time.Millisecond}
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("quick")), Store: store,
		Budget: agentrt.Budget{MaxDuration: 30 * time.Millisecond}}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason, "the slow load did not use up the budget")
}

func TestRunPlannerMayKeepItsRequests(t *testing.T) {
	t.Parallel()
	var kept []*agentrt.ModelRequest
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.CallTool("add", `{"a":3,"b":4}`), agenttest.Reply("done"))
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		kept = append(kept, req)
		return script.Plan(ctx, req)
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	require.Len(t, kept, 3)
	for i, req := range kept {
		assert.Equal(t, i+1, req.Turn, "request %d was changed after its call", i)
		assert.Len(t, req.Messages, 1+2*i, "request %d's messages were changed after its call", i)
	}
}

func TestAgentFieldsAreFrozenAtTheFirstRun(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.Reply("one"), agenttest.Reply("two"))
	ag := &agentrt.Agent{Instructions: "first", Planner: script}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "a"))
	require.NoError(t, err)
	ag.Instructions = "changed" // not seen: fields are read at the first Run
	_, err = agenttest.Collect(ag.Run(context.Background(), "s", "b"))
	require.NoError(t, err)
	reqs := script.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "first", reqs[1].System)
}

// describingPlanner is a planner whose Describe runs f.
type describingPlanner struct {
	agentrt.Planner
	f func()
}

func (p describingPlanner) Describe() agentrt.ProviderInfo {
	p.f()
	return agentrt.ProviderInfo{Name: "fake", Model: "m"}
}

// A Describe that panics or calls runtime.Goexit does not escape Run: the
// Agent is invalid, as with a tool's Spec, and every Run says so.
func TestRunDescribePanicIsAnInvalidAgent(t *testing.T) {
	t.Parallel()
	for _, f := range []func(){runtime.Goexit, func() { panic("describe bug") }} {
		ag := &agentrt.Agent{Planner: describingPlanner{agenttest.Script(agenttest.Reply("x")), f}, Store: &agentrt.MemoryStore{},
			Hooks: []agentrt.Hooks{agentslog.Hooks(slog.New(slog.DiscardHandler))}}
		for range 2 {
			events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
			require.ErrorIs(t, err, agentrt.ErrInvalidAgent)
			assert.ErrorContains(t, err, "Describe")
			assert.Empty(t, events)
		}
	}
	// A Describe that works is called once, whatever the number of runs,
	// and its answer reaches the hooks and the trace records.
	calls := 0
	var seen agentrt.ProviderInfo
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: describingPlanner{agenttest.Script(agenttest.Reply("x"), agenttest.Reply("y")), func() { calls++ }}, Store: store,
		Hooks: []agentrt.Hooks{{OnRunStart: func(ctx context.Context, run *agentrt.RunInfo) context.Context { seen = run.Provider; return ctx }}}}
	for range 2 {
		_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		require.NoError(t, err)
	}
	assert.Equal(t, 1, calls)
	assert.Equal(t, agentrt.ProviderInfo{Name: "fake", Model: "m"}, seen)
	recs, err := store.LoadRecords(context.Background(), "s")
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	assert.Contains(t, string(recs[len(recs)-1].Data), `"provider":"fake","model":"m"`)
}

// viewCompressor shows the planner a copy of the last message only, and
// does not count tokens itself.
type viewCompressor struct{}

func (viewCompressor) Compress(_ context.Context, req *agentrt.CompressRequest) (*agentrt.CompressResult, error) {
	return &agentrt.CompressResult{Messages: []agentrt.Message{req.Messages[len(req.Messages)-1]}}, nil
}

// A TokenCounter that panics when the trace counts the Compressor's view
// does not escape Run: the run stops with a *PanicError at the planner
// layer and the session stays valid.
func TestRunTokenCounterPanicIsContained(t *testing.T) {
	t.Parallel()
	for _, f := range []func(){func() { panic("counter bug") }} {
		store := &agentrt.MemoryStore{}
		ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("x")), Store: store, Compressor: viewCompressor{},
			TokenCounter: func([]agentrt.Message) int { f(); return 0 }}
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
		var pe *agentrt.PanicError
		require.ErrorAs(t, err, &pe)
		done, ok := agenttest.Done(events)
		require.True(t, ok)
		assert.Equal(t, agentrt.LayerPlanner, done.Layer)
		msgs, _ := store.Load(context.Background(), "s")
		agenttest.AssertInvariants(t, msgs)
	}
}

// panickyError is an error whose Error method panics.
type panickyError struct{}

func (panickyError) Error() string { panic("Error() bug") }

// An error from user code whose Error method panics is written into the
// trace as fmt prints it; the panic does not escape Run.
func TestRunPanickyErrorTextIsContained(t *testing.T) {
	t.Parallel()
	rateLimited := &agentrt.ProviderError{Provider: "fake", StatusCode: 429, Kind: agentrt.ErrRateLimited, Err: panickyError{}}
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Fail(rateLimited), agenttest.Fail(rateLimited)), Store: store,
		Retry: agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond}}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.ErrorIs(t, err, agentrt.ErrRateLimited)
	recs, err := store.LoadRecords(context.Background(), "s")
	require.NoError(t, err)
	var all string
	for _, r := range recs {
		all += string(r.Data)
	}
	assert.Contains(t, all, "PANIC=Error method: Error() bug")
}

// A planner failure returned while the run was live is the planner's, even
// when the consumer cancels the run on an event of the AfterPlan hooks
// before the runtime handles it: Done{error} with that error, not a
// cancellation.
func TestRunPlannerFailureBeforeCancelIsAnError(t *testing.T) {
	t.Parallel()
	errBroken := errors.New("planner broken")
	for name, step := range map[string]agenttest.Step{
		"error": agenttest.Fail(errBroken),
		"nil response": agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return nil, nil
		}),
	} {
		ctx, cancel := context.WithCancel(context.Background())
		store := &agentrt.MemoryStore{}
		ag := &agentrt.Agent{Planner: agenttest.Script(step), Store: store,
			Hooks: []agentrt.Hooks{{AfterPlan: func(context.Context, *agentrt.ModelRequest, *agentrt.ModelResponse, error) { panic("after plan") }}}}
		var done agentrt.Done
		var err error
		for ev, e := range ag.Run(ctx, "s", "go") {
			if _, ok := ev.(agentrt.HookFailed); ok {
				cancel() // after the planner returned, before its result is handled
			}
			if d, ok := ev.(agentrt.Done); ok {
				done = d
			}
			if e != nil {
				err = e
			}
		}
		cancel()
		assert.Equal(t, agentrt.StopError, done.Reason, name)
		assert.Equal(t, agentrt.LayerPlanner, done.Layer, name)
		require.Error(t, err, name)
		assert.NotErrorIs(t, err, context.Canceled, name)
		if name == "error" {
			assert.ErrorIs(t, err, errBroken)
		}
	}
}

// TestRunPlannerPanicAfterCancelIsTheCancellation: a planner that panics
// or calls runtime.Goexit once the run is cancelled or out of time ends
// the run as an error it returned then would: cancelled, or out of budget,
// not a planner error. (Before, a panic was a planner error there, and the
// property test saw the time budget's stop reported as one.)
func TestRunPlannerPanicAfterCancelIsTheCancellation(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"panic"} {
		for _, stop := range []string{"cancel", "budget"} {
			name := fault + " after " + stop
			ctx, cancel := context.WithCancel(context.Background())
			planner := agentrt.PlannerFunc(func(pctx context.Context, _ *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				if stop == "cancel" {
					cancel()
				}
				<-pctx.Done()
				panic("planner broke on the way out " + fault)
			})
			ag := &agentrt.Agent{Planner: planner, Store: &agentrt.MemoryStore{}}
			if stop == "budget" {
				ag.Budget.MaxDuration = time.Millisecond
			}
			var done agentrt.Done
			var err error
			for ev, e := range ag.Run(ctx, "s", "go") {
				if d, ok := ev.(agentrt.Done); ok {
					done = d
				}
				if e != nil {
					err = e
				}
			}
			cancel()
			var pe *agentrt.PanicError
			assert.False(t, errors.As(err, &pe), "%s: the panic is not the run's error: %v", name, err)
			if stop == "cancel" {
				assert.Equal(t, agentrt.StopCancelled, done.Reason, name)
				assert.Equal(t, agentrt.LayerCancellation, done.Layer, name)
				assert.ErrorIs(t, err, context.Canceled, name)
			} else {
				assert.Equal(t, agentrt.StopBudgetExceeded, done.Reason, name)
				assert.Equal(t, agentrt.LayerLimit, done.Layer, name)
			}
		}
	}
}

// goexitInput is a tool input whose field decodes with a method that
// calls runtime.Goexit or panics, as a test's t.FailNow would.
type goexitInput struct {
	V exitingField `json:"v"`
}

type exitingField struct{}

var exitingFieldDoes = map[string]func(){"goexit": runtime.Goexit, "panic": func() { panic("UnmarshalJSON bug") }}

func (*exitingField) UnmarshalJSON(b []byte) error {
	exitingFieldDoes[strings.Trim(string(b), `"`)]()
	return nil
}

// An input type whose UnmarshalJSON panics is user code: the panic is
// recovered, the call is answered, and the goroutine ranging over Run
// carries on.
func TestRunUserUnmarshalerIsContained(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"panic"} {
		tool := agentrt.NewTool("decode", "Decodes.", func(context.Context, goexitInput) (string, error) { return "ran", nil }, agentrt.ReadOnly())
		store := &agentrt.MemoryStore{}
		ag := &agentrt.Agent{Tools: []agentrt.Tool{tool}, Store: store,
			Planner: agenttest.Script(agenttest.CallTool("decode", `{"v":"`+mode+`"}`), agenttest.Reply("done"))}
		o := propCollect(ag.Run(context.Background(), "s", "go"), 0, 0, nil)
		require.True(t, o.normal, "%s: the goroutine ranging over Run did not finish normally (panic %v)", mode, o.panicked)
		results := agenttest.Filter[agentrt.ToolResult](o.events())
		require.Len(t, results, 1, mode)
		assert.True(t, results[0].Message.IsError, "%s: %s", mode, results[0].Message.Content)
		msgs, _ := store.Load(context.Background(), "s")
		agenttest.AssertInvariants(t, msgs)
	}
}

// A panic in the consumer's loop body propagates out of the range loop
// with its own value, whatever event it came on (the permission decision
// of a call decided on the run's goroutine included); a runtime.Goexit
// there (t.FailNow in a test) ends the consumer's goroutine, as it would
// anywhere. Either way the session is left valid (a tool_use left open is
// answered as interrupted) and unlocked.
func TestRunConsumerPanicOrGoexit(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"panic", "goexit"} {
		for _, on := range []string{"AssistantMessage", "ToolCall", "PermissionDecision", "ToolResult", "TextDelta", "Done"} {
			store := &agentrt.MemoryStore{}
			ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Store: store,
				Planner: agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.StreamReply("do", "ne"))}
			type end struct {
				normal    bool
				recovered any
			}
			ended := make(chan end)
			go func() {
				var e end
				defer func() { e.recovered = recover(); ended <- e }()
				for ev := range ag.Run(context.Background(), "s", "go") {
					if fmt.Sprintf("%T", ev) != "agentrt."+on {
						continue
					}
					if mode == "goexit" {
						runtime.Goexit()
					}
					panic("consumer on " + on)
				}
				e.normal = true
			}()
			e := <-ended
			assert.False(t, e.normal, "%s on %s: the loop went on", mode, on)
			if mode == "panic" {
				assert.Equal(t, "consumer on "+on, e.recovered, "the consumer's own panic propagates")
			} else {
				assert.Nil(t, e.recovered, "%s on %s", mode, on)
			}
			msgs, err := store.Load(context.Background(), "s")
			require.NoError(t, err)
			agenttest.AssertInvariants(t, msgs)
			if on == "ToolCall" || on == "PermissionDecision" { // before the tool ran
				require.Len(t, msgs, 3)
				assert.True(t, msgs[2].IsError, "%s on %s", mode, on)
				assert.True(t, strings.HasPrefix(msgs[2].Content, "interrupted:"), "%s on %s: %s", mode, on, msgs[2].Content)
			}
			next := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Store: store, Planner: agenttest.Script(agenttest.Reply("resumed"))}
			_, err = agenttest.Collect(next.Run(context.Background(), "s", "again"))
			require.NoError(t, err, "%s on %s: the session is still locked or broken", mode, on)
		}
	}
}

// A panic in the consumer's loop body on an event of a sub-agent running
// in a parallel group: Run waits for the group's calls (cancelled) before
// it unlocks the session, so no goroutine outlives it and no child session
// stays locked.
func TestRunConsumerPanicDuringParallelSubAgents(t *testing.T) {
	defer goleak.VerifyNone(t)
	child := func() *agentrt.Agent {
		return &agentrt.Agent{Name: "child", Planner: agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			for i := 0; ctx.Err() == nil && i < 1000; i++ {
				req.OnText("x") // many events, more than the group's channel holds
			}
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("child done"))}, nil
		})}
	}
	store := &agentrt.MemoryStore{}
	tools := []agentrt.Tool{
		agentrt.AgentTool(child(), "helper_a", "Helps.", agentrt.ReadOnly()),
		agentrt.AgentTool(child(), "helper_b", "Helps.", agentrt.ReadOnly()),
	}
	ag := &agentrt.Agent{Tools: tools, Store: store, Planner: agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("helper_a", `{"task":"a"}`), agenttest.ToolUse("helper_b", `{"task":"b"}`)),
		agenttest.Reply("done"))}
	require.PanicsWithValue(t, "consumer", func() {
		for ev := range ag.Run(context.Background(), "s", "go") {
			if _, ok := ev.(agentrt.SubAgentEvent); ok {
				panic("consumer")
			}
		}
	})
	msgs, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	next := &agentrt.Agent{Tools: tools, Store: store, Planner: agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("helper_a", `{"task":"a"}`), agenttest.ToolUse("helper_b", `{"task":"b"}`)),
		agenttest.Reply("done"))}
	events, err := agenttest.Collect(next.Run(context.Background(), "s", "again"))
	require.NoError(t, err)
	for _, res := range agenttest.Filter[agentrt.ToolResult](events) {
		assert.False(t, res.Message.IsError, "%s: %s", res.Tool, res.Message.Content)
	}
}

// The trace counts the tokens of a Compressor's view only where it writes
// the count: on a store that keeps records, once per planner call; on a
// store without records and in a durable runtime's planner step, never.
func TestTokenCounterCalledOnlyForTheTrace(t *testing.T) {
	t.Parallel()
	newAgent := func(store agentrt.SessionStore, counted *int) *agentrt.Agent {
		return &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("x")), Store: store, Compressor: viewCompressor{},
			TokenCounter: func([]agentrt.Message) int { *counted++; return 1 }}
	}
	var traced, untraced, durable int
	_, err := agenttest.Collect(newAgent(&agentrt.MemoryStore{}, &traced).Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	assert.Equal(t, 1, traced, "one planner call, one count for its trace record")
	_, err = agenttest.Collect(newAgent(untracedStore{&agentrt.MemoryStore{}}, &untraced).Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	assert.Zero(t, untraced, "no trace, no count")

	ag := newAgent(nil, &durable)
	lp, err := durableloop.New(ag, "s", nil)
	require.NoError(t, err)
	_, err = lp.Begin(nil, "go")
	require.NoError(t, err)
	step, err := durableloop.New(ag, "s", nil)
	require.NoError(t, err)
	out := step.Plan(context.Background(), lp.Request(), nil, false, 1, nil)
	require.NoError(t, out.Err)
	assert.Zero(t, durable, "a durable runtime's planner step writes no trace")
}
