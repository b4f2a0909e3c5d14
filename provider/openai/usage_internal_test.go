package openai

import (
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputTokens covers how servers count reasoning tokens: within
// completion_tokens (OpenAI), apart from them (xAI: total_tokens adds
// them), not at all but within total_tokens (Gemini's OpenAI-compatible
// endpoint), and servers that send no total or an inconsistent one.
func TestOutputTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		usage          string
		out, reasoning int
	}{
		{"openai", `{"prompt_tokens":7,"completion_tokens":87,"total_tokens":94,"completion_tokens_details":{"reasoning_tokens":64}}`, 87, 64},
		{"xai apart", `{"prompt_tokens":335,"completion_tokens":14,"total_tokens":374,"completion_tokens_details":{"reasoning_tokens":25}}`, 39, 25},
		{"gemini unreported", `{"prompt_tokens":35,"completion_tokens":12,"total_tokens":126}`, 91, 79},
		{"no reasoning", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`, 5, 0},
		{"no total", `{"prompt_tokens":10,"completion_tokens":5}`, 5, 0},
		{"total too small", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":12}`, 5, 0},
		{"reasoning, total off", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":40,"completion_tokens_details":{"reasoning_tokens":3}}`, 5, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var u oai.CompletionUsage
			require.NoError(t, json.Unmarshal([]byte(tt.usage), &u))
			out, reasoning := outputTokens(u)
			assert.Equal(t, tt.out, out, "OutputTokens")
			assert.Equal(t, tt.reasoning, reasoning, "ReasoningTokens")
		})
	}
}
