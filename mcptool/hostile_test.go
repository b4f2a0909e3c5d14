package mcptool_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileServer is an MCP server, in the test process, that answers with
// whatever a test scripts: raw JSON for tools/list and, per tool, a raw
// reply to tools/call, a reply that never comes, a connection closed in
// the middle of a call, or a handler that panics. It speaks JSON-RPC over
// pipes, as a stdio server does, through the go-sdk's IOTransport.
type hostileServer struct {
	// tools is the result of tools/list, as raw JSON.
	tools string
	// call returns the reply to a call of the tool name.
	call func(name string) hostileReply

	mu    sync.Mutex
	dials int
	wg    sync.WaitGroup
}

// hostileReply is what the hostileServer does with one tools/call.
type hostileReply struct {
	result string // the result, raw JSON
	line   []byte // or a whole raw line (without its newline), %ID% replaced by the request's id
	hang   bool   // or: never answer
	close  bool   // or: close the connection, as a crashed process does
	panic  string // or: panic in the handler; the server dies of it
	code   int    // or: a JSON-RPC error with this code
}

// dial is the hostileServer's Dialer: a fresh pair of pipes and a goroutine
// serving the server's end.
func (h *hostileServer) dial() mcp.Transport {
	h.mu.Lock()
	h.dials++
	h.mu.Unlock()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer sw.Close()
		defer sr.Close()
		h.serve(sr, sw)
	}()
	return &mcp.IOTransport{Reader: cr, Writer: cw}
}

func (h *hostileServer) dialCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dials
}

// serve answers the requests read from r until the client goes away or a
// scripted reply ends the connection.
func (h *hostileServer) serve(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var wmu sync.Mutex
	write := func(line []byte) bool {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := w.Write(append(line, '\n'))
		return err == nil
	}
	respond := func(id json.RawMessage, result string) bool {
		return write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`))
	}
	fail := func(id json.RawMessage, code int, msg string) bool {
		b, _ := json.Marshal(msg)
		return write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, b)))
	}
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification, or garbage
		}
		switch req.Method {
		case "initialize":
			v, _ := json.Marshal(req.Params.ProtocolVersion)
			respond(req.ID, `{"protocolVersion":`+string(v)+`,"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile","version":"0"}}`)
		case "ping":
			respond(req.ID, `{}`)
		case "tools/list":
			respond(req.ID, h.tools)
		case "tools/call":
			rep := hostileReply{result: `{"content":[{"type":"text","text":"ok"}]}`}
			if h.call != nil {
				rep = h.call(req.Params.Name)
			}
			switch {
			case rep.hang:
			case rep.close:
				return
			case rep.panic != "":
				if crashed(func() { panic(rep.panic) }) {
					return
				}
			case rep.code != 0:
				fail(req.ID, rep.code, "internal error in "+req.Params.Name)
			case rep.line != nil:
				write(bytes.ReplaceAll(rep.line, []byte("%ID%"), req.ID))
			default:
				respond(req.ID, rep.result)
			}
		default:
			fail(req.ID, -32601, "method not found: "+req.Method)
		}
	}
}

// crashed runs f and reports whether it panicked: the hostile server dies
// of a panic in a handler, as a server process does.
func crashed(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}

// connect connects a Client to h, failing the test on error, and closes
// it at the end of the test.
func (h *hostileServer) connect(t *testing.T) *mcptool.Client {
	t.Helper()
	c, err := h.connectErr(t)
	require.NoError(t, err)
	return c
}

func (h *hostileServer) connectErr(t *testing.T) (*mcptool.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcptool.Connect(ctx, h.dial, nil)
	t.Cleanup(func() {
		if c != nil {
			_ = c.Close()
		}
		h.wg.Wait()
	})
	return c, err
}

// toolsJSON is a tools/list result of tools each with a name and the
// default schema.
func toolsJSON(names ...string) string {
	defs := make([]map[string]any, 0, len(names))
	for _, n := range names {
		defs = append(defs, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
	}
	b, _ := json.Marshal(map[string]any{"tools": defs})
	return string(b)
}

func toolByName(t *testing.T, tools []agentrt.Tool, name string) *mcptool.Tool {
	t.Helper()
	for _, tool := range tools {
		if mt := tool.(*mcptool.Tool); mt.Definition().Name == name {
			return mt
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// hostileTimeout bounds each call of these tests that must not hang.
const hostileTimeout = 2 * time.Second

// callTool calls the tool named name (the server's name) of c with an
// empty input and a deadline of d, and checks that it returned in time.
func callTool(t *testing.T, c *mcptool.Client, name string, d time.Duration) (string, []agentrt.Block, error) {
	t.Helper()
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	text, parts, err := toolByName(t, tools, name).ExecuteContent(ctx, json.RawMessage(`{}`))
	assert.Less(t, time.Since(start), d+500*time.Millisecond, "the call of %q returned within its deadline", name)
	return text, parts, err
}

func fnvHex(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// checkUsable checks that tools are what an Agent accepts: valid, unique
// names and object input schemas.
func checkUsable(t *testing.T, tools []agentrt.Tool) {
	t.Helper()
	seen := map[string]bool{}
	for _, tool := range tools {
		s := tool.Spec()
		assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, s.Name)
		assert.False(t, seen[s.Name], "two tools named %q", s.Name)
		seen[s.Name] = true
		var top map[string]any
		require.NoError(t, json.Unmarshal(s.InputSchema, &top), "%s: schema %s", s.Name, s.InputSchema)
		assert.Equal(t, "object", top["type"], "%s: schema %s", s.Name, s.InputSchema)
	}
	ag := &agentrt.Agent{Tools: tools, Planner: agenttest.Script(agenttest.Reply("ok"))}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "hi"))
	require.NoError(t, err, "an Agent accepts the tools")
}

// An object schema without a "type" ({}, or properties alone) gets
// "type": "object", as the MCP specification has it: the tools work.
func TestHostileSchemaWithoutTypeGetsObject(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: `{"tools":[{"name":"empty","inputSchema":{}},{"name":"props","inputSchema":{"properties":{"a":{"type":"string"}}}}]}`}
	c := h.connect(t)
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	checkUsable(t, tools)
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"string"}}}`, string(toolByName(t, tools, "props").Spec().InputSchema))
}

