package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// skipSignature is the thought signature Google documents for function
// calls the model did not produce in this process (a session loaded from
// disk, history from another provider): it tells Gemini 3 models to skip
// signature validation instead of refusing the request.
var skipSignature = []byte("skip_thought_signature_validator")

// contents maps the session to Gemini contents.
//
// User messages become "user" contents (text, then inlineData or fileData
// parts for images and documents); assistant messages "model" contents
// with thought, text and functionCall parts in block order; the results of
// one assistant turn become functionResponse parts of one "user" content,
// in the order of the calls, followed by any user text that comes next
// (Gemini wants the turns of a conversation to alternate; consecutive
// assistant messages make one "model" content). A user message with
// nothing to send is sent as an empty text part.
//
// The images and documents of tool results go in the function response's
// parts (multimodal function responses) for Gemini 3 and later. Older
// models do not take those: with mediaAfter set, each result's media
// follow its function response in the same user content, as inlineData
// or fileData parts.
func contents(msgs []agentrt.Message, mediaAfter bool) ([]*genai.Content, error) {
	out := make([]*genai.Content, 0, len(msgs))
	// calls maps the tool_use ids of the latest assistant message to their
	// position and name.
	type call struct {
		pos  int
		name string
	}
	calls := map[string]call{}
	// pending holds the function responses of the current run of tool
	// results, placed by the position of their call.
	var pending []*genai.Part
	var media [][]*genai.Part // with mediaAfter: the media of each pending result
	flush := func() {
		parts := make([]*genai.Part, 0, len(pending))
		for i, part := range pending {
			if part != nil {
				parts = append(parts, part)
				parts = append(parts, media[i]...)
			}
		}
		pending, media = nil, nil
		if len(parts) > 0 {
			out = appendUser(out, parts...)
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case agentrt.RoleTool:
			c, ok := calls[m.ToolUseID]
			if !ok {
				return nil, invalidRequest(fmt.Sprintf("message %d: tool result %q answers no tool_use of the assistant message before it", i, m.ToolUseID), nil)
			}
			if pending == nil {
				pending = make([]*genai.Part, len(calls))
				media = make([][]*genai.Part, len(calls))
			}
			if pending[c.pos] != nil {
				return nil, invalidRequest(fmt.Sprintf("message %d: second tool result for %q", i, m.ToolUseID), nil)
			}
			fr, err := functionResponse(m, c.name)
			if err != nil {
				return nil, unsupported(fmt.Sprintf("message %d (tool result %s): %v", i, m.ToolUseID, err))
			}
			if mediaAfter {
				for _, fp := range fr.Parts {
					part := &genai.Part{}
					if fp.InlineData != nil {
						part.InlineData = &genai.Blob{Data: fp.InlineData.Data, MIMEType: fp.InlineData.MIMEType}
					} else {
						part.FileData = &genai.FileData{FileURI: fp.FileData.FileURI, MIMEType: fp.FileData.MIMEType}
					}
					media[c.pos] = append(media[c.pos], part)
				}
				fr.Parts = nil
			}
			pending[c.pos] = &genai.Part{FunctionResponse: fr}
		case agentrt.RoleAssistant:
			flush()
			clear(calls)
			content, err := modelContent(m)
			if err != nil {
				return nil, invalidRequest(fmt.Sprintf("message %d: %v", i, err), err)
			}
			for _, b := range m.Blocks {
				if b.Type == agentrt.BlockToolUse {
					calls[b.ID] = call{pos: len(calls), name: b.Name}
				}
			}
			switch n := len(out); {
			case content == nil:
			case n > 0 && out[n-1].Role == genai.RoleModel:
				// Assistant messages one after another (the first without
				// calls): one model turn, so that a function call turn
				// still comes right after a user turn.
				out[n-1].Parts = append(out[n-1].Parts, content.Parts...)
			default:
				out = append(out, content)
			}
		default: // RoleUser, and anything unknown treated as user text
			flush()
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for j, b := range m.Blocks {
				part, err := userPart(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d, block %d: %v", i, j, err))
				}
				if part != nil {
					parts = append(parts, part)
				}
			}
			if len(parts) == 0 {
				// An empty message: the API takes {"text":""} (sent by
				// emptyTextParts), and the turns keep alternating.
				parts = append(parts, &genai.Part{Text: ""})
			}
			out = appendUser(out, parts...)
		}
	}
	flush()
	return out, nil
}

// userPart maps a block of a user message: text, or an image or document
// as inlineData (bytes) or fileData (a URI, which needs its media type).
// It returns nil for an empty text.
func userPart(b agentrt.Block) (*genai.Part, error) {
	switch b.Type {
	case agentrt.BlockText:
		if b.Text == "" {
			return nil, nil
		}
		return &genai.Part{Text: b.Text}, nil
	case agentrt.BlockImage, agentrt.BlockDocument:
		if !mediaTypeTaken(b.MediaType) {
			return nil, fmt.Errorf("%s of media type %q: the API takes images, audio, video, PDF and text", b.Type, b.MediaType)
		}
		if len(b.Data) == 0 && b.URL != "" {
			return &genai.Part{FileData: &genai.FileData{FileURI: b.URL, MIMEType: b.MediaType}}, nil
		}
		return &genai.Part{InlineData: &genai.Blob{Data: b.Data, MIMEType: b.MediaType}}, nil
	}
	return nil, fmt.Errorf("a %s block belongs in an assistant message", b.Type)
}

