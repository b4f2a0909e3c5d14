package mcptool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference MCP servers are installed, at the versions pinned in
// testdata/npm/package-lock.json, by
//
//	npm ci --prefix mcptool/testdata/npm
//
// Without them the tests below skip, except under CI (CI set and not
// "false"), where they fail: CI must not skip them silently.

// npmServer returns the path of the installed reference server bin (such
// as "mcp-server-filesystem"), or skips or fails the test.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", bin))
	require.NoError(t, err)
	var missing string
	if _, err := os.Stat(path); err != nil {
		missing = bin + " is not installed (" + err.Error() + ")"
	} else if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	}
	if missing == "" {
		return path
	}
	msg := missing + "; install the reference MCP servers with: npm ci --prefix mcptool/testdata/npm (needs Node.js 18 or later)"
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal("CI: " + msg)
	}
	t.Skip(msg)
	return ""
}

// recordCmd returns a Dialer running path with args, and a function
// returning the last command it started.
func recordCmd(path string, args ...string) (mcptool.Dialer, func() *exec.Cmd) {
	var mu sync.Mutex
	var last *exec.Cmd
	dial := mcptool.Command(func() *exec.Cmd {
		cmd := exec.Command(path, args...)
		mu.Lock()
		last = cmd
		mu.Unlock()
		return cmd
	})
	return dial, func() *exec.Cmd {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func input(t *testing.T, v any) string {
	t.Helper()
	return string(mustJSON(t, v))
}

// TestFilesystemServer runs an agent (scripted planner) on the reference
// filesystem server over stdio: read a file, write one the user allows,
// be refused one the user denies, fail outside the server's root.
func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("Hello from the temp dir\n"), 0o644))
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not for the agent"), 0o644))

	dial, lastCmd := recordCmd(bin, dir)
	c, err := mcptool.Connect(t.Context(), dial, &mcptool.Options{Prefix: "fs_"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)
	for name, readOnly := range map[string]bool{
		"fs_read_text_file": true, "fs_list_directory": true, "fs_write_file": false, "fs_edit_file": false,
	} {
		require.Contains(t, byName, name)
		assert.Equal(t, readOnly, byName[name].Spec().ReadOnly, name)
	}

	var asked []string
	perm := agentrt.AskOnWrite(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		var in struct{ Path string }
		if err := json.Unmarshal(req.Input.(json.RawMessage), &in); err != nil {
			return agentrt.Decision{}, err
		}
		asked = append(asked, filepath.Base(in.Path))
		if filepath.Base(in.Path) == "allowed.txt" {
			return agentrt.Decision{Allow: true}, nil
		}
		return agentrt.Decision{}, nil
	})
	script := agenttest.Script(
		agenttest.CallTool("fs_read_text_file", input(t, map[string]string{"path": filepath.Join(dir, "hello.txt")})),
		agenttest.CallTool("fs_write_file", input(t, map[string]string{"path": filepath.Join(dir, "allowed.txt"), "content": "written by the agent"})),
		agenttest.CallTool("fs_write_file", input(t, map[string]string{"path": filepath.Join(dir, "denied.txt"), "content": "should not exist"})),
		agenttest.CallTool("fs_read_text_file", input(t, map[string]string{"path": filepath.Join(outside, "secret.txt")})),
		agenttest.CallTool("fs_list_directory", input(t, map[string]string{"path": dir})),
		agenttest.Reply("done"),
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: tools, Planner: script, Permission: perm, Store: store}
	events, err := agenttest.Collect(ag.Run(t.Context(), "fs", "Work on the files."))
	require.NoError(t, err)
	script.AssertDone(t)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	msgs, err := store.Load(t.Context(), "fs")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 5)
	for i, r := range results {
		t.Logf("result %d (%s): error=%v %q", i, r.Tool, r.Message.IsError, r.Message.Content)
	}
	assert.False(t, results[0].Message.IsError)
	assert.Equal(t, "Hello from the temp dir\n", results[0].Message.Content)

	assert.False(t, results[1].Message.IsError)
	b, err := os.ReadFile(filepath.Join(dir, "allowed.txt"))
	require.NoError(t, err, "the allowed write created the file")
	assert.Equal(t, "written by the agent", string(b))

	assert.True(t, results[2].Message.IsError)
	assert.Contains(t, results[2].Message.Content, "permission denied")
	assert.NoFileExists(t, filepath.Join(dir, "denied.txt"), "the denied write did not run")

	assert.True(t, results[3].Message.IsError, "a path outside the server's root is an is_error result")
	assert.NotContains(t, results[3].Message.Content, "not for the agent")
	var rerr *mcptool.ResultError
	assert.ErrorAs(t, results[3].Err, &rerr, "the server's isError result")

	assert.False(t, results[4].Message.IsError)
	assert.Contains(t, results[4].Message.Content, "hello.txt")
	assert.Contains(t, results[4].Message.Content, "allowed.txt")
	assert.NotContains(t, results[4].Message.Content, "denied.txt")

	var writes []agentrt.PermissionDecision
	for _, d := range agenttest.Filter[agentrt.PermissionDecision](events) {
		if d.Tool == "fs_write_file" {
			writes = append(writes, d)
		}
	}
	require.Len(t, writes, 2, "each write went through the permission checker")
	assert.True(t, writes[0].Decision.Allow)
	assert.Equal(t, "user", writes[0].Decision.Source)
	assert.False(t, writes[1].Decision.Allow)
	assert.Equal(t, []string{"allowed.txt", "denied.txt"}, asked, "reads were not asked about")

	cmd := lastCmd()
	require.NoError(t, c.Close())
	assert.NotNil(t, cmd.ProcessState, "Close waited for the server to exit")
	if runtime.GOOS == "linux" {
		assert.True(t, processGone(cmd.Process.Pid), "no server process is left")
	}
}

