package agentrt

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendHex(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "00000000", string(appendHex(nil, 0)))
	assert.Equal(t, "x0a1b2c3d", string(appendHex([]byte("x"), 0x0a1b2c3d)))
	assert.Equal(t, "ffffffff", string(appendHex(nil, 0xffffffff)))
}

// BenchmarkFingerprint is the fingerprint of one tool turn's request alone:
// two new messages hashed and the record's "prefix" written.
func BenchmarkFingerprint(b *testing.B) {
	specs := []ToolSpec{{Name: "add", Description: "Add two integers.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	call := NewAssistantMessage(ToolUseBlock("call_1", "add", json.RawMessage(`{"a":2,"b":40}`)))
	hist := []Message{NewUserMessage("What is 2+40?")}
	var f fingerprints
	agent := printTools(specs)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		if len(hist) > 64 {
			hist = hist[:1]
		}
		req := ModelRequest{System: "Be brief.", Tools: specs, Messages: hist}
		f.take(&req, hist, agent)
		out = f.appendPrefix(out[:0])
		f.commit()
		hist = append(hist, call, NewToolMessage("call_1", "42", false))
	}
}
