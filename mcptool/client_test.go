package mcptool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memServer connects clients to srv in memory. It counts the connections
// and can break the current one, as a crashing server would.
type memServer struct {
	srv *mcp.Server

	mu    sync.Mutex
	dials int
	conns []mcp.Connection // server sides, in dial order
}

func newMemServer(srv *mcp.Server) *memServer { return &memServer{srv: srv} }

// Dial is the Dialer.
func (m *memServer) Dial() mcp.Transport {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := m.srv.Connect(context.Background(), &recordingTransport{Transport: st, m: m}, nil); err != nil {
		panic(err)
	}
	m.mu.Lock()
	m.dials++
	m.mu.Unlock()
	return ct
}

func (m *memServer) Dials() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dials
}

// Break closes the server side of the latest connection abruptly.
func (m *memServer) Break() {
	m.mu.Lock()
	c := m.conns[len(m.conns)-1]
	m.mu.Unlock()
	_ = c.Close()
}

type recordingTransport struct {
	mcp.Transport
	m *memServer
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err == nil {
		t.m.mu.Lock()
		t.m.conns = append(t.m.conns, c)
		t.m.mu.Unlock()
	}
	return c, err
}

func ptr[T any](v T) *T { return &v }

var objectSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`)

// fixtureServer is an MCP server built on the go-sdk alone, with tools
// returning every kind of content.
func fixtureServer(t *testing.T) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	add := func(tool *mcp.Tool, h func(args map[string]any) *mcp.CallToolResult) {
		if tool.InputSchema == nil {
			tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		srv.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return h(args), nil
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add(&mcp.Tool{Name: "echo", Description: "Echo the text.", InputSchema: objectSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(a map[string]any) *mcp.CallToolResult { return text("echo: " + a["text"].(string)) })
	add(&mcp.Tool{Name: "write", Description: "Write something.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: ptr(false)}},
		func(map[string]any) *mcp.CallToolResult { return text("written") })
	add(&mcp.Tool{Name: "contradictory", Title: "Claims both",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(true)}},
		func(map[string]any) *mcp.CallToolResult { return text("ok") })
	add(&mcp.Tool{Name: "plain"}, func(map[string]any) *mcp.CallToolResult { return text("plain") })
	add(&mcp.Tool{Name: "weird.name/v2", Description: "A name models cannot use as is."},
		func(map[string]any) *mcp.CallToolResult { return text("weird") })
	add(&mcp.Tool{Name: "args"}, func(a map[string]any) *mcp.CallToolResult {
		b, _ := json.Marshal(a)
		return text(string(b))
	})
	add(&mcp.Tool{Name: "fail"}, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}
	})
	add(&mcp.Tool{Name: "media"}, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Here it is:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Description: "the file a"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "contents of b"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
		}}
	})
	add(&mcp.Tool{Name: "structured"}, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"b": 2, "a": 1}`}},
			StructuredContent: map[string]any{"a": 1, "b": 2},
		}
	})
	add(&mcp.Tool{Name: "structured_wrapped"}, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "line 1\nline 2"}},
			StructuredContent: map[string]any{"content": "line 1\nline 2"},
		}
	})
	add(&mcp.Tool{Name: "structured_only"}, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"temperature": 21}}
	})
	return srv
}

