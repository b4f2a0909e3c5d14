package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/agentrt/agentrt"
)

// newParams maps a ModelRequest to the Messages API request body.
func (p *Provider) newParams(req *agentrt.ModelRequest) (sdk.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(p.model),
		MaxTokens: int64(maxTokens),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	msgs, err := toMessages(req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	if len(req.Tools) > 0 {
		params.Tools = make([]sdk.ToolUnionParam, 0, len(req.Tools))
		for _, spec := range req.Tools {
			tool, err := toTool(spec)
			if err != nil {
				return params, err
			}
			params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tool})
		}
	}
	if req.ResponseSchema != nil {
		schema, err := outputSchema(req.ResponseSchema)
		if err != nil {
			return params, invalidRequest(fmt.Sprintf("response schema: %v", err))
		}
		params.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	if p.extras != nil {
		params.SetExtraFields(p.extras)
	}
	return params, nil
}

// toMessages maps the session to API messages. Consecutive messages of
// one API role are merged into one message, as the API expects: all tool
// results of an assistant turn go back together in the next user message,
// followed by any user text. Empty texts and empty assistant messages are
// left out (the API refuses empty text blocks and empty content).
func toMessages(msgs []agentrt.Message) ([]sdk.MessageParam, error) {
	out := make([]sdk.MessageParam, 0, len(msgs))
	add := func(user bool, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if user && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
			if !user && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			}
		}
		if user {
			out = append(out, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: blocks}})
		} else {
			out = append(out, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: blocks}})
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case agentrt.RoleUser:
			if m.Content != "" {
				add(true, sdk.NewTextBlock(m.Content))
			}
		case agentrt.RoleAssistant:
			blocks := make([]sdk.ContentBlockParamUnion, 0, len(m.Blocks))
			for _, b := range m.Blocks {
				// Thinking that preceded this block goes back before it.
				blocks = append(blocks, carried(b.Signature)...)
				switch b.Type {
				case agentrt.BlockText:
					if b.Text != "" {
						blocks = append(blocks, sdk.NewTextBlock(b.Text))
					}
				case agentrt.BlockToolUse:
					blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{
						ID:    b.ID,
						Name:  b.Name,
						Input: toolInput(b.Input),
					}})
				default:
					return nil, invalidRequest(fmt.Sprintf("message %d: unknown block type %q", i, b.Type))
				}
			}
			add(false, blocks...)
		case agentrt.RoleTool:
			result := &sdk.ToolResultBlockParam{ToolUseID: m.ToolUseID}
			if m.Content != "" {
				result.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
			}
			if m.IsError {
				result.IsError = param.NewOpt(true)
			}
			add(true, sdk.ContentBlockParamUnion{OfToolResult: result})
		default:
			return nil, invalidRequest(fmt.Sprintf("message %d: unknown role %q", i, m.Role))
		}
	}
	return out, nil
}

// toolInput returns a tool_use input as the API takes it: a JSON object.
// An empty input is the empty object. An input that is not a JSON object
// (possible only in a session written by another provider) is sent as the
// empty object too, since the API would refuse the whole request for it;
// the model still sees the error result that the runtime gave that call.
func toolInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage(`{}`)
	}
	return raw
}

// toTool maps a ToolSpec to a custom tool declaration. The input schema is
// sent as the spec gives it, compacted (see inputSchema), so that the tool
// definitions, part of the prompt-cache prefix, are byte for byte the same
// from one call to the next.
func toTool(spec agentrt.ToolSpec) (*sdk.ToolParam, error) {
	schema, err := inputSchema(spec.InputSchema)
	if err != nil {
		return nil, invalidRequest(fmt.Sprintf("tool %q: %v", spec.Name, err))
	}
	tool := &sdk.ToolParam{
		Name:        spec.Name,
		InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
	}
	if spec.Description != "" {
		tool.Description = param.NewOpt(spec.Description)
	}
	return tool, nil
}

// inputSchema returns the input_schema of a tool declaration for a
// ToolSpec's InputSchema. The Messages API takes JSON Schema as it is
// ($ref and $defs, anyOf, enums, maps as additionalProperties, nullable
// optional fields), so the schema is passed through unchanged, compacted;
// only its top level is checked, because the API requires an object schema
// there. An empty schema stands for an object without properties.
func inputSchema(schema json.RawMessage) (json.RawMessage, error) {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	var top struct {
		Type json.RawMessage `json:"type"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	if !bytes.Equal(bytes.TrimSpace(top.Type), []byte(`"object"`)) {
		return nil, fmt.Errorf(`input schema must have "type": "object" at the top level, has %s`, orNone(top.Type))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, schema); err != nil {
		return nil, fmt.Errorf("input schema is not valid JSON: %v", err)
	}
	return buf.Bytes(), nil
}

// outputSchema returns the schema of output_config.format (structured
// output) for a ModelRequest's ResponseSchema. Structured output accepts a
// subset of JSON Schema, so the schema goes through the SDK's own
// transformation: every object with properties gets "additionalProperties":
// false, oneOf becomes anyOf, unsupported keywords (numeric bounds, string
// lengths, most formats, minItems above 1) move into the description, and
// $ref, $defs, enums and maps are kept.
func outputSchema(schema json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if m == nil {
		return nil, fmt.Errorf("schema is null")
	}
	out, _ := sdk.BetaJSONSchemaOutputFormat(m).Schema.(map[string]any)
	if out == nil {
		return nil, fmt.Errorf("cannot be converted for structured output")
	}
	return out, nil
}

func orNone(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	return string(raw)
}
