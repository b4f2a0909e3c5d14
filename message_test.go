package agentrt_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrt/agentrt"
)

// TestHasToolUseDoesNotAllocate shows Message.HasToolUse's "Unlike
// ToolUses it does not allocate".
func TestHasToolUseDoesNotAllocate(t *testing.T) {
	msg := agentrt.NewAssistantMessage(agentrt.TextBlock("let me see"), agentrt.ToolUseBlock("c1", "add", json.RawMessage(`{}`)))
	var has bool
	allocs := testing.AllocsPerRun(100, func() { has = msg.HasToolUse() })
	assert.True(t, has)
	assert.Zero(t, allocs)
}