func connectFixture(t *testing.T, opts *mcptool.Options) (*mcptool.Client, *memServer, *mcp.Server) {
	t.Helper()
	srv := fixtureServer(t)
	ms := newMemServer(srv)
	c, err := mcptool.Connect(t.Context(), ms.Dial, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, ms, srv
}

func toolsByName(t *testing.T, tools []agentrt.Tool) map[string]agentrt.Tool {
	t.Helper()
	m := make(map[string]agentrt.Tool, len(tools))
	for _, tool := range tools {
		m[tool.Spec().Name] = tool
	}
	require.Len(t, m, len(tools), "tool names must be unique")
	return m
}

func call(t *testing.T, tool agentrt.Tool, input string) (string, error) {
	t.Helper()
	in, err := tool.Decode(json.RawMessage(input))
	require.NoError(t, err)
	return tool.Execute(t.Context(), in)
}

func TestClientToolSpecs(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFixture(t, &mcptool.Options{Prefix: "fx_"})
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)

	var names []string
	for _, tool := range tools {
		names = append(names, tool.Spec().Name)
	}
	assert.ElementsMatch(t, []string{"fx_echo", "fx_write", "fx_contradictory", "fx_plain", "fx_weird_name_v2",
		"fx_args", "fx_fail", "fx_media", "fx_structured", "fx_structured_wrapped", "fx_structured_only"}, names)

	byName := toolsByName(t, tools)
	echo := byName["fx_echo"].Spec()
	assert.Equal(t, "Echo the text.", echo.Description)
	assert.JSONEq(t, string(objectSchema), string(echo.InputSchema))
	assert.True(t, echo.ReadOnly, "readOnlyHint makes a read-only tool")

	assert.False(t, byName["fx_write"].Spec().ReadOnly)
	assert.False(t, byName["fx_contradictory"].Spec().ReadOnly, "destructiveHint wins over readOnlyHint")
	assert.Equal(t, "Claims both", byName["fx_contradictory"].Spec().Description, "title stands in for a missing description")
	assert.False(t, byName["fx_plain"].Spec().ReadOnly, "no annotations: a write tool")

	weird, ok := byName["fx_weird_name_v2"].(*mcptool.Tool)
	require.True(t, ok, "Client tools are *mcptool.Tool")
	assert.Equal(t, "weird.name/v2", weird.Definition().Name)
	out, err := call(t, weird, `{}`)
	require.NoError(t, err)
	assert.Equal(t, "weird", out, "the server is called with the tool's own name")
}

