package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// The session's messages first, then what only this call has (a
	// hook's trailing user message): the last breakpoint goes at the end
	// of the session's, which the next call begins with too.
	n := sessionEnd(req.Messages)
	ids := toolUseIDs(req.Messages)
	msgs, err := appendMessages(nil, req.Messages[:n], 0, ids)
	if err != nil {
		return params, err
	}
	msgs = trimFinalAssistant(msgs) // only the session's part can end with one
	stable := position{msg: len(msgs) - 1}
	if stable.msg >= 0 {
		stable.blocks = len(content(msgs[stable.msg]))
	}
	if msgs, err = appendMessages(msgs, req.Messages[n:], n, ids); err != nil {
		return params, err
	}
	if len(msgs) == 0 {
		// Every message was blank, and the API refuses a request without
		// messages ("messages: at least one message is required").
		return params, invalidRequest("no message to send: every message of the conversation is empty or whitespace")
	}
	params.Messages = msgs
	if params.Tools, err = p.tools(req.Tools); err != nil {
		return params, err
	}
	if tc, err := toolChoice(req.ToolChoice, len(params.Tools)); err != nil {
		return params, err
	} else if tc != nil {
		params.ToolChoice = *tc
	}
	if req.ResponseSchema != nil {
		schema, err := outputSchema(req.ResponseSchema)
		if err != nil {
			return params, invalidRequest(fmt.Sprintf("response schema: %v", err))
		}
		params.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	if _, auto := p.extras["cache_control"]; !p.noCache && !auto {
		// With top-level cache_control in ExtraFields (automatic caching)
		// the API places the breakpoint; more could exceed its limit of 4.
		setBreakpoints(&params, stable)
	}
	if p.extras != nil {
		params.SetExtraFields(p.extras)
	}
	return params, nil
}

// tools maps the agent's tools, then adds the ServerTools; a server tool
// named like one of the agent's is sent in its place.
func (p *Provider) tools(specs []agentrt.ToolSpec) ([]sdk.ToolUnionParam, error) {
	var tools []sdk.ToolUnionParam
	placed := make([]bool, len(p.servers))
	for _, spec := range specs {
		if i := slices.IndexFunc(p.servers, func(st serverTool) bool { return st.name == spec.Name }); i >= 0 {
			tools = append(tools, p.servers[i].param())
			placed[i] = true
			continue
		}
		tool, err := toTool(spec)
		if err != nil {
			return nil, err
		}
		tools = append(tools, sdk.ToolUnionParam{OfTool: tool})
	}
	for i, st := range p.servers {
		if !placed[i] {
			tools = append(tools, st.param())
		}
	}
	return tools, nil
}

// serverTool is one of the ServerTools, kept as JSON: a request gets a
// copy of its own, which nothing else shares.
type serverTool struct {
	name string
	json []byte
}

func newServerTool(t sdk.ToolUnionParam) serverTool {
	b, err := json.Marshal(t)
	if err != nil || len(b) < 2 || b[0] != '{' {
		panic(fmt.Sprintf("anthropic: New: ServerTools: a tool that is not a JSON object (%s, %v)", b, err))
	}
	var name string
	if n := t.GetName(); n != nil {
		name = *n
	}
	return serverTool{name: name, json: b}
}

func (t serverTool) param() sdk.ToolUnionParam {
	return param.Override[sdk.ToolUnionParam](json.RawMessage(t.json))
}

// toolChoice maps a ToolChoice; nil for the zero value (not sent: the
// API's default is auto).
func toolChoice(c agentrt.ToolChoice, tools int) (*sdk.ToolChoiceUnionParam, error) {
	switch c.Mode {
	case "":
		return nil, nil
	case "auto":
		if tools == 0 {
			return nil, nil
		}
		return &sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}, nil
	case "none":
		if tools == 0 {
			return nil, nil
		}
		return &sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}, nil
	case "required":
		return &sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}, nil
	case "tool":
		if c.Name == "" {
			return nil, invalidRequest(`tool choice "tool" without a tool name`)
		}
		tc := sdk.ToolChoiceParamOfTool(c.Name)
		return &tc, nil
	}
	return nil, invalidRequest(fmt.Sprintf("unknown tool choice mode %q", c.Mode))
}

