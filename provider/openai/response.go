package openai

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
)

// toolCall is a tool call of the answer, whole or being assembled from a
// stream.
type toolCall struct {
	id   string
	name string
	args strings.Builder
	// sig is the thought signature Gemini's OpenAI-compatible endpoint
	// puts in the call's extra_content (see thoughtSignatureOf).
	sig string
}

// response maps a complete (non-streamed) reply.
func (p *Provider) response(c *oai.ChatCompletion) (*agentrt.ModelResponse, error) {
	if c == nil {
		return nil, badResponse("the reply has no choices", nil)
	}
	if err := wrongType("the reply", field{"choices", c.JSON.Choices}, field{"usage", c.JSON.Usage}); err != nil {
		return nil, err
	}
	if len(c.Choices) == 0 {
		return nil, badResponse("the reply has no choices", nil)
	}
	choice := c.Choices[0]
	for _, ch := range c.Choices {
		if ch.Index == 0 {
			choice = ch
			break
		}
	}
	msg := choice.Message
	legacy := msg.JSON.FunctionCall
	if err := wrongType("the reply's choice", field{"message", choice.JSON.Message}, field{"finish_reason", choice.JSON.FinishReason},
		field{"refusal", msg.JSON.Refusal}, field{"tool_calls", msg.JSON.ToolCalls}, field{"function_call", legacy}); err != nil {
		return nil, err
	}
	text, thinking, ok := contentOf(msg.Content, msg.JSON.Content)
	if !ok {
		return nil, badResponse("the reply's content is neither a string nor a list of parts: "+truncate(msg.JSON.Content.Raw(), 100), nil)
	}
	calls := make([]*toolCall, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		if err := wrongType("a tool call of the reply", field{"id", tc.JSON.ID}, field{"type", tc.JSON.Type}, field{"function", tc.JSON.Function},
			field{"function.name", tc.Function.JSON.Name}); err != nil {
			return nil, err
		}
		if tc.Type != "" && tc.Type != "function" {
			return nil, badResponse(fmt.Sprintf("the reply has a tool call of type %q, which was not offered", tc.Type), nil)
		}
		call := &toolCall{id: tc.ID, name: tc.Function.Name, sig: thoughtSignatureOf(tc.RawJSON())}
		call.args.WriteString(tc.Function.Arguments)
		calls = append(calls, call)
	}
	// The legacy function_call of older servers: one call, no id.
	//lint:ignore SA1019 the field is deprecated because servers should not send it; some still do
	if fc := msg.FunctionCall; fc.Name != "" && len(calls) == 0 {
		call := &toolCall{name: fc.Name}
		call.args.WriteString(fc.Arguments)
		calls = append(calls, call)
	}
	reasoning, rfield := reasoningOf(msg.JSON.ExtraFields)
	return p.build(reasoning+thinking, rfield, detailsOf(msg.JSON.ExtraFields), text, msg.Refusal, calls, choice.FinishReason, c.Usage, c.JSON.ExtraFields["timings"], c.Model)
}

// reasoningOf returns the reasoning text that OpenAI-compatible servers
// add to a message or a delta: "reasoning_content" (DeepSeek, Z.ai,
// vLLM, ...) or "reasoning" (Groq, Ollama, OpenRouter, newer vLLM); "" if
// there is none (OpenAI itself never returns reasoning text here), and
// the name of its field. A server that sends both sends the same text
// twice: the first is taken.
func reasoningOf(extra map[string]respjson.Field) (text, field string) {
	// The SDK marks an unknown field invalid (it has no type to check it
	// against) but keeps its raw JSON.
	for _, name := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s, name // not null, not an object (OpenRouter's reasoning_details is another field)
		}
	}
	return "", ""
}

