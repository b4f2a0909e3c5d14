package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
)

// params maps a ModelRequest to the body of a Chat Completions call.
func (p *Provider) params(req *agentrt.ModelRequest) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{Model: p.model}
	msgs, err := messages(req.System, req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	for _, t := range req.Tools {
		tool, err := p.tool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
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
func messages(system string, msgs []agentrt.Message) ([]oai.ChatCompletionMessageParamUnion, error) {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, oai.SystemMessage(system))
	}
	for i, m := range msgs {
		switch m.Role {
		case agentrt.RoleUser:
			out = append(out, oai.UserMessage(m.Content))
		case agentrt.RoleAssistant:
			out = append(out, assistantMessage(m))
		case agentrt.RoleTool:
			out = append(out, oai.ToolMessage(toolResultContent(m), m.ToolUseID))
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// assistantMessage maps an assistant message: its text blocks joined as
// the content, its tool_use blocks as tool_calls.
func assistantMessage(m agentrt.Message) oai.ChatCompletionMessageParamUnion {
	var a oai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	hasText := false
	for _, b := range m.Blocks {
		switch b.Type {
		case agentrt.BlockText:
			text.WriteString(b.Text)
			hasText = true
		case agentrt.BlockToolUse:
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: b.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      b.Name,
						Arguments: toolArguments(b.Input),
					},
				},
			})
		}
	}
	if hasText || len(a.ToolCalls) == 0 {
		a.Content.OfString = oai.String(text.String())
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
	if len(bytes.TrimSpace(s)) == 0 {
		s = emptyParameters
	}
	if p.opts.DisableStrict {
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
