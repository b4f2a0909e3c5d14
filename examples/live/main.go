// Command live is the quickstart's agent (a weather tool and a calculator
// tool answer "What is the sum of today's temperatures in Beijing and
// Shanghai?") on a real model: with OPENAI_API_KEY, ANTHROPIC_API_KEY,
// GEMINI_API_KEY or OLLAMA_HOST set (or -provider), it asks that model.
// With none set, it falls back to the quickstart's scripted planner.
// -provider openai-responses (or AGENTRT_PROVIDER=openai-responses) uses
// OpenAI's Responses API, with reasoning summaries shown.
//
// It imports the three provider adapters, so its first build compiles their
// vendor SDKs; examples/quickstart does not.
//
//	OPENAI_API_KEY=... go run ./examples/live
//	go run ./examples/live -provider anthropic -model claude-sonnet-4-5
//	AGENTRT_PROVIDER=openai-responses OPENAI_API_KEY=... go run ./examples/live
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/examples/internal/modelenv"
	"github.com/agentrt/agentrt/provider/openai"
)

// WeatherIn is the weather tool's input. The JSON Schema the model sees is
// reflected from it; validate tags are checked before the tool runs.
type WeatherIn struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Beijing" validate:"required"`
}

// Weather is the weather tool's output, sent to the model as JSON.
type Weather struct {
	City        string  `json:"city"`
	TempCelsius float64 `json:"temp_celsius"`
	Sky         string  `json:"sky"`
}

// CalcIn is the calculator's input.
type CalcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div" validate:"oneof=add sub mul div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

var today = map[string]Weather{
	"beijing":  {City: "Beijing", TempCelsius: 12, Sky: "clear"},
	"shanghai": {City: "Shanghai", TempCelsius: 17.5, Sky: "cloudy"},
}

func weather(_ context.Context, in WeatherIn) (Weather, error) {
	w, ok := today[strings.ToLower(in.City)]
	if !ok {
		return Weather{}, fmt.Errorf("no weather data for %q (try Beijing or Shanghai)", in.City)
	}
	return w, nil
}

func calculate(_ context.Context, in CalcIn) (float64, error) {
	switch in.Op {
	case "add":
		return in.A + in.B, nil
	case "sub":
		return in.A - in.B, nil
	case "mul":
		return in.A * in.B, nil
	}
	if in.B == 0 {
		return 0, fmt.Errorf("division by zero")
	}
	return in.A / in.B, nil
}

// script is what a model would do with this task, played offline.
func script() *agenttest.Planner {
	return agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("weather", `{"city":"Beijing"}`),
			agenttest.ToolUse("weather", `{"city":"Shanghai"}`),
		),
		agenttest.CallTool("calculator", `{"op":"add","a":12,"b":17.5}`),
		agenttest.StreamReply("Today it is 12°C in Beijing and 17.5°C in Shanghai; ", "the sum is 29.5°C."),
	)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(1)
	}
}

// pickPlanner is modelenv.Planner with one more provider,
// "openai-responses": OpenAI's Responses API, where a reasoning model keeps
// its reasoning between turns, asked for reasoning summaries.
func pickPlanner(provider, model string) (agentrt.Planner, string, error) {
	if cmp.Or(provider, os.Getenv("AGENTRT_PROVIDER")) != "openai-responses" {
		return modelenv.Planner(script(), provider, model)
	}
	model = cmp.Or(model, os.Getenv("AGENTRT_MODEL"), "gpt-5-mini")
	// The SDK reads OPENAI_API_KEY (and OPENAI_BASE_URL); the Agent retries, so the client does not.
	client := oai.NewClient(option.WithMaxRetries(0))
	p := openai.NewResponses(client, model, &openai.ResponsesOptions{ReasoningSummary: "auto"})
	return p, "openai-responses, model " + model, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("live", flag.ContinueOnError)
	provider := flags.String("provider", "", "openai, openai-responses, anthropic, gemini, ollama or scripted (default: the first API key found, else scripted)")
	model := flags.String("model", "", "model name (default: the provider's usual small model)")
	question := flags.String("q", "What is the sum of today's temperatures in Beijing and Shanghai?", "the question")
	if err := flags.Parse(args); err != nil {
		return err
	}
	planner, label, err := pickPlanner(*provider, *model)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "planner: %s\n\n", label)

	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools: []agentrt.Tool{
			agentrt.NewTool("weather", "Today's weather in a city.", weather, agentrt.ReadOnly()),
			agentrt.NewTool("calculator", "Apply op to a and b.", calculate, agentrt.ReadOnly()),
		},
		Planner: planner,
	}
	fmt.Fprintln(out, "user:", *question)
	streamed := false
	for ev, err := range ag.Run(ctx, "quickstart", *question) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.TextDelta:
			if !streamed {
				fmt.Fprint(out, "assistant: ")
				streamed = true
			}
			fmt.Fprint(out, e.Text)
		case agentrt.ToolCall:
			fmt.Fprintf(out, "  -> %s %s\n", e.Tool.Name, e.RawInput)
		case agentrt.ToolResult:
			fmt.Fprintf(out, "  <- %s\n", e.Message.Content)
		case agentrt.AssistantMessage:
			for _, b := range e.Message.Blocks {
				if b.Type == agentrt.BlockThinking && b.Text != "" {
					fmt.Fprintf(out, "  (thinking: %s)\n", strings.ReplaceAll(b.Text, "\n", " "))
				}
			}
			if streamed {
				fmt.Fprintln(out)
				streamed = false
			} else if text := e.Message.Text(); text != "" {
				fmt.Fprintln(out, "assistant:", text)
			}
		case agentrt.Done:
			fmt.Fprintf(out, "\n[%s after %d turns, %d tokens]\n", e.Reason, e.Turns, e.Usage.Total())
		}
	}
	return nil
}
