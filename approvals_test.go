package agentrt_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	durableloop "github.com/agentrt/agentrt/internal/durable/loop"
)

type noteIn struct {
	Path string `json:"path" validate:"required"`
	Text string `json:"text,omitempty"`
}

// notes is a write tool's world: the notes written, in order.
type notes struct {
	mu    sync.Mutex
	wrote []noteIn
}

func (n *notes) tool() agentrt.Tool {
	return agentrt.NewTool("write_note", "Write a note.", func(_ context.Context, in noteIn) (string, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.wrote = append(n.wrote, in)
		return "wrote " + in.Path, nil
	})
}

func (n *notes) paths() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, in := range n.wrote {
		out = append(out, in.Path)
	}
	return out
}

// askLater defers every write tool call to a person.
var askLater = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	if req.Tool.ReadOnly {
		return agentrt.Decision{Allow: true}, nil
	}
	return agentrt.Decision{Pending: true}, nil
})

func collect(t *testing.T, seq func(func(agentrt.Event, error) bool)) ([]agentrt.Event, agentrt.Done) {
	t.Helper()
	evs, err := agenttest.Collect(seq)
	require.NoError(t, err)
	done, ok := agenttest.Done(evs)
	require.True(t, ok, "a Done event")
	return evs, done
}

// checkOpen checks the invariants of a stored session whose open
// tool_uses (no result yet) are exactly open, in order.
func checkOpen(t *testing.T, store agentrt.SessionStore, id string, open ...string) []agentrt.Message {
	t.Helper()
	msgs, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	var ps propProblems
	propCheckSession(&ps, id, msgs, len(open) == 0)
	for _, p := range ps {
		t.Errorf("%s: %s", p.key, p.detail)
	}
	var got []string
	for _, m := range propInterrupted(msgs) {
		got = append(got, m.ToolUseID)
	}
	assert.Equal(t, open, got, "the open tool_uses")
	return msgs
}

func pendingIDs(d agentrt.Done) []string {
	var ids []string
	for _, p := range d.Pending {
		ids = append(ids, p.ToolUseID)
	}
	return ids
}

func records(t *testing.T, store agentrt.SessionStore, id string, kind agentrt.RecordKind) []map[string]any {
	t.Helper()
	recs, err := store.(agentrt.RecordStore).LoadRecords(context.Background(), id)
	require.NoError(t, err)
	var out []map[string]any
	for _, r := range recs {
		if r.Kind == kind {
			var m map[string]any
			require.NoError(t, json.Unmarshal(r.Data, &m))
			out = append(out, m)
		}
	}
	return out
}

func TestAskLaterStopsAndResumes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		approval  agentrt.Decision // ToolUseID filled in
		wantPaths []string
		wantText  string
		wantError bool
	}{
		{name: "approve", approval: agentrt.Decision{Allow: true}, wantPaths: []string{"a.txt"}, wantText: "wrote a.txt"},
		{name: "deny with a reason", approval: agentrt.Decision{Reason: "not this file", Source: "alice"}, wantText: "not this file", wantError: true},
		{name: "deny", approval: agentrt.Decision{}, wantText: `permission denied: the user refused this call of "write_note"`, wantError: true},
		{name: "edit", approval: agentrt.Decision{Allow: true, Input: json.RawMessage(`{"path":"b.txt","text":"edited"}`)}, wantPaths: []string{"b.txt"}, wantText: "wrote b.txt"},
		{name: "edit to an invalid input", approval: agentrt.Decision{Allow: true, Input: json.RawMessage(`{"text":"no path"}`)}, wantText: "the input to run with is invalid", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var n notes
			store := &agentrt.MemoryStore{}
			planner := agenttest.Script(
				agenttest.CallTool("write_note", `{"path":"a.txt","text":"hi"}`),
				agenttest.Reply("done"),
			)
			ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: planner, Permission: askLater, Store: store}

			evs, done := collect(t, ag.Run(ctx, "s", "write a note"))
			assert.Equal(t, agentrt.StopPending, done.Reason)
			assert.Equal(t, agentrt.LayerPermission, done.Layer)
			require.Len(t, done.Pending, 1)
			p := done.Pending[0]
			assert.Equal(t, "write_note", p.Tool.Name)
			assert.Equal(t, noteIn{Path: "a.txt", Text: "hi"}, p.Input, "the decoded input")
			assert.Empty(t, n.paths(), "nothing ran")
			assert.Empty(t, agenttest.Filter[agentrt.ToolResult](evs))
			pd := agenttest.Filter[agentrt.PermissionDecision](evs)
			require.Len(t, pd, 1)
			assert.True(t, pd[0].Decision.Pending)
			checkOpen(t, store, "s", p.ToolUseID)
			pend := records(t, store, "s", agentrt.RecordPending)
			require.Len(t, pend, 1)
			assert.Equal(t, p.ToolUseID, pend[0]["calls"].([]any)[0].(map[string]any)["tool_use_id"])

			// The session is not held: another run may take it.
			unlock, err := store.Lock(ctx, "s")
			require.NoError(t, err)
			unlock()

			a := tt.approval
			a.ToolUseID = p.ToolUseID
			evs, done = collect(t, ag.Resume(ctx, "s", a))
			assert.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
			assert.Equal(t, "done", done.FinalText)
			assert.Equal(t, tt.wantPaths, n.paths())
			res := agenttest.Filter[agentrt.ToolResult](evs)
			require.Len(t, res, 1)
			assert.Contains(t, res[0].Message.Content, tt.wantText)
			assert.Equal(t, tt.wantError, res[0].Message.IsError)
			msgs := checkOpen(t, store, "s")
			assert.Len(t, msgs, 4, "user, call, result, answer")
			perm := records(t, store, "s", agentrt.RecordPermission)
			require.NotEmpty(t, perm)
			last := perm[len(perm)-1]
			assert.Equal(t, p.ToolUseID, last["tool_use_id"])
			assert.Equal(t, a.Allow && !tt.wantError, last["allow"] == true)
			planner.AssertDone(t)
		})
	}
}

func TestResumePartialDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	newAgent := func(steps ...agenttest.Step) *agentrt.Agent {
		return &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: agenttest.Script(steps...), Permission: askLater, Store: store}
	}
	ag := newAgent(agenttest.CallTools(
		agenttest.ToolUse("write_note", `{"path":"1"}`),
		agenttest.ToolUse("write_note", `{"path":"2"}`),
		agenttest.ToolUse("write_note", `{"path":"3"}`),
	))
	_, done := collect(t, ag.Run(ctx, "s", "three notes"))
	require.Equal(t, agentrt.StopPending, done.Reason)
	ids := pendingIDs(done)
	require.Len(t, ids, 3, "every call of the turn is asked about")
	checkOpen(t, store, "s", ids...)

	// No decisions: nothing runs, no planner call.
	_, done = collect(t, ag.Run(ctx, "s", ""))
	assert.Equal(t, agentrt.StopPending, done.Reason)
	assert.Equal(t, ids, pendingIDs(done))

	// Decisions on the last two only: they wait for the first. A fresh
	// Agent: what was decided is in the session, not in memory.
	ag = newAgent()
	evs, done := collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: ids[2], Allow: true}, agentrt.Decision{ToolUseID: ids[1], Reason: "no"}))
	assert.Equal(t, agentrt.StopPending, done.Reason)
	assert.Equal(t, ids[:1], pendingIDs(done))
	assert.Empty(t, n.paths())
	assert.Empty(t, agenttest.Filter[agentrt.ToolResult](evs))
	checkOpen(t, store, "s", ids...)

	// A decided call cannot be decided again, an unknown one not at all,
	// and one call not twice; each fails before anything runs.
	for _, as := range [][]agentrt.Decision{
		{{ToolUseID: ids[2], Allow: true}},
		{{ToolUseID: "call_nope", Allow: true}},
		{{ToolUseID: ids[0], Allow: true}, {ToolUseID: ids[0]}},
	} {
		evs, err := agenttest.Collect(ag.Resume(ctx, "s", as...))
		require.ErrorIs(t, err, agentrt.ErrNotPending)
		assert.Empty(t, evs, "an early failure")
	}
	assert.Empty(t, n.paths())

	ag = newAgent(agenttest.Reply("all done"))
	_, done = collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: ids[0], Allow: true}))
	assert.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	assert.Equal(t, []string{"1", "3"}, n.paths(), "in order; the denied one not")
	msgs := checkOpen(t, store, "s")
	assert.Equal(t, `permission denied: the user refused this call of "write_note": no`, msgs[3].Content)

	// The session is no longer pending.
	_, err := agenttest.Collect(ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: ids[0], Allow: true}))
	require.ErrorIs(t, err, agentrt.ErrNotPending)
}

func TestPendingThenNewInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	planner := agenttest.Script(
		agenttest.CallTool("write_note", `{"path":"x"}`),
		agenttest.Reply("ok, not writing"),
	)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: planner, Permission: askLater, Store: store}
	_, done := collect(t, ag.Run(ctx, "s", "write x"))
	require.Equal(t, agentrt.StopPending, done.Reason)
	_, done = collect(t, ag.Run(ctx, "s", "never mind"))
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Empty(t, n.paths())
	msgs := checkOpen(t, store, "s")
	assert.Contains(t, msgs[2].Content, "the user sent a new message instead of deciding")
	assert.Equal(t, "never mind", msgs[3].Content)
}

func TestAskLaterNeedsRecords(t *testing.T) {
	t.Parallel()
	var n notes
	store := struct{ agentrt.SessionStore }{&agentrt.MemoryStore{}} // messages only
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: askLater, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"x"}`), agenttest.Reply("ok"))}
	evs, done := collect(t, ag.Run(context.Background(), "s", "write x"))
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	res := agenttest.Filter[agentrt.ToolResult](evs)
	require.Len(t, res, 1)
	assert.Contains(t, res[0].Message.Content, "cannot keep a pending call")
	assert.Empty(t, n.paths())
}

func TestRememberedDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	newAgent := func(steps ...agenttest.Step) *agentrt.Agent {
		return &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: agenttest.Script(steps...), Permission: askLater, Store: store}
	}
	ag := newAgent(agenttest.CallTool("write_note", `{"path":"notes/a"}`))
	_, done := collect(t, ag.Run(ctx, "s", "a"))
	require.Equal(t, agentrt.StopPending, done.Reason)
	ag = newAgent(agenttest.Reply("ok"))
	_, done = collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: done.Pending[0].ToolUseID, Allow: true, Always: true, Pattern: `"path":"notes/`}))
	require.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	perm := records(t, store, "s", agentrt.RecordPermission)
	require.Len(t, perm, 1)
	assert.Equal(t, true, perm[0]["always"])
	assert.Equal(t, `"path":"notes/`, perm[0]["pattern"])

	// A later run, a new Agent: the rule comes from the session.
	ag = newAgent(agenttest.CallTools(
		agenttest.ToolUse("write_note", `{"path":"notes/b"}`),
		agenttest.ToolUse("write_note", `{"path":"etc/c"}`),
	))
	evs, done := collect(t, ag.Run(ctx, "s", "b and c"))
	assert.Equal(t, agentrt.StopPending, done.Reason)
	require.Len(t, done.Pending, 1, "the call outside the pattern waits")
	assert.Equal(t, noteIn{Path: "etc/c"}, done.Pending[0].Input)
	pd := agenttest.Filter[agentrt.PermissionDecision](evs)
	require.Len(t, pd, 2)
	assert.Equal(t, "remembered", pd[0].Decision.Source)
	assert.True(t, pd[0].Decision.Allow)
	assert.True(t, pd[1].Decision.Pending)
	assert.Equal(t, []string{"notes/a", "notes/b"}, n.paths(), "b, before c, ran")
}

func TestAskOnWriteAlwaysIsRestored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	asked := 0
	first := agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		asked++
		return agentrt.Decision{Allow: true, Always: true}, nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: first, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"a"}`), agenttest.Reply("ok"))}
	_, done := collect(t, ag.Run(ctx, "s", "a"))
	require.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, 1, asked)
	perm := records(t, store, "s", agentrt.RecordPermission)
	require.Len(t, perm, 1)
	assert.Equal(t, true, perm[0]["always"])

	// A new checker (another process, say): the session remembers.
	second := agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		t.Error("asked again")
		return agentrt.Decision{}, nil
	})
	ag = &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: second, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"b"}`), agenttest.Reply("ok"))}
	evs, done := collect(t, ag.Run(ctx, "s", "b"))
	require.Equal(t, agentrt.StopComplete, done.Reason)
	pd := agenttest.Filter[agentrt.PermissionDecision](evs)
	require.Len(t, pd, 1)
	assert.Equal(t, agentrt.Decision{Allow: true, Source: "remembered"}, pd[0].Decision)
	assert.Equal(t, []string{"a", "b"}, n.paths())
}

