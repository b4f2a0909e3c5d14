// Package modelenv picks the planner of an example program: a real model
// when one is asked for or its key is in the environment, the example's
// scripted planner otherwise (offline, the default).
package modelenv

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/anthropic"
	"github.com/agentrt/agentrt/provider/gemini"
	"github.com/agentrt/agentrt/provider/openai"
)

// ScriptedLabel describes the offline planner.
const ScriptedLabel = "scripted (offline; no model is called; set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OLLAMA_HOST to use a real one)"

// Planner returns the planner to use and a label saying which it is. The
// provider is the flag's value, else AGENTRT_PROVIDER, else the first of
// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY and OLLAMA_HOST that is
// set, else "scripted". The model is the flag's value, else AGENTRT_MODEL,
// else the provider's usual small model.
func Planner(scripted agentrt.Planner, provider, model string) (agentrt.Planner, string, error) {
	provider = cmp.Or(provider, os.Getenv("AGENTRT_PROVIDER"))
	model = cmp.Or(model, os.Getenv("AGENTRT_MODEL"))
	if provider == "" {
		switch {
		case os.Getenv("OPENAI_API_KEY") != "":
			provider = "openai"
		case os.Getenv("ANTHROPIC_API_KEY") != "":
			provider = "anthropic"
		case os.Getenv("GEMINI_API_KEY") != "":
			provider = "gemini"
		case os.Getenv("OLLAMA_HOST") != "":
			provider = "ollama"
		default:
			provider = "scripted"
		}
	}
	var p agentrt.Planner
	switch provider {
	case "scripted":
		return scripted, ScriptedLabel, nil
	case "openai":
		model = cmp.Or(model, "gpt-4.1-mini")
		// The SDK reads OPENAI_API_KEY (and OPENAI_BASE_URL); the Agent retries, so the client does not.
		p = openai.New(oai.NewClient(option.WithMaxRetries(0)), model, nil)
	case "anthropic":
		model = cmp.Or(model, "claude-haiku-4-5")
		p = anthropic.NewFromAPIKey(os.Getenv("ANTHROPIC_API_KEY"), model, nil)
	case "gemini":
		model = cmp.Or(model, "gemini-2.5-flash")
		g, err := gemini.NewFromAPIKey(os.Getenv("GEMINI_API_KEY"), model, nil)
		if err != nil {
			return nil, "", err
		}
		p = g
	case "ollama":
		host := cmp.Or(os.Getenv("OLLAMA_HOST"), "http://localhost:11434")
		if !strings.HasPrefix(host, "http") {
			host = "http://" + host
		}
		model = cmp.Or(model, "llama3.2")
		p = openai.NewCompatible(strings.TrimSuffix(host, "/")+"/v1", "ollama", model, nil)
	default:
		return nil, "", fmt.Errorf("unknown provider %q (want openai, anthropic, gemini, ollama or scripted)", provider)
	}
	return p, fmt.Sprintf("%s, model %s", provider, model), nil
}
