package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool of an MCP server, as an [agentrt.Tool]. [Client.Tools]
// makes them; a program may type-assert an agentrt.Tool to *Tool to see the
// server's definition.
//
// Spec gives the (possibly prefixed) name, the description, the server's
// input schema as is, and ReadOnly when the server annotated the tool
// readOnlyHint and not destructiveHint. Decode checks that the input is a
// JSON object (unwrapping an object sent as a JSON string) and returns it
// as a json.RawMessage; the server validates it against its schema.
// Execute calls the server's tool by its own name and turns the result
// into text (see the package documentation); a result flagged isError is
// returned as a [*ResultError].
//
// A Tool is safe for concurrent use.
type Tool struct {
	client *Client
	def    *mcp.Tool
	spec   agentrt.ToolSpec
}

var (
	_ agentrt.Tool        = (*Tool)(nil)
	_ agentrt.ContentTool = (*Tool)(nil)
)

// Definition returns the tool as the server described it in tools/list.
// It must not be modified.
func (t *Tool) Definition() *mcp.Tool { return t.def }

// Spec describes the tool to the model and the runtime.
func (t *Tool) Spec() agentrt.ToolSpec { return t.spec }

// Decode checks that input is a JSON object and returns it as a
// json.RawMessage. An empty input is the empty object; an object sent as a
// JSON-encoded string is unwrapped.
func (t *Tool) Decode(input json.RawMessage) (any, error) {
	return decodeObject(input)
}

func decodeObject(input json.RawMessage) (json.RawMessage, error) {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(input) {
		return nil, errors.New("input is not valid JSON")
	}
	if input[0] == '"' { // an object sent as a JSON-encoded string
		var s string
		if err := json.Unmarshal(input, &s); err == nil {
			inner := bytes.TrimSpace([]byte(s))
			if len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
				return json.RawMessage(inner), nil
			}
		}
	}
	if input[0] != '{' {
		return nil, fmt.Errorf("input must be a JSON object, got %s", jsonKind(input[0]))
	}
	return input, nil
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// Execute calls the tool on the server. input is the json.RawMessage from
// Decode (or any value that encodes to a JSON object, from a permission
// checker that rewrote the input).
//
// It returns the result's text ([ResultText]: images and other binary
// content described, not included). It returns a [*ResultError] when the
// server flagged the result isError, an error wrapping [ErrDisconnected]
// when the connection broke during the call, and ctx's error when ctx
// ended first. The runtime calls ExecuteContent instead.
func (t *Tool) Execute(ctx context.Context, input any) (string, error) {
	res, err := t.callTool(ctx, input)
	if err != nil {
		return "", err
	}
	return ResultText(res), nil
}

// ExecuteContent is Execute with the result's binary content as parts
// that the model sees (see [ResultContent]): an image as an image block,
// audio and embedded binary resources as document blocks. The runtime
// calls it for every call of the tool.
func (t *Tool) ExecuteContent(ctx context.Context, input any) (string, []agentrt.Block, error) {
	res, err := t.callTool(ctx, input)
	if err != nil {
		return "", nil, err
	}
	text, parts := ResultContent(res)
	return text, parts, nil
}

// callTool calls the tool and returns its result, or a *ResultError for a
// result flagged isError.
func (t *Tool) callTool(ctx context.Context, input any) (*mcp.CallToolResult, error) {
	var args json.RawMessage
	switch in := input.(type) {
	case json.RawMessage:
		args = in
	case []byte:
		args = in
	case nil:
		args = json.RawMessage(`{}`)
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("cannot encode the input: %v", err)
		}
		args = b
	}
	args, err := decodeObject(args)
	if err != nil {
		return nil, err
	}
	res, err := t.client.call(ctx, t.def.Name, args)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, &ResultError{Tool: t.def.Name, Result: res, text: ResultText(res)}
	}
	return res, nil
}

