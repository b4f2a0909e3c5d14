package mcptool

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 70)
	tests := []struct {
		prefix, name, want string
	}{
		{"", "read_file", "read_file"},
		{"fs_", "read_file", "fs_read_file"},
		{"ev-", "get-sum", "ev-get-sum"},
		{"", "weird.name/v2", "weird_name_v2"},
		{"", "héllo wörld", "h_llo_w_rld"},
		{"my server.", "x", "my_server_x"},
		{"", strings.Repeat("y", 64), strings.Repeat("y", 64)},
		{"", long, strings.Repeat("x", 55) + "_" + hashOf(long)},
		{"p_", long, "p_" + strings.Repeat("x", 53) + "_" + hashOf("p_"+long)},
		{"", "", "tool_" + hashOf("")},
	}
	for _, tt := range tests {
		got := toolName(tt.prefix, tt.name)
		assert.Equal(t, tt.want, got, "toolName(%q, %q)", tt.prefix, tt.name)
		assert.Regexp(t, validName, got)
		assert.Equal(t, got, toolName(tt.prefix, tt.name), "deterministic")
	}
	assert.NotEqual(t, toolName("", long+"a"), toolName("", long+"b"), "long names that differ at the end stay distinct")
}

func hashOf(s string) string {
	h := hashedName("", s)
	return h[1:]
}

func TestAssignNamesMakesNamesUnique(t *testing.T) {
	t.Parallel()
	var tools []agentrt.Tool
	for _, n := range []string{"a.b", "a_b", "a/b", "c"} {
		tools = append(tools, &Tool{def: &mcp.Tool{Name: n}})
	}
	assignNames(tools, "")
	seen := map[string]bool{}
	for _, tool := range tools {
		name := tool.Spec().Name
		assert.Regexp(t, validName, name)
		assert.False(t, seen[name], "duplicate %q", name)
		seen[name] = true
	}
	assert.Equal(t, "a_b", tools[0].Spec().Name, "the first keeps the plain name")
	assert.Equal(t, "a_b_"+hashOf("a_b"), tools[1].Spec().Name)
	assert.Equal(t, "a_b_"+hashOf("a/b"), tools[2].Spec().Name)
	assert.Equal(t, "c", tools[3].Spec().Name)
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	tests := []struct {
		name string
		ann  *mcp.ToolAnnotations
		want bool
	}{
		{"no annotations", nil, false},
		{"readOnlyHint false", &mcp.ToolAnnotations{}, false},
		{"readOnlyHint", &mcp.ToolAnnotations{ReadOnlyHint: true}, true},
		{"readOnlyHint, not destructive", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}, true},
		{"readOnlyHint and destructiveHint", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, false},
		{"destructiveHint false alone", &mcp.ToolAnnotations{DestructiveHint: &no}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, readOnly(&mcp.Tool{Annotations: tt.ann}), tt.name)
	}
}

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{in: ``, want: `{}`},
		{in: `  `, want: `{}`},
		{in: `{"a":1}`, want: `{"a":1}`},
		{in: ` {"a":1} `, want: `{"a":1}`},
		{in: `"{\"a\":1}"`, want: `{"a":1}`},
		{in: `"not json"`, wantErr: "got a string"},
		{in: `"[1]"`, wantErr: "got a string"},
		{in: `[1]`, wantErr: "got an array"},
		{in: `null`, wantErr: "got null"},
		{in: `12`, wantErr: "got a number"},
		{in: `false`, wantErr: "got a boolean"},
		{in: `{"a":`, wantErr: "not valid JSON"},
	}
	for _, tt := range tests {
		got, err := decodeObject(json.RawMessage(tt.in))
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, "input %s", tt.in)
			continue
		}
		require.NoError(t, err, "input %s", tt.in)
		assert.Equal(t, tt.want, string(got))
	}
}

func TestInputSchemaDefault(t *testing.T) {
	t.Parallel()
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(inputSchema(&mcp.Tool{})))
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"string"}}}`,
		string(inputSchema(&mcp.Tool{InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}})))
}

func TestResultTextEdgeCases(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", ResultText(nil))
	assert.Equal(t, "", ResultText(&mcp.CallToolResult{}))
	assert.Equal(t, "[image, 3 bytes]\n[1,2]", ResultText(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 3}}},
		StructuredContent: []int{1, 2},
	}), "structured content is added when there is no text")
	assert.Equal(t, "a\n\nb", ResultText(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: ""}, &mcp.TextContent{Text: "b"},
	}}))
	err := &ResultError{Tool: "x"}
	assert.Equal(t, `the MCP tool "x" failed without a message`, err.Error())
}

func TestResultContentParts(t *testing.T) {
	t.Parallel()
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "look:"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNG")},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF")}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.gif", MIMEType: "image/gif", Blob: []byte("GIF")}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c.txt", MIMEType: "text/plain", Text: "hello"}},
		&mcp.ResourceLink{URI: "file:///d", Name: "d"},
	}}
	text, parts := ResultContent(res)
	assert.Equal(t, "look:\n[resource file:///c.txt text/plain]\nhello\n[resource link file:///d \"d\"]", text)
	gif := agentrt.ImageBlock("image/gif", []byte("GIF"))
	gif.Name = "file:///b.gif"
	assert.Equal(t, []agentrt.Block{
		agentrt.ImageBlock("image/png", []byte("PNG")),
		agentrt.DocumentBlock("", "audio/wav", []byte("RIFF")),
		agentrt.DocumentBlock("file:///a.pdf", "application/pdf", []byte("%PDF")),
		gif,
	}, parts)
	text, parts = ResultContent(nil)
	assert.Empty(t, text)
	assert.Nil(t, parts)
}