// TestResumeMixedTurn: a read-only call before and after the deferred one;
// the one before runs at once, the one after waits its turn.
func TestResumeMixedTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	var reads []string
	var mu sync.Mutex
	read := agentrt.NewTool("read", "Read.", func(_ context.Context, in noteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, in.Path)
		return "content of " + in.Path, nil
	}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	planner := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("read", `{"path":"r1"}`),
			agenttest.ToolUse("read", `{"path":"r2"}`),
			agenttest.ToolUse("write_note", `{"path":"w"}`),
			agenttest.ToolUse("read", `{"path":"r3"}`),
			agenttest.ToolUse("nope", `{}`),
		),
		agenttest.Reply("done"),
	)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool(), read}, Planner: planner, Permission: askLater, Store: store}
	evs, done := collect(t, ag.Run(ctx, "s", "go"))
	require.Equal(t, agentrt.StopPending, done.Reason, done.Detail)
	require.Len(t, done.Pending, 1)
	assert.ElementsMatch(t, []string{"r1", "r2"}, reads, "run together")
	assert.Len(t, agenttest.Filter[agentrt.ToolCall](evs), 5, "every call announced")
	stored, err := store.Load(ctx, "s")
	require.NoError(t, err)
	var open []string
	for _, u := range stored[1].ToolUses()[2:] {
		open = append(open, u.ID)
	}
	checkOpen(t, store, "s", open...)
	_, done = collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: done.Pending[0].ToolUseID, Allow: true}))
	require.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	assert.ElementsMatch(t, []string{"r1", "r2", "r3"}, reads)
	assert.Equal(t, "r3", reads[2])
	assert.Equal(t, []string{"w"}, n.paths())
	msgs := checkOpen(t, store, "s")
	assert.True(t, msgs[6].IsError, "the unknown tool")
	assert.True(t, strings.Contains(msgs[6].Content, "nope"), msgs[6].Content)
}

// TestAskLaterInParallelGroup: a read-only call deferred in a group of
// read-only calls; the one before it runs, the one after waits its turn.
func TestAskLaterInParallelGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var reads []string
	read := agentrt.NewTool("read", "Read.", func(_ context.Context, in noteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, in.Path)
		return "content of " + in.Path, nil
	}, agentrt.ReadOnly())
	checker := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if strings.Contains(string(req.RawInput), "secret") {
			return agentrt.Decision{Pending: true}, nil
		}
		return agentrt.Decision{Allow: true}, nil
	})
	store := &agentrt.MemoryStore{}
	planner := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("read", `{"path":"r1"}`),
			agenttest.ToolUse("read", `{"path":"secret"}`),
			agenttest.ToolUse("read", `{"path":"r3"}`),
		),
		agenttest.Reply("done"),
	)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{read}, Planner: planner, Permission: checker, Store: store}
	_, done := collect(t, ag.Run(ctx, "s", "go"))
	require.Equal(t, agentrt.StopPending, done.Reason, done.Detail)
	require.Len(t, done.Pending, 1)
	assert.Equal(t, []string{"r1"}, reads)
	stored, err := store.Load(ctx, "s")
	require.NoError(t, err)
	uses := stored[1].ToolUses()
	checkOpen(t, store, "s", uses[1].ID, uses[2].ID)
	_, done = collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: uses[1].ID, Reason: "private"}))
	require.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	assert.Equal(t, []string{"r1", "r3"}, reads)
	msgs := checkOpen(t, store, "s")
	assert.Equal(t, `permission denied: the user refused this call of "read": private`, msgs[3].Content)
}

// TestDurableDecidePending: a durable runtime sees a deferred call as a
// Pending decision event; one that cannot see events gets a denial.
func TestDurableDecidePending(t *testing.T) {
	t.Parallel()
	var n notes
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: agenttest.Script(), Permission: askLater}
	d, err := durableloop.New(ag, "s", nil)
	require.NoError(t, err)
	use := agentrt.ToolUseBlock("call_1", "write_note", json.RawMessage(`{"path":"a"}`))
	var evs []agentrt.Event
	input, denied := d.Decide(context.Background(), 1, use, func(ev agentrt.Event) { evs = append(evs, ev) })
	assert.Nil(t, denied)
	assert.JSONEq(t, `{"path":"a"}`, string(input))
	require.Len(t, evs, 1)
	assert.True(t, evs[0].(agentrt.PermissionDecision).Decision.Pending)

	_, denied = d.Decide(context.Background(), 1, use, nil)
	require.NotNil(t, denied)
	assert.True(t, denied.Message.IsError)
	assert.Contains(t, denied.Message.Content, "cannot ask")
	assert.Empty(t, n.paths())
}

