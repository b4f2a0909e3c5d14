package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

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
// User messages become "user" contents; assistant messages "model"
// contents with text and functionCall parts in block order; the results of
// one assistant turn become functionResponse parts of one "user" content,
// in the order of the calls, followed by any user text that comes next
// (Gemini wants the turns of a conversation to alternate).
func (p *Provider) contents(msgs []agentrt.Message) ([]*genai.Content, error) {
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
	flush := func() {
		parts := make([]*genai.Part, 0, len(pending))
		for _, part := range pending {
			if part != nil {
				parts = append(parts, part)
			}
		}
		pending = nil
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
			}
			if pending[c.pos] != nil {
				return nil, invalidRequest(fmt.Sprintf("message %d: second tool result for %q", i, m.ToolUseID), nil)
			}
			key := "output"
			if m.IsError {
				key = "error"
			}
			pending[c.pos] = &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID:       m.ToolUseID,
				Name:     c.name,
				Response: map[string]any{key: m.Content},
			}}
		case agentrt.RoleAssistant:
			flush()
			clear(calls)
			content, err := p.modelContent(m)
			if err != nil {
				return nil, invalidRequest(fmt.Sprintf("message %d: %v", i, err), err)
			}
			for _, b := range m.Blocks {
				if b.Type == agentrt.BlockToolUse {
					calls[b.ID] = call{pos: len(calls), name: b.Name}
				}
			}
			if content != nil {
				out = append(out, content)
			}
		default: // RoleUser, and anything unknown treated as user text
			flush()
			if m.Content != "" {
				out = appendUser(out, &genai.Part{Text: m.Content})
			}
		}
	}
	flush()
	return out, nil
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
// it has nothing to send. Function calls get back the thought signature
// the model gave them; if none of them has one, the first gets
// skipSignature.
func (p *Provider) modelContent(m agentrt.Message) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	firstCall := -1
	signed := false
	for _, b := range m.Blocks {
		switch b.Type {
		case agentrt.BlockText:
			if b.Text != "" {
				c.Parts = append(c.Parts, &genai.Part{Text: b.Text})
			}
		case agentrt.BlockToolUse:
			args, err := decodeArgs(b.Input)
			if err != nil {
				return nil, fmt.Errorf("tool_use %q: input is not a JSON object: %w", b.ID, err)
			}
			part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args}}
			if sig := p.sigs.get(b.ID); sig != nil {
				part.ThoughtSignature = sig
				signed = true
			}
			if firstCall < 0 {
				firstCall = len(c.Parts)
			}
			c.Parts = append(c.Parts, part)
		}
	}
	if len(c.Parts) == 0 {
		return nil, nil
	}
	if firstCall >= 0 && !signed {
		c.Parts[firstCall].ThoughtSignature = skipSignature
	}
	return c, nil
}

// decodeArgs decodes a tool_use input into the args object of a
// functionCall; an empty input is the empty object.
func decodeArgs(input json.RawMessage) (map[string]any, error) {
	input = bytes.TrimSpace(input)
	if len(input) == 0 || bytes.Equal(input, []byte("null")) {
		return map[string]any{}, nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		// The runtime stores an input that was not valid JSON as a JSON
		// string; send it back as the model wrote it.
		var s string
		if json.Unmarshal(input, &s) == nil {
			return map[string]any{"input": s}, nil
		}
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// config maps everything but the messages to a GenerateContentConfig.
func (p *Provider) config(req *agentrt.ModelRequest) (*genai.GenerateContentConfig, error) {
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
	if len(req.ResponseSchema) > 0 {
		var schema any
		if err := json.Unmarshal(req.ResponseSchema, &schema); err != nil {
			return nil, invalidRequest("response schema is not valid JSON", err)
		}
		c.ResponseMIMEType = "application/json"
		c.ResponseJsonSchema = responseSchema(schema)
	}
	if p.extra != nil {
		var extra map[string]any
		if err := json.Unmarshal(p.extra, &extra); err != nil {
			return nil, invalidRequest("ExtraFields", err)
		}
		c.HTTPOptions = &genai.HTTPOptions{ExtraBody: extra}
	}
	return c, nil
}

// signatureCacheSize bounds the thought signatures a Provider keeps.
const signatureCacheSize = 1024

// signatureCache keeps the thought signatures of the function calls this
// Provider returned, by tool_use id, so that they can be sent back as
// Gemini requires. It forgets the oldest entries beyond its size.
type signatureCache struct {
	mu    sync.Mutex
	m     map[string][]byte
	order []string
	size  int
}

func newSignatureCache(size int) *signatureCache {
	return &signatureCache{m: make(map[string][]byte), size: size}
}

func (c *signatureCache) put(id string, sig []byte) {
	if id == "" || len(sig) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok {
		c.order = append(c.order, id)
	}
	c.m[id] = sig
	for len(c.order) > c.size {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *signatureCache) get(id string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
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
