package eval_test

import (
	"context"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/agenttest/eval"
)

// A dataset of two cases, each run three times on a scripted planner that
// answers wrongly once.
func ExampleRunner() {
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	cases := []eval.Case{
		{Name: "sum", Input: "What is 2+40?", Expect: []eval.Check{
			eval.Contains("42"),
			eval.Tools(eval.Exact, eval.ToolInput("add", `{"A":2,"B":40}`)),
			eval.MaxTurns(2),
		}},
		{Name: "greeting", Input: "Hi!", Expect: []eval.Check{
			eval.Tools(eval.Exact), // no tool call
			eval.Stop(agentrt.StopComplete, agentrt.LayerNone),
		}},
	}
	rn := &eval.Runner{K: 3, Parallel: 2, Agent: func(c *eval.Case, trial int) *agentrt.Agent {
		script := agenttest.Script(agenttest.CallTool("add", `{"A":2,"B":40}`), agenttest.Reply("42"))
		if c.Name == "greeting" {
			script = agenttest.Script(agenttest.Reply("Hello!"))
		} else if trial == 1 {
			script = agenttest.Script(agenttest.Reply("41")) // a bad day
		}
		return &agentrt.Agent{Tools: []agentrt.Tool{add}, Planner: script}
	}}
	rep := rn.Run(context.Background(), cases)
	for _, c := range rep.Cases {
		fmt.Printf("%s: %d/%d, pass@3 %v\n", c.Name, c.Passes, len(c.Trials), c.PassAtK)
	}
	// Output:
	// sum: 2/3, pass@3 true
	// greeting: 3/3, pass@3 true
}

// Comparing two reports, as kept with Report.WriteFile.
func ExampleCompare() {
	before := &eval.Report{Cases: []eval.CaseReport{{Name: "sum", PassRate: 0.5, Tokens: 300}}}
	after := &eval.Report{Cases: []eval.CaseReport{{Name: "sum", PassRate: 1, Tokens: 250}}}
	for _, d := range eval.Compare(before, after).Cases {
		fmt.Printf("%s: %s, %+.0f tokens\n", d.Name, d.Change, d.Tokens)
	}
	// Output:
	// sum: better, -50 tokens
}