// TestEverythingServer runs an agent on the reference "everything" server
// over stdio, calling tools that return text, structured content and an
// image, in one parallel batch, and one that reports an error.
func TestEverythingServer(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-everything")
	dial, lastCmd := recordCmd(bin)
	c, err := mcptool.Connect(t.Context(), dial, &mcptool.Options{Prefix: "ev_"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)
	for _, name := range []string{"ev_echo", "ev_get-sum", "ev_get-structured-content", "ev_get-tiny-image"} {
		require.Contains(t, byName, name)
		assert.True(t, byName[name].Spec().ReadOnly, name)
	}
	var sumSchema struct {
		Properties map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(byName["ev_get-sum"].Spec().InputSchema, &sumSchema))
	assert.Contains(t, sumSchema.Properties, "a", "the server's schema is passed through")

	script := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("ev_echo", `{"message":"hello MCP"}`),
			agenttest.ToolUse("ev_get-sum", `{"a":2,"b":40}`),
			agenttest.ToolUse("ev_get-structured-content", `{"location":"Chicago"}`),
			agenttest.ToolUse("ev_get-tiny-image", `{}`),
		),
		agenttest.CallTool("ev_echo", `{}`), // invalid input: the server says so
		agenttest.Reply("done"),
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: tools, Planner: script, Store: store}
	events, err := agenttest.Collect(ag.Run(t.Context(), "ev", "Try the tools."))
	require.NoError(t, err)
	script.AssertDone(t)
	msgs, err := store.Load(t.Context(), "ev")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 5)
	byTool := map[string]agentrt.Message{}
	for i, r := range results[:4] {
		t.Logf("result %d (%s): error=%v %q", i, r.Tool, r.Message.IsError, r.Message.Content)
		assert.False(t, r.Message.IsError, r.Tool)
		byTool[r.Tool] = r.Message
	}
	assert.Equal(t, "Echo: hello MCP", byTool["ev_echo"].Content)
	assert.Contains(t, byTool["ev_get-sum"].Content, "42")

	var weather map[string]any
	require.NoError(t, json.Unmarshal([]byte(byTool["ev_get-structured-content"].Content), &weather),
		"structured content is given once, as JSON")
	assert.Contains(t, weather, "temperature")

	// The image arrives as an image part of the tool result, its bytes a
	// PNG, and the text around it as the result's text.
	img := byTool["ev_get-tiny-image"]
	require.Len(t, img.Blocks, 1, "%v", img)
	assert.Equal(t, agentrt.BlockImage, img.Blocks[0].Type)
	assert.Equal(t, "image/png", img.Blocks[0].MediaType)
	assert.True(t, strings.HasPrefix(string(img.Blocks[0].Data), "\x89PNG\r\n\x1a\n"), "PNG bytes, decoded")
	assert.NotContains(t, img.Content, "iVBOR", "no base64 in the model's text")
	assert.NotContains(t, img.Content, "[image", "the image is not described: it is there")
	// The next request carries it to the model.
	last := script.Requests()[1].Messages
	var sent bool
	for _, m := range last {
		if m.Role == agentrt.RoleTool && len(m.Blocks) == 1 && m.Blocks[0].Type == agentrt.BlockImage {
			sent = true
		}
	}
	assert.True(t, sent, "the planner's next request has the image part")
	// Execute, for callers that take text only, describes it.
	text, err := byName["ev_get-tiny-image"].Execute(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Regexp(t, `\[image image/png, [1-9][0-9]* bytes\]`, text)

	bad := results[4]
	assert.True(t, bad.Message.IsError)
	assert.Contains(t, strings.ToLower(bad.Message.Content), "message", "the server's validation error names the field")

	cmd := lastCmd()
	require.NoError(t, c.Close())
	assert.NotNil(t, cmd.ProcessState)
	if runtime.GOOS == "linux" {
		assert.True(t, processGone(cmd.Process.Pid), "no server process is left")
	}
}

