package agenttest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// A scripted planner plays its steps in order and records what it was
// asked; the helpers collect the events and check the invariants.
func ExampleScript() {
	add := agentrt.NewTool("add", "Add.", func(_ context.Context, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	}, agentrt.ReadOnly())
	script := agenttest.Script(
		agenttest.Fail(&agentrt.ProviderError{Kind: agentrt.ErrOverloaded}), // retried
		agenttest.CallTool("add", `{"a":2,"b":40}`),
		agenttest.Reply("42"),
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{add}, Planner: script, Store: store,
		Retry: agentrt.RetryPolicy{BaseDelay: 1, MaxDelay: 1}}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "2+40?"))
	done, _ := agenttest.Done(events)
	fmt.Println(done.Reason, done.FinalText, err)
	fmt.Println(len(agenttest.Filter[agentrt.PlannerRetry](events)), "retry,", len(script.Requests()), "planner calls,", script.Remaining(), "steps left")
	msgs, _ := store.Load(context.Background(), "s")
	fmt.Println(agenttest.CheckInvariants(msgs))
	// Output:
	// complete 42 <nil>
	// 1 retry, 3 planner calls, 0 steps left
	// <nil>
}

// A golden test: replay a recorded session offline and diff the new one
// against it.
func ExampleReplay() {
	recorded := []agentrt.Message{
		agentrt.NewUserMessage("Weather in Paris?"),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_1", "weather", []byte(`{"city":"Paris"}`))),
		agentrt.NewToolMessage("call_1", "sunny", false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("It is sunny.")),
	}
	weather := agentrt.NewTool("weather", "Weather.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "rainy", nil // the tool changed since the recording
	}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{weather}, Planner: agenttest.Replay(recorded), Store: store}
	for range ag.Run(context.Background(), "s", recorded[0].Content) {
	}
	got, _ := store.Load(context.Background(), "s")
	fmt.Print(agenttest.Diff(recorded, got))
	// Output:
	// --- recorded
	// +++ replayed
	// @@ -1,4 +1,4 @@
	//  user: Weather in Paris?
	//  assistant: [tool_use call_1 weather {"city":"Paris"}]
	// -tool call_1: sunny
	// +tool call_1: rainy
	//  assistant: It is sunny.
}

// Your own store proves itself with one line in a test.
func ExampleTestStore() {
	_ = func(t *testing.T) {
		agenttest.TestStore(t, func(t *testing.T) agentrt.SessionStore {
			return &agentrt.MemoryStore{} // yours: a Postgres or Redis store
		})
	}
}

// ScriptAfter continues a stored session in a later process: the steps
// its assistant messages stand for are skipped.
func ExampleScriptAfter() {
	ctx := context.Background()
	store := &agentrt.MemoryStore{}
	steps := []agenttest.Step{agenttest.Reply("first answer"), agenttest.Reply("second answer")}

	ag := &agentrt.Agent{Store: store, Planner: agenttest.ScriptAfter(nil, steps...)}
	_, _ = agenttest.Collect(ag.Run(ctx, "s", "one"))

	// Another process: a new planner, from where the session is.
	history, _ := store.Load(ctx, "s")
	ag = &agentrt.Agent{Store: store, Planner: agenttest.ScriptAfter(history, steps...)}
	events, _ := agenttest.Collect(ag.Run(ctx, "s", "two"))
	fmt.Println(agenttest.Filter[agentrt.Done](events)[0].FinalText)
	// Output: second answer
}
