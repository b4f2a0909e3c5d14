package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentrt/agentrt"
)

// generateStream makes a streaming call and assembles its events into the
// message the non-streaming call would return. onText may be nil.
func (p *Provider) generateStream(ctx context.Context, params sdk.MessageNewParams, onText func(string)) (*agentrt.ModelResponse, error) {
	stream := p.client.Messages.NewStreaming(ctx, params, p.reqOpts...)
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		if err := acc.add(stream.Current(), onText); err != nil {
			return nil, err
		}
		if acc.stopped {
			break // message_stop: nothing follows
		}
		if ctx.Err() != nil {
			// Cancelled (perhaps by OnText): stop now, even if more
			// events are already buffered.
			return nil, convertError(ctx, ctx.Err())
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, convertError(ctx, err)
		}
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) {
			return nil, fromAPIError(apiErr)
		}
		if acc.started {
			// The connection broke, or an event could not be parsed,
			// after the message began.
			return nil, badResponse(acc.cutOff("stream failed"), err)
		}
		pe := convertError(ctx, err)
		if pe, ok := pe.(*agentrt.ProviderError); ok && pe.Kind == nil {
			pe.Kind = agentrt.ErrBadResponse
		}
		return nil, pe
	}
	if !acc.stopped && ctx.Err() != nil {
		return nil, convertError(ctx, ctx.Err())
	}
	return acc.response()
}

// accumulator assembles the events of one streamed message.
type accumulator struct {
	started bool // message_start seen
	stopped bool // message_stop seen
	id      string
	model   string
	stop    sdk.StopReason
	input   int64
	output  int64
	cacheR  int64
	cacheW  int64
	think   int64
	compact agentrt.Usage  // compaction iterations, from message_delta
	blocks  []*streamBlock // by index
}

type streamBlock struct {
	typ   string          // "text", "tool_use", "thinking", "redacted_thinking", or another type that is skipped
	text  strings.Builder // text, or thinking
	id    string
	name  string
	start string // the input of content_block_start, normally {}
	input strings.Builder
	sig   string // thinking signature, or redacted_thinking data
	done  bool
}

func (a *accumulator) add(ev sdk.MessageStreamEventUnion, onText func(string)) error {
	if err := checkEvent([]byte(ev.RawJSON())); err != nil {
		return badResponse(fmt.Sprintf("stream event %q: %v", ev.Type, err), err)
	}
	if !a.started && ev.Type != "message_start" {
		return badResponse(fmt.Sprintf("stream event %q before message_start", ev.Type), nil)
	}
	switch ev.Type {
	case "message_start":
		if a.started {
			if ev.Message.ID != "" && ev.Message.ID == a.id {
				// The same message_start again (sent twice by a proxy):
				// the first one counts.
				return nil
			}
			return badResponse("second message_start in one stream", nil)
		}
		a.started = true
		a.id = ev.Message.ID
		a.model = string(ev.Message.Model)
		a.stop = ev.Message.StopReason
		u := ev.Message.Usage
		a.input, a.output, a.cacheR, a.cacheW = u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		a.think = u.OutputTokensDetails.ThinkingTokens
		if len(ev.Message.Content) > 0 {
			// The message can begin with complete blocks, and even its
			// stop reason (vercel/ai has such a stream, of a turn resumed
			// after code execution called a tool): blocks 0 to n-1.
			var content []sdk.ContentBlockStartEventContentBlockUnion
			if err := json.Unmarshal([]byte(ev.Message.JSON.Content.Raw()), &content); err != nil {
				return badResponse("message_start: content", err)
			}
			for i, c := range content {
				if err := a.begin(int64(i), c, onText); err != nil {
					return err
				}
				a.blocks[i].done = true
			}
		}
	case "content_block_start":
		if err := a.begin(ev.Index, ev.ContentBlock, onText); err != nil {
			return err
		}
	case "content_block_delta":
		b, err := a.open(ev.Index, ev.Type)
		if err != nil {
			return err
		}
		switch ev.Delta.Type {
		case "text_delta":
			if b.typ != "text" {
				return badResponse(fmt.Sprintf("text_delta for a %s block (index %d)", b.typ, ev.Index), nil)
			}
			b.text.WriteString(ev.Delta.Text)
			if onText != nil && ev.Delta.Text != "" {
				onText(ev.Delta.Text)
			}
		case "input_json_delta":
			if b.typ == "tool_use" {
				b.input.WriteString(ev.Delta.PartialJSON)
			} else if b.typ == "text" {
				return badResponse(fmt.Sprintf("input_json_delta for a text block (index %d)", ev.Index), nil)
			}
			// server_tool_use inputs stream too; they are not kept.
		case "thinking_delta":
			if b.typ == "thinking" {
				b.text.WriteString(ev.Delta.Thinking)
			}
		case "signature_delta":
			if b.typ == "thinking" {
				b.sig += ev.Delta.Signature
			}
		}
		// citations_delta belongs to content this adapter does not
		// represent.
	case "content_block_stop":
		b, err := a.open(ev.Index, ev.Type)
		if err != nil {
			return err
		}
		b.done = true
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = ev.Delta.StopReason
		}
		// The counts of message_delta are cumulative: they replace those of
		// message_start when present.
		u := ev.Usage
		if u.JSON.InputTokens.Valid() {
			a.input = u.InputTokens
		}
		if u.JSON.OutputTokens.Valid() {
			a.output = u.OutputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.cacheR = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.cacheW = u.CacheCreationInputTokens
		}
		if u.JSON.OutputTokensDetails.Valid() {
			a.think = u.OutputTokensDetails.ThinkingTokens
		}
		c, err := compactionUsage(u.RawJSON())
		if err != nil {
			return badResponse("message_delta: usage: "+err.Error(), err)
		}
		if c != (agentrt.Usage{}) {
			a.compact = c
		}
	case "message_stop":
		a.stopped = true
	}
	// Event types added to the API later are ignored.
	return nil
}

