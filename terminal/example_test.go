package terminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/terminal"
)

// A program asks its user before every write; here the "user" types n,
// then a (always): the third call runs without a question.
func ExampleAsker() {
	type writeIn struct {
		Path string `json:"path"`
	}
	write := agentrt.NewTool("write_file", "Writes a file.", func(_ context.Context, in writeIn) (string, error) {
		return "wrote " + in.Path, nil
	})
	var screen strings.Builder // os.Stdout in a real program
	ag := &agentrt.Agent{
		Tools:      []agentrt.Tool{write},
		Permission: agentrt.AskOnWrite(terminal.Asker(strings.NewReader("n\na\n"), &screen)), // os.Stdin
		Planner: agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"a.txt"}`),
			agenttest.CallTool("write_file", `{"path":"b.txt"}`),
			agenttest.CallTool("write_file", `{"path":"c.txt"}`),
			agenttest.Reply("done"),
		),
	}
	for ev, err := range ag.Run(context.Background(), "s", "write three files") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if r, ok := ev.(agentrt.ToolResult); ok {
			fmt.Println(r.Message.Content)
		}
	}
	fmt.Println("questions:", strings.Count(screen.String(), "Allow?"))
	// Output:
	// permission denied: the user refused this call of "write_file"
	// wrote b.txt
	// wrote c.txt
	// questions: 2
}

// The model writes a tool call's input, so the person sees it escaped,
// never interpreted by the terminal: here an escape sequence and a
// carriage return that would erase the line, and a right-to-left override
// that would show "notes.txt\u202etxt.exe" as "notes.txtexe.txt".
func ExampleAsker_escaped() {
	var screen strings.Builder // os.Stdout in a real program
	ask := terminal.Asker(strings.NewReader("n\n"), &screen)
	_, _ = ask(context.Background(), &agentrt.ToolCall{
		Tool:     agentrt.ToolSpec{Name: "write_file"},
		RawInput: json.RawMessage("{\"path\": \"\x1b[2K\rnotes.txt\u202etxt.exe\"}"),
	})
	fmt.Println(screen.String())
	// Output:
	// The agent wants to run the write tool "write_file" with input:
	//   {"path": "\x1b[2K\rnotes.txt\u202etxt.exe"}
	// Allow? [y]es / [n]o / [a]lways for this tool:
}
