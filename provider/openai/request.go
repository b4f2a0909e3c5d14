package openai

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
)

// params maps a ModelRequest to the body of a Chat Completions call.
func (p *Provider) params(req *agentrt.ModelRequest) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{Model: p.model}
	// The session's messages, then what only this call has (a hook's
	// trailing user message), after the last cache breakpoint.
	n := sessionEnd(req.Messages)
	msgs, err := messages(req.System, req.Messages[:n])
	if err != nil {
		return params, err
	}
	stable := len(msgs) - 1
	tail, err := messages("", req.Messages[n:])
	if err != nil {
		return params, err
	}
	params.Messages = append(msgs, tail...)
	if p.opts.ExplicitCache {
		explicitBreakpoints(params.Messages, stable, p.opts.CacheTTL)
		params.PromptCacheOptions.Mode = "explicit"
		params.PromptCacheOptions.Ttl = p.opts.CacheTTL
	}
	if !p.opts.NoPromptCacheKey {
		if key := cacheKey(p.opts.PromptCacheKey, p.deriveKey, req.SessionID); key != "" {
			params.PromptCacheKey = oai.String(key)
		}
	}
	for _, t := range req.Tools {
		tool, err := p.tool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if len(req.Tools) > 0 {
		switch tc := req.ToolChoice; tc.Mode {
		case "":
		case "auto", "none", "required":
			params.ToolChoice.OfAuto = oai.String(tc.Mode)
		case "tool":
			if tc.Name == "" {
				return params, invalidRequest(`tool choice "tool" without a tool name`)
			}
			params.ToolChoice = oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: tc.Name})
		default:
			return params, invalidRequest(fmt.Sprintf("unknown tool choice mode %q", tc.Mode))
		}
	}
	if p.opts.Temperature != nil {
		params.Temperature = oai.Float(*p.opts.Temperature)
	}
	if len(req.ResponseSchema) > 0 {
		if !json.Valid(req.ResponseSchema) {
			return params, fmt.Errorf("openai: ResponseSchema is not valid JSON")
		}
		params.ResponseFormat = p.responseFormat(req.ResponseSchema)
	}
	if req.OnText != nil {
		params.StreamOptions.IncludeUsage = oai.Bool(true)
	}

	extra := map[string]any{}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.opts.MaxTokens
	}
	if maxTokens > 0 {
		switch p.tokenField {
		case "max_completion_tokens":
			params.MaxCompletionTokens = oai.Int(int64(maxTokens))
		case "max_tokens":
			params.MaxTokens = oai.Int(int64(maxTokens))
		default:
			extra[p.tokenField] = maxTokens
		}
	}
	for k, v := range p.opts.ExtraFields {
		extra[k] = v
	}
	if len(extra) > 0 {
		params.SetExtraFields(extra)
	}
	return params, nil
}

// messages maps the system prompt and the session to Chat Completions
// messages: one "tool" message per tool result, right after the assistant
// message whose tool_calls it answers.
//
// A "tool" message carries text only. The images and documents of the
// results of one assistant turn therefore follow the last of its tool
// messages in one "user" message, which says which tool call each comes
// from; each tool message says that its attachments follow. Nothing is
// dropped: what a user message cannot carry either is refused.
func messages(system string, msgs []agentrt.Message) ([]oai.ChatCompletionMessageParamUnion, error) {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, oai.SystemMessage(system))
	}
	// Reasoning goes back for the assistant messages after the last user
	// message only: the tool loop of the current turn, where servers that
	// return reasoning_content (DeepSeek, Z.ai) want it.
	lastUser := -1
	for i, m := range msgs {
		if m.Role == agentrt.RoleUser {
			lastUser = i
		}
	}
	var attach []oai.ChatCompletionContentPartUnionParam // of the current run of tool results
	flush := func() {
		if len(attach) > 0 {
			out = append(out, oai.UserMessage(attach))
			attach = nil
		}
	}
	for i, m := range msgs {
		if m.Role != agentrt.RoleTool {
			flush()
		}
		switch m.Role {
		case agentrt.RoleUser:
			if len(m.Blocks) == 0 {
				out = append(out, oai.UserMessage(m.Content))
				continue
			}
			parts := make([]oai.ChatCompletionContentPartUnionParam, 0, 1+len(m.Blocks))
			if m.Content != "" {
				parts = append(parts, oai.TextContentPart(m.Content))
			}
			for j, b := range m.Blocks {
				part, err := contentPart(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d, block %d: %v", i, j, err))
				}
				parts = append(parts, part)
			}
			out = append(out, oai.UserMessage(parts))
		case agentrt.RoleAssistant:
			out = append(out, assistantMessage(m, i > lastUser))
		case agentrt.RoleTool:
			text := toolResultContent(m)
			var files []oai.ChatCompletionContentPartUnionParam
			for j, b := range m.Blocks {
				if b.Type == agentrt.BlockText {
					if text != "" && b.Text != "" {
						text += "\n"
					}
					text += b.Text
					continue
				}
				part, err := contentPart(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d (tool result %s), block %d: %v", i, m.ToolUseID, j, err))
				}
				files = append(files, part)
			}
			if len(files) > 0 {
				note := fmt.Sprintf("[%d attachment(s) of this tool result follow in the next user message]", len(files))
				if text != "" {
					text += "\n"
				}
				text += note
				attach = append(attach, oai.TextContentPart(fmt.Sprintf("Attachments of the result of tool call %s:", callID(m.ToolUseID, chatMaxCallID))))
				attach = append(attach, files...)
			}
			out = append(out, oai.ToolMessage(text, callID(m.ToolUseID, chatMaxCallID)))
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
	}
	flush()
	return out, nil
}

