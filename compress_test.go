package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/summarize"
)

// longPlanner calls add turns times, then answers; check sees every request.
func longPlanner(turns int, check func(req *agentrt.ModelRequest)) agentrt.Planner {
	return agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		check(req)
		if req.Turn > turns {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("done"))}, nil
		}
		in := fmt.Sprintf(`{"a":%d,"b":1}`, req.Turn)
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
			agentrt.TextBlock("adding"),
			agentrt.ToolUseBlock(fmt.Sprintf("c%d", req.Turn), "add", json.RawMessage(in)))}, nil
	})
}

// countTokens is the tests' token counter (Agent.TokenCounter): a token
// for every four bytes of text, input and tool name, and four for each
// message and block, so that a budget is easy to reason about.
func countTokens(msgs []agentrt.Message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + len(m.Content)/4
		for _, b := range m.Blocks {
			n += 4 + (len(b.Text)+len(b.Name)+len(b.Input))/4
		}
	}
	return n
}

func TestWindowKeepsLongSessionInBudget(t *testing.T) {
	t.Parallel()
	const budget = 1500
	maxSeen := 0
	var problems []string
	planner := longPlanner(500, func(req *agentrt.ModelRequest) {
		n := countTokens(req.Messages)
		maxSeen = max(maxSeen, n)
		if n > budget {
			problems = append(problems, fmt.Sprintf("turn %d: %d tokens", req.Turn, n))
		}
		if err := agenttest.CheckInvariants(req.Messages); err != nil {
			problems = append(problems, fmt.Sprintf("turn %d: %v", req.Turn, err))
		}
		if !strings.HasPrefix(req.Messages[0].Content, "the goal") {
			problems = append(problems, fmt.Sprintf("turn %d: goal lost", req.Turn))
		}
		if len(req.Messages) > 1 && req.Messages[1].Role != agentrt.RoleAssistant {
			problems = append(problems, fmt.Sprintf("turn %d: roles do not alternate", req.Turn))
		}
	})
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store, MaxTurns: 501,
		Compressor: agentrt.Window{}, ContextTokens: budget, TokenCounter: countTokens}
	events, err := agenttest.Collect(ag.Run(context.Background(), "long", "the goal: add many numbers"))
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Greater(t, maxSeen, budget/2, "the window uses its budget")
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	msgs, _ := store.Load(context.Background(), "long")
	assert.Len(t, msgs, 1+500*2+1, "the store keeps everything")
}

func TestWindowMaxMessages(t *testing.T) {
	t.Parallel()
	var last []agentrt.Message
	planner := longPlanner(10, func(req *agentrt.ModelRequest) { last = req.Messages })
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Compressor: agentrt.Window{MaxMessages: 4}}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "goal"))
	require.NoError(t, err)
	require.Len(t, last, 5)
	assert.Equal(t, "goal\n\n[agentrt: 16 earlier messages of this conversation are not shown]", last[0].Content)
	agenttest.AssertInvariants(t, last)
}

// summaryProvider answers summarizing calls with a numbered summary.
type summaryProvider struct{ calls atomic.Int32 }

func (p *summaryProvider) Plan(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	n := p.calls.Add(1)
	return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprintf("summary #%d", n)))}, nil
}

func TestSummarizerOncePerThresholdAndResume(t *testing.T) {
	t.Parallel()
	sp := &summaryProvider{}
	var views [][]agentrt.Message
	planner := longPlanner(40, func(req *agentrt.ModelRequest) { views = append(views, req.Messages) })
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store, MaxTurns: 41,
		Compressor: &summarize.Compressor{Planner: sp, Threshold: 400}, TokenCounter: countTokens}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "the goal"))
	require.NoError(t, err)
	calls := int(sp.calls.Load())
	assert.GreaterOrEqual(t, calls, 2)
	assert.Less(t, calls, 12, "a summary is reused until the threshold is passed again, not made every turn")
	compactions := 0
	for _, r := range allRecords(t, store, "s") {
		if r.Kind == agentrt.RecordCompaction {
			compactions++
		}
	}
	assert.Equal(t, calls, compactions, "every summary is recorded in the session")
	lastView := views[len(views)-1]
	assert.Contains(t, lastView[0].Content, fmt.Sprintf("summary #%d", calls))
	agenttest.AssertInvariants(t, lastView)
	assert.LessOrEqual(t, countTokens(lastView), 400+100)

	// A new run on the same session starts from the recorded summary.
	views = nil
	planner2 := agenttest.Script(agenttest.Reply("resumed"))
	ag2 := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner2, Store: store,
		Compressor: &summarize.Compressor{Planner: sp, Threshold: 400}, TokenCounter: countTokens}
	_, err = agenttest.Collect(ag2.Run(context.Background(), "s", "and now?"))
	require.NoError(t, err)
	assert.Equal(t, calls, int(sp.calls.Load()), "no new summary on resume")
	first := planner2.Requests()[0].Messages
	assert.Contains(t, first[0].Content, fmt.Sprintf("summary #%d", calls))
	assert.Equal(t, "and now?", first[len(first)-1].Content)
}