// contentOf returns the text and the reasoning of a message's or a
// delta's content. It is a string, except from Mistral's reasoning
// models, which send a list of parts: "text" parts with their text, and
// "thinking" parts whose "thinking" is a list of text parts. The SDK
// keeps such a list as its raw JSON text in the string field. ok is
// false for a content of another type (a number, an object, a list that
// is not of parts), which the SDK leaves empty.
func contentOf(content string, f respjson.Field) (text, reasoning string, ok bool) {
	raw := strings.TrimSpace(f.Raw())
	if !strings.HasPrefix(raw, "[") {
		return content, "", f.Valid() || raw == respjson.Omitted || raw == respjson.Null
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return "", "", false
	}
	var t, r strings.Builder
	for _, part := range parts {
		switch part.Type {
		case "text":
			t.WriteString(part.Text)
		case "thinking":
			var texts []struct {
				Text string `json:"text"`
			}
			var s string
			if json.Unmarshal(part.Thinking, &texts) == nil {
				for _, x := range texts {
					r.WriteString(x.Text)
				}
			} else if json.Unmarshal(part.Thinking, &s) == nil {
				r.WriteString(s)
			}
		}
	}
	return t.String(), r.String(), true
}

// stream makes a streaming call, hands each text delta to onText and
// assembles the same message the non-streaming call would return.
func (p *Provider) stream(ctx context.Context, params oai.ChatCompletionNewParams, onText func(string), raw **http.Response, ropts []option.RequestOption) (*agentrt.ModelResponse, error) {
	st := p.client.Chat.Completions.NewStreaming(ctx, params, ropts...)
	defer st.Close()
	var acc streamState
	for st.Next() {
		if err := acc.add(st.Current(), onText); err != nil {
			return nil, err
		}
	}
	if err := st.Err(); err != nil {
		if acc.chunks == 0 {
			return nil, callError(ctx, err, *raw)
		}
		return nil, streamError(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if acc.finish == "" {
		what := "the stream ended without a finish reason"
		if len(acc.calls) > 0 {
			what = "the stream ended in the middle of a tool call, without a finish reason"
		}
		if acc.chunks == 0 {
			what = "the stream ended before its first chunk"
		}
		return nil, badResponse(what, nil)
	}
	return p.build(acc.reasoning.String(), acc.reasoningField, acc.details.json(), acc.text.String(), acc.refusal.String(), acc.calls, acc.finish, acc.usage, acc.timings, acc.model)
}

// streamState assembles a streamed answer: text and refusal deltas in
// order, tool-call fragments by their index, the finish reason, and usage
// from the final chunk (stream_options.include_usage).
type streamState struct {
	chunks    int
	model     string
	reasoning strings.Builder
	details   reasoningDetails
	text      strings.Builder
	refusal   strings.Builder
	calls     []*toolCall
	byIndex   map[int64]int // tool-call index → position in calls
	finish    string
	usage     oai.CompletionUsage
	// chunkUsage is set once a chunk carried usage next to its choices,
	// which wins over usage inside a choice.
	chunkUsage bool
	timings    respjson.Field // llama.cpp server's, next to usage
	// reasoningField is the field the reasoning came in (see reasoningOf).
	reasoningField string
}

func (s *streamState) add(c oai.ChatCompletionChunk, onText func(string)) error {
	s.chunks++
	if err := wrongType("a chunk of the stream", field{"choices", c.JSON.Choices}, field{"usage", c.JSON.Usage}); err != nil {
		return err
	}
	if c.Model != "" {
		s.model = c.Model
	}
	if c.JSON.Usage.Valid() {
		s.usage = c.Usage
		s.chunkUsage = true
	}
	if t, ok := c.JSON.ExtraFields["timings"]; ok {
		s.timings = t
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		d := ch.Delta
		if err := wrongType("a chunk of the stream", field{"delta", ch.JSON.Delta}, field{"finish_reason", ch.JSON.FinishReason},
			field{"refusal", d.JSON.Refusal}, field{"tool_calls", d.JSON.ToolCalls}, field{"function_call", d.JSON.FunctionCall}); err != nil {
			return err
		}
		text, thinking, ok := contentOf(d.Content, d.JSON.Content)
		if !ok {
			return badResponse("a chunk's content is neither a string nor a list of parts: "+truncate(d.JSON.Content.Raw(), 100), nil)
		}
		reasoning, rfield := reasoningOf(d.JSON.ExtraFields)
		s.reasoning.WriteString(reasoning + thinking)
		if rfield != "" {
			s.reasoningField = rfield
		}
		s.details.add(d.JSON.ExtraFields)
		if text != "" {
			s.text.WriteString(text)
			onText(text)
		}
		if d.Refusal != "" {
			s.refusal.WriteString(d.Refusal)
			onText(d.Refusal)
		}
		for i, tc := range d.ToolCalls {
			if err := wrongType("a tool call fragment", field{"index", tc.JSON.Index}, field{"id", tc.JSON.ID}, field{"function", tc.JSON.Function},
				field{"function.name", tc.Function.JSON.Name}); err != nil {
				return err
			}
			// Servers that send no index (Mistral, Moonshot) send the
			// fragments of a delta in the order of the calls.
			if !tc.JSON.Index.Valid() {
				tc.Index = int64(i)
			}
			s.addToolCall(tc)
		}
		// The legacy function_call: one call, no id, at an index of its
		// own.
		//lint:ignore SA1019 as in Provider.response
		if fc := d.FunctionCall; fc.Name != "" || fc.Arguments != "" {
			s.addToolCall(oai.ChatCompletionChunkChoiceDeltaToolCall{Index: -1, Function: oai.ChatCompletionChunkChoiceDeltaToolCallFunction{Name: fc.Name, Arguments: fc.Arguments}})
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
		// Moonshot puts the usage in the choice of the finish chunk; the
		// chunk's own usage, if any, takes precedence.
		if f, ok := ch.JSON.ExtraFields["usage"]; ok && !s.chunkUsage {
			var u oai.CompletionUsage
			if raw := f.Raw(); raw != "null" && json.Unmarshal([]byte(raw), &u) == nil {
				s.usage = u
			}
		}
	}
	return nil
}

func (s *streamState) addToolCall(tc oai.ChatCompletionChunkChoiceDeltaToolCall) {
	if s.byIndex == nil {
		s.byIndex = map[int64]int{}
	}
	pos, ok := s.byIndex[tc.Index]
	// A fragment with a new id at a known index starts another call: some
	// compatible servers send every call whole, all at index 0.
	if !ok || (tc.ID != "" && s.calls[pos].id != "" && s.calls[pos].id != tc.ID) {
		pos = len(s.calls)
		s.calls = append(s.calls, &toolCall{})
		s.byIndex[tc.Index] = pos
	}
	call := s.calls[pos]
	if tc.ID != "" {
		call.id = tc.ID
	}
	if name := tc.Function.Name; name != "" && name != call.name {
		call.name += name
	}
	call.args.WriteString(tc.Function.Arguments)
	if sig := thoughtSignatureOf(tc.RawJSON()); sig != "" {
		call.sig = sig
	}
}

// build makes the ModelResponse shared by both paths. reasoningField is
// the field the reasoning came in: "reasoning" is kept as the thinking
// block's Name, so that the text goes back in that field (see
// assistantMessage). details is the reasoning_details array, or nil (see
// reasoningDetails); timings is the "timings" field of the reply, if any
// (see cachedTokens).
func (p *Provider) build(reasoning, reasoningField string, details json.RawMessage, text, refusal string, calls []*toolCall, finish string, usage oai.CompletionUsage, timings respjson.Field, model string) (*agentrt.ModelResponse, error) {
	var blocks []agentrt.Block
	if reasoning == "" {
		reasoning = detailsText(details)
	}
	if reasoning != "" || details != nil {
		// Without any text (encrypted reasoning only) the block is
		// redacted: its Signature is all there is.
		b := agentrt.Block{Type: agentrt.BlockThinking, Text: reasoning, Signature: details, Redacted: reasoning == "", Provider: providerName}
		if reasoningField == "reasoning" {
			b.Name = reasoningField
		}
		blocks = append(blocks, b)
	}
	if text != "" {
		blocks = append(blocks, agentrt.TextBlock(text))
	}
	if refusal != "" {
		blocks = append(blocks, agentrt.TextBlock(refusal))
	}
	if err := usageError(usage); err != nil {
		return nil, err
	}
	for i, c := range calls {
		if c.name == "" {
			return nil, badResponse(fmt.Sprintf("tool call %d has no function name", i), nil)
		}
		id := c.id
		if id == "" {
			id = newCallID()
		}
		b := agentrt.ToolUseBlock(id, c.name, toolInput(c.args.String()))
		if c.sig != "" {
			b.Signature, b.Provider = []byte(c.sig), providerName
		}
		blocks = append(blocks, b)
	}
	if model == "" {
		model = p.model
	}
	outTokens, reasoningTokens := outputTokens(usage)
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage: agentrt.Usage{
			InputTokens:      int(usage.PromptTokens),
			OutputTokens:     outTokens,
			ReasoningTokens:  reasoningTokens,
			CacheReadTokens:  cachedTokens(usage, timings),
			CacheWriteTokens: int(usage.PromptTokensDetails.CacheWriteTokens),
		},
		Finish: finishReason(finish, len(calls) > 0, refusal != ""),
		Model:  model,
	}, nil
}

// outputTokens returns the generated tokens, reasoning included, and the
// reasoning tokens. OpenAI counts reasoning tokens in completion_tokens;
// xAI counts them apart, which its total_tokens shows (prompt +
// completion + reasoning); Gemini's OpenAI-compatible endpoint leaves
// them out of completion_tokens and does not report them, but counts them
// in total_tokens.
func outputTokens(u oai.CompletionUsage) (out, reasoning int) {
	out, reasoning = int(u.CompletionTokens), int(u.CompletionTokensDetails.ReasoningTokens)
	switch apart := int(u.TotalTokens - u.PromptTokens - u.CompletionTokens); {
	case reasoning > 0 && apart == reasoning: // xAI
		out += reasoning
	case reasoning == 0 && apart > 0: // Gemini
		out, reasoning = out+apart, apart
	}
	return out, reasoning
}

// cachedTokens returns the prompt tokens read from the cache: OpenAI's
// usage.prompt_tokens_details.cached_tokens, or where other servers put
// them: DeepSeek's usage.prompt_cache_hit_tokens, Moonshot's
// usage.cached_tokens, and llama.cpp server's timings.cache_n (the prompt
// tokens it reused; "timings" sits next to "usage", and prompt_tokens
// counts them too).
func cachedTokens(u oai.CompletionUsage, timings respjson.Field) int {
	if n := u.PromptTokensDetails.CachedTokens; n > 0 {
		return int(n)
	}
	for _, name := range []string{"prompt_cache_hit_tokens", "cached_tokens"} {
		var n int
		if f, ok := u.JSON.ExtraFields[name]; ok && json.Unmarshal([]byte(f.Raw()), &n) == nil && n > 0 {
			return n
		}
	}
	var t struct {
		CacheN int `json:"cache_n"`
	}
	if json.Unmarshal([]byte(timings.Raw()), &t) == nil && t.CacheN > 0 {
		return t.CacheN
	}
	return 0
}

// finishReason maps Chat Completions' finish_reason. Some compatible
// servers say "stop" after tool calls; a refusal is reported as a content
// filter stop.
func finishReason(reason string, hasCalls, refused bool) agentrt.FinishReason {
	switch reason {
	case "stop", "":
		switch {
		case hasCalls:
			return agentrt.FinishToolUse
		case refused:
			return agentrt.FinishContentFilter
		case reason == "":
			return agentrt.FinishOther
		}
		return agentrt.FinishStop
	case "tool_calls", "function_call":
		return agentrt.FinishToolUse
	case "length":
		return agentrt.FinishLength
	case "content_filter":
		return agentrt.FinishContentFilter
	}
	return agentrt.FinishOther
}

// toolInput turns a tool call's arguments into a tool_use input: "{}" for
// none, the JSON itself when valid, and otherwise the text as a JSON string
// (the tool then reports the bad input to the model, and toolArguments
// sends the text back unchanged).
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(args) // a string always encodes
	return b
}

// newCallID makes an id for a tool call that came without one (some
// compatible servers omit it).
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// usageError refuses a usage whose counts are of another type than
// numbers, or negative.
func usageError(u oai.CompletionUsage) error {
	if err := wrongType("the usage", field{"prompt_tokens", u.JSON.PromptTokens}, field{"completion_tokens", u.JSON.CompletionTokens},
		field{"total_tokens", u.JSON.TotalTokens}, field{"completion_tokens_details", u.JSON.CompletionTokensDetails},
		field{"prompt_tokens_details", u.JSON.PromptTokensDetails},
		field{"reasoning_tokens", u.CompletionTokensDetails.JSON.ReasoningTokens},
		field{"cached_tokens", u.PromptTokensDetails.JSON.CachedTokens}); err != nil {
		return err
	}
	return checkUsage(u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CompletionTokensDetails.ReasoningTokens,
		u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens)
}