// ResultError is a tool result that the server flagged isError: the tool
// ran and failed (or refused its input). Its Error text is the result's
// text, which the model sees in its is_error tool result.
type ResultError struct {
	// Tool is the tool's name on the server.
	Tool string
	// Result is the server's result, unchanged.
	Result *mcp.CallToolResult
	text   string
}

func (e *ResultError) Error() string {
	if e.text == "" {
		return fmt.Sprintf("the MCP tool %q failed without a message", e.Tool)
	}
	return e.text
}

// ResultText renders a tool result as the text a model sees: text content
// as is, images and audio as "[image image/png, 1234 bytes]", resource
// links as "[resource link URI "name" mime: description]", embedded text
// resources as "[resource URI mime]" followed by their text, embedded blobs
// as "[resource URI mime, N bytes]", one item per line. Structured content
// is given as JSON when the result has no text content; otherwise the text
// is used alone, as the MCP specification asks servers to put a text form
// of structured content in the text (some, such as server-filesystem, wrap
// the same text in a JSON object: sending both would double every result).
func ResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	parts := make([]string, 0, len(res.Content)+1)
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *mcp.ImageContent:
			parts = append(parts, describeData("image", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, describeData("audio", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			var sb strings.Builder
			sb.WriteString("[resource link ")
			sb.WriteString(c.URI)
			if c.Name != "" {
				fmt.Fprintf(&sb, " %q", c.Name)
			}
			if c.MIMEType != "" {
				sb.WriteString(" " + c.MIMEType)
			}
			if c.Description != "" {
				sb.WriteString(": " + c.Description)
			}
			sb.WriteString("]")
			parts = append(parts, sb.String())
		case *mcp.EmbeddedResource:
			parts = append(parts, describeResource(c.Resource))
		case nil:
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// ResultContent splits a tool result into the text a model reads and the
// parts it sees: text content, resource links, embedded text resources and
// (when there is no text) structured content go into the text as
// [ResultText] renders them; image content becomes an image block; audio
// content and embedded binary resources become document blocks of their
// media type (an embedded image, an image block), named by the resource's
// URI. Nothing is dropped: a provider that cannot take a part refuses the
// request with [agentrt.ErrUnsupportedContent].
func ResultContent(res *mcp.CallToolResult) (string, []agentrt.Block) {
	if res == nil {
		return "", nil
	}
	var parts []agentrt.Block
	rest := &mcp.CallToolResult{StructuredContent: res.StructuredContent}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			parts = append(parts, agentrt.ImageBlock(c.MIMEType, c.Data))
		case *mcp.AudioContent:
			parts = append(parts, agentrt.DocumentBlock("", c.MIMEType, c.Data))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Blob != nil {
				if strings.HasPrefix(r.MIMEType, "image/") {
					b := agentrt.ImageBlock(r.MIMEType, r.Blob)
					b.Name = r.URI
					parts = append(parts, b)
				} else {
					parts = append(parts, agentrt.DocumentBlock(r.URI, r.MIMEType, r.Blob))
				}
				continue
			}
			rest.Content = append(rest.Content, c)
		default:
			rest.Content = append(rest.Content, c)
		}
	}
	return ResultText(rest), parts
}

func describeData(kind, mime string, n int) string {
	if mime == "" {
		return fmt.Sprintf("[%s, %d bytes]", kind, n)
	}
	return fmt.Sprintf("[%s %s, %d bytes]", kind, mime, n)
}

func describeResource(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	head := "[resource " + r.URI
	if r.MIMEType != "" {
		head += " " + r.MIMEType
	}
	if r.Blob != nil {
		return fmt.Sprintf("%s, %d bytes]", head, len(r.Blob))
	}
	return head + "]\n" + r.Text
}

// assignNames sets the Spec of each tool: the model-facing name derived
// from prefix and the server's name (see toolName), made unique within the
// list, plus description, schema and read-only flag.
func assignNames(tools []agentrt.Tool, prefix string) {
	seen := make(map[string]bool, len(tools))
	for _, at := range tools {
		t := at.(*Tool)
		base := toolName(prefix, t.def.Name)
		name := base
		// A hashed name may itself clash (with a later server name equal
		// to it): hash again, with a counter, until the name is new.
		for n := 0; seen[name]; n++ {
			key := prefix + t.def.Name
			if n > 0 {
				key += "#" + strconv.Itoa(n)
			}
			name = hashedName(base, key)
		}
		seen[name] = true
		t.spec = agentrt.ToolSpec{
			Name:        name,
			Description: description(t.def),
			InputSchema: inputSchema(t.def),
			ReadOnly:    readOnly(t.def),
		}
	}
}

const maxNameLen = 64

// toolName returns prefix+name made to match ^[a-zA-Z0-9_-]{1,64}$: every
// other character becomes '_', and a name longer than 64 is cut to 55
// characters followed by '_' and 8 hex digits of a hash of the full name.
func toolName(prefix, name string) string {
	full := prefix + name
	var sb strings.Builder
	for _, r := range full {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	s := sb.String()
	if s == "" {
		return hashedName("tool", full)
	}
	if len(s) > maxNameLen {
		return hashedName(s, full)
	}
	return s
}

// hashedName returns s cut to 55 characters, '_' and 8 hex digits of the
// FNV-1a hash of full: 64 characters at most.
func hashedName(s, full string) string {
	h := fnv.New32a()
	h.Write([]byte(full))
	if len(s) > maxNameLen-9 {
		s = s[:maxNameLen-9]
	}
	return fmt.Sprintf("%s_%08x", s, h.Sum32())
}

func description(def *mcp.Tool) string {
	switch {
	case def.Description != "":
		return def.Description
	case def.Title != "":
		return def.Title
	case def.Annotations != nil && def.Annotations.Title != "":
		return def.Annotations.Title
	}
	return ""
}

// checkDefs refuses a tool list that agentrt cannot use: two tools of the
// same name (the server could not tell which one a call means) and input
// schemas that are not object schemas (ToolSpec.InputSchema must be one,
// and provider APIs refuse anything else). The error names every tool at
// fault.
func checkDefs(defs []*mcp.Tool) error {
	var errs []error
	seen := make(map[string]bool, len(defs))
	for _, def := range defs {
		if seen[def.Name] {
			errs = append(errs, fmt.Errorf("two tools are named %q", def.Name))
			continue
		}
		seen[def.Name] = true
		if err := checkSchema(inputSchema(def)); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", def.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkSchema reports whether schema is a JSON object with "type":
// "object", as the MCP specification and provider APIs require.
func checkSchema(schema json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		return fmt.Errorf("input schema is not a JSON object: %.100s", schema)
	}
	typ := top["type"] // set by inputSchema when the server gave none
	if !bytes.Equal(bytes.TrimSpace(typ), []byte(`"object"`)) {
		return fmt.Errorf(`input schema must have "type": "object", has "type": %.100s`, typ)
	}
	return nil
}

// inputSchema returns a tool's input schema: an object schema without a
// "type" (such as {}) gets "type": "object", which the MCP specification
// requires and provider APIs check; no schema is the empty object schema.
func inputSchema(def *mcp.Tool) json.RawMessage {
	if def.InputSchema != nil {
		if b, err := json.Marshal(def.InputSchema); err == nil && !bytes.Equal(b, []byte("null")) {
			var top map[string]json.RawMessage
			if json.Unmarshal(b, &top) == nil && top != nil && top["type"] == nil {
				top["type"] = json.RawMessage(`"object"`)
				if fixed, err := json.Marshal(top); err == nil {
					return fixed
				}
			}
			return b
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// readOnly is the tool's readOnlyHint, unless it is also annotated
// destructive: a tool that says it may destroy data is a write tool.
func readOnly(def *mcp.Tool) bool {
	a := def.Annotations
	if a == nil || !a.ReadOnlyHint {
		return false
	}
	return a.DestructiveHint == nil || !*a.DestructiveHint
}
