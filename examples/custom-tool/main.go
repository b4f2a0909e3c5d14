// Command custom-tool shows a typed tool with validation tags, and what the
// model sees when its input is wrong: the error names the JSON field and
// the rule, so the model can fix its call. It runs offline with a scripted
// planner that makes the mistakes a real model makes.
//
//	go run ./examples/custom-tool
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/examples/internal/modelenv"
)

// BookIn is the input of the book_table tool. The JSON Schema the model
// sees is reflected from it: json names, descriptions and enums from the
// jsonschema tags, required fields from validate:"required" and omitempty.
type BookIn struct {
	Restaurant string `json:"restaurant" jsonschema:"description=Name of the restaurant" validate:"required,min=2"`
	People     int    `json:"people" jsonschema:"description=Number of guests" validate:"required,gte=1,lte=12"`
	Time       string `json:"time" jsonschema:"description=24h time such as 19:30" validate:"required,len=5"`
	Seating    string `json:"seating,omitempty" jsonschema:"enum=inside,enum=terrace" validate:"omitempty,oneof=inside terrace"`
	Email      string `json:"email" validate:"required,email"`
}

func book(_ context.Context, in BookIn) (string, error) {
	if strings.EqualFold(in.Restaurant, "closed diner") {
		return "", fmt.Errorf("%s is closed today", in.Restaurant)
	}
	return fmt.Sprintf("Booked %s for %d at %s (%s). Confirmation sent to %s.", in.Restaurant, in.People, in.Time, or(in.Seating, "any seat"), in.Email), nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func main() {
	provider := flag.String("provider", "", "openai, anthropic, gemini, ollama or scripted (default: the first API key found, else scripted)")
	model := flag.String("model", "", "model name")
	flag.Parse()
	planner, label, err := modelenv.Planner(script(), *provider, *model)
	if err == nil {
		fmt.Println("planner:", label)
		err = run(context.Background(), os.Stdout, planner)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "custom-tool:", err)
		os.Exit(1)
	}
}

// script plays the mistakes a model makes, then a fix.
func script() *agenttest.Planner {
	return agenttest.Script(
		agenttest.CallTool("book_table", `{"restaurant":"Chez Go","people":"four","time":"7pm","email":"ann"}`),
		agenttest.CallTool("book_table", `{"restaurant":"Chez Go","people":"4","time":"19:30","seating":"roof","email":"ann@example.com"}`),
		agenttest.CallTool("book_table", `{"restaurant":"Chez Go","people":4,"time":"19:30","seating":"terrace","email":"ann@example.com","vip":true}`),
		agenttest.CallTool("book_table", `{"restaurant":"Chez Go","people":4,"time":"19:30","seating":"terrace","email":"ann@example.com"}`),
		agenttest.Reply("Your table at Chez Go is booked for 19:30."),
	)
}

func run(ctx context.Context, w io.Writer, planner agentrt.Planner) error {
	tool := agentrt.NewTool("book_table", "Book a table at a restaurant.", book)
	fmt.Fprintf(w, "The schema the model sees:\n%s\n\n", tool.Spec().InputSchema)

	ag := &agentrt.Agent{
		Instructions: "You book tables.",
		Tools:        []agentrt.Tool{tool},
		Permission:   agentrt.AllowAll(), // book_table is a write tool; this demo allows it
		Planner:      planner,
	}
	for ev, err := range ag.Run(ctx, "booking", "Book Chez Go for four at 7:30pm on the terrace, ann@example.com") {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Fprintf(w, "model calls: %s\n", e.RawInput)
		case agentrt.ToolResult:
			label := "result"
			if e.Message.IsError {
				label = "error the model sees"
			}
			fmt.Fprintf(w, "  %s: %s\n", label, e.Message.Content)
		case agentrt.Done:
			fmt.Fprintf(w, "answer: %s\n", e.FinalText)
		}
	}
	return nil
}