// TestHostileToolListRefused: a tool list agentrt cannot use makes
// Connect fail, at once, with an error naming each tool at fault.
func TestHostileToolListRefused(t *testing.T) {
	t.Parallel()
	schema := func(name, s string) string {
		return `{"tools":[{"name":"fine","inputSchema":{"type":"object"}},{"name":"` + name + `","inputSchema":` + s + `}]}`
	}
	tests := []struct {
		name, tools string
		want        []string
	}{
		{"duplicate names", toolsJSON("dup", "fine", "dup", "other", "other"), []string{`two tools are named "dup"`, `two tools are named "other"`}},
		{"string schema", schema("str", `"an object, trust me"`), []string{`tool "str"`, "not a JSON object"}},
		{"array schema", schema("arr", `[{"type":"object"}]`), []string{`tool "arr"`, "not a JSON object"}},
		{"boolean schema", schema("yes", `true`), []string{`tool "yes"`, "not a JSON object"}},
		{"number schema", schema("num", `42`), []string{`tool "num"`, "not a JSON object"}},
		{"string type", schema("s", `{"type":"string"}`), []string{`tool "s"`, `"type": "string"`}},
		{"type list", schema("l", `{"type":["object","null"]}`), []string{`tool "l"`, `"type": ["object","null"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileServer{tools: tt.tools}
			start := time.Now()
			c, err := h.connectErr(t)
			assert.Less(t, time.Since(start), hostileTimeout)
			require.Error(t, err)
			assert.Nil(t, c)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), `"fine"`, "only the tools at fault are named")
		})
	}
}

// TestHostileToolNamesAccepted: names agentrt refuses, a missing schema
// and a huge description make tools an Agent accepts, each called by
// the server's own name, with nothing cut.
func TestHostileToolNamesAccepted(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Describes at length. ", 50_000) // 1 MB
	names := []string{"", "has space", "a/b", "a.b", "ünïcødé", "emoji😀", strings.Repeat("n", 200), "a_b", "ctrl\x00\n", "-"}
	defs := []map[string]any{{"name": "huge", "description": huge, "inputSchema": map[string]any{"type": "object"}}, {"name": "noschema"}}
	for _, n := range names {
		defs = append(defs, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	list, err := json.Marshal(map[string]any{"tools": defs})
	require.NoError(t, err)
	var calls []string
	var mu sync.Mutex
	h := &hostileServer{tools: string(list), call: func(name string) hostileReply {
		mu.Lock()
		calls = append(calls, name)
		mu.Unlock()
		b, _ := json.Marshal(name)
		return hostileReply{result: `{"content":[{"type":"text","text":` + string(b) + `}]}`}
	}}
	c := h.connect(t)
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, len(defs), "no tool left out")
	checkUsable(t, tools)
	assert.Equal(t, huge, toolByName(t, tools, "huge").Spec().Description, "the description is not cut")
	for _, n := range append(names, "huge", "noschema") {
		text, _, err := callTool(t, c, n, hostileTimeout)
		require.NoError(t, err)
		assert.Equal(t, strings.ToValidUTF8(n, "\uFFFD"), text)
	}
	assert.Len(t, calls, len(defs))
}

// TestHostileHashedNameClash: the hashed name given to a clashing name
// can itself be taken by a tool listed before; the names stay unique.
// Regression: the third tool got the first one's name, and the Agent
// refused the list ("two tools are named ...").
func TestHostileHashedNameClash(t *testing.T) {
	t.Parallel()
	taken := "a_b_" + fnvHex("a.b")
	h := &hostileServer{tools: toolsJSON(taken, "a_b", "a.b")}
	c := h.connect(t)
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 3)
	checkUsable(t, tools)
	assert.Equal(t, taken, tools[0].Spec().Name)
	assert.Equal(t, "a_b", tools[1].Spec().Name)
	assert.NotEqual(t, taken, tools[2].Spec().Name)
}

// TestHostileDuplicateToolNames: two tools of the same name are refused.
// Regression: the second was renamed and listed, though calling it called
// whichever tool the server runs under that name.
func TestHostileDuplicateToolNames(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: `{"tools":[` +
		`{"name":"delete","description":"Deletes nothing, safely.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
		`{"name":"delete","description":"Deletes everything.","inputSchema":{"type":"object"}}]}`}
	_, err := h.connectErr(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `two tools are named "delete"`)
}

// TestHostileInputSchemaNotObject: a schema that is not an object schema
// is refused at setup. Regression: it was passed on as is, and the run
// failed at its first model request (the Anthropic adapter requires
// "type": "object"), or the model was given a tool it could not call.
func TestHostileInputSchemaNotObject(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: `{"tools":[{"name":"strange","inputSchema":{"type":"string"}}]}`}
	_, err := h.connectErr(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tool "strange"`)
}

// resultCase is one hostile call result and what the model must get.
type resultCase struct {
	name   string
	result string
	text   string // the text, exactly, unless check is set
	check  func(t *testing.T, text string, parts []agentrt.Block, err error)
}

func hostileResults() []resultCase {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	bigText := strings.Repeat("0123456789abcdef", 5<<20/16) // 5 MB
	return []resultCase{
		{name: "text", result: `{"content":[{"type":"text","text":"hello"},{"type":"text","text":""},{"type":"text","text":"world"}]}`, text: "hello\n\nworld"},
		{name: "image", result: `{"content":[{"type":"text","text":"see"},{"type":"image","data":"` + b64("PNG") + `","mimeType":"image/png"}]}`,
			check: func(t *testing.T, text string, parts []agentrt.Block, err error) {
				require.NoError(t, err)
				assert.Equal(t, "see", text)
				require.Len(t, parts, 1)
				assert.Equal(t, agentrt.ImageBlock("image/png", []byte("PNG")), parts[0])
			}},
		{name: "image_unknown_mime", result: `{"content":[{"type":"image","data":"` + b64("??") + `","mimeType":"image/x-never-heard"},{"type":"image","data":"` + b64("!") + `"}]}`,
			check: func(t *testing.T, text string, parts []agentrt.Block, err error) {
				// Passed on as is: the provider refuses what it cannot
				// take, with ErrUnsupportedContent (package doc).
				require.NoError(t, err)
				require.Len(t, parts, 2)
				assert.Equal(t, agentrt.ImageBlock("image/x-never-heard", []byte("??")), parts[0])
				assert.Equal(t, agentrt.ImageBlock("", []byte("!")), parts[1])
			}},
		{name: "audio", result: `{"content":[{"type":"audio","data":"` + b64("RIFF") + `","mimeType":"audio/wav"}]}`,
			check: func(t *testing.T, text string, parts []agentrt.Block, err error) {
				require.NoError(t, err)
				assert.Empty(t, text)
				require.Len(t, parts, 1)
				assert.Equal(t, agentrt.DocumentBlock("", "audio/wav", []byte("RIFF")), parts[0])
			}},
		{name: "resource_text", result: `{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"inside"}}]}`,
			text: "[resource file:///a.txt text/plain]\ninside"},
		{name: "resource_blob", result: `{"content":[{"type":"resource","resource":{"uri":"file:///a.pdf","mimeType":"application/pdf","blob":"` + b64("%PDF") + `"}},{"type":"resource","resource":{"uri":"file:///i.gif","mimeType":"image/gif","blob":"` + b64("GIF") + `"}}]}`,
			check: func(t *testing.T, text string, parts []agentrt.Block, err error) {
				require.NoError(t, err)
				require.Len(t, parts, 2)
				assert.Equal(t, agentrt.DocumentBlock("file:///a.pdf", "application/pdf", []byte("%PDF")), parts[0])
				assert.Equal(t, agentrt.BlockImage, parts[1].Type)
				assert.Equal(t, "file:///i.gif", parts[1].Name)
				assert.Equal(t, []byte("GIF"), parts[1].Data)
			}},
		{name: "resource_empty", result: `{"content":[{"type":"resource"}]}`, text: "[resource]"},
		{name: "resource_link", result: `{"content":[{"type":"resource_link","uri":"https://x.test/r","name":"r","mimeType":"text/html","description":"a page"}]}`,
			text: `[resource link https://x.test/r "r" text/html: a page]`},
		{name: "structured_only", result: `{"content":[],"structuredContent":{"n":1}}`, text: `{"n":1}`},
		{name: "structured_array", result: `{"structuredContent":[1,"two",null]}`, text: `[1,"two",null]`},
		{name: "structured_with_text", result: `{"content":[{"type":"text","text":"n is 1"}],"structuredContent":{"n":1}}`, text: "n is 1"},
		{name: "structured_mismatch", result: `{"structuredContent":{"n":"not a number","extra":true}}`, text: `{"extra":true,"n":"not a number"}`},
		{name: "empty_content", result: `{"content":[]}`, text: ""},
		{name: "no_content", result: `{}`, text: ""},
		{name: "big_text", result: `{"content":[{"type":"text","text":"` + bigText + `"}]}`,
			check: func(t *testing.T, text string, parts []agentrt.Block, err error) {
				require.NoError(t, err)
				assert.Len(t, text, len(bigText))
				assert.True(t, text == bigText, "5 MB of text arrive whole")
			}},
		{name: "invalid_utf8", result: "{\"content\":[{\"type\":\"text\",\"text\":\"a\xff\xfeb \\udc00 c\"}]}", text: "a\uFFFD\uFFFDb \uFFFD c"},
		{name: "bad_base64", result: `{"content":[{"type":"text","text":"see"},{"type":"image","data":"!!! not base64 !!!","mimeType":"image/png"}]}`},
		{name: "unknown_kind", result: `{"content":[{"type":"video","data":"AAAA"}]}`},
		{name: "null_item", result: `{"content":[null]}`},
		{name: "not_an_object", result: `"just a string"`},
		{name: "content_not_a_list", result: `{"content":{"type":"text","text":"x"}}`},
	}
}

// badResults are the hostileResults that cannot be read.
var badResults = map[string]bool{"bad_base64": true, "unknown_kind": true, "null_item": true, "not_an_object": true, "content_not_a_list": true}

// TestHostileResultContent: each kind of content reaches the model as
// text or a part, and a result that cannot be read fails the call with
// ErrBadResult naming the tool, keeping the connection.
func TestHostileResultContent(t *testing.T) {
	t.Parallel()
	cases := hostileResults()
	byName := map[string]string{}
	var names []string
	for _, rc := range cases {
		byName[rc.name] = rc.result
		names = append(names, rc.name)
	}
	h := &hostileServer{tools: toolsJSON(names...), call: func(name string) hostileReply { return hostileReply{result: byName[name]} }}
	c := h.connect(t)
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			text, parts, err := callTool(t, c, rc.name, 10*time.Second)
			switch {
			case badResults[rc.name]:
				require.ErrorIs(t, err, mcptool.ErrBadResult)
				assert.NotErrorIs(t, err, mcptool.ErrDisconnected)
				assert.Contains(t, err.Error(), `"`+rc.name+`"`, "the error names the tool")
			case rc.check != nil:
				rc.check(t, text, parts, err)
			default:
				require.NoError(t, err)
				assert.Equal(t, rc.text, text)
				assert.Empty(t, parts)
			}
			assert.True(t, utf8.ValidString(text))
		})
	}
	assert.Equal(t, 1, h.dialCount(), "no result made the client reconnect")
}

