package main

import (
	"context"

	"github.com/agentrt/agentrt"
)

// choosePlanner picks the planner: a real provider when asked for or when
// its key is in the environment, the scripted one otherwise.
func choosePlanner(_ context.Context, provider, _ string) (agentrt.Planner, string, error) {
	switch provider {
	case "", "scripted":
		return script(), "scripted (offline; no model is called; set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OLLAMA_HOST to use a real one)", nil
	}
	return nil, "", errUnknownProvider(provider)
}

type errUnknownProvider string

func (e errUnknownProvider) Error() string { return "unknown provider " + string(e) }
