package agentrt_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// loggingStore is a MemoryStore that logs every call the runtime makes to
// it, with the abilities of a JSONLStore: Locker, RecordStore and Syncer.
// Others (tools, planners) may add their own entries to the same log with
// note, so that the order of store writes and callbacks can be checked.
type loggingStore struct {
	mem *agentrt.MemoryStore
	mu  sync.Mutex
	log []string
}

var _ interface {
	agentrt.SessionStore
	agentrt.Locker
	agentrt.RecordStore
	agentrt.Syncer
} = (*loggingStore)(nil)

func newLoggingStore() *loggingStore { return &loggingStore{mem: &agentrt.MemoryStore{}} }

// note appends an entry to the log.
func (s *loggingStore) note(entry string) {
	s.mu.Lock()
	s.log = append(s.log, entry)
	s.mu.Unlock()
}

// entries returns a copy of the log.
func (s *loggingStore) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// describeMessage names a message in the log: "user", "assistant",
// "assistant[call_1,call_2]" for one that calls tools, "result:call_1".
func describeMessage(m agentrt.Message) string {
	switch {
	case m.Role == agentrt.RoleTool:
		return "result:" + m.ToolUseID
	case m.HasToolUse():
		var ids []string
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				ids = append(ids, b.ID)
			}
		}
		return string(m.Role) + "[" + strings.Join(ids, ",") + "]"
	}
	return string(m.Role)
}

func (s *loggingStore) Append(ctx context.Context, id string, m agentrt.Message) error {
	s.note("append:" + describeMessage(m))
	return s.mem.Append(ctx, id, m)
}

func (s *loggingStore) Load(ctx context.Context, id string) ([]agentrt.Message, error) {
	s.note("load")
	return s.mem.Load(ctx, id)
}

func (s *loggingStore) List(ctx context.Context) ([]agentrt.SessionInfo, error) {
	s.note("list")
	return s.mem.List(ctx)
}

func (s *loggingStore) Delete(ctx context.Context, id string) error {
	s.note("delete")
	return s.mem.Delete(ctx, id)
}

func (s *loggingStore) Lock(ctx context.Context, id string) (func(), error) {
	s.note("lock")
	unlock, err := s.mem.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	return func() { s.note("unlock"); unlock() }, nil
}

func (s *loggingStore) AppendRecord(ctx context.Context, id string, rec agentrt.Record) error {
	s.note("record:" + string(rec.Kind))
	return s.mem.AppendRecord(ctx, id, rec)
}

func (s *loggingStore) LoadRecords(ctx context.Context, id string) ([]agentrt.Record, error) {
	s.note("load-records")
	return s.mem.LoadRecords(ctx, id)
}

func (s *loggingStore) Sync(context.Context, string) error {
	s.note("sync")
	return nil
}

// openToolUses returns the tool_use ids of msgs that have no tool result
// after them, in order.
func openToolUses(msgs []agentrt.Message) []string {
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == agentrt.RoleTool {
			answered[m.ToolUseID] = true
		}
	}
	var open []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse && !answered[b.ID] {
				open = append(open, b.ID)
			}
		}
	}
	return open
}

// specCounter is a tool that counts the calls of its Spec.
type specCounter struct {
	agentrt.Tool
	specs *atomic.Int32
}

func (c specCounter) Spec() agentrt.ToolSpec {
	c.specs.Add(1)
	return c.Tool.Spec()
}