// TestEverythingServerEnvironment reads the environment of the reference
// "everything" server with its get-env tool: a variable of the host's
// environment is not visible to the server by default, and is when the
// Cmd's Env passes it.
func TestEverythingServerEnvironment(t *testing.T) { // not parallel: t.Setenv
	bin := npmServer(t, "mcp-server-everything")
	t.Setenv("AGENTRT_SECRET_TEST", "xyz")
	serverEnv := func(t *testing.T, dial mcptool.Dialer) map[string]string {
		t.Helper()
		c, err := mcptool.Connect(t.Context(), dial, nil)
		require.NoError(t, err)
		defer c.Close()
		tools, err := c.Tools(t.Context())
		require.NoError(t, err)
		out, err := call(t, toolsByName(t, tools)["get-env"], `{}`)
		require.NoError(t, err)
		var env map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &env), out)
		require.NoError(t, c.Close())
		return env
	}

	env := serverEnv(t, mcptool.Stdio(bin))
	assert.NotContains(t, env, "AGENTRT_SECRET_TEST", "the host's environment does not reach the server")
	assert.Equal(t, os.Getenv("PATH"), env["PATH"], "PATH does")

	env = serverEnv(t, mcptool.Command(func() *exec.Cmd {
		cmd := exec.Command(bin)
		cmd.Env = append(mcptool.DefaultEnv(), "AGENTRT_SECRET_TEST="+os.Getenv("AGENTRT_SECRET_TEST"))
		return cmd
	}))
	assert.Equal(t, "xyz", env["AGENTRT_SECRET_TEST"], "a variable passed explicitly reaches the server")
}

// TestFilesystemServerStartupError starts the reference filesystem server
// on a directory that does not exist: it says so on stderr and exits, and
// Connect's error carries its words.
func TestFilesystemServerStartupError(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-filesystem")
	missing := filepath.Join(t.TempDir(), "missing")
	dial, lastCmd := recordCmd(bin, missing)
	start := time.Now()
	_, err := mcptool.Connect(t.Context(), dial, nil)
	t.Logf("Connect failed after %v: %v", time.Since(start), err)
	require.Error(t, err)
	assert.ErrorContains(t, err, "the server exited with status 1")
	assert.ErrorContains(t, err, "Error: None of the specified directories are accessible")
	assert.ErrorContains(t, err, missing, "the server's warning names the directory")
	require.NotNil(t, lastCmd().ProcessState, "the server is reaped")
}