// TestHostileBadResultKeepsConnection: a result the go-sdk cannot decode
// is an error naming the tool; the server is not restarted. Regression:
// the call failed with ErrDisconnected ("connection to the MCP server was
// lost"), and the client dropped the connection, restarting a stdio
// server and losing its state.
func TestHostileBadResultKeepsConnection(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: toolsJSON("shot", "ok"), call: func(name string) hostileReply {
		if name == "shot" {
			return hostileReply{result: `{"content":[{"type":"image","data":"%%%","mimeType":"image/png"}]}`}
		}
		return hostileReply{result: `{"content":[{"type":"text","text":"fine"}]}`}
	}}
	c := h.connect(t)
	_, _, err := callTool(t, c, "shot", hostileTimeout)
	require.ErrorIs(t, err, mcptool.ErrBadResult)
	assert.NotErrorIs(t, err, mcptool.ErrDisconnected)
	assert.Contains(t, err.Error(), `"shot"`)
	text, _, err := callTool(t, c, "ok", hostileTimeout)
	require.NoError(t, err)
	assert.Equal(t, "fine", text)
	assert.Equal(t, 1, h.dialCount(), "the connection was kept")
}

// TestHostileIsError: a result flagged isError, with or without content,
// is a *ResultError whose text the model sees, never an empty one.
func TestHostileIsError(t *testing.T) {
	t.Parallel()
	results := map[string]string{
		"with_text":       `{"isError":true,"content":[{"type":"text","text":"disk full"}]}`,
		"without_content": `{"isError":true}`,
		"empty_content":   `{"isError":true,"content":[]}`,
		"with_image":      `{"isError":true,"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
		"structured":      `{"isError":true,"structuredContent":{"code":7}}`,
	}
	want := map[string]string{
		"with_text":       "disk full",
		"without_content": `the MCP tool "without_content" failed without a message`,
		"empty_content":   `the MCP tool "empty_content" failed without a message`,
		"with_image":      "[image image/png, 3 bytes]",
		"structured":      `{"code":7}`,
	}
	var names []string
	for n := range results {
		names = append(names, n)
	}
	h := &hostileServer{tools: toolsJSON(names...), call: func(name string) hostileReply { return hostileReply{result: results[name]} }}
	c := h.connect(t)
	for _, n := range names {
		_, parts, err := callTool(t, c, n, hostileTimeout)
		var rerr *mcptool.ResultError
		require.ErrorAs(t, err, &rerr, n)
		assert.Equal(t, n, rerr.Tool)
		assert.Equal(t, want[n], err.Error(), n)
		assert.Nil(t, parts)
	}
}

// TestHostileNoReply: a result that never comes ends with the call's
// context, and the connection stays usable.
func TestHostileNoReply(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: toolsJSON("never", "ok"), call: func(name string) hostileReply {
		return hostileReply{hang: name == "never", result: `{"content":[{"type":"text","text":"fine"}]}`}
	}}
	c := h.connect(t)
	_, _, err := callTool(t, c, "never", 300*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"never"`)
	text, _, err := callTool(t, c, "ok", hostileTimeout)
	require.NoError(t, err)
	assert.Equal(t, "fine", text)
	assert.Equal(t, 1, h.dialCount())
}