// The longest tool call ids the APIs take, in characters: OpenAI refuses
// longer ones with HTTP 400 ("Invalid 'messages[2].tool_calls[0].id':
// string too long. Expected a string with maximum length 40"; "Invalid
// 'input[95].call_id': string too long. Expected a string with maximum
// length 64").
const (
	chatMaxCallID      = 40
	responsesMaxCallID = 64
)

// callID is the id sent for a tool call and its result: the session's id
// when it has at most limit characters; otherwise, as ids of other vendors
// can be longer (vLLM's "chatcmpl-tool-" and 32 hex digits, 46), "call_"
// and hex digits of the id's SHA-256, limit characters in all, the same
// for the call and its result in every request.
func callID(id string, limit int) string {
	if utf8.RuneCountInString(id) <= limit {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return ("call_" + hex.EncodeToString(sum[:]))[:limit]
}

// contentPart maps an image or document block to a content part of a user
// message: an image as image_url (a data: URL for bytes; JPEG, PNG, GIF or
// WebP), a PDF as a file part (file_data as a data: URL, with its file
// name), WAV or MP3 audio as input_audio, and text as a text part.
func contentPart(b agentrt.Block) (oai.ChatCompletionContentPartUnionParam, error) {
	switch b.Type {
	case agentrt.BlockText:
		return oai.TextContentPart(b.Text), nil
	case agentrt.BlockImage:
		if len(b.Data) == 0 && b.URL != "" {
			if !isURL(b.URL) {
				return oai.ChatCompletionContentPartUnionParam{}, notURL(b.URL)
			}
			return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: b.URL}), nil
		}
		switch b.MediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return oai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image of media type %q: Chat Completions takes image/jpeg, image/png, image/gif and image/webp", b.MediaType)
		}
		return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(b)}), nil
	case agentrt.BlockDocument:
		switch {
		case len(b.Data) == 0:
			return oai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("document by URL (%s): Chat Completions takes a file's data only", b.URL)
		case b.MediaType == "application/pdf":
			name := b.Name
			if name == "" {
				name = "document.pdf"
			}
			return oai.FileContentPart(oai.ChatCompletionContentPartFileFileParam{FileData: oai.String(dataURL(b)), Filename: oai.String(name)}), nil
		case b.MediaType == "audio/wav" || b.MediaType == "audio/x-wav" || b.MediaType == "audio/mpeg" || b.MediaType == "audio/mp3":
			format := "wav"
			if strings.Contains(b.MediaType, "mp") {
				format = "mp3"
			}
			return oai.InputAudioContentPart(oai.ChatCompletionContentPartInputAudioInputAudioParam{Data: base64.StdEncoding.EncodeToString(b.Data), Format: format}), nil
		}
		return oai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("document of media type %q: Chat Completions takes application/pdf files and audio/wav or audio/mpeg audio", b.MediaType)
	}
	return oai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("a %s block belongs in an assistant message", b.Type)
}