// mediaTypeTaken reports whether the API reads parts of a media type:
// images, audio, video, PDF, text and code files.
func mediaTypeTaken(t string) bool {
	for _, prefix := range []string{"image/", "audio/", "video/", "text/"} {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	switch t {
	case "application/pdf", "application/json", "application/rtf", "application/x-javascript", "application/x-python", "application/x-typescript":
		return true
	}
	return false
}

// functionResponse maps a tool result: {"output": content} or, for an
// error, {"error": content}, with the text of its text blocks appended,
// and its images and documents as the response's parts (multimodal
// function responses, which take image/png, image/jpeg, image/webp,
// application/pdf and text/plain).
func functionResponse(m agentrt.Message, name string) (*genai.FunctionResponse, error) {
	text := m.Content
	var parts []*genai.FunctionResponsePart
	for j, b := range m.Blocks {
		switch b.Type {
		case agentrt.BlockText:
			if text != "" && b.Text != "" {
				text += "\n"
			}
			text += b.Text
		case agentrt.BlockImage, agentrt.BlockDocument:
			switch b.MediaType {
			case "image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain":
			default:
				return nil, fmt.Errorf("block %d: %s of media type %q: function responses take image/png, image/jpeg, image/webp, application/pdf and text/plain", j, b.Type, b.MediaType)
			}
			if len(b.Data) == 0 && b.URL != "" {
				parts = append(parts, &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: b.URL, MIMEType: b.MediaType}})
			} else {
				parts = append(parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{Data: b.Data, MIMEType: b.MediaType}})
			}
		default:
			return nil, fmt.Errorf("block %d: a %s block belongs in an assistant message", j, b.Type)
		}
	}
	key := "output"
	if m.IsError {
		key = "error"
	}
	return &genai.FunctionResponse{ID: m.ToolUseID, Name: name, Response: map[string]any{key: text}, Parts: parts}, nil
}

// appendUser appends parts to the last content if it is a user content,
// and as a new user content otherwise.
func appendUser(out []*genai.Content, parts ...*genai.Part) []*genai.Content {
	if n := len(out); n > 0 && out[n-1].Role == genai.RoleUser {
		out[n-1].Parts = append(out[n-1].Parts, parts...)
		return out
	}
	return append(out, &genai.Content{Role: genai.RoleUser, Parts: parts})
}

// modelContent maps an assistant message to a "model" content, or nil if
// it has nothing to send. Blocks get back the thought signatures Gemini
// gave them (Provider "gemini"; another vendor's are not sent). Thinking
// blocks of Gemini that carry a signature go back as thought parts; those
// without one are left out, as Google's own clients do. If the first
// function call has no signature (history from another provider, or
// recorded before signatures were kept), it gets skipSignature: Gemini 3
// wants one on the first call of every model turn.
func modelContent(m agentrt.Message) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	firstCall := -1
	for _, b := range m.Blocks {
		var sig []byte
		if b.Provider == providerName {
			sig = b.Signature
		}
		switch b.Type {
		case agentrt.BlockText:
			if b.Text != "" {
				c.Parts = append(c.Parts, &genai.Part{Text: b.Text, ThoughtSignature: sig})
			}
		case agentrt.BlockThinking:
			if len(sig) > 0 {
				c.Parts = append(c.Parts, &genai.Part{Text: b.Text, Thought: true, ThoughtSignature: sig})
			}
		case agentrt.BlockToolUse:
			part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: decodeArgs(b.Input)}, ThoughtSignature: sig}
			if firstCall < 0 {
				firstCall = len(c.Parts)
			}
			c.Parts = append(c.Parts, part)
		default:
			return nil, fmt.Errorf("block type %q in an assistant message", b.Type)
		}
	}
	if len(c.Parts) == 0 {
		return nil, nil
	}
	if firstCall >= 0 && len(c.Parts[firstCall].ThoughtSignature) == 0 {
		c.Parts[firstCall].ThoughtSignature = skipSignature
	}
	return c, nil
}

// decodeArgs decodes a tool_use input into the args object of a
// functionCall; an empty input (or null) is the empty object. An input
// that is not a JSON object (possible only in a session written by another
// provider, or an input the runtime kept as a JSON string because it was
// not valid JSON) is sent as {"input": value}: the API takes only an
// object, and would refuse the whole request otherwise.
func decodeArgs(input json.RawMessage) map[string]any {
	input = bytes.TrimSpace(input)
	if len(input) == 0 || bytes.Equal(input, []byte("null")) {
		return map[string]any{}
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return map[string]any{"input": string(input)}
	}
	if args, ok := v.(map[string]any); ok {
		return args
	}
	return map[string]any{"input": v}
}

