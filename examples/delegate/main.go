// Command delegate shows a coordinator agent delegating to a specialist:
// the specialist is an Agent of its own (instructions, tools, session),
// wrapped as a tool with agentrt.AgentTool. The child's events reach the
// caller of the coordinator's Run, tagged with its name, and its session
// is stored and linked to the parent's.
//
// It runs offline by default: both agents use scripted planners (no model
// is called). With a provider key or OLLAMA_HOST set, both use that model.
//
//	go run ./examples/delegate
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentslog"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/examples/internal/modelenv"
)

// ConvertIn is the unit converter's input.
type ConvertIn struct {
	Celsius float64 `json:"celsius" jsonschema:"description=Temperature in degrees Celsius"`
}

func main() {
	provider := flag.String("provider", "", "openai, anthropic, gemini, ollama or scripted (default: the first API key found, else scripted)")
	model := flag.String("model", "", "model name")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *provider, *model); err != nil {
		fmt.Fprintln(os.Stderr, "delegate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, provider, model string) error {
	unitsPlanner, label, err := modelenv.Planner(agenttest.Script( // scripted: no model is called
		agenttest.CallTool("to_fahrenheit", `{"celsius":29.5}`),
		agenttest.Reply("29.5°C is 85.1°F."),
	), provider, model)
	if err != nil {
		return err
	}
	coordPlanner, _, err := modelenv.Planner(agenttest.Script( // scripted: no model is called
		agenttest.CallTool("units", `{"task":"Convert 29.5 degrees Celsius to Fahrenheit."}`),
		agenttest.Reply("The sum of today's temperatures, 29.5°C, is 85.1°F."),
	), provider, model)
	if err != nil {
		return err
	}
	store := &agentrt.MemoryStore{}

	// The specialist knows how to convert units.
	convert := agentrt.NewTool("to_fahrenheit", "Convert Celsius to Fahrenheit.",
		func(_ context.Context, in ConvertIn) (float64, error) { return in.Celsius*9/5 + 32, nil },
		agentrt.ReadOnly())
	units := &agentrt.Agent{
		Name:         "units",
		Instructions: "You convert units precisely. Use your tools.",
		Tools:        []agentrt.Tool{convert},
		Store:        store,
		Planner:      unitsPlanner,
	}

	// The coordinator delegates to it through a tool.
	coordinator := &agentrt.Agent{
		Name:         "coordinator",
		Instructions: "You answer questions, delegating unit conversions to the units agent.",
		Tools:        []agentrt.Tool{agentrt.AgentTool(units, "units", "Ask the units specialist to convert a quantity.")},
		Store:        store,
		Hooks:        []agentrt.Hooks{agentslog.Hooks(slog.New(slog.NewTextHandler(io.Discard, nil)))},
		Planner:      coordPlanner,
	}

	fmt.Fprintln(w, "planner:", label)
	for ev, err := range coordinator.Run(ctx, "trip", "What is 29.5°C in Fahrenheit?") {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Fprintf(w, "coordinator -> %s %s\n", e.Tool.Name, e.RawInput)
		case agentrt.SubAgentEvent:
			switch ce := e.Event.(type) {
			case agentrt.ToolCall:
				fmt.Fprintf(w, "  [%s] -> %s %s\n", e.Agent, ce.Tool.Name, ce.RawInput)
			case agentrt.ToolResult:
				fmt.Fprintf(w, "  [%s] <- %s\n", e.Agent, ce.Message.Content)
			case agentrt.Done:
				fmt.Fprintf(w, "  [%s] done: %s (session %s)\n", e.Agent, ce.FinalText, e.SessionID)
			}
		case agentrt.ToolResult:
			fmt.Fprintf(w, "coordinator <- %s\n", e.Message.Content)
		case agentrt.Done:
			fmt.Fprintf(w, "answer: %s\n", e.FinalText)
		}
	}
	sessions, err := store.List(ctx)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		fmt.Fprintf(w, "stored session %s: %d messages\n", s.ID, s.Messages)
	}
	return nil
}
