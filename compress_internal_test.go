package agentrt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The default token count (Agent.TokenCounter nil) is about four bytes of
// text a token, rounded up, plus four for each message and each block.
func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	assert.Zero(t, estimateTokens(nil))
	assert.Equal(t, 4+1, estimateTokens([]Message{NewUserMessage("hi")}))
	assert.Equal(t, 4+25, estimateTokens([]Message{NewUserMessage(strings.Repeat("x", 100))}))
	use := NewAssistantMessage(TextBlock("abcd"), ToolUseBlock("c1", "add", json.RawMessage(`{"a":1}`)))
	// The message, its text block (4 bytes) and its tool_use block (name
	// and input: 3+7 bytes).
	assert.Equal(t, 4+(4+1)+(4+3), estimateTokens([]Message{use}))
}
