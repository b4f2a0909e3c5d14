// Command quickstart is the smallest complete agentrt program: an agent
// with a weather tool and a calculator tool answers "What is the sum of
// today's temperatures in Beijing and Shanghai?".
//
// It runs offline, with a scripted planner standing in for the model, and
// imports only agentrt and agenttest, so a first build compiles no vendor
// SDK. The same agent on a real model is examples/live.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -q "What is 2+40?"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
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
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	question := flags.String("q", "What is the sum of today's temperatures in Beijing and Shanghai?", "the question")
	if err := flags.Parse(args); err != nil {
		return err
	}
	fmt.Fprint(out, "planner: scripted (offline; no model is called; go run ./examples/live for a real one)\n\n")

	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools: []agentrt.Tool{
			agentrt.NewTool("weather", "Today's weather in a city.", weather, agentrt.ReadOnly()),
			agentrt.NewTool("calculator", "Apply op to a and b.", calculate, agentrt.ReadOnly()),
		},
		Planner: script(),
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
