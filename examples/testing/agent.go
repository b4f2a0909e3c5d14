package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
)

// WeatherIn is the weather tool's input.
type WeatherIn struct {
	City string `json:"city" jsonschema:"description=City name" validate:"required"`
}

// AddIn is the calculator's input.
type AddIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

var temperatures = map[string]float64{"beijing": 12, "shanghai": 17.5}

// NewAgent is the agent under test: the code a user would have in their
// own package. Tests give it a scripted or replayed planner.
func NewAgent(planner agentrt.Planner, store agentrt.SessionStore) *agentrt.Agent {
	weather := agentrt.NewTool("weather", "Today's temperature in a city, in °C.",
		func(_ context.Context, in WeatherIn) (float64, error) {
			t, ok := temperatures[strings.ToLower(in.City)]
			if !ok {
				return 0, fmt.Errorf("no data for %q", in.City)
			}
			return t, nil
		}, agentrt.ReadOnly())
	add := agentrt.NewTool("add", "Add two numbers.",
		func(_ context.Context, in AddIn) (float64, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())
	return &agentrt.Agent{
		Name:         "weather",
		Instructions: "Answer with the tools; never guess a temperature.",
		Tools:        []agentrt.Tool{weather, add},
		Planner:      planner,
		Store:        store,
	}
}