func TestClientExecute(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFixture(t, nil)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)

	tests := []struct {
		tool, input string
		want        string
		wantErr     string
	}{
		{tool: "echo", input: `{"text":"hi"}`, want: "echo: hi"},
		{tool: "echo", input: `"{\"text\":\"wrapped\"}"`, want: "echo: wrapped"},
		{tool: "args", input: ``, want: `{}`},
		{tool: "args", input: `{"n":1,"s":"x"}`, want: `{"n":1,"s":"x"}`},
		{tool: "fail", input: `{}`, wantErr: "no such file"},
		{tool: "media", input: `{}`, want: "Here it is:\n" +
			"[image image/png, 1234 bytes]\n" +
			"[audio audio/wav, 10 bytes]\n" +
			"[resource link file:///a.txt \"a\" text/plain: the file a]\n" +
			"[resource file:///b.txt text/plain]\ncontents of b\n" +
			"[resource file:///c.bin application/octet-stream, 3 bytes]"},
		{tool: "structured", input: `{}`, want: `{"b": 2, "a": 1}`},
		{tool: "structured_wrapped", input: `{}`, want: "line 1\nline 2"},
		{tool: "structured_only", input: `{}`, want: `{"temperature":21}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			out, err := call(t, byName[tt.tool], tt.input)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				var rerr *mcptool.ResultError
				require.ErrorAs(t, err, &rerr)
				assert.Equal(t, tt.tool, rerr.Tool)
				assert.True(t, rerr.Result.IsError)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestClientDecodeRejectsNonObjects(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFixture(t, nil)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	echo := toolsByName(t, tools)["echo"]
	for _, in := range []string{`[1]`, `"text"`, `3`, `null`, `true`, `{"text":`} {
		_, err := echo.Decode(json.RawMessage(in))
		assert.Error(t, err, "input %s", in)
	}
}

func TestClientExecuteAcceptsRewrittenInput(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFixture(t, nil)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	args := toolsByName(t, tools)["args"]
	// A permission checker may hand Execute a value other than Decode's.
	out, err := args.Execute(t.Context(), map[string]any{"k": "v"})
	require.NoError(t, err)
	assert.Equal(t, `{"k":"v"}`, out)
	_, err = args.Execute(t.Context(), []int{1})
	assert.ErrorContains(t, err, "must be a JSON object")
}

func TestClientUnknownToolKeepsConnection(t *testing.T) {
	t.Parallel()
	c, ms, srv := connectFixture(t, nil)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	plain := toolsByName(t, tools)["plain"]
	srv.RemoveTools("plain")
	_, err = call(t, plain, `{}`)
	require.Error(t, err, "a removed tool fails")
	assert.NotErrorIs(t, err, mcptool.ErrDisconnected)
	out, err := call(t, toolsByName(t, tools)["echo"], `{"text":"still here"}`)
	require.NoError(t, err)
	assert.Equal(t, "echo: still here", out)
	assert.Equal(t, 1, ms.Dials(), "a server's error response does not cause a reconnect")
}

func TestClientListChanged(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 10)
	c, ms, srv := connectFixture(t, &mcptool.Options{OnToolsChanged: func() { changed <- struct{}{} }})
	before, err := c.Tools(t.Context())
	require.NoError(t, err)
	again, err := c.Tools(t.Context())
	require.NoError(t, err)
	assert.Equal(t, before, again, "without a change, the same tools")

	srv.AddTool(&mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new tool"}}}, nil
		})
	select {
	case <-changed:
	case <-t.Context().Done():
		t.Fatal("no OnToolsChanged call")
	}
	after, err := c.Tools(t.Context())
	require.NoError(t, err)
	require.Len(t, after, len(before)+1)
	added, ok := toolsByName(t, after)["added"]
	require.True(t, ok, "the new tool is listed")
	out, err := call(t, added, `{}`)
	require.NoError(t, err)
	assert.Equal(t, "new tool", out)

	// Tools of the older list keep working.
	out, err = call(t, toolsByName(t, before)["echo"], `{"text":"old"}`)
	require.NoError(t, err)
	assert.Equal(t, "echo: old", out)
	assert.Equal(t, 1, ms.Dials())
}

func TestClientReconnectsAfterDisconnectDuringCall(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{}, nil
		})
	ms := newMemServer(srv)
	changed := make(chan struct{}, 10)
	c, err := mcptool.Connect(t.Context(), ms.Dial, &mcptool.Options{OnToolsChanged: func() { changed <- struct{}{} }})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)

	errc := make(chan error, 1)
	go func() {
		_, err := call(t, byName["block"], `{}`)
		errc <- err
	}()
	<-started
	ms.Break()
	err = <-errc
	require.ErrorIs(t, err, mcptool.ErrDisconnected)

	out, err := call(t, byName["echo"], `{"text":"back"}`)
	require.NoError(t, err, "the next call reconnects")
	assert.Equal(t, "echo: back", out)
	assert.Equal(t, 2, ms.Dials())
	select {
	case <-changed: // a reconnect may bring other tools: listeners hear of it
	case <-t.Context().Done():
		t.Fatal("no OnToolsChanged call after the reconnect")
	}
}

func TestClientCallCancelled(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	ms := newMemServer(srv)
	c, err := mcptool.Connect(t.Context(), ms.Dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = byName["hang"].Execute(ctx, json.RawMessage(`{}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, mcptool.ErrDisconnected)

	out, err := call(t, byName["echo"], `{"text":"x"}`)
	require.NoError(t, err)
	assert.Equal(t, "echo: x", out)
	assert.Equal(t, 1, ms.Dials(), "a cancelled call does not drop the connection")
}

func TestClientClosed(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFixture(t, nil)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	_, err = call(t, toolsByName(t, tools)["echo"], `{"text":"x"}`)
	assert.ErrorIs(t, err, mcptool.ErrClosed)
	_, err = c.Tools(t.Context())
	assert.ErrorIs(t, err, mcptool.ErrClosed)
}

func TestClientCloseDuringCall(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	started := make(chan struct{}, 1)
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	ms := newMemServer(srv)
	c, err := mcptool.Connect(t.Context(), ms.Dial, nil)
	require.NoError(t, err)
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, toolsByName(t, tools)["hang"], `{}`)
		errc <- err
	}()
	<-started
	require.NoError(t, c.Close())
	err = <-errc
	require.ErrorIs(t, err, mcptool.ErrClosed, "a call in progress fails when the client is closed")
	assert.Equal(t, 1, ms.Dials(), "and does not reconnect")
}

