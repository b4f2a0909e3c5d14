package temporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/temporal"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type noteIn struct {
	Text string `json:"text"`
}

// An agent registered on a worker runs as a workflow. Here the worker is
// Temporal's test environment; in production it is a worker.Worker and
// the run is started with a [temporal.Runtime].
func ExampleRegister() {
	ag := &agentrt.Agent{
		Instructions: "You add numbers.",
		Tools: []agentrt.Tool{
			agentrt.NewTool("add", "Add two integers.", func(_ context.Context, in addIn) (int, error) {
				return in.A + in.B, nil
			}, agentrt.ReadOnly()),
		},
		Planner: agenttest.Script(
			agenttest.CallTool("add", `{"a":2,"b":40}`),
			agenttest.Reply("2+40 is 42."),
		),
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if err := temporal.Register(env, ag, temporal.Options{}); err != nil {
		panic(err)
	}
	env.ExecuteWorkflow(temporal.WorkflowName(ag.Name), temporal.RunInput{SessionID: "s1", Input: "What is 2+40?"})

	var res temporal.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		panic(err)
	}
	for _, m := range res.Messages {
		fmt.Println(m)
	}
	fmt.Println(res.Reason, res.Turns)
	// Output:
	// user: What is 2+40?
	// assistant: [tool_use call_1 add {"a":2,"b":40}]
	// tool call_1: 42
	// assistant: 2+40 is 42.
	// complete 2
}

// A write tool waits for an approval signal; the query lists it meanwhile.
func ExampleApprove() {
	var saved []string
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{
			agentrt.NewTool("save_note", "Save a note.", func(_ context.Context, in noteIn) (string, error) {
				saved = append(saved, in.Text)
				return "saved", nil
			}),
		},
		Planner: agenttest.Script(
			agenttest.CallTool("save_note", `{"text":"buy milk"}`),
			agenttest.Reply("Saved."),
		),
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if err := temporal.Register(env, ag, temporal.Options{Policy: temporal.PolicyAsk}); err != nil {
		panic(err)
	}
	// A day later, someone looks at the pending calls and approves.
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(temporal.QueryState)
		var st temporal.State
		_ = v.Get(&st)
		for _, p := range st.Pending {
			fmt.Printf("pending: %s %s %s\n", p.ToolUseID, p.Tool, p.Input)
			env.SignalWorkflow(temporal.SignalApprove, agentrt.Decision{ToolUseID: p.ToolUseID, Allow: true, Source: "alice"})
		}
	}, 24*time.Hour)
	env.ExecuteWorkflow(temporal.WorkflowName(""), temporal.RunInput{SessionID: "s1", Input: "Note: buy milk"})

	var res temporal.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		panic(err)
	}
	fmt.Println(saved, res.FinalText)
	// Output:
	// pending: call_1 save_note {"text":"buy milk"}
	// [buy milk] Saved.
}
