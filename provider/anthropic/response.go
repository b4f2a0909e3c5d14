package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

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
	if err := checkMessage([]byte(msg.RawJSON())); err != nil {
		return nil, badResponse("response: "+err.Error(), err)
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
	compact, err := compactionUsage(u.RawJSON())
	if err != nil {
		return nil, badResponse("response: usage: "+err.Error(), err)
	}
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage: usage(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens).
			Add(compact),
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
// The counts are checked as checkUsage checks them.
func compactionUsage(raw string) (agentrt.Usage, error) {
	var sum agentrt.Usage
	if raw == "" {
		return sum, nil
	}
	var u wireUsage
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		return sum, err
	}
	for _, it := range u.Iterations {
		if it.Type == "compaction" {
			sum = sum.Add(usage(int64(it.InputTokens), int64(it.OutputTokens), int64(it.CacheRead), int64(it.CacheWrite), 0))
		}
	}
	return sum, nil
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
// null is the empty object. An input that is not an object goes as it
// came: the runtime decodes a JSON object sent as a string (a proxy's
// quirk), and tells the model what is wrong with anything else.
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

// The SDK decodes a field of the wrong type (a count sent as "12", a text
// as 7, content as a string) as its zero value, without an error. The
// fields the adapter reads are checked here first, so that a damaged
// reply is an error rather than an answer with a field left out.

// count is a token count: a non-negative integer, or null for none. The
// bound, far above any context window, keeps sums of counts in range.
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("token count %.40s is not a non-negative integer", b)
	}
	*c = count(n)
	return nil
}

// wireUsage is the usage object of a message or of a message_delta.
type wireUsage struct {
	InputTokens  count `json:"input_tokens"`
	OutputTokens count `json:"output_tokens"`
	CacheRead    count `json:"cache_read_input_tokens"`
	CacheWrite   count `json:"cache_creation_input_tokens"`
	Details      *struct {
		ThinkingTokens count `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	Iterations []struct {
		Type         string `json:"type"`
		InputTokens  count  `json:"input_tokens"`
		OutputTokens count  `json:"output_tokens"`
		CacheRead    count  `json:"cache_read_input_tokens"`
		CacheWrite   count  `json:"cache_creation_input_tokens"`
	} `json:"iterations"`
}

// checkMessage checks the fields the adapter reads of a message: the
// body of a non-streaming reply, or the message of message_start.
func checkMessage(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	var m struct {
		Model      string            `json:"model"`
		StopReason *string           `json:"stop_reason"`
		Content    []json.RawMessage `json:"content"`
		Usage      *wireUsage        `json:"usage"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for i, c := range m.Content {
		if err := checkBlock(c); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
	}
	return nil
}

// checkBlock checks the fields the adapter reads of a content block: its
// type, and those of the types it maps (other types are left out).
func checkBlock(raw []byte) error {
	var b struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return err
	}
	switch b.Type {
	case "text", "tool_use", "thinking", "redacted_thinking":
		var fields struct {
			Text      string `json:"text"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
			Data      string `json:"data"`
		}
		return json.Unmarshal(raw, &fields)
	}
	return nil
}

// checkEvent checks the fields the adapter reads of a stream event.
func checkEvent(raw []byte) error {
	var ev struct {
		Type         string          `json:"type"`
		Index        *int64          `json:"index"`
		Message      json.RawMessage `json:"message"`
		ContentBlock json.RawMessage `json:"content_block"`
		Delta        json.RawMessage `json:"delta"`
		Usage        *wireUsage      `json:"usage"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "message_start":
		return checkMessage(ev.Message)
	case "content_block_start", "content_block_delta", "content_block_stop":
		if ev.Index == nil {
			return errors.New("no index")
		}
	}
	switch ev.Type {
	case "content_block_start":
		return checkBlock(ev.ContentBlock)
	case "content_block_delta":
		var d struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
		}
		if err := json.Unmarshal(ev.Delta, &struct {
			Type *string `json:"type"`
		}{&d.Type}); err != nil {
			return err
		}
		switch d.Type {
		case "text_delta", "input_json_delta", "thinking_delta", "signature_delta":
			return json.Unmarshal(ev.Delta, &d)
		}
	case "message_delta":
		var d struct {
			StopReason *string `json:"stop_reason"`
		}
		if len(ev.Delta) > 0 {
			return json.Unmarshal(ev.Delta, &d)
		}
	}
	return nil
}
