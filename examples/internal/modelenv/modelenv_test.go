package modelenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/agenttest"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_HOST", "AGENTRT_PROVIDER", "AGENTRT_MODEL"} {
		t.Setenv(k, "")
	}
}

func TestPlanner(t *testing.T) {
	clearEnv(t)
	script := agenttest.Script()
	p, label, err := Planner(script, "", "")
	require.NoError(t, err)
	assert.Same(t, script, p, "offline without keys")
	assert.Equal(t, ScriptedLabel, label)

	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	_, label, err = Planner(script, "", "")
	require.NoError(t, err)
	assert.Equal(t, "anthropic, model claude-haiku-4-5", label)

	t.Setenv("OLLAMA_HOST", "127.0.0.1:11434")
	_, label, err = Planner(script, "ollama", "qwen3")
	require.NoError(t, err)
	assert.Equal(t, "ollama, model qwen3", label)

	t.Setenv("AGENTRT_PROVIDER", "scripted")
	p, _, err = Planner(script, "", "")
	require.NoError(t, err)
	assert.Same(t, script, p)

	_, _, err = Planner(script, "nope", "")
	assert.ErrorContains(t, err, `unknown provider "nope"`)
}