// TestRunDoesNothingUntilRanged shows what Agent.Run and README's
// Concepts table say: Run "does nothing until ranged". Calling Run without
// ranging over its iterator calls no planner (nor a tool's Spec), takes no
// lock and reads or writes nothing in the store; ranging it later does the
// run.
func TestRunDoesNothingUntilRanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var plans, specs atomic.Int32
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("3"))
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		plans.Add(1)
		return script.Plan(ctx, req)
	})
	store := newLoggingStore()
	ag := &agentrt.Agent{Planner: planner, Store: store, Tools: []agentrt.Tool{specCounter{addTool(), &specs}}}

	seq := ag.Run(ctx, "s1", "What is 1+2?")
	require.NotNil(t, seq)
	_ = ag.Run(ctx, "s1", "a second Run, never ranged")

	assert.Zero(t, plans.Load(), "no planner call")
	assert.Zero(t, specs.Load(), "the Agent is not even prepared")
	assert.Empty(t, store.entries(), "no lock, no load, no write")
	unlock, err := store.mem.Lock(ctx, "s1")
	require.NoError(t, err, "the session is not locked")
	unlock()
	msgs, err := store.mem.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Empty(t, msgs, "nothing is stored")

	// Ranging it does the run: the probes above see work when there is some.
	events, err := agenttest.Collect(seq)
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, "3", done.FinalText)
	assert.Equal(t, int32(2), plans.Load())
	assert.Equal(t, int32(1), specs.Load())
	log := store.entries()
	require.NotEmpty(t, log)
	assert.Equal(t, "lock", log[0])
	assert.Equal(t, "unlock", log[len(log)-1])
	assert.Contains(t, log, "append:user")
	msgs, err = store.mem.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Len(t, msgs, 4)
}

// TestFinalTextEmptyWithoutAnAnswer shows README's "Done.FinalText is
// only ever the model's answer; the runtime's own explanation of a stop is
// in Done.Detail" and Done.FinalText's "(empty when it gave none or with
// Agent.NoFinalAnswer)": a run that stops without an answer has an empty
// FinalText, even though the model wrote text along with its tool calls,
// and its Detail says why it stopped.
func TestFinalTextEmptyWithoutAnAnswer(t *testing.T) {
	t.Parallel()
	// A turn whose text is not an answer: it comes with a tool call.
	working := func(id string) agenttest.Step {
		return agenttest.Respond(agentrt.NewAssistantMessage(
			agentrt.TextBlock("let me add "+id),
			agentrt.ToolUseBlock(id, "add", []byte(`{"a":1,"b":2}`))))
	}
	tests := []struct {
		name    string
		steps   []agenttest.Step
		setup   func(ag *agentrt.Agent)
		reason  agentrt.StopReason
		detail  string
		wantErr bool
	}{
		{
			name:   "max turns with NoFinalAnswer",
			steps:  []agenttest.Step{working("c1"), working("c2")},
			setup:  func(ag *agentrt.Agent) { ag.MaxTurns = 2; ag.NoFinalAnswer = true },
			reason: agentrt.StopMaxTurns, detail: "it made 2 turns without a final answer",
		},
		{
			name:   "max turns, the final answer is a tool call without text",
			steps:  []agenttest.Step{working("c1"), agenttest.CallTool("add", `{"a":3,"b":4}`)},
			setup:  func(ag *agentrt.Agent) { ag.MaxTurns = 1 },
			reason: agentrt.StopMaxTurns, detail: "it made 1 turns without a final answer",
		},
		{
			name:   "budget with NoFinalAnswer",
			steps:  []agenttest.Step{working("c1").WithUsage(agentrt.Usage{InputTokens: 100, OutputTokens: 100})},
			setup:  func(ag *agentrt.Agent) { ag.Budget.MaxTokens = 10; ag.NoFinalAnswer = true },
			reason: agentrt.StopBudgetExceeded, detail: "budget_exceeded",
		},
		{
			name:   "planner error",
			steps:  []agenttest.Step{working("c1"), agenttest.Fail(errors.New("model exploded"))},
			reason: agentrt.StopError, detail: "model exploded", wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := agenttest.Script(tc.steps...)
			ag, store := newAgent(script, addTool())
			if tc.setup != nil {
				tc.setup(ag)
			}
			events, msgs, err := runAgent(t, ag, store, "go")
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			script.AssertDone(t)
			done, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, tc.reason, done.Reason)
			assert.Empty(t, done.FinalText, "no answer: FinalText is empty")
			assert.Contains(t, done.Detail, tc.detail, "the runtime's explanation is in Detail")
			// The model did write text in the session.
			assert.Contains(t, msgs[1].Text(), "let me add c1")
		})
	}
}

