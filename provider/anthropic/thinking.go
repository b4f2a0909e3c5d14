package anthropic

import (
	"bytes"
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// Before agentrt had thinking blocks (agentrt.BlockThinking), this
// adapter carried the thinking and redacted_thinking blocks that preceded
// a text or tool_use block in that block's Signature, as opaque JSON:
//
//	{"anthropic_thinking":[{"type":"thinking","thinking":"…","signature":"…"},
//	                       {"type":"redacted_thinking","data":"…"}]}
//
// Sessions written then still hold such signatures; they are sent again,
// right before their block, as the API requires. New responses give
// thinking blocks of their own.

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
