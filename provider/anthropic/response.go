package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentrt/agentrt"
)

// fromMessage maps a non-streaming response to a ModelResponse.
func fromMessage(msg *sdk.Message) (*agentrt.ModelResponse, error) {
	if msg == nil {
		return nil, badResponse("empty response body", nil)
	}
	if msg.Type == "error" {
		// An error body sent with a success status (by a proxy that
		// rewrote the status): the error it holds, as an error event
		// in a stream would give it.
		return nil, errorBody(msg.RawJSON())
	}
	if msg.StopReason == "" {
		// The API always sets stop_reason outside a stream; a body without
		// it is not a complete message.
		return nil, badResponse("response has no stop_reason", nil)
	}
	blocks := make([]agentrt.Block, 0, len(msg.Content))
	for i, c := range msg.Content {
		switch c.Type {
		case "text":
			if c.Text != "" {
				blocks = append(blocks, agentrt.TextBlock(c.Text))
			}
		case "tool_use":
			input, err := compactInput(c.Input)
			if err != nil {
				return nil, badResponse(fmt.Sprintf("content[%d]: tool_use %q: input: %v", i, c.Name, err), nil)
			}
			if c.ID == "" || c.Name == "" {
				return nil, badResponse(fmt.Sprintf("content[%d]: tool_use without id or name", i), nil)
			}
			blocks = append(blocks, agentrt.ToolUseBlock(c.ID, c.Name, input))
		case "thinking":
			blocks = append(blocks, thinking(c.Thinking, c.Signature, false))
		case "redacted_thinking":
			blocks = append(blocks, thinking("", c.Data, true))
		}
		// Server tool blocks are not represented in an agentrt.Message;
		// they are left out.
	}
	u := msg.Usage
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage: usage(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens).
			Add(compactionUsage(u.RawJSON())),
		Finish: finishReason(msg.StopReason),
		Model:  string(msg.Model),
	}, nil
}

// usage maps Anthropic's token counts. Anthropic's input_tokens counts
// only the input after the last cache breakpoint; InputTokens here is the
// whole input (input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens), as the other providers count it, and the
// cached parts are reported again in CacheReadTokens and CacheWriteTokens.
// output_tokens includes output_tokens_details.thinking_tokens, reported
// again in ReasoningTokens.
func usage(input, output, cacheRead, cacheWrite, thinking int64) agentrt.Usage {
	return agentrt.Usage{
		InputTokens:      int(input + cacheRead + cacheWrite),
		OutputTokens:     int(output),
		ReasoningTokens:  int(thinking),
		CacheReadTokens:  int(cacheRead),
		CacheWriteTokens: int(cacheWrite),
	}
}

// compactionUsage returns the tokens of the compaction iterations listed
// in usage.iterations of a response or of a stream's message_delta. When
// context_management compacts the conversation, the API first samples a
// summary; the top-level counts leave that step out (they are those of the
// answer alone), though it is billed (testdata/pydanticai has such
// replies). Adding only the "compaction" iterations counts each token
// once: the top level is the sum of the others.
func compactionUsage(raw string) agentrt.Usage {
	var u struct {
		Iterations []struct {
			Type         string `json:"type"`
			InputTokens  int64  `json:"input_tokens"`
			OutputTokens int64  `json:"output_tokens"`
			CacheRead    int64  `json:"cache_read_input_tokens"`
			CacheWrite   int64  `json:"cache_creation_input_tokens"`
		} `json:"iterations"`
	}
	var sum agentrt.Usage
	if json.Unmarshal([]byte(raw), &u) != nil {
		return sum
	}
	for _, it := range u.Iterations {
		if it.Type == "compaction" {
			sum = sum.Add(usage(it.InputTokens, it.OutputTokens, it.CacheRead, it.CacheWrite, 0))
		}
	}
	return sum
}

// thinking returns a thinking block of this provider: a thinking block's
// text and signature, or a redacted_thinking block's data.
func thinking(text, sig string, redacted bool) agentrt.Block {
	b := agentrt.Block{Type: agentrt.BlockThinking, Text: text, Redacted: redacted, Provider: providerName}
	if sig != "" {
		b.Signature = []byte(sig)
	}
	return b
}

// finishReason maps a stop_reason.
func finishReason(r sdk.StopReason) agentrt.FinishReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return agentrt.FinishStop
	case sdk.StopReasonToolUse:
		return agentrt.FinishToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return agentrt.FinishLength
	case sdk.StopReasonRefusal:
		return agentrt.FinishContentFilter
	default: // pause_turn and reasons added later
		return agentrt.FinishOther
	}
}

// compactInput returns a tool input as compact JSON; an empty input or
// null is the empty object.
func compactInput(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage(`{}`), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