// failingAfterCancel is a MemoryStore that cannot append the result of
// call_2 once the run was cancelled: the stop cannot answer that call.
type failingAfterCancel struct {
	*agentrt.MemoryStore
	ctx context.Context
}

var errDiskFull = errors.New("disk full")

func (s failingAfterCancel) Append(ctx context.Context, id string, m agentrt.Message) error {
	if s.ctx.Err() != nil && m.ToolUseID == "call_2" {
		return errDiskFull
	}
	return s.MemoryStore.Append(ctx, id, m)
}

// TestStoreFailureAtACancelledStopIsReported: when a cancelled run's stop
// cannot store the results of the calls it answers, the run still ends
// cancelled, and its error wraps both the cancellation and the store's
// failure, so that the caller learns the session has calls left open
// (the next run answers them).
func TestStoreFailureAtACancelledStopIsReported(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("cancel", `{}`), agenttest.ToolUse("add", `{"a":1,"b":2}`)),
		agenttest.Reply("never"))
	mem := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: script, Tools: []agentrt.Tool{cancellerTool(&cancel), addTool()}, MaxParallelTools: 1,
		Store: failingAfterCancel{MemoryStore: mem, ctx: ctx}}
	events, err := agenttest.Collect(ag.Run(ctx, "s", "go"))
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, errDiskFull, "the store's failure is not dropped")

	// The next run answers the calls left open.
	next := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("ok")), Store: mem}
	_, err = agenttest.Collect(next.Run(context.Background(), "s", "again"))
	require.NoError(t, err)
	msgs, err := mem.Load(context.Background(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
}

// cancellerTool returns a tool that cancels the run's context (the
// caller's: cancel) and returns its context's error.
func cancellerTool(cancel *context.CancelFunc) agentrt.Tool {
	return agentrt.NewTool("cancel", "Cancels the run.", func(ctx context.Context, _ struct{}) (string, error) {
		(*cancel)()
		<-ctx.Done()
		return "", ctx.Err()
	}, agentrt.ReadOnly())
}

// yieldChecker checks, at each event of a run, what the store holds against
// what the events so far announced: the durability the docs claim at every
// yield (README "The two invariants" and "What at every yield means in
// practice", doc.go "Two invariants", Syncer, JSONL's SyncEveryTurn).
type yieldChecker struct {
	t    *testing.T
	load func() []agentrt.Message
	// The turn in progress: its tool_use ids and those whose ToolResult
	// was yielded.
	turnIDs  []string
	resulted map[string]bool
	done     *agentrt.Done
	checked  int // events checked
}

func (c *yieldChecker) check(ev agentrt.Event) {
	t := c.t
	t.Helper()
	if ev == nil { // the error after Done
		return
	}
	c.checked++
	msgs := c.load()
	switch e := ev.(type) {
	case agentrt.AssistantMessage:
		// Stored before it is yielded, so its tool_uses are open in the
		// store from here on.
		require.NotEmpty(t, msgs)
		assert.Equal(t, e.Message, msgs[len(msgs)-1], "an AssistantMessage is in the store when it is yielded")
		c.turnIDs, c.resulted = nil, map[string]bool{}
		for _, b := range e.Message.Blocks {
			if b.Type == agentrt.BlockToolUse {
				c.turnIDs = append(c.turnIDs, b.ID)
			}
		}
	case agentrt.ToolCall:
		assert.Contains(t, c.storedUses(msgs), e.ToolUseID, "a ToolCall's tool_use is in the store when it is yielded")
		assert.Contains(t, c.turnIDs, e.ToolUseID)
	case agentrt.ToolResult:
		i := slices.IndexFunc(msgs, func(m agentrt.Message) bool {
			return m.Role == agentrt.RoleTool && m.ToolUseID == e.Message.ToolUseID
		})
		if assert.GreaterOrEqual(t, i, 0, "a ToolResult is in the store when it is yielded: %s", e.Message.ToolUseID) {
			assert.Equal(t, e.Message, msgs[i])
		}
		c.resulted[e.Message.ToolUseID] = true
	case agentrt.Done:
		c.done = &e
		if e.Reason == agentrt.StopPending {
			// doc.go: the calls a StopPending run leaves to a person stay open.
			assert.Equal(t, pendingIDs(e), openToolUses(msgs), "at a pending Done, exactly the pending calls are open")
		} else {
			assert.Empty(t, openToolUses(msgs), "at Done (%s), every tool_use has its result in the store", e.Reason)
			agenttest.AssertInvariants(t, msgs)
		}
		return
	}
	// At every yield, the only tool_uses without a result in the store are
	// calls of the turn in progress whose ToolResult is still to come.
	for _, id := range openToolUses(msgs) {
		assert.Contains(t, c.turnIDs, id, "at %T, open tool_use %s is of an earlier turn", ev, id)
		assert.False(t, c.resulted[id], "at %T, tool_use %s was yielded a result that the store lacks", ev, id)
	}
}

// storedUses returns the tool_use ids of msgs.
func (c *yieldChecker) storedUses(msgs []agentrt.Message) []string {
	var ids []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				ids = append(ids, b.ID)
			}
		}
	}
	return ids
}