// setBreakpoints marks the prompt-cache breakpoints (cache_control
// ephemeral, 5 minutes), 3 of the 4 the API allows:
//   - the end of the system prompt, which caches the tools too, since they
//     come first in the prefix (the last tool when there is no system
//     prompt): a compaction leaves this one to read;
//   - the last block of the session's messages (stable), not of a tail
//     only this call has (a recall hook's trailing user message), so that
//     the next call, which begins with the same bytes, reads it;
//   - the last block of the message before that one, so that each call
//     reads what the call before wrote even after more new blocks than the
//     20 the API looks back over.
//
// A prompt shorter than the model's minimum (1024 to 4096 tokens) is not
// cached and costs nothing extra; a cache write costs 1.25 times the input
// price, a read 0.1 times.
func setBreakpoints(params *sdk.MessageNewParams, stable position) {
	eph := sdk.NewCacheControlEphemeralParam()
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = eph
	} else {
		for i := len(params.Tools) - 1; i >= 0; i-- {
			if cc := params.Tools[i].GetCacheControl(); cc != nil { // not a ServerTools copy
				*cc = eph
				break
			}
		}
	}
	for _, at := range [...]position{stable, {msg: stable.msg - 1, blocks: -1}} {
		if at.msg < 0 {
			continue
		}
		blocks := content(params.Messages[at.msg])
		if at.blocks >= 0 {
			blocks = blocks[:at.blocks]
		}
		for j := len(blocks) - 1; j >= 0; j-- {
			b := blocks[j]
			if b.OfThinking != nil || b.OfRedactedThinking != nil {
				continue // thinking blocks cannot carry cache_control
			}
			if cc := b.GetCacheControl(); cc != nil {
				*cc = eph
				break
			}
		}
	}
}

// position is the end of a prefix of the API messages: the first blocks
// of message msg (all of them if blocks is -1).
type position struct{ msg, blocks int }

// content returns the blocks of a user or assistant message.
func content(m sdk.MessageParam) []sdk.ContentBlockParamUnion {
	if m.OfUser != nil {
		return m.OfUser.Content
	}
	if m.OfAssistant != nil {
		return m.OfAssistant.Content
	}
	return nil
}

// sessionEnd returns how many of msgs come from the session: all but a
// trailing run of user messages added for this call only, such as the
// facts a recall hook appends or the runtime's note after a limit. Such a
// run follows a tool result, or the user's own message (which ends the
// session's part). The session itself always ends with the user's message
// or with tool results before a planner call.
func sessionEnd(msgs []agentrt.Message) int {
	k := len(msgs)
	for k > 0 && msgs[k-1].Role == agentrt.RoleUser {
		k--
	}
	if k < len(msgs) && (k == 0 || msgs[k-1].Role == agentrt.RoleAssistant) {
		k++ // the user's message
	}
	return k
}