// TestAskOnWriteAlwaysWithoutRecords: a store that keeps no records keeps
// no rules, so an "always" holds for the rest of its run only, as
// Decision.Always says; the next run asks again.
func TestAskOnWriteAlwaysWithoutRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := struct{ agentrt.SessionStore }{&agentrt.MemoryStore{}} // hides the record methods
	asked := 0
	ask := agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		asked++
		return agentrt.Decision{Allow: true, Always: true}, nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: ask, Store: store,
		Planner: agenttest.Script(
			agenttest.CallTool("write_note", `{"path":"a"}`),
			agenttest.CallTool("write_note", `{"path":"b"}`),
			agenttest.Reply("ok"))}
	_, done := collect(t, ag.Run(ctx, "s", "a"))
	require.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, 1, asked, "the rest of the run remembers")

	ag = &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: ask, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"c"}`), agenttest.Reply("ok"))}
	_, done = collect(t, ag.Run(ctx, "s", "c"))
	require.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, 2, asked, "a later run asks again: nothing was recorded")
	assert.Equal(t, []string{"a", "b", "c"}, n.paths())
}

// Resume on a session that does not exist is ErrNotPending (not
// ErrEmptyInput), and creates nothing.
func TestResumeUnknownSessionIsNotPending(t *testing.T) {
	t.Parallel()
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: agenttest.Script(), Store: store}
	events, err := agenttest.Collect(ag.Resume(context.Background(), "nope"))
	require.ErrorIs(t, err, agentrt.ErrNotPending)
	assert.NotErrorIs(t, err, agentrt.ErrEmptyInput)
	assert.Empty(t, events)
	sessions, err := store.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, sessions)
}

// Resume with no decisions reports the pending calls and changes nothing
// in the session: no message, no record (a page that shows the pending
// calls may call it on every view).
func TestResumeWithoutDecisionsChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Permission: askLater, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"a.txt"}`))}
	_, done := collect(t, ag.Run(ctx, "s", "write"))
	require.Equal(t, agentrt.StopPending, done.Reason)
	msgs, _ := store.Load(ctx, "s")
	recs, _ := store.LoadRecords(ctx, "s")
	for range 3 {
		_, again := collect(t, ag.Resume(ctx, "s"))
		assert.Equal(t, agentrt.StopPending, again.Reason)
		require.Len(t, again.Pending, 1)
		assert.Equal(t, done.Pending[0].ToolUseID, again.Pending[0].ToolUseID)
		msgsNow, _ := store.Load(ctx, "s")
		recsNow, _ := store.LoadRecords(ctx, "s")
		assert.Equal(t, msgs, msgsNow)
		assert.Equal(t, recs, recsNow)
	}
	assert.Empty(t, n.paths())
}

// A denial recorded before a crash (the process died before the call's
// result was stored) reaches the model as that denial, with its reason:
// the record shows the call never ran, so it is not "interrupted".
func TestDenialRecordedBeforeACrashIsThatDenial(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct{ reason, want string }{
		{"not on Fridays", `permission denied: the user refused this call of "write_note": not on Fridays`},
		{"", `permission denied: the user refused this call of "write_note"`},
	} {
		store := &agentrt.MemoryStore{}
		require.NoError(t, store.Append(ctx, "s", agentrt.NewUserMessage("write")))
		require.NoError(t, store.Append(ctx, "s", agentrt.NewAssistantMessage(use("w1", "write_note", `{"path":"a.txt"}`))))
		rec, err := json.Marshal(map[string]any{"tool_use_id": "w1", "tool": "write_note", "allow": false, "reason": tt.reason, "source": "user"})
		require.NoError(t, err)
		require.NoError(t, store.AppendRecord(ctx, "s", agentrt.Record{Kind: agentrt.RecordPermission, Data: rec}))

		var n notes
		planner := agenttest.Script(agenttest.Reply("ok"))
		ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Store: store, Planner: planner}
		_, done := collect(t, ag.Run(ctx, "s", ""))
		assert.Equal(t, agentrt.StopComplete, done.Reason)
		msgs := checkOpen(t, store, "s")
		r := resultOf(t, msgs, "w1")
		assert.True(t, r.IsError)
		assert.Equal(t, tt.want, r.Content)
		assert.Empty(t, n.paths())
		// The model saw the denial.
		req := planner.Requests()[0]
		assert.Equal(t, tt.want, req.Messages[len(req.Messages)-1].Content)
	}
}