// isURL reports whether s is an http, https or data URL, the URLs the
// APIs fetch.
func isURL(s string) bool {
	for _, scheme := range []string{"https://", "http://", "data:"} {
		if len(s) > len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// notURL is the error for a Block.URL that is not a URL, such as the id
// of an uploaded file ("file-abc123"), which neither API can be given.
func notURL(s string) error {
	return fmt.Errorf("%q is not an http(s) or data URL (an uploaded file's id cannot be sent: send the file's bytes)", s)
}

// dataURL is the data: URL of a block's bytes.
func dataURL(b agentrt.Block) string {
	return "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
}

// assistantMessage maps an assistant message: its text blocks joined as
// the content, its tool_use blocks as tool_calls (with the thought
// signature this adapter kept from Gemini, as extra_content), the
// reasoning_details its thinking blocks hold, and, when reasoning is true,
// the text of the others in the field it came in (see doc.go).
func assistantMessage(m agentrt.Message, reasoning bool) oai.ChatCompletionMessageParamUnion {
	var a oai.ChatCompletionAssistantMessageParam
	var text, think strings.Builder
	var details []json.RawMessage
	hasText, hasThink := false, false
	thinkField := "reasoning_content"
	for _, b := range m.Blocks {
		switch b.Type {
		case agentrt.BlockText:
			text.WriteString(b.Text)
			hasText = true
		case agentrt.BlockThinking:
			if b.Provider != providerName {
				continue
			}
			// A server that gave reasoning_details wants them back, in
			// every turn, and they hold the text too; others want the
			// text alone, in the current turn only.
			if d := detailItems(b.Signature); len(d) > 0 {
				details = append(details, d...)
			} else if reasoning && b.Text != "" {
				think.WriteString(b.Text)
				hasThink = true
				if b.Name == "reasoning" { // Groq refuses reasoning_content (HTTP 400) and takes this
					thinkField = b.Name
				}
			}
		case agentrt.BlockToolUse:
			call := &oai.ChatCompletionMessageFunctionToolCallParam{
				ID: callID(b.ID, chatMaxCallID),
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      b.Name,
					Arguments: toolArguments(b.Input),
				},
			}
			if b.Provider == providerName && len(b.Signature) > 0 {
				call.SetExtraFields(thoughtSignatureExtra(b.Signature))
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: call})
		}
	}
	if hasText || len(a.ToolCalls) == 0 {
		a.Content.OfString = oai.String(text.String())
	}
	extra := map[string]any{}
	if hasThink {
		extra[thinkField] = think.String()
	}
	if len(details) > 0 {
		extra["reasoning_details"] = details
	}
	if len(extra) > 0 {
		a.SetExtraFields(extra)
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toolArguments is the "arguments" string of a tool call: the input as the
// model sent it, "{}" for none, or the text of an input that was not valid
// JSON (kept as a JSON string by toolInput).
func toolArguments(input json.RawMessage) string {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		return "{}"
	}
	if input[0] == '"' {
		var s string
		if json.Unmarshal(input, &s) == nil && !json.Valid([]byte(s)) {
			return s
		}
	}
	return string(input)
}

// toolResultContent is the content of a "tool" message. Chat Completions
// has no error flag on tool results, so an error result says so in its
// text: it starts with "Error: " unless it already starts with "error".
func toolResultContent(m agentrt.Message) string {
	if m.IsError && !strings.HasPrefix(strings.ToLower(m.Content), "error") {
		return "Error: " + m.Content
	}
	return m.Content
}

// emptyParameters is the schema sent for a tool without one.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// tool maps a ToolSpec to a function tool, in strict mode when its schema
// allows it.
func (p *Provider) tool(t agentrt.ToolSpec) (oai.ChatCompletionToolUnionParam, error) {
	schema, strict := p.schema(t.InputSchema)
	params, err := parameters(schema)
	if err != nil {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: tool %q: %w", t.Name, err)
	}
	fn := oai.FunctionDefinitionParam{
		Name:       t.Name,
		Parameters: params,
		Strict:     oai.Bool(strict),
	}
	if t.Description != "" {
		fn.Description = oai.String(t.Description)
	}
	return oai.ChatCompletionFunctionTool(fn), nil
}

// schema returns the schema to send and whether it is strict.
func (p *Provider) schema(s json.RawMessage) (json.RawMessage, bool) {
	return schemaFor(s, p.opts.DisableStrict)
}

// schemaFor returns the schema to send, rewritten for strict mode unless
// disableStrict or the schema cannot be, and whether it is strict.
func schemaFor(s json.RawMessage, disableStrict bool) (json.RawMessage, bool) {
	if len(bytes.TrimSpace(s)) == 0 {
		s = emptyParameters
	}
	if disableStrict {
		return s, false
	}
	strict, err := strictSchema(s)
	if err != nil {
		return s, false
	}
	return strict, true
}

// parameters wraps a schema in the SDK's map type without losing the order
// of its properties: each top-level value stays raw JSON.
func parameters(schema json.RawMessage) (oai.FunctionParameters, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	out := make(oai.FunctionParameters, len(top))
	for k, v := range top {
		out[k] = v
	}
	return out, nil
}

// responseFormat asks for a JSON answer matching schema (Structured
// Outputs), strict when the schema allows it.
func (p *Provider) responseFormat(schema json.RawMessage) oai.ChatCompletionNewParamsResponseFormatUnion {
	s, strict := p.schema(schema)
	return oai.ChatCompletionNewParamsResponseFormatUnion{
		OfJSONSchema: &oai.ResponseFormatJSONSchemaParam{
			JSONSchema: oai.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   "response",
				Schema: s,
				Strict: oai.Bool(strict),
			},
		},
	}
}
