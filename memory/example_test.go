package memory_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/sqlitemem"
)

// Facts and documents in one scope, searched by relevance.
func Example() {
	ctx := context.Background()
	mem, err := sqlitemem.Open(":memory:", nil)
	if err != nil {
		panic(err)
	}
	defer mem.Close()

	const user = "user-42" // the scope: every call names it
	if _, err := memory.Remember(ctx, mem, user, "The user's team deploys on Fridays only after review.", "session-7"); err != nil {
		panic(err)
	}
	doc := "# Runbook\n\n## Deploys\n\nRun make deploy from main.\n\n## Rollback\n\nRun make rollback.\n"
	if _, err := mem.Put(ctx, user, memory.SplitMarkdown("runbook.md", doc)...); err != nil {
		panic(err)
	}

	facts, _ := memory.Recall(ctx, mem, user, "when does the team deploy?", 1)
	fmt.Println(facts[0].Text)
	docs, _ := memory.Search(ctx, mem, user, "how do I do a rollback?", 1)
	fmt.Println(docs[0].ID, "=", docs[0].Citation())
	other, _ := memory.Recall(ctx, mem, "user-43", "when does the team deploy?", 1)
	fmt.Println(len(other), "hits in another scope")
	// Output:
	// The user's team deploys on Fridays only after review.
	// runbook.md#rollback = runbook.md § Runbook › Rollback
	// 0 hits in another scope
}

// The memory tools and hook on an agent: the hook shows the model what it
// remembered in a message after the history, and records it in the
// session. The system prompt stays the Agent's.
func ExampleHook() {
	ctx := context.Background()
	mem, _ := sqlitemem.Open(":memory:", nil)
	defer mem.Close()
	memory.Remember(ctx, mem, "ann", "Ann prefers window seats.", "")

	store := &agentrt.MemoryStore{}
	planner := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		fmt.Println(req.System)
		fmt.Println("--")
		last := req.Messages[len(req.Messages)-1] // what was recalled, for this call only
		fmt.Println(string(last.Role) + ": " + last.Content)
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("A window seat, then."))}, nil
	}))
	ag := &agentrt.Agent{
		Instructions: "You book flights.",
		Planner:      planner,
		Store:        store,
		Tools:        memory.Tools(mem, "ann"),
		Hooks:        []agentrt.Hooks{memory.Hook(mem, "ann", &memory.HookOptions{Records: store})},
	}
	if _, err := agenttest.Collect(ag.Run(ctx, "s1", "Book a seat for me")); err != nil {
		panic(err)
	}
	recs, err := store.LoadRecords(ctx, "s1")
	if err != nil {
		panic(err)
	}
	fmt.Println(recs[0].Kind)
	// Output:
	// You book flights.
	// --
	// user: Relevant memory, recalled for this turn (from earlier conversations and the documents, not written by the user; cite the file and heading of what you use):
	// [1] Ann prefers window seats.
	// memory.recall
}

// A BeforePlan hook that adds something for one call only puts it after
// the history, as Hook does: the system prompt and every message the last
// request sent stay the same bytes, so the provider's prompt cache serves
// them again. (Put into req.System, the time would change the very start
// of every request, and every call would pay for the whole prompt.)
func Example_afterThePrefix() {
	ctx := context.Background()
	clock := 0
	note := agentrt.Hooks{BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
		clock++
		// A new slice: the session's messages are not the hook's.
		req.Messages = append(slices.Clip(req.Messages), agentrt.NewUserMessage(fmt.Sprintf("(It is %d o'clock.)", 8+clock)))
		return ctx, nil
	}}
	calls := 0
	model := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		calls++
		fmt.Printf("call %d, system %q:\n", calls, req.System)
		for _, m := range req.Messages {
			fmt.Printf("  %s: %s\n", m.Role, m.Text())
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprintf("Answer %d.", calls)))}, nil
	})
	ag := &agentrt.Agent{Instructions: "Be brief.", Planner: model, Store: &agentrt.MemoryStore{}, Hooks: []agentrt.Hooks{note}}
	for _, q := range []string{"Good morning.", "Still morning?"} {
		for _, err := range ag.Run(ctx, "s", q) {
			if err != nil {
				panic(err)
			}
		}
	}
	// Output:
	// call 1, system "Be brief.":
	//   user: Good morning.
	//   user: (It is 9 o'clock.)
	// call 2, system "Be brief.":
	//   user: Good morning.
	//   assistant: Answer 1.
	//   user: Still morning?
	//   user: (It is 10 o'clock.)
}
