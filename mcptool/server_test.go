package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type addIn struct {
	A int `json:"a" jsonschema:"description=first addend"`
	B int `json:"b" validate:"required"`
}

type noteIn struct {
	Text string `json:"text"`
}

// notebook is a pair of tools sharing state: a read-only one and a write one.
type notebook struct {
	notes []string
}

func (n *notebook) tools() []agentrt.Tool {
	return []agentrt.Tool{
		agentrt.NewTool("add", "Add two integers.",
			func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil },
			agentrt.ReadOnly()),
		agentrt.NewTool("append_note", "Append a note.",
			func(_ context.Context, in noteIn) (string, error) {
				n.notes = append(n.notes, in.Text)
				return "noted", nil
			}),
		agentrt.NewTool("fail", "Always fails.",
			func(context.Context, struct{}) (string, error) { return "", errors.New("disk full") },
			agentrt.ReadOnly()),
		agentrt.NewTool("boom", "Panics.",
			func(context.Context, struct{}) (string, error) { panic("kaboom") },
			agentrt.ReadOnly()),
		agentrt.NewTool("slow", "Takes too long.",
			func(ctx context.Context, _ struct{}) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			},
			agentrt.ReadOnly(), agentrt.WithTimeout(20*time.Millisecond)),
	}
}

// serve connects a go-sdk client to srv in memory.
func serve(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err)
	return mcptool.ResultText(res), res.IsError
}

func TestServerListsTools(t *testing.T) {
	t.Parallel()
	nb := &notebook{}
	tools := nb.tools()
	cs := serve(t, mcptool.NewServer(tools, &mcptool.ServerOptions{Name: "notes", Version: "1.2.3", Instructions: "Take notes."}))

	init := cs.InitializeResult()
	assert.Equal(t, "notes", init.ServerInfo.Name)
	assert.Equal(t, "1.2.3", init.ServerInfo.Version)
	assert.Equal(t, "Take notes.", init.Instructions)

	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, len(tools))
	listed := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = tool
	}
	for _, tool := range tools {
		spec := tool.Spec()
		got, ok := listed[spec.Name]
		require.True(t, ok, spec.Name)
		assert.Equal(t, spec.Description, got.Description)
		schema, err := json.Marshal(got.InputSchema)
		require.NoError(t, err)
		assert.JSONEq(t, string(spec.InputSchema), string(schema), "the schema is carried across")
		require.NotNil(t, got.Annotations)
		assert.Equal(t, spec.ReadOnly, got.Annotations.ReadOnlyHint, spec.Name)
	}
	assert.Contains(t, string(mustJSON(t, listed["add"].InputSchema)), "first addend")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestServerCalls(t *testing.T) {
	t.Parallel()
	nb := &notebook{}
	cs := serve(t, mcptool.NewServer(nb.tools(), nil))

	tests := []struct {
		name, tool, args string
		want             string // substring of the result text
		wantError        bool
	}{
		{name: "ok", tool: "add", args: `{"a":2,"b":40}`, want: "42"},
		{name: "lenient decoding", tool: "add", args: `{"a":"2","b":40}`, want: "42"},
		{name: "invalid input", tool: "add", args: `{"a":2}`, want: `"b"`, wantError: true},
		{name: "unknown field", tool: "add", args: `{"a":1,"b":2,"c":3}`, want: `"c"`, wantError: true},
		{name: "execute error", tool: "fail", args: `{}`, want: "disk full", wantError: true},
		{name: "panic", tool: "boom", args: `{}`, want: "kaboom", wantError: true},
		{name: "timeout", tool: "slow", args: `{}`, want: "timed out", wantError: true},
		{name: "write denied by default", tool: "append_note", args: `{"text":"x"}`, want: "permission denied", wantError: true},
		{name: "still serving after a panic", tool: "add", args: `{"a":1,"b":1}`, want: "2"},
	}
	for _, tt := range tests { // in order: the last one follows the panic
		text, isError := callText(t, cs, tt.tool, tt.args)
		assert.Equal(t, tt.wantError, isError, "%s: %s", tt.name, text)
		assert.Contains(t, text, tt.want, tt.name)
	}
	assert.Empty(t, nb.notes, "a denied write did not run")
}