// begin adds block index, as content_block_start (or the content of
// message_start) gives it.
func (a *accumulator) begin(index int64, c sdk.ContentBlockStartEventContentBlockUnion, onText func(string)) error {
	if index != int64(len(a.blocks)) {
		return badResponse(fmt.Sprintf("content_block_start for index %d, expected %d", index, len(a.blocks)), nil)
	}
	b := &streamBlock{typ: c.Type}
	switch b.typ {
	case "text":
		b.text.WriteString(c.Text)
		if onText != nil && c.Text != "" {
			onText(c.Text)
		}
	case "tool_use":
		b.id, b.name = c.ID, c.Name
		b.start = c.JSON.Input.Raw()
		if b.id == "" || b.name == "" {
			return badResponse(fmt.Sprintf("content block %d: tool_use without id or name", index), nil)
		}
	case "thinking":
		b.text.WriteString(c.Thinking)
		b.sig = c.Signature
	case "redacted_thinking":
		b.sig = c.Data
	}
	a.blocks = append(a.blocks, b)
	return nil
}

// open returns the started, not yet stopped block of index.
func (a *accumulator) open(index int64, event string) (*streamBlock, error) {
	if index < 0 || index >= int64(len(a.blocks)) {
		return nil, badResponse(fmt.Sprintf("%s for content block %d, which has not started", event, index), nil)
	}
	b := a.blocks[index]
	if b.done {
		return nil, badResponse(fmt.Sprintf("%s for content block %d, which has stopped", event, index), nil)
	}
	return b, nil
}

// cutOff describes where an unfinished stream stopped.
func (a *accumulator) cutOff(what string) string {
	for i, b := range a.blocks {
		if !b.done {
			if b.typ == "tool_use" {
				return fmt.Sprintf("%s in the middle of tool_use block %d (%s %s)", what, i, b.name, b.id)
			}
			return fmt.Sprintf("%s in the middle of %s block %d", what, b.typ, i)
		}
	}
	return what
}

// response checks that the stream was complete and returns its message.
func (a *accumulator) response() (*agentrt.ModelResponse, error) {
	switch {
	case !a.started:
		return nil, badResponse("stream ended before message_start", nil)
	case !a.stopped:
		if a.stop == "" {
			return nil, badResponse(a.cutOff("stream ended without a stop reason"), nil)
		}
		return nil, badResponse(a.cutOff("stream ended before message_stop"), nil)
	case a.stop == "":
		return nil, badResponse("stream ended without a stop reason", nil)
	}
	blocks := make([]agentrt.Block, 0, len(a.blocks))
	for i, b := range a.blocks {
		if !b.done {
			return nil, badResponse(a.cutOff("message_stop"), nil)
		}
		switch b.typ {
		case "thinking":
			blocks = append(blocks, thinking(b.text.String(), b.sig, false))
		case "redacted_thinking":
			blocks = append(blocks, thinking("", b.sig, true))
		case "text":
			if b.text.Len() > 0 {
				blocks = append(blocks, agentrt.TextBlock(b.text.String()))
			}
		case "tool_use":
			raw := b.input.String()
			if strings.TrimSpace(raw) == "" {
				// The input arrives in input_json_delta events; without
				// any, it is the one content_block_start carried.
				raw = b.start
			}
			input, err := compactInput([]byte(raw))
			if err != nil {
				if a.stop == sdk.StopReasonMaxTokens || a.stop == sdk.StopReasonModelContextWindowExceeded {
					// The token limit cut the input short: the call was never
					// complete. Finish says so; the call is left out.
					continue
				}
				return nil, badResponse(fmt.Sprintf("tool_use block %d (%s %s): input is not valid JSON: %v", i, b.name, b.id, err), nil)
			}
			blocks = append(blocks, agentrt.ToolUseBlock(b.id, b.name, input))
		}
	}
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage:   usage(a.input, a.output, a.cacheR, a.cacheW, a.think).Add(a.compact),
		Finish:  finishReason(a.stop),
		Model:   a.model,
	}, nil
}