// TestDurableAtEveryYield checks, from inside the range loop, at every
// event, that the store (a MemoryStore, or a second JSONLStore reading the
// same directory) holds what the docs say: every tool_use has its result
// except calls of the turn in progress whose results are still to come; a
// yielded AssistantMessage, ToolCall or ToolResult is already stored; at
// Done no tool_use is open, except the calls a StopPending run leaves to a
// person.
func TestDurableAtEveryYield(t *testing.T) {
	t.Parallel()
	type scenario struct {
		steps  []agenttest.Step
		setup  func(ag *agentrt.Agent)
		reason agentrt.StopReason
	}
	write := func(cancel *context.CancelFunc) agentrt.Tool {
		return agentrt.NewTool("write", "Writes; path \"cancel\" cancels the run.", func(ctx context.Context, in WriteIn) (string, error) {
			if in.Path == "cancel" {
				(*cancel)()
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "wrote " + in.Path, nil
		})
	}
	text := func(s string, uses ...agentrt.Block) agenttest.Step {
		return agenttest.Respond(agentrt.NewAssistantMessage(append([]agentrt.Block{agentrt.TextBlock(s)}, uses...)...))
	}
	askWrites := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if req.Tool.ReadOnly {
			return agentrt.Decision{Allow: true}, nil
		}
		return agentrt.Decision{Pending: true}, nil
	})
	scenarios := map[string]scenario{
		"tool turns then an answer": {
			steps: []agenttest.Step{
				agenttest.CallTools(
					agenttest.ToolUse("write", `{"path":"a"}`),
					agenttest.ToolUse("add", `{"a":1,"b":2}`),
					agenttest.ToolUse("add", `{"a":3,"b":4}`),
					agenttest.ToolUse("add", `{"a":5,"b":6}`),
					agenttest.ToolUse("nope", `{}`),
					agenttest.ToolUse("write", `{"path":"b"}`)),
				agenttest.CallTools(agenttest.ToolUse("add", `{"a":7,"b":8}`), agenttest.ToolUse("add", `{"a":9,"b":10}`)),
				agenttest.StreamReply("all ", "done"),
			},
			setup:  func(ag *agentrt.Agent) { ag.Permission = agentrt.AllowAll() },
			reason: agentrt.StopComplete,
		},
		"max turns, the final answer calls a tool": {
			steps: []agenttest.Step{
				agenttest.CallTool("add", `{"a":1,"b":2}`),
				agenttest.CallTools(agenttest.ToolUse("add", `{"a":3,"b":4}`), agenttest.ToolUse("add", `{"a":5,"b":6}`)),
				text("still working", agentrt.ToolUseBlock("last", "add", []byte(`{"a":7,"b":8}`))),
			},
			setup:  func(ag *agentrt.Agent) { ag.MaxTurns = 2 },
			reason: agentrt.StopMaxTurns,
		},
		"cancelled by a tool": {
			steps: []agenttest.Step{
				agenttest.CallTool("add", `{"a":1,"b":2}`),
				agenttest.CallTools(
					agenttest.ToolUse("add", `{"a":3,"b":4}`),
					agenttest.ToolUse("write", `{"path":"cancel"}`),
					agenttest.ToolUse("add", `{"a":5,"b":6}`),
					agenttest.ToolUse("write", `{"path":"never"}`)),
				agenttest.Reply("never"),
			},
			setup:  func(ag *agentrt.Agent) { ag.Permission = agentrt.AllowAll() },
			reason: agentrt.StopCancelled,
		},
		"planner error": {
			steps: []agenttest.Step{
				agenttest.CallTools(agenttest.ToolUse("add", `{"a":1,"b":2}`), agenttest.ToolUse("add", `{"a":3,"b":4}`)),
				agenttest.Fail(errors.New("model exploded")),
			},
			reason: agentrt.StopError,
		},
		"pending": {
			steps: []agenttest.Step{
				agenttest.CallTool("add", `{"a":1,"b":2}`),
				agenttest.CallTools(
					agenttest.ToolUse("add", `{"a":3,"b":4}`),
					agenttest.ToolUse("write", `{"path":"a"}`),
					agenttest.ToolUse("write", `{"path":"b"}`)),
			},
			setup:  func(ag *agentrt.Agent) { ag.Permission = askWrites },
			reason: agentrt.StopPending,
		},
	}
	stores := map[string]func(t *testing.T) (agentrt.SessionStore, func() []agentrt.Message){
		"memory": func(t *testing.T) (agentrt.SessionStore, func() []agentrt.Message) {
			store := &agentrt.MemoryStore{}
			return store, func() []agentrt.Message {
				msgs, err := store.Load(context.Background(), "s1")
				require.NoError(t, err)
				return msgs
			}
		},
		"jsonl": func(t *testing.T) (agentrt.SessionStore, func() []agentrt.Message) {
			store := newJSONLStore(t, nil)
			// A second store on the same directory sees only what is in
			// the file, as another process would.
			reader, err := agentrt.NewJSONLStore(store.Dir(), nil)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, reader.Close()) })
			return store, func() []agentrt.Message {
				msgs, err := reader.Load(context.Background(), "s1")
				require.NoError(t, err)
				return msgs
			}
		},
	}
	for name, sc := range scenarios {
		for storeName, newStore := range stores {
			t.Run(name+"/"+storeName, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				store, load := newStore(t)
				ag := &agentrt.Agent{
					Planner: agenttest.Script(sc.steps...),
					Tools:   []agentrt.Tool{addTool(), write(&cancel)},
					Store:   store,
				}
				if sc.setup != nil {
					sc.setup(ag)
				}
				c := &yieldChecker{t: t, load: load}
				var runErr error
				for ev, err := range ag.Run(ctx, "s1", "go") {
					c.check(ev)
					if err != nil {
						runErr = err
					}
				}
				require.NotNil(t, c.done, "a Done event")
				assert.Equal(t, sc.reason, c.done.Reason, "%v", runErr)
				assert.Greater(t, c.checked, 5)
			})
		}
	}
}