// TestHostileGarbageReply: a reply cut short breaks the stream: the call
// fails with ErrDisconnected at once, or, when the cut falls where JSON
// allows the line break (the reader waits for more), ends with its
// context, as may the call after it, whose reply is read as the rest of
// the cut one. Then calls work again.
func TestHostileGarbageReply(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: toolsJSON("cut_in_string", "cut_between", "ok"), call: func(name string) hostileReply {
		switch name {
		case "cut_in_string":
			return hostileReply{line: []byte(`{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"te`)}
		case "cut_between":
			return hostileReply{line: []byte(`{"jsonrpc":"2.0","id":%ID%,"result":`)}
		}
		return hostileReply{result: `{"content":[{"type":"text","text":"fine"}]}`}
	}}
	c := h.connect(t)
	_, _, err := callTool(t, c, "cut_in_string", hostileTimeout)
	require.ErrorIs(t, err, mcptool.ErrDisconnected)
	assert.Contains(t, err.Error(), `"cut_in_string"`)
	text, _, err := callTool(t, c, "ok", hostileTimeout)
	require.NoError(t, err)
	assert.Equal(t, "fine", text)
	assert.Equal(t, 2, h.dialCount())

	_, _, err = callTool(t, c, "cut_between", 300*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"cut_between"`)
	// The next reply may be read as the rest of the cut one, and break
	// the stream: calls after it end with their context or fail with
	// ErrDisconnected until the client has reconnected.
	recovered := false
	for i := 0; i < 3 && !recovered; i++ {
		text, _, err = callTool(t, c, "ok", 300*time.Millisecond)
		if err == nil {
			assert.Equal(t, "fine", text)
			recovered = true
			continue
		}
		assert.True(t, errors.Is(err, context.DeadlineExceeded) || errors.Is(err, mcptool.ErrDisconnected), "%v", err)
		assert.Contains(t, err.Error(), `"ok"`)
	}
	assert.True(t, recovered, "calls work again")
}

// TestHostileServerGoesAway: a server that closes the connection during a
// call, or dies of a panic in its handler, fails the call with
// ErrDisconnected naming the tool; the next call reconnects. A server
// that survives its handler's panic with an error response keeps the
// connection.
func TestHostileServerGoesAway(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: toolsJSON("close", "panic", "internal", "ok"), call: func(name string) hostileReply {
		switch name {
		case "close":
			return hostileReply{close: true}
		case "panic":
			return hostileReply{panic: "nil map"}
		case "internal":
			return hostileReply{code: -32603}
		}
		return hostileReply{result: `{"content":[{"type":"text","text":"fine"}]}`}
	}}
	c := h.connect(t)
	for i, name := range []string{"close", "panic"} {
		_, _, err := callTool(t, c, name, hostileTimeout)
		require.ErrorIs(t, err, mcptool.ErrDisconnected, name)
		assert.NotErrorIs(t, err, mcptool.ErrBadResult, name)
		assert.Contains(t, err.Error(), `"`+name+`"`)
		text, _, err := callTool(t, c, "ok", hostileTimeout)
		require.NoError(t, err)
		assert.Equal(t, "fine", text)
		assert.Equal(t, i+2, h.dialCount())
	}
	_, _, err := callTool(t, c, "internal", hostileTimeout)
	require.Error(t, err)
	assert.NotErrorIs(t, err, mcptool.ErrDisconnected)
	assert.Contains(t, err.Error(), `"internal"`)
	assert.Contains(t, err.Error(), "internal error in internal")
	assert.Equal(t, 3, h.dialCount())
}

// TestHostileRunShowsErrors: through an Agent, each failure is an
// is_error result naming the tool, and the run goes on to its end.
func TestHostileRunShowsErrors(t *testing.T) {
	t.Parallel()
	h := &hostileServer{tools: toolsJSON("iserror", "bad", "never", "close", "ok"), call: func(name string) hostileReply {
		switch name {
		case "iserror":
			return hostileReply{result: `{"isError":true}`}
		case "bad":
			return hostileReply{result: `{"content":[{"type":"nope"}]}`}
		case "never":
			return hostileReply{hang: true}
		case "close":
			return hostileReply{close: true}
		}
		return hostileReply{result: `{"content":[{"type":"text","text":"fine"}]}`}
	}}
	c := h.connect(t)
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	names := []string{"iserror", "bad", "never", "close", "ok"}
	steps := make([]agenttest.Step, 0, len(names)+1)
	for _, n := range names {
		steps = append(steps, agenttest.CallTool(n, `{}`))
	}
	steps = append(steps, agenttest.Reply("done"))
	script := agenttest.Script(steps...)
	ag := &agentrt.Agent{Tools: tools, Planner: script, Permission: agentrt.AllowAll(), ToolTimeout: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, err := agenttest.Collect(ag.Run(ctx, "s", "go"))
	require.NoError(t, err)
	script.AssertDone(t)
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, len(names))
	for i, r := range results {
		assert.Equal(t, names[i], r.Tool)
		if names[i] == "ok" {
			assert.False(t, r.Message.IsError)
			assert.Equal(t, "fine", r.Message.Content)
			continue
		}
		assert.True(t, r.Message.IsError, names[i])
		assert.Contains(t, r.Message.Content, `"`+names[i]+`"`, "the model is told which tool failed")
	}
}

// FuzzResultContent feeds ResultContent and ResultText with whatever a
// CallToolResult decodes from: they must not panic, must agree with each
// other and must account for every content item.
func FuzzResultContent(f *testing.F) {
	for _, rc := range hostileResults() {
		if len(rc.result) < 4096 {
			f.Add([]byte(rc.result))
		}
	}
	f.Add([]byte(`{"content":[{"type":"resource","resource":{"uri":"u","blob":""}},{"type":"image"},{"type":"audio"}],"isError":true}`))
	f.Add([]byte(`{"content":[{"type":"tool_use"},{"type":"tool_result","content":[{"type":"text","text":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		text, parts := mcptool.ResultContent(&res)
		all := mcptool.ResultText(&res)
		var items, partItems int
		for _, c := range res.Content {
			switch c := c.(type) {
			case *mcp.ImageContent, *mcp.AudioContent:
				partItems++
			case *mcp.EmbeddedResource:
				if c.Resource != nil && c.Resource.Blob != nil {
					partItems++
				} else {
					items++
				}
			case nil:
			default:
				items++
			}
		}
		if len(parts) != partItems {
			t.Fatalf("%d parts for %d binary items", len(parts), partItems)
		}
		// Every item that is not a part has a line of its own in text
		// (a text item may hold newlines: at least as many lines).
		if items > 0 && strings.Count(text, "\n")+1 < items {
			t.Fatalf("%d items, %d lines of text: %q", items, strings.Count(text, "\n")+1, text)
		}
		if items+partItems > 0 && len(all) == 0 && !onlyEmptyText(&res) {
			t.Fatalf("ResultText is empty for %d items", items+partItems)
		}
		if len(text) > len(all) {
			t.Fatalf("ResultContent's text %q is longer than ResultText's %q", text, all)
		}
		if partItems == 0 && text != all {
			t.Fatalf("without parts, ResultContent's text %q differs from ResultText %q", text, all)
		}
		if res.StructuredContent != nil && items == 0 && partItems == 0 && text == "" {
			t.Fatalf("structured content %v dropped", res.StructuredContent)
		}
	})
}

// onlyEmptyText reports whether every content item of res is empty text.
func onlyEmptyText(res *mcp.CallToolResult) bool {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); !ok || tc.Text != "" {
			return false
		}
	}
	return true
}