func TestConnectFails(t *testing.T) {
	t.Parallel()
	_, err := mcptool.Connect(t.Context(), mcptool.Stdio("/nonexistent/mcp-server"), nil)
	require.Error(t, err)
	assert.ErrorContains(t, err, "/nonexistent/mcp-server")
}

// TestStdioCrashReconnectAndClose runs the test binary as a stdio server:
// a crash during a call is an error and the next call starts a new
// process; Close leaves no process behind, not even a grandchild.
func TestStdioCrashReconnectAndClose(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("checks processes in /proc")
	}
	dial, cmds := testServerCommand(t)
	connectCtx, cancel := context.WithCancel(t.Context())
	c, err := mcptool.Connect(connectCtx, dial, nil)
	require.NoError(t, err)
	cancel() // the connection outlives Connect's context
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)

	pidOf := func() int {
		out, err := call(t, byName["pid"], `{}`)
		require.NoError(t, err)
		pid, err := strconv.Atoi(out)
		require.NoError(t, err)
		return pid
	}
	pid1 := pidOf()
	assert.Equal(t, cmds()[0].Process.Pid, pid1)

	_, err = call(t, byName["crash"], `{}`)
	require.ErrorIs(t, err, mcptool.ErrDisconnected)
	t.Logf("crash: %v", err)
	assert.ErrorContains(t, err, "the server exited with status 3")
	assert.ErrorContains(t, err, "test server: crashing on purpose", "the server's stderr is in the error")
	assert.True(t, processGone(pid1), "the crashed server is reaped")

	pid2 := pidOf()
	assert.NotEqual(t, pid1, pid2, "a new server process")
	require.Len(t, cmds(), 2)

	out, err := call(t, byName["spawn"], `{}`)
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(out)
	require.NoError(t, err)
	require.False(t, processGone(grandchild))

	require.NoError(t, c.Close())
	assert.True(t, processGone(pid2), "Close stops the server process")
	assert.NotNil(t, cmds()[1].ProcessState, "and waits for it")
	// SIGKILL is delivered asynchronously; the grandchild is gone (or a
	// zombie) almost at once.
	assert.Eventually(t, func() bool { return processGone(grandchild) }, 5*time.Second, 10*time.Millisecond,
		"Close kills the server's process group: no orphan")
}

// TestStreamableHTTP serves agentrt tools with NewServer over Streamable
// HTTP and uses them through a Client.
func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	srv := mcptool.NewServer([]agentrt.Tool{add}, nil)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	connectCtx, cancel := context.WithCancel(t.Context())
	c, err := mcptool.Connect(connectCtx, mcptool.StreamableHTTP(hs.URL), &mcptool.Options{Prefix: "calc_"})
	require.NoError(t, err)
	cancel() // the connection outlives Connect's context
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	require.Len(t, tools, 1)
	spec := tools[0].Spec()
	assert.Equal(t, "calc_add", spec.Name)
	assert.True(t, spec.ReadOnly)
	assert.JSONEq(t, string(add.Spec().InputSchema), string(spec.InputSchema))

	out, err := call(t, tools[0], `{"a":2,"b":40}`)
	require.NoError(t, err)
	assert.Equal(t, "42", out)

	// The server forgets the session (as after a restart): the client
	// reconnects, at the latest on the call after the one that fails.
	for ss := range srv.Sessions() {
		require.NoError(t, ss.Close())
	}
	out, err = call(t, tools[0], `{"a":1,"b":1}`)
	if err != nil {
		require.ErrorIs(t, err, mcptool.ErrDisconnected)
		out, err = call(t, tools[0], `{"a":1,"b":1}`)
	}
	require.NoError(t, err)
	assert.Equal(t, "2", out)
}