// noteTool is a read-only tool that notes "execute:<n>" in the store's
// log when it runs.
func noteTool(store *loggingStore) agentrt.Tool {
	type In struct {
		N int `json:"n"`
	}
	return agentrt.NewTool("note", "Notes its call.", func(_ context.Context, in In) (string, error) {
		store.note(fmt.Sprintf("execute:%d", in.N))
		return "noted", nil
	}, agentrt.ReadOnly())
}

// TestSyncBeforeToolsRun shows Syncer's and doc.go's write-ahead: with
// a store that implements Syncer, Sync is called after the assistant
// message that calls tools is appended and before any of its tools runs,
// again at the end of each tool turn (before the next planner call), and
// before the run ends.
func TestSyncBeforeToolsRun(t *testing.T) {
	t.Parallel()
	store := newLoggingStore()
	script := agenttest.Script(
		agenttest.CallTool("note", `{"n":1}`),
		agenttest.CallTools(agenttest.ToolUse("note", `{"n":2}`), agenttest.ToolUse("note", `{"n":3}`), agenttest.ToolUse("note", `{"n":4}`)),
		agenttest.Reply("done"))
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		store.note("plan")
		return script.Plan(ctx, req)
	})
	ag := &agentrt.Agent{Planner: planner, Store: store, Tools: []agentrt.Tool{noteTool(store)}}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", "go"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	require.Equal(t, agentrt.StopComplete, done.Reason)
	script.AssertDone(t)

	// The log without the trace and usage records, which are not at issue.
	var log, calls []string
	for _, e := range store.entries() {
		switch {
		case strings.HasPrefix(e, "record:"):
		case strings.HasPrefix(e, "execute:"):
			log = append(log, e)
		default:
			log = append(log, e)
			calls = append(calls, e)
		}
	}
	assert.Equal(t, []string{
		"lock", "load", "append:user",
		"plan", "append:assistant[call_1]", "sync", "append:result:call_1", "sync",
		"plan", "append:assistant[call_2,call_3,call_4]", "sync",
		"append:result:call_2", "append:result:call_3", "append:result:call_4", "sync",
		"plan", "append:assistant", "sync", "unlock",
	}, calls, "the store calls, tools left out")
	// Each tool runs after the write-ahead sync of its assistant message
	// and before its result is appended. (The parallel group's tools run in
	// any order, and results are appended as they complete, in order.)
	for n, msg := range map[int]string{1: "append:assistant[call_1]", 2: "append:assistant[call_2,call_3,call_4]", 3: "append:assistant[call_2,call_3,call_4]", 4: "append:assistant[call_2,call_3,call_4]"} {
		appended := slices.Index(log, msg)
		ran := slices.Index(log, fmt.Sprintf("execute:%d", n))
		result := slices.Index(log, fmt.Sprintf("append:result:call_%d", n))
		require.True(t, appended >= 0 && ran >= 0 && result >= 0, "%v", log)
		assert.Equal(t, "sync", log[appended+1], "Sync right after the assistant message is appended: %v", log)
		assert.Greater(t, ran, appended+1, "tool %d runs after the sync: %v", n, log)
		assert.Less(t, ran, result, "tool %d runs before its result is appended: %v", n, log)
	}
}

// TestSyncAtTheEndOfATypedOutputRetryTurn checks Syncer's "and at the
// end of every turn" on a turn whose answer fails RunTyped's output check:
// the corrective user message is appended and synced before the next
// planner call.
func TestSyncAtTheEndOfATypedOutputRetryTurn(t *testing.T) {
	t.Parallel()
	store := newLoggingStore()
	script := agenttest.Script(agenttest.Reply("not JSON"), agenttest.Reply(`{"label":"spam","confidence":0.5}`))
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		store.note("plan")
		return script.Plan(ctx, req)
	})
	ag := &agentrt.Agent{Planner: planner, Store: store}
	v, err := agentrt.RunTyped[Verdict](context.Background(), ag, "s1", "Classify: WIN A PRIZE", nil)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Label: "spam", Confidence: 0.5}, v)
	var log []string
	for _, e := range store.entries() {
		if !strings.HasPrefix(e, "record:") {
			log = append(log, e)
		}
	}
	assert.Equal(t, []string{
		"lock", "load", "append:user",
		"plan", "append:assistant", "append:user", "sync", // turn 1 ends here
		"plan", "append:assistant", "sync", "unlock",
	}, log)
}