func TestContextLengthErrorCompactsAndRetries(t *testing.T) {
	t.Parallel()
	tooLong := &agentrt.ProviderError{Provider: "fake", StatusCode: 400, Kind: agentrt.ErrContextLength}
	var sizes []int
	steps := []agenttest.Step{}
	for i := range 6 {
		steps = append(steps, agenttest.CallTool("add", fmt.Sprintf(`{"a":%d,"b":1}`, i+1)))
	}
	steps = append(steps,
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			sizes = append(sizes, len(req.Messages))
			return nil, tooLong
		}),
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			sizes = append(sizes, len(req.Messages))
			if err := agenttest.CheckInvariants(req.Messages); err != nil {
				return nil, err
			}
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("fits now"))}, nil
		}))
	script := agenttest.Script(steps...)
	ag, store := newAgent(script, addTool())
	events, _, err := runAgent(t, ag, store, "go")
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "fits now", done.FinalText)
	require.Len(t, sizes, 2)
	assert.Less(t, sizes[1], sizes[0], "the retry sent a compacted history")

	// A second context-length error ends the run with a typed error.
	script = agenttest.Script(agenttest.Fail(tooLong), agenttest.Fail(tooLong))
	ag, store = newAgent(script)
	_, _, err = runAgent(t, ag, store, "go")
	require.ErrorIs(t, err, agentrt.ErrContextLength)
}

func TestSummarizerResumesFromJSONL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	sp := &summaryProvider{}
	planner := longPlanner(30, func(*agentrt.ModelRequest) {})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store, MaxTurns: 31,
		Compressor: &summarize.Compressor{Planner: sp, Threshold: 300}}
	_, err = agenttest.Collect(ag.Run(context.Background(), "long", "the goal"))
	require.NoError(t, err)
	made := int(sp.calls.Load())
	require.Positive(t, made)

	// A new process: a new store on the same directory, a new agent.
	store2, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store2.Close()
	script := agenttest.Script(agenttest.Reply("resumed"))
	ag2 := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: script, Store: store2,
		Compressor: &summarize.Compressor{Planner: sp, Threshold: 300}}
	_, err = agenttest.Collect(ag2.Run(context.Background(), "long", "and now?"))
	require.NoError(t, err)
	assert.Equal(t, made, int(sp.calls.Load()), "the recorded summary is reused, not made again")
	first := script.Requests()[0].Messages
	assert.Contains(t, first[0].Content, fmt.Sprintf("summary #%d", made))
	full, err := store2.Load(context.Background(), "long")
	require.NoError(t, err)
	assert.Len(t, full, 1+30*2+1+2, "the full history stays on disk")
}

