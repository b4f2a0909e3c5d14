package anthropic

import (
	"bytes"
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentrt/agentrt"
)

// Thinking blocks have no agentrt.Block of their own, yet the API requires
// them back, unmodified and in order, in the assistant message of a tool
// use turn (and models that think by default produce them unasked). So the
// thinking and redacted_thinking blocks that precede a text or tool_use
// block travel in that block's Signature, as opaque JSON:
//
//	{"anthropic_thinking":[{"type":"thinking","thinking":"…","signature":"…"},
//	                       {"type":"redacted_thinking","data":"…"}]}
//
// and are sent again, right before it, in later requests. Thinking that
// ends a message (no block follows it) is dropped: it ends a finished turn,
// which the API does not need back.

// thinkingBlock is a thinking or redacted_thinking block as the API
// returned it.
type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type carriedThinking struct {
	Thinking []thinkingBlock `json:"anthropic_thinking"`
}

var thinkingKey = []byte(`{"anthropic_thinking":`)

// carry stores pending thinking blocks in b's Signature.
func carry(b agentrt.Block, pending []thinkingBlock) agentrt.Block {
	if len(pending) == 0 {
		return b
	}
	sig, err := json.Marshal(carriedThinking{Thinking: pending})
	if err == nil {
		b.Signature = sig
	}
	return b
}

// carried returns the thinking blocks stored in a block's Signature by
// carry, as request blocks; nil for any other signature (another
// provider's, or none).
func carried(sig []byte) []sdk.ContentBlockParamUnion {
	if !bytes.HasPrefix(sig, thinkingKey) {
		return nil
	}
	var c carriedThinking
	if json.Unmarshal(sig, &c) != nil {
		return nil
	}
	out := make([]sdk.ContentBlockParamUnion, 0, len(c.Thinking))
	for _, t := range c.Thinking {
		switch t.Type {
		case "thinking":
			out = append(out, sdk.NewThinkingBlock(t.Signature, t.Thinking))
		case "redacted_thinking":
			out = append(out, sdk.NewRedactedThinkingBlock(t.Data))
		}
	}
	return out
}