// appendMessages appends the session's messages msgs, from index from on,
// to out as API messages. Consecutive messages of one API role are merged
// into one message, as the API expects (a first message of the role of
// out's last one too): all tool results of an assistant turn go back
// together in the next user message, followed by any user text. Blank
// texts (empty or whitespace alone, see blank) and empty assistant
// messages are left out (the API refuses them).
//
// ids maps the tool_use ids the API would refuse (see toolUseIDs).
func appendMessages(out []sdk.MessageParam, msgs []agentrt.Message, from int, ids map[string]string) ([]sdk.MessageParam, error) {
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
	for k, m := range msgs {
		i := from + k
		switch m.Role {
		case agentrt.RoleUser:
			blocks := make([]sdk.ContentBlockParamUnion, 0, 1+len(m.Blocks))
			if !blank(m.Content) {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for j, b := range m.Blocks {
				c, err := contentBlock(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d, block %d: %v", i, j, err))
				}
				if c != nil {
					blocks = append(blocks, *c)
				}
			}
			add(true, blocks...)
		case agentrt.RoleAssistant:
			blocks := make([]sdk.ContentBlockParamUnion, 0, len(m.Blocks))
			for _, b := range m.Blocks {
				// Thinking that preceded this block in a session written
				// before thinking blocks existed goes back before it.
				blocks = append(blocks, carried(b.Signature)...)
				switch b.Type {
				case agentrt.BlockText:
					// The API refuses a text of whitespace alone (a
					// message whose only text is " " beside the server
					// tool calls left out): it goes, as an empty one.
					if !blank(b.Text) {
						blocks = append(blocks, sdk.NewTextBlock(b.Text))
					}
				case agentrt.BlockToolUse:
					blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{
						ID:    mappedID(ids, b.ID),
						Name:  b.Name,
						Input: toolInput(b.Input),
					}})
				case agentrt.BlockThinking:
					if t := thinkingParam(b); t != nil {
						blocks = append(blocks, *t)
					}
				default:
					return nil, invalidRequest(fmt.Sprintf("message %d: block type %q in an assistant message", i, b.Type))
				}
			}
			add(false, blocks...)
		case agentrt.RoleTool:
			result := &sdk.ToolResultBlockParam{ToolUseID: mappedID(ids, m.ToolUseID)}
			if !blank(m.Content) {
				result.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
			}
			for j, b := range m.Blocks {
				c, err := contentBlock(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d (tool result %s), block %d: %v", i, m.ToolUseID, j, err))
				}
				if c == nil {
					continue
				}
				switch {
				case c.OfText != nil:
					result.Content = append(result.Content, sdk.ToolResultBlockParamContentUnion{OfText: c.OfText})
				case c.OfImage != nil:
					result.Content = append(result.Content, sdk.ToolResultBlockParamContentUnion{OfImage: c.OfImage})
				case c.OfDocument != nil:
					result.Content = append(result.Content, sdk.ToolResultBlockParamContentUnion{OfDocument: c.OfDocument})
				}
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

// trimFinalAssistant fixes a conversation that ends with an assistant
// message (a prefill, or a turn the API paused with pause_turn, sent back
// to continue it). The API refuses such a message when its last block is
// thinking ("The final block in an assistant message cannot be
// `thinking`") or its content ends with whitespace ("final assistant
// content cannot end with trailing whitespace"): trailing thinking is left
// out, the whitespace at the end of its last text trimmed, and a message
// left empty goes.
func trimFinalAssistant(msgs []sdk.MessageParam) []sdk.MessageParam {
	n := len(msgs)
	if n == 0 || msgs[n-1].OfAssistant == nil {
		return msgs
	}
	blocks := msgs[n-1].OfAssistant.Content
trim:
	for len(blocks) > 0 {
		last := blocks[len(blocks)-1]
		switch {
		case last.OfThinking != nil, last.OfRedactedThinking != nil:
		case last.OfText != nil:
			last.OfText.Text = strings.TrimRightFunc(last.OfText.Text, unicode.IsSpace)
			if last.OfText.Text != "" {
				break trim
			}
		default:
			break trim
		}
		blocks = blocks[:len(blocks)-1]
	}
	if len(blocks) == 0 {
		return msgs[:n-1]
	}
	msgs[n-1].OfAssistant.Content = blocks
	return msgs
}

// blank reports whether a text is empty or whitespace alone: the API
// refuses such a text block ("text content blocks must contain
// non-whitespace text"), in any message, so it is left out.
func blank(text string) bool { return strings.TrimSpace(text) == "" }

// contentBlock maps a block of a user message or tool result: text, an
// image (base64 or URL; JPEG, PNG, GIF or WebP) or a document (a PDF as
// base64 or URL, or plain text). It returns nil for a blank text, and an
// error for what the API cannot take.
func contentBlock(b agentrt.Block) (*sdk.ContentBlockParamUnion, error) {
	switch b.Type {
	case agentrt.BlockText:
		if blank(b.Text) {
			return nil, nil
		}
		c := sdk.NewTextBlock(b.Text)
		return &c, nil
	case agentrt.BlockImage:
		if b.URL != "" && len(b.Data) == 0 {
			c := sdk.NewImageBlock(sdk.URLImageSourceParam{URL: b.URL})
			return &c, nil
		}
		switch b.MediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return nil, fmt.Errorf("image of media type %q: the API takes image/jpeg, image/png, image/gif and image/webp", b.MediaType)
		}
		c := sdk.NewImageBlockBase64(b.MediaType, base64.StdEncoding.EncodeToString(b.Data))
		return &c, nil
	case agentrt.BlockDocument:
		var c sdk.ContentBlockParamUnion
		switch {
		case b.URL != "" && len(b.Data) == 0:
			c = sdk.NewDocumentBlock(sdk.URLPDFSourceParam{URL: b.URL})
		case b.MediaType == "application/pdf":
			c = sdk.NewDocumentBlock(sdk.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(b.Data)})
		case b.MediaType == "text/plain" && utf8.Valid(b.Data):
			c = sdk.NewDocumentBlock(sdk.PlainTextSourceParam{Data: string(b.Data)})
		default:
			return nil, fmt.Errorf("document of media type %q: the API takes application/pdf and text/plain (UTF-8)", b.MediaType)
		}
		if b.Name != "" {
			c.OfDocument.Title = param.NewOpt(b.Name)
		}
		return &c, nil
	case agentrt.BlockThinking, agentrt.BlockToolUse:
		return nil, fmt.Errorf("a %s block belongs in an assistant message", b.Type)
	}
	return nil, fmt.Errorf("unknown block type %q", b.Type)
}

// thinkingParam maps a thinking block produced by Anthropic; nil for
// another vendor's (dropped) or one without a signature (the API refuses
// thinking it cannot verify).
func thinkingParam(b agentrt.Block) *sdk.ContentBlockParamUnion {
	if b.Provider != providerName || len(b.Signature) == 0 {
		return nil
	}
	var c sdk.ContentBlockParamUnion
	if b.Redacted {
		c = sdk.NewRedactedThinkingBlock(string(b.Signature))
	} else {
		c = sdk.NewThinkingBlock(string(b.Signature), b.Text)
	}
	return &c
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

// toolUseIDs returns the ids to send in place of the tool_use ids of msgs
// (and of their results) that the API refuses: it takes letters, digits,
// _ and - only ("tool_use.id: String should match pattern"), and other
// vendors' ids may hold more (Kimi's "functions.add:0"), so a session
// begun on one of them would be refused from then on. Such an id goes
// with each other byte replaced by _ and a hash of the whole id appended,
// the same for the call and its result; should that be an id of the
// request already (ids must be unique), _2, _3 and so on is appended. The
// session keeps the ids it had. When every id is valid, the usual case,
// it returns nil and allocates nothing more.
func toolUseIDs(msgs []agentrt.Message) map[string]string {
	var all []string
	bad := false
	add := func(id string) {
		all = append(all, id)
		bad = bad || !validID(id)
	}
	for _, m := range msgs {
		if m.Role == agentrt.RoleTool {
			add(m.ToolUseID)
		}
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				add(b.ID)
			}
		}
	}
	if !bad {
		return nil
	}
	taken := map[string]bool{}
	for _, id := range all {
		if validID(id) {
			taken[id] = true
		}
	}
	ids := map[string]string{}
	for _, id := range all {
		if validID(id) || ids[id] != "" {
			continue
		}
		base := cleanID(id)
		to := base
		for k := 2; taken[to]; k++ {
			to = fmt.Sprintf("%s_%d", base, k)
		}
		taken[to] = true
		ids[id] = to
	}
	return ids
}

// cleanID is id with each byte the API refuses replaced by _ and a hash
// of the whole id appended, so that two ids stay apart.
func cleanID(id string) string {
	b := make([]byte, 0, len(id)+9)
	for i := 0; i < len(id); i++ {
		if c := id[i]; idChar(rune(c)) {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s_%08x", b, h.Sum32())
}

// mappedID returns the id to send for a tool_use id.
func mappedID(ids map[string]string, id string) string {
	if to, ok := ids[id]; ok {
		return to
	}
	return id
}

func validID(id string) bool {
	return id != "" && strings.IndexFunc(id, func(r rune) bool { return !idChar(r) }) < 0
}

func idChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
