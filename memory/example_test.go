package memory_test

import (
	"context"
	"fmt"

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
