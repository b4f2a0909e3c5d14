package summarize_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/summarize"
)

// A summarize.Compressor replaces the older part of a long session, in what the
// planner sees, by a summary written by a (cheaper) model; the session
// itself keeps every message, and the summary is recorded so that a
// resumed run reuses it.
func ExampleCompressor() {
	cheap := agenttest.Script(agenttest.Reply("The user asked about Lisbon and Porto."))
	planner := agenttest.Script(agenttest.Reply("Lisbon."), agenttest.Reply("Porto."), agenttest.Reply("Both."))
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Planner:    planner,
		Store:      store,
		Compressor: &summarize.Compressor{Planner: cheap, Threshold: 10, Keep: 5},
	}
	for _, q := range []string{"Where should I go first?", "And then?", "Which one do you prefer, after all this?"} {
		for range ag.Run(context.Background(), "trip", q) {
		}
	}
	reqs := planner.Requests()
	last := reqs[len(reqs)-1].Messages
	stored, _ := store.Load(context.Background(), "trip")
	fmt.Println("stored:", len(stored), "sent:", len(last))
	fmt.Println(strings.Contains(last[0].Content, "The user asked about Lisbon and Porto."))
	// Output:
	// stored: 6 sent: 3
	// true
}