// An input a person edited is decided again: a hard rule of the checker
// (notes only under notes/) holds for the edit, and the checker sees who
// edited it.
func TestEditedInputIsCheckedAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, edit string
		wantPaths  []string
		wantText   string
	}{
		{"an edit the rule allows", `{"path":"notes/b.txt","text":"x"}`, []string{"notes/b.txt"}, "wrote notes/b.txt"},
		{"an edit the rule refuses", `{"path":"etc/passwd","text":"x"}`, nil,
			`permission denied: the permission policy refused the input of tool "write_note" as alice edited it: only under notes/`},
		{"an edit the checker rewrites again", `{"path":"notes/sandbox.txt","text":"x"}`, nil,
			`permission denied: the permission checker rewrote the input of tool "write_note" that alice edited`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var n notes
			var editedBy []string
			rule := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
				editedBy = append(editedBy, req.EditedBy)
				in := req.Input.(noteIn)
				if !strings.HasPrefix(in.Path, "notes/") {
					return agentrt.Decision{Reason: "only under notes/"}, nil
				}
				if !strings.Contains(string(req.RawInput), in.Path) {
					return agentrt.Decision{Reason: "RawInput is not the input checked"}, nil
				}
				if req.EditedBy != "" && in.Path == "notes/sandbox.txt" {
					return agentrt.Decision{Allow: true, Input: noteIn{Path: "notes/other.txt"}}, nil // not decided silently
				}
				return agentrt.Decision{Pending: true}, nil // a person decides
			})
			store := &agentrt.MemoryStore{}
			planner := agenttest.Script(agenttest.CallTool("write_note", `{"path":"notes/a.txt","text":"hi"}`), agenttest.Reply("done"))
			ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Planner: planner, Permission: rule, Store: store}
			_, done := collect(t, ag.Run(ctx, "s", "write"))
			require.Equal(t, agentrt.StopPending, done.Reason)

			edit := agentrt.Decision{ToolUseID: done.Pending[0].ToolUseID, Allow: true, Source: "alice", Input: json.RawMessage(tt.edit)}
			evs, done := collect(t, ag.Resume(ctx, "s", edit))
			require.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
			assert.Equal(t, []string{"", "alice"}, editedBy, "asked about the model's input, then about alice's edit")
			assert.Equal(t, tt.wantPaths, n.paths())
			res := agenttest.Filter[agentrt.ToolResult](evs)
			require.Len(t, res, 1)
			assert.Equal(t, tt.wantText, res[0].Message.Content)
			perm := records(t, store, "s", agentrt.RecordPermission)
			assert.Equal(t, tt.wantPaths != nil, perm[len(perm)-1]["allow"] == true, "the record says what happened")
		})
	}
}

// A Decision travels as JSON (examples/web, Temporal's signal): Input stays
// raw for the tool to decode, and "by", the older name of "source", is read.
func TestDecisionJSON(t *testing.T) {
	t.Parallel()
	var d agentrt.Decision
	require.NoError(t, json.Unmarshal([]byte(`{"tool_use_id":"c1","allow":true,"input":{"path":"a"},"by":"alice","always":true}`), &d))
	assert.Equal(t, agentrt.Decision{ToolUseID: "c1", Allow: true, Input: json.RawMessage(`{"path":"a"}`), Source: "alice", Always: true}, d)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{"tool_use_id":"c1","allow":true,"input":{"path":"a"},"source":"alice","always":true}`, string(b))
	var back agentrt.Decision
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, d, back)

	// An Input of []byte or of the tool's type goes as JSON too (over
	// Temporal, a signal is JSON).
	for _, in := range []any{[]byte(`{"path":"a"}`), noteIn{Path: "a"}} {
		b, err := json.Marshal(agentrt.Decision{Allow: true, Input: in})
		require.NoError(t, err)
		var got agentrt.Decision
		require.NoError(t, json.Unmarshal(b, &got))
		assert.JSONEq(t, `{"path":"a"}`, string(got.Input.(json.RawMessage)), "%s", b)
	}
}

// Resume takes decisions, not a deferral: a pending decision fails early.
func TestResumeRefusesAPendingDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n notes
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{n.tool()}, Store: store, Permission: askLater,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"a.txt","text":"hi"}`), agenttest.Reply("done"))}
	_, done := collect(t, ag.Run(ctx, "s", "write"))
	require.Equal(t, agentrt.StopPending, done.Reason)
	_, err := agenttest.Collect(ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: done.Pending[0].ToolUseID, Pending: true}))
	require.ErrorIs(t, err, agentrt.ErrNotPending)
	assert.Contains(t, err.Error(), "cannot be pending")
	assert.Empty(t, n.paths())
}