func TestServerPermission(t *testing.T) {
	t.Parallel()
	nb := &notebook{}
	var asked []*agentrt.ToolCall
	perm := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		asked = append(asked, req)
		if req.Tool.ReadOnly {
			return agentrt.Decision{Allow: true}, nil
		}
		in := req.Input.(noteIn)
		switch {
		case strings.Contains(in.Text, "secret"):
			return agentrt.Decision{Reason: "no secrets in notes"}, nil
		case strings.Contains(in.Text, "shout"):
			return agentrt.Decision{Allow: true, Input: noteIn{Text: strings.ToUpper(in.Text)}}, nil
		case strings.Contains(in.Text, "raw"):
			return agentrt.Decision{Allow: true, Input: json.RawMessage(`{"text":"rewritten"}`)}, nil
		case strings.Contains(in.Text, "error"):
			return agentrt.Decision{}, errors.New("checker unavailable")
		}
		return agentrt.Decision{Allow: true}, nil
	})
	cs := serve(t, mcptool.NewServer(nb.tools(), &mcptool.ServerOptions{Permission: perm}))

	text, isError := callText(t, cs, "append_note", `{"text":"hello"}`)
	assert.False(t, isError, text)
	text, isError = callText(t, cs, "append_note", `{"text":"a secret"}`)
	assert.True(t, isError)
	assert.Equal(t, "no secrets in notes", text)
	_, isError = callText(t, cs, "append_note", `{"text":"shout it"}`)
	assert.False(t, isError)
	_, isError = callText(t, cs, "append_note", `{"text":"raw"}`)
	assert.False(t, isError)
	text, isError = callText(t, cs, "append_note", `{"text":"error"}`)
	assert.True(t, isError)
	assert.Contains(t, text, "checker unavailable")
	_, isError = callText(t, cs, "add", `{"a":1,"b":2}`)
	assert.False(t, isError)

	assert.Equal(t, []string{"hello", "SHOUT IT", "rewritten"}, nb.notes)
	require.Len(t, asked, 6)
	assert.Equal(t, "append_note", asked[0].Tool.Name)
	assert.Equal(t, noteIn{Text: "hello"}, asked[0].Input, "the checker sees the decoded input")
	assert.JSONEq(t, `{"text":"hello"}`, string(asked[0].RawInput))
}

// TestServerDenialWording checks that the default checker's denial, which
// agentrt words for an agent's own model and programmer, reaches a remote
// MCP client worded for it, also through a checker that delegates to the
// default; a checker's own reason is sent as is.
func TestServerDenialWording(t *testing.T) {
	t.Parallel()
	delegating := agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if strings.Contains(req.Input.(noteIn).Text, "secret") {
			return agentrt.Decision{Reason: "no secrets in notes"}, nil
		}
		return agentrt.AllowReadOnly().Check(ctx, req)
	})
	tests := []struct {
		name string
		perm agentrt.PermissionChecker
		text string
		want string
	}{
		{name: "default", perm: nil, text: "x",
			want: `permission denied: "append_note" is a write tool, and this MCP server lets its clients run read-only tools only`},
		{name: "explicit AllowReadOnly", perm: agentrt.AllowReadOnly(), text: "x",
			want: `permission denied: "append_note" is a write tool, and this MCP server lets its clients run read-only tools only`},
		{name: "delegating to AllowReadOnly", perm: delegating, text: "x",
			want: `permission denied: "append_note" is a write tool, and this MCP server lets its clients run read-only tools only`},
		{name: "own reason", perm: delegating, text: "a secret", want: "no secrets in notes"},
		{name: "no reason", text: "x", want: `permission denied: the call of "append_note" was refused`,
			perm: agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
				return agentrt.Decision{}, nil
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nb := &notebook{}
			cs := serve(t, mcptool.NewServer(nb.tools(), &mcptool.ServerOptions{Permission: tt.perm}))
			text, isError := callText(t, cs, "append_note", input(t, noteIn{Text: tt.text}))
			assert.True(t, isError)
			assert.Equal(t, tt.want, text)
			assert.Empty(t, nb.notes)
		})
	}
}

func TestNewServerPanicsOnDuplicateNames(t *testing.T) {
	t.Parallel()
	tools := (&notebook{}).tools()
	assert.PanicsWithValue(t, `mcptool: NewServer: two tools named "add"`, func() {
		mcptool.NewServer(append(tools, tools[0]), nil)
	})
}

// TestServerClientRoundTrip serves agentrt tools and uses them again as
// agentrt tools through a Client: names, schemas and read-only flags
// survive the trip.
func TestServerClientRoundTrip(t *testing.T) {
	t.Parallel()
	tools := (&notebook{}).tools()
	ms := newMemServer(mcptool.NewServer(tools, nil))
	c, err := mcptool.Connect(t.Context(), ms.Dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	got, err := c.Tools(t.Context())
	require.NoError(t, err)
	require.Len(t, got, len(tools))
	byName := toolsByName(t, got) // the go-sdk server lists tools sorted by name
	for _, tool := range tools {
		want := tool.Spec()
		spec := byName[want.Name].Spec()
		assert.Equal(t, want.Name, spec.Name)
		assert.Equal(t, want.Description, spec.Description)
		assert.Equal(t, want.ReadOnly, spec.ReadOnly, want.Name)
		assert.JSONEq(t, string(want.InputSchema), string(spec.InputSchema))
	}
	out, err := call(t, byName["add"], `{"a":20,"b":22}`)
	require.NoError(t, err)
	assert.Equal(t, "42", out)
	_, err = call(t, byName["fail"], `{}`)
	assert.EqualError(t, err, "disk full")
}
