package agentslog_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentslog"
	"github.com/agentrt/agentrt/agenttest"
)

// Hooks logs one record per planner call, tool call and run; message
// content only at Debug. Here the time and durations are left out so that
// the output is the same on every run.
func ExampleHooks() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())
	ag := &agentrt.Agent{
		Tools:   []agentrt.Tool{add},
		Planner: agenttest.Script(agenttest.CallTool("add", `{"A":2,"B":40}`), agenttest.Reply("42")),
		Hooks:   []agentrt.Hooks{agentslog.Hooks(logger)},
	}
	if _, err := agenttest.Collect(ag.Run(context.Background(), "s1", "2+40?")); err != nil {
		panic(err)
	}
	// Output:
	// level=INFO msg="agentrt: planner call" session=s1 turn=1 messages=1 input_tokens=0 output_tokens=0 finish=tool_use tool_calls=1
	// level=INFO msg="agentrt: tool call" session=s1 turn=1 tool=add tool_use_id=call_1 is_error=false
	// level=INFO msg="agentrt: planner call" session=s1 turn=2 messages=3 input_tokens=0 output_tokens=0 finish=stop tool_calls=0
	// level=INFO msg="agentrt: run" session=s1 reason=complete turns=2 input_tokens=0 output_tokens=0
}
