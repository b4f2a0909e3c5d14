package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveOfflineFallback(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_HOST", "AGENTRT_PROVIDER"} {
		t.Setenv(k, "")
	}
	var out strings.Builder
	require.NoError(t, run(context.Background(), nil, &out))
	s := out.String()
	assert.Contains(t, s, "planner: scripted (offline")
	assert.Contains(t, s, `-> weather {"city":"Beijing"}`)
	assert.Contains(t, s, `<- {"city":"Shanghai","temp_celsius":17.5,"sky":"cloudy"}`)
	assert.Contains(t, s, "<- 29.5\n")
	assert.Contains(t, s, "assistant: Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.\n")
	assert.Contains(t, s, "[complete after 3 turns")
}
