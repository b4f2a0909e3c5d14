package mcptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An agent uses the tools of an MCP server. The server here runs in
// process so that the example is self-contained; a real program dials a
// command, such as
//
//	mcptool.Stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", dir)
//
// or a URL with mcptool.StreamableHTTP. The scripted planner stands in for
// a model.
func Example() {
	ctx := context.Background()

	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())
	srv := mcptool.NewServer([]agentrt.Tool{add}, nil)
	dial := func() mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, server, nil); err != nil {
			log.Fatal(err)
		}
		return client
	}

	c, err := mcptool.Connect(ctx, dial, &mcptool.Options{Prefix: "calc_"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Printf("tool %s (read-only: %v)\n", t.Spec().Name, t.Spec().ReadOnly)
	}

	ag := &agentrt.Agent{
		Tools: tools,
		Planner: agenttest.Script(
			agenttest.CallTool("calc_add", `{"a":2,"b":40}`),
			agenttest.Reply("2+40 is 42."),
		),
	}
	for ev, err := range ag.Run(ctx, "s1", "What is 2+40?") {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case agentrt.ToolResult:
			fmt.Println("result:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("answer:", e.FinalText)
		}
	}
	// Output:
	// tool calc_add (read-only: true)
	// result: 42
	// answer: 2+40 is 42.
}

// NewServer serves agentrt tools to any MCP client; here the go-sdk's
// client, in process. Write tools are refused unless the server's
// Permission allows them.
func ExampleNewServer() {
	ctx := context.Background()

	type noteIn struct {
		Text string `json:"text"`
	}
	var notes []string
	tools := []agentrt.Tool{
		agentrt.NewTool("count_notes", "Count the notes.",
			func(context.Context, struct{}) (int, error) { return len(notes), nil },
			agentrt.ReadOnly()),
		agentrt.NewTool("add_note", "Add a note.",
			func(_ context.Context, in noteIn) (string, error) {
				notes = append(notes, in.Text)
				return "added", nil
			}),
	}
	srv := mcptool.NewServer(tools, nil) // nil: agentrt.AllowReadOnly()

	client, server := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range list.Tools {
		fmt.Printf("%s readOnlyHint=%v\n", t.Name, t.Annotations.ReadOnlyHint)
	}
	for _, call := range []struct{ name, args string }{
		{"add_note", `{"text":"hi"}`},
		{"count_notes", `{}`},
		{"count_notes", `{"text":"hi"}`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: json.RawMessage(call.args)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: isError=%v %s\n", call.name, res.IsError, mcptool.ResultText(res))
	}
	// Output:
	// add_note readOnlyHint=false
	// count_notes readOnlyHint=true
	// add_note: isError=true permission denied: "add_note" is a write tool, and this MCP server lets its clients run read-only tools only
	// count_notes: isError=false 0
	// count_notes: isError=true invalid input for "count_notes": invalid input: unknown field "text" (valid fields: none)
}
