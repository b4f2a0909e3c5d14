package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/terminal"
)

func ExampleNewTool() {
	type AddIn struct {
		A int `json:"a" jsonschema:"description=first addend" validate:"required"`
		B int `json:"b" validate:"required"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())

	fmt.Println(string(add.Spec().InputSchema))

	// What the model sees when its input is wrong:
	_, err := add.Decode(json.RawMessage(`{"a":"two","b":40}`))
	fmt.Println(err)
	_, err = add.Decode(json.RawMessage(`{"a":2}`))
	fmt.Println(err)

	// Numbers sent as strings are coerced.
	in, _ := add.Decode(json.RawMessage(`{"a":"2","b":40}`))
	out, _ := add.Execute(context.Background(), in)
	fmt.Println(out)
	// Output:
	// {"properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["a","b"]}
	// invalid input: field "a" must be an integer, got string
	// invalid input: field "b" is required
	// 42
}

func ExampleAgent_Run() {
	type AddIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())

	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant.",
		Tools:        []agentrt.Tool{add},
		// A scripted planner stands in for the model; a real program uses
		// openai.New(...).
		Planner: agenttest.Script(
			agenttest.CallTool("add", `{"a":2,"b":40}`),
			agenttest.Reply("2+40 is 42."),
		),
	}
	for ev, err := range ag.Run(context.Background(), "session-1", "What is 2+40?") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Println("call:", e.Tool.Name, string(e.RawInput))
		case agentrt.ToolResult:
			fmt.Println("result:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("done:", e.Reason, e.FinalText)
		}
	}
	// Output:
	// call: add {"a":2,"b":40}
	// result: 42
	// done: complete 2+40 is 42.
}

func ExampleAskOnWrite() {
	type WriteIn struct {
		Path string `json:"path"`
		Text string `json:"text"`
	}
	write := agentrt.NewTool("write_file", "Write a file.",
		func(ctx context.Context, in WriteIn) (string, error) { return "wrote " + in.Path, nil })

	// A terminal asker reads y / n / always; here the "user" types n, then always.
	var screen strings.Builder
	ask := terminal.Asker(strings.NewReader("n\nalways\n"), &screen)

	ag := &agentrt.Agent{
		Tools:      []agentrt.Tool{write},
		Permission: agentrt.AskOnWrite(ask),
		Planner: agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"a.txt","text":"hi"}`),
			agenttest.CallTool("write_file", `{"path":"b.txt","text":"hi"}`),
			agenttest.CallTool("write_file", `{"path":"c.txt","text":"hi"}`),
			agenttest.Reply("done"),
		),
	}
	for ev, err := range ag.Run(context.Background(), "s", "write three files") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case agentrt.PermissionDecision:
			fmt.Printf("permission: allow=%v by %s\n", e.Decision.Allow, e.Decision.Source)
		case agentrt.ToolResult:
			fmt.Printf("result: %s (error=%v)\n", e.Message.Content, e.Message.IsError)
		}
	}
	fmt.Println("questions asked:", strings.Count(screen.String(), "Allow?"))
	// Output:
	// permission: allow=false by user
	// result: permission denied: the user refused this call of "write_file" (error=true)
	// permission: allow=true by user
	// result: wrote b.txt (error=false)
	// permission: allow=true by remembered
	// result: wrote c.txt (error=false)
	// questions asked: 2
}