// TestWindowCutsToThreeQuartersThenAppends shows Window's "cut to three
// quarters of the budget, and the following turns only append their
// messages to it until the budget is reached again".
func TestWindowCutsToThreeQuartersThenAppends(t *testing.T) {
	t.Parallel()
	count := func(ms []agentrt.Message) int { return 10 * len(ms) } // 10 tokens a message
	msgs := []agentrt.Message{agentrt.NewUserMessage("the goal")}
	for i := range 40 {
		msgs = append(msgs, agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprint("answer ", i))), agentrt.NewUserMessage(fmt.Sprint("more ", i)))
	}
	const budget = 200
	// The window's own budget: 200, less the first message (10) and the
	// note added to it (16): 174; three quarters of it: 130, 13 messages.
	// A first call finds the window the calls before it had: cut to three
	// quarters, then appended to, so within the budget.
	res, err := agentrt.Window{}.Compress(context.Background(), &agentrt.CompressRequest{Messages: msgs, Budget: budget, Count: count})
	require.NoError(t, err)
	kept := len(res.Messages) - 1
	assert.LessOrEqual(t, 10*kept, 174, "within the budget")
	assert.GreaterOrEqual(t, 10*kept, 110, "and not much below three quarters of it")
	assert.Contains(t, res.Messages[0].Content, "earlier messages of this conversation are not shown")
	assert.Equal(t, agentrt.RoleAssistant, res.Messages[1].Role)

	// The next turns append to the view until the budget is reached again.
	view := res
	for turn := 0; ; turn++ {
		msgs = append(msgs, agentrt.NewAssistantMessage(agentrt.TextBlock("next")), agentrt.NewUserMessage("again"))
		next, err := agentrt.Window{}.Compress(context.Background(), &agentrt.CompressRequest{Messages: msgs, Budget: budget, Count: count, State: view.State})
		require.NoError(t, err)
		if 10*(len(view.Messages)-1+2) > 174 {
			assert.Less(t, len(next.Messages), len(view.Messages)+2, "past the budget, the window is cut again")
			assert.LessOrEqual(t, 10*(len(next.Messages)-1), 130)
			break
		}
		require.Len(t, next.Messages, len(view.Messages)+2, "turn %d appends its two messages", turn)
		assert.Equal(t, view.Messages, next.Messages[:len(view.Messages)], "what an earlier turn saw is unchanged")
		view = next
	}
}

// A new run has no State from the run before: Window finds the cut the
// calls before it made instead of cutting afresh, so its first request
// begins as the last request of the run before, and it cuts only when
// the budget is reached: as often as in one long run.
func TestWindowKeepsItsCutAcrossRuns(t *testing.T) {
	t.Parallel()
	count := func(ms []agentrt.Message) int { return 10 * len(ms) }
	cuts := func(t *testing.T, perRun int) int {
		msgs := []agentrt.Message{agentrt.NewUserMessage("the goal")}
		var prev []agentrt.Message
		var state any
		cuts := 0
		for call := range 120 {
			if call%perRun == 0 {
				state = nil // a new run
			}
			res, err := agentrt.Window{}.Compress(context.Background(), &agentrt.CompressRequest{Messages: msgs, Budget: 200, Count: count, State: state})
			require.NoError(t, err)
			state = res.State
			if prev != nil && !assert.ObjectsAreEqual(prev, res.Messages[:min(len(prev), len(res.Messages))]) {
				cuts++
				// 174 tokens of window (see above): 17 messages after the first.
				assert.Greater(t, len(prev)-1+2, 17, "call %d: cut before the budget was reached", call)
			}
			prev = res.Messages
			msgs = append(msgs, agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprint("answer ", call))), agentrt.NewUserMessage(fmt.Sprint("more ", call)))
		}
		return cuts
	}
	// Two messages a call: a cut every 3 calls, from 13 messages to 19.
	once := cuts(t, 1000)
	assert.InDelta(t, 37, once, 2)
	for _, perRun := range []int{1, 2, 3, 5} {
		assert.Equal(t, once, cuts(t, perRun), "%d calls a run", perRun)
	}
}

// A Window capped by MaxMessages alone cuts to three quarters of the cap
// too, then appends: it rewrites the prefix once every few turns, not on
// every turn (the prompt cache).
func TestWindowMaxMessagesCutsRarely(t *testing.T) {
	t.Parallel()
	count := func(ms []agentrt.Message) int { return len(ms) }
	w := agentrt.Window{MaxMessages: 40}
	msgs := []agentrt.Message{agentrt.NewUserMessage("the goal")}
	var state any
	var prev []agentrt.Message
	cuts := 0
	for i := range 200 {
		msgs = append(msgs, agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprint("answer ", i))), agentrt.NewUserMessage(fmt.Sprint("more ", i)))
		res, err := w.Compress(context.Background(), &agentrt.CompressRequest{Messages: msgs, Count: count, State: state})
		require.NoError(t, err)
		require.LessOrEqual(t, len(res.Messages)-1, 40, "at most MaxMessages after the first")
		if len(prev) > 0 && (len(res.Messages) < len(prev) || !assert.ObjectsAreEqual(prev, res.Messages[:len(prev)])) {
			cuts++
		}
		prev, state = res.Messages, res.State
	}
	// 180 turns past the cap, each cut keeping 30 of 40: one cut every 5 turns.
	assert.LessOrEqual(t, cuts, 40)
	assert.GreaterOrEqual(t, cuts, 30)
}