// config maps everything but the messages to a GenerateContentConfig.
func (p *Provider) config(req *agentrt.ModelRequest, contents []*genai.Content) (*genai.GenerateContentConfig, error) {
	c := &genai.GenerateContentConfig{Temperature: p.temp}
	if req.System != "" {
		c.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	switch {
	case req.MaxTokens > 0:
		c.MaxOutputTokens = int32(min(req.MaxTokens, 1<<31-1))
	case p.maxTokens > 0:
		c.MaxOutputTokens = p.maxTokens
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			params, err := ToolParameters(t.InputSchema)
			if err != nil {
				return nil, invalidRequest(fmt.Sprintf("tool %q: %v", t.Name, err), err)
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, Parameters: params})
		}
		c.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	c.Tools = append(c.Tools, p.server...)
	switch tc := req.ToolChoice; tc.Mode {
	case "":
	case "auto", "none", "required":
		if len(req.Tools) > 0 {
			mode := map[string]genai.FunctionCallingConfigMode{"auto": genai.FunctionCallingConfigModeAuto,
				"none": genai.FunctionCallingConfigModeNone, "required": genai.FunctionCallingConfigModeAny}[tc.Mode]
			c.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode}}
		}
	case "tool":
		if tc.Name == "" {
			return nil, invalidRequest(`tool choice "tool" without a tool name`, nil)
		}
		c.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
			Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{tc.Name}}}
	default:
		return nil, invalidRequest(fmt.Sprintf("unknown tool choice mode %q", tc.Mode), nil)
	}
	if len(req.ResponseSchema) > 0 {
		schema, err := responseSchema(req.ResponseSchema)
		if err != nil || !json.Valid(req.ResponseSchema) {
			return nil, invalidRequest("response schema is not valid JSON", err)
		}
		c.ResponseMIMEType = "application/json"
		c.ResponseJsonSchema = schema
	}
	if p.extra != nil {
		var extra map[string]any
		if err := json.Unmarshal(p.extra, &extra); err != nil {
			return nil, invalidRequest("ExtraFields", err)
		}
		c.HTTPOptions = &genai.HTTPOptions{ExtraBody: extra}
	}
	if hasEmptyText(contents) {
		if c.HTTPOptions == nil {
			c.HTTPOptions = &genai.HTTPOptions{}
		}
		c.HTTPOptions.ExtrasRequestProvider = emptyTextParts
	}
	return c, nil
}

// hasEmptyText reports whether a content has a part that is an empty
// text: an empty user text, or an empty thought of Gemini's that carries
// its signature.
func hasEmptyText(contents []*genai.Content) bool {
	for _, c := range contents {
		for _, part := range c.Parts {
			if noData(part) {
				return true
			}
		}
	}
	return false
}

// noData reports whether a part the adapter made has none of the fields
// of the API's data oneof: an empty text, which the SDK leaves out.
func noData(p *genai.Part) bool {
	return p.Text == "" && p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil
}

// emptyTextParts puts the text back in the empty text parts of a request
// body. The SDK leaves out a Part's empty Text, which would send {} (or
// {"thought":true,"thoughtSignature":...}), a part the API refuses with
// "required oneof field 'data' must have one initialized field"; the API
// takes {"text":""}. The only parts the adapter makes without a data
// field are empty texts.
func emptyTextParts(body map[string]any) map[string]any {
	for _, content := range asMaps(body["contents"]) {
		for _, part := range asMaps(content["parts"]) {
			if !hasDataField(part) {
				part["text"] = ""
			}
		}
	}
	return body
}

// hasDataField reports whether a part, as JSON, has a field of the data
// oneof.
func hasDataField(part map[string]any) bool {
	for _, k := range []string{"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"} {
		if _, ok := part[k]; ok {
			return true
		}
	}
	return false
}

// asMaps returns the objects of a JSON array held as []any or as
// []map[string]any (the SDK builds both).
func asMaps(v any) []map[string]any {
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		out := make([]map[string]any, 0, len(a))
		for _, e := range a {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// beforeGemini3 reports whether a model is older than Gemini 3
// ("gemini-2.5-flash", "models/gemini-2.0-flash"): such models do not take
// media in function responses. Gemini 3 and later, and the "-latest"
// aliases without a version, do. A name that is not Gemini's (Gemma, a
// tuned model) gets the older form, which every model reads.
func beforeGemini3(model string) bool {
	name := model[strings.LastIndex(model, "/")+1:]
	rest, ok := strings.CutPrefix(name, "gemini-")
	if !ok {
		return true
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return false // "gemini-flash-latest": the current version
	}
	major, _ := strconv.Atoi(rest[:end])
	return major < 3
}

// mergeMaps merges src into dst recursively: a map value is merged into a
// map of the same key, anything else replaces it.
func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// cloneJSON deep-copies a JSON-like map through encoding/json. A value
// that cannot be encoded makes New panic later, when the merged map is
// encoded; here it is kept as is.
func cloneJSON(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}
