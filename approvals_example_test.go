package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// A server's approvals: the run stops while a person looks at the call,
// holding nothing; a later request (in this process or another, after a
// restart) resumes it with the person's decision.
func ExampleAgent_Resume() {
	type WriteIn struct {
		Path string `json:"path"`
		Text string `json:"text"`
	}
	write := agentrt.NewTool("write_file", "Write a file.",
		func(ctx context.Context, in WriteIn) (string, error) { return "wrote " + in.Path, nil })
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{write},
		// Read-only tools run; a person decides on every write.
		Permission: agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			if req.Tool.ReadOnly {
				return agentrt.Decision{Allow: true}, nil
			}
			return agentrt.Decision{Pending: true}, nil
		}),
		Store: &agentrt.MemoryStore{}, // or a JSONLStore, shared by processes
		Planner: agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"a.txt","text":"hi"}`),
			agenttest.Reply("done"),
		),
	}
	ctx := context.Background()
	var pending []*agentrt.ToolCall
	for ev, err := range ag.Run(ctx, "s", "write a.txt") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if d, ok := ev.(agentrt.Done); ok {
			fmt.Println("stopped:", d.Reason)
			pending = d.Pending
		}
	}
	for _, p := range pending {
		fmt.Printf("asks: %s %+v\n", p.Tool.Name, p.Input)
	}

	// Later: the person approves, writing to another file instead.
	approval := agentrt.Decision{ToolUseID: pending[0].ToolUseID, Allow: true, Input: json.RawMessage(`{"path":"b.txt","text":"hi"}`)}
	for ev, err := range ag.Resume(ctx, "s", approval) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case agentrt.PermissionDecision:
			fmt.Printf("permission: allow=%v by %s\n", e.Decision.Allow, e.Decision.Source)
		case agentrt.ToolResult:
			fmt.Println("result:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("done:", e.Reason, e.FinalText)
		}
	}
	// Output:
	// stopped: pending
	// asks: write_file {Path:a.txt Text:hi}
	// permission: allow=true by user
	// result: wrote b.txt
	// done: complete done
}
