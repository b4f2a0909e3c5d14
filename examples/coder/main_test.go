package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// project is a temporary root directory and sessions directory.
type project struct {
	root, sessions string
}

func newProject(t *testing.T) project {
	t.Helper()
	p := project{root: t.TempDir(), sessions: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(p.root, "README.md"), []byte("# Demo\n\nA demo project.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
	return p
}

func (p project) args(extra ...string) []string {
	return append([]string{"-root", p.root, "-sessions", p.sessions}, extra...)
}

// offline is an environment without any provider key.
func offline() env {
	return env{getenv: func(string) string { return "" }, now: time.Now}
}

// exec runs the program with stdin and returns what it wrote.
func exec(t *testing.T, e env, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = runWith(context.Background(), e, args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func (p project) load(t *testing.T, id string) []agentrt.Message {
	t.Helper()
	store, err := agentrt.NewJSONLStore(p.sessions, nil)
	require.NoError(t, err)
	defer store.Close()
	msgs, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	return msgs
}

// permissions returns the permission records of a session, in order.
func (p project) permissions(t *testing.T, id string) []map[string]any {
	t.Helper()
	store, err := agentrt.NewJSONLStore(p.sessions, nil)
	require.NoError(t, err)
	defer store.Close()
	var recs []map[string]any
	for r, err := range store.Lines(context.Background(), id) {
		require.NoError(t, err)
		if agentrt.RecordKind(r.Kind) == agentrt.RecordPermission {
			var m map[string]any
			require.NoError(t, json.Unmarshal(r.Data, &m))
			recs = append(recs, m)
		}
	}
	return recs
}

// writeResults returns the write_file results of a session, in order.
func writeResults(msgs []agentrt.Message) []agentrt.Message {
	ids := map[string]bool{}
	var out []agentrt.Message
	for _, m := range msgs {
		for _, u := range m.ToolUses() {
			if u.Name == "write_file" {
				ids[u.ID] = true
			}
		}
		if m.Role == agentrt.RoleTool && ids[m.ToolUseID] {
			out = append(out, m)
		}
	}
	return out
}

var sessionRE = regexp.MustCompile(`session (\S+) \(`)

func sessionID(t *testing.T, stderr string) string {
	t.Helper()
	m := sessionRE.FindStringSubmatch(stderr)
	require.NotNil(t, m, "no session id in:\n%s", stderr)
	return m[1]
}

func (p project) notes(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.root, "NOTES.md"))
	require.NoError(t, err)
	return string(b)
}

// TestNonInteractive runs -p through run itself, as a script would, with
// the default read-only policy: the demo's write is denied and reported.
func TestNonInteractive(t *testing.T) {
	p := newProject(t)
	var out, errb bytes.Buffer
	err := run(context.Background(), p.args("-provider", "scripted", "-p", "describe the project"), strings.NewReader(""), &out, &errb)
	require.NoError(t, err, errb.String())

	assert.Contains(t, errb.String(), "planner: "+demoLabel)
	assert.Contains(t, errb.String(), "write tools: read-only")
	assert.Contains(t, out.String(), "("+demoLabel+".)")
	assert.Contains(t, out.String(), "read README.md (3 lines)")
	assert.Contains(t, out.String(), `did not write NOTES.md: permission denied: "write_file" is a write tool`)
	assert.NotContains(t, errb.String(), "Apply?", "read-only never asks")
	assert.Contains(t, errb.String(), "note: write tools were refused by -permission read-only")
	assert.NoFileExists(t, filepath.Join(p.root, "NOTES.md"))

	id := sessionID(t, errb.String())
	assert.Contains(t, errb.String(), "-resume "+id)
	msgs := p.load(t, id)
	require.Len(t, msgs, 8) // user, 3 × (call, result), reply
	assert.Equal(t, "describe the project", msgs[0].Content)
	assert.Equal(t, out.String(), msgs[7].Text()+"\n", "stdout is the streamed reply")
}

func TestNonInteractiveAllowAll(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	out, errb, err := exec(t, offline(), "", p.args("-p", "take notes", "-permission", "allow-all")...)
	require.NoError(t, err, errb)
	assert.Contains(t, out, "and wrote NOTES.md.")
	notes := p.notes(t)
	assert.Contains(t, notes, "Task: take notes\n")
	assert.Contains(t, notes, "- README.md\n- main.go\n")
	assert.Contains(t, errb, "  ✓ write_file NOTES.md\n")
	assert.NotContains(t, errb, "note: write tools were refused")
}

func TestNonInteractiveAsk(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	// -p with -permission ask reads the answer from stdin.
	out, errb, err := exec(t, offline(), "n\n", p.args("-p", "take notes", "-permission", "ask")...)
	require.NoError(t, err, errb)
	assert.Contains(t, errb, "+Task: take notes\n")
	assert.Contains(t, out, "the user refused")
	assert.NoFileExists(t, filepath.Join(p.root, "NOTES.md"))
}

// TestInteractive drives the terminal flow through stdin: one approved
// write, one denied, one "always" and one remembered; then -list, and a
// resume of the same session that shows the earlier messages were loaded.
func TestInteractive(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	stdin := "task one\ny\ntask two\nn\ntask three\na\ntask four\n"
	out, errb, err := exec(t, offline(), stdin, p.args()...)
	require.NoError(t, err, errb)
	id := sessionID(t, errb)

	assert.Contains(t, errb, "write tools: ask")
	assert.Equal(t, 3, strings.Count(errb, "Apply? [y]es / [n]o / [a]lways"), "asked for tasks one to three, not four")
	// Each question shows the diff of the change before it is made.
	assert.Contains(t, errb, "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,10 @@\n+# Notes\n+\n+Task: task one\n")
	assert.Contains(t, errb, "-Task: task one\n+Task: task two\n")
	assert.Contains(t, errb, "-Task: task one\n+Task: task three\n", "task two was refused, so the file still held task one")
	assert.Contains(t, errb, `(write_file allowed: you answered "always" in this session)`)
	assert.Equal(t, 4, strings.Count(out, "("+demoLabel+".)"), "one streamed reply per task")
	assert.Contains(t, p.notes(t), "Task: task four\n")

	msgs := p.load(t, id)
	require.Len(t, msgs, 32)
	results := writeResults(msgs)
	require.Len(t, results, 4)
	assert.False(t, results[0].IsError)
	assert.True(t, results[1].IsError)
	assert.Contains(t, results[1].Content, "the user refused")
	assert.False(t, results[2].IsError)
	assert.False(t, results[3].IsError)

	perms := p.permissions(t, id)
	require.Len(t, perms, 4)
	for i, want := range []struct {
		allow  bool
		source string
	}{{true, "user"}, {false, "user"}, {true, "user"}, {true, "remembered"}} {
		assert.Equal(t, want.allow, perms[i]["allow"], "decision %d", i)
		assert.Equal(t, want.source, perms[i]["source"], "decision %d", i)
	}

	// -list shows the session.
	out, _, err = exec(t, offline(), "", p.args("-list")...)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^ID\s+UPDATED\s+MESSAGES\s+TITLE\n`+regexp.QuoteMeta(id)+`\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+32\s+task one$`, out)

	// Resume: the planner sees the 32 earlier messages, and the "always"
	// is remembered in the session, so the write is not asked about again.
	out, errb, err = exec(t, offline(), "task five\n", p.args("-resume", id)...)
	require.NoError(t, err, errb)
	assert.Contains(t, errb, "session "+id+" (resumed session, 32 messages)")
	assert.Contains(t, out, "Earlier messages in this session: 32.")
	assert.Zero(t, strings.Count(errb, "Apply?"))
	assert.Contains(t, errb, `(write_file allowed: you answered "always" in this session)`)
	assert.Contains(t, p.notes(t), "Task: task five\n")
	after := p.load(t, id)
	require.Len(t, after, 40)
	assert.Equal(t, msgs, after[:32], "the earlier messages are kept as they were")
	assert.Equal(t, "task five", after[32].Content)
}

func TestContinue(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	_, errb, err := exec(t, offline(), "", p.args("-p", "first")...)
	require.NoError(t, err)
	id := sessionID(t, errb)

	out, errb, err := exec(t, offline(), "", p.args("-continue", "-p", "second")...)
	require.NoError(t, err, errb)
	assert.Equal(t, id, sessionID(t, errb))
	assert.Contains(t, out, "Earlier messages in this session: 8.")
	assert.Len(t, p.load(t, id), 16)
	assert.NotContains(t, errb, "was started with -root")

	// Continuing in another directory works, with a warning.
	other := t.TempDir()
	_, errb, err = exec(t, offline(), "", "-root", other, "-sessions", p.sessions, "-continue", "-p", "third")
	require.NoError(t, err, errb)
	assert.Contains(t, errb, "note: session "+id+" was started with -root "+p.root+"; the tools now work in "+other)
}

func TestFlagErrors(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-resume", "nope"}, `no session "nope"`},
		{[]string{"-continue"}, "no sessions in"},
		{[]string{"-resume", "x", "-continue"}, "cannot be used together"},
		{[]string{"-permission", "maybe", "-p", "x"}, `unknown -permission "maybe"`},
		{[]string{"-provider", "acme", "-p", "x"}, `unknown -provider "acme"`},
		{[]string{"-provider", "openai", "-p", "x"}, "needs OPENAI_API_KEY"},
		{[]string{"-root", filepath.Join(p.root, "missing"), "-p", "x"}, "open root directory"},
		{[]string{"stray"}, "unexpected arguments"},
	} {
		_, _, err := exec(t, offline(), "", p.args(tc.args...)...)
		assert.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	_, errb, err := exec(t, offline(), "", "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, errb, "-permission")
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	out, errb, err := exec(t, offline(), "", p.args("-list")...)
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Contains(t, errb, "no sessions in "+p.sessions)
}

func TestDefaultSessionsDir(t *testing.T) {
	t.Parallel()
	envOf := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	d, err := defaultSessionsDir(envOf(map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/x", "agentrt-coder"), d)
	d, err = defaultSessionsDir(envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/h", ".local", "state", "agentrt-coder"), d)
	_, err = defaultSessionsDir(envOf(nil))
	assert.Error(t, err)
}

func TestChoosePlanner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env      map[string]string
		provider string
		want     string
	}{
		{nil, "auto", demoLabel},
		{map[string]string{"OPENAI_API_KEY": "k"}, "scripted", demoLabel},
		{map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, "auto", "openai gpt-4.1-mini"},
		{map[string]string{"ANTHROPIC_API_KEY": "k"}, "auto", "anthropic claude-sonnet-4-5"},
		{map[string]string{"GEMINI_API_KEY": "k"}, "auto", "gemini gemini-2.5-flash"},
		{map[string]string{"OLLAMA_HOST": "localhost:11434"}, "", "ollama llama3.2"},
		{map[string]string{"OPENAI_API_KEY": "k", "AGENTRT_PROVIDER": "scripted"}, "auto", demoLabel},
		{map[string]string{"AGENTRT_PROVIDER": "ollama", "AGENTRT_MODEL": "qwen3"}, "auto", "ollama qwen3"},
		{map[string]string{"AGENTRT_PROVIDER": "ollama", "ANTHROPIC_API_KEY": "k"}, "anthropic", "anthropic claude-sonnet-4-5"},
	} {
		pl, desc, err := choosePlanner(tc.provider, "", func(k string) string { return tc.env[k] })
		require.NoError(t, err, "%v", tc.env)
		assert.Equal(t, tc.want, desc)
		assert.NotNil(t, pl)
	}
	_, desc, err := choosePlanner("anthropic", "claude-x", func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "k", "AGENTRT_MODEL": "other"}[k] })
	require.NoError(t, err)
	assert.Equal(t, "anthropic claude-x", desc)

	assert.Equal(t, "http://127.0.0.1:11434/v1", ollamaURL(""))
	assert.Equal(t, "http://gpu:11434/v1", ollamaURL("gpu:11434"))
	assert.Equal(t, "https://ollama.example/v1", ollamaURL("https://ollama.example/"))
}

// watched is an output that lets a test wait for text to appear.
type watched struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.buf.Write(p)
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until s has been written n times.
func (w *watched) waitFor(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		got, ch := strings.Count(w.buf.String(), s), w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %q ×%d in:\n%s", s, n, w.String())
		}
	}
}

// session starts the interactive program on a pipe and returns its
// stdin, outputs, Ctrl-C channel and result.
type session struct {
	in   *io.PipeWriter
	out  *watched
	err  *watched
	ints chan os.Signal
	done chan error
}

func startSession(t *testing.T, p project, now func() time.Time) *session {
	t.Helper()
	r, w := io.Pipe()
	s := &session{in: w, out: newWatched(), err: newWatched(), ints: make(chan os.Signal, 2), done: make(chan error, 1)}
	e := offline()
	e.interrupts = s.ints
	e.now = now
	go func() { s.done <- runWith(context.Background(), e, p.args(), r, s.out, s.err) }()
	t.Cleanup(func() { w.Close() })
	return s
}

func (s *session) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(t, err)
}

func (s *session) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("the program did not end; stderr:\n%s", s.err.String())
		return nil
	}
}

// TestCtrlCCancelsTurn presses Ctrl-C while the program asks about a
// write: the turn is cancelled, the program goes on, and the next task
// works.
func TestCtrlCCancelsTurn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(5 * time.Second) // every Ctrl-C is far from the last
		return clock
	}
	s := startSession(t, p, now)
	s.send(t, "task one")
	s.err.waitFor(t, "Apply?", 1)
	s.ints <- os.Interrupt
	s.err.waitFor(t, "(turn cancelled; the session is saved and valid)", 1)
	s.send(t, "task two")
	s.err.waitFor(t, "Apply?", 2)
	s.send(t, "y")
	s.out.waitFor(t, "and wrote NOTES.md.", 1)
	require.NoError(t, s.in.Close())
	require.NoError(t, s.wait(t))

	assert.Contains(t, s.err.String(), "^C cancelling this turn")
	assert.NotContains(t, s.err.String(), "bye")
	assert.Contains(t, p.notes(t), "Task: task two\n")
	msgs := p.load(t, sessionID(t, s.err.String()))
	results := writeResults(msgs)
	require.Len(t, results, 2)
	assert.True(t, results[0].IsError, "the cancelled write did not run: %s", results[0].Content)
	assert.False(t, results[1].IsError)
}

// TestCtrlCTwiceQuits presses Ctrl-C twice within the quit window during a
// turn: the program ends without waiting for more input.
func TestCtrlCTwiceQuits(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	fixed := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := startSession(t, p, func() time.Time { return fixed })
	s.send(t, "task one")
	s.err.waitFor(t, "Apply?", 1)
	s.ints <- os.Interrupt
	s.ints <- os.Interrupt
	require.NoError(t, s.wait(t), "stdin is still open: only Ctrl-C can have ended it")
	assert.Contains(t, s.err.String(), "bye")
	assert.NoFileExists(t, filepath.Join(p.root, "NOTES.md"))
}

// TestCtrlCAtPrompt: one Ctrl-C at the prompt only explains; a second one
// within the window quits.
func TestCtrlCAtPrompt(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	fixed := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := startSession(t, p, func() time.Time { return fixed })
	s.err.waitFor(t, "> ", 1)
	s.ints <- os.Interrupt
	s.err.waitFor(t, "press Ctrl-C again within 2s to quit", 1)
	s.ints <- os.Interrupt
	require.NoError(t, s.wait(t))
	assert.Contains(t, s.err.String(), "bye")
}

// TestOllamaProvider runs -p against a fake OpenAI-compatible server named
// by OLLAMA_HOST: the real provider path, from the environment to the
// streamed reply, without a network.
func TestOllamaProvider(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	var (
		mu     sync.Mutex
		bodies []map[string]any
	)
	chunk := func(w io.Writer, delta string, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":`+delta+`,"finish_reason":`+fin+`}]}`+"\n\n")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			chunk(w, `{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]}`, "")
			chunk(w, `{}`, "tool_calls")
		} else {
			chunk(w, `{"role":"assistant","content":"Two files: "}`, "")
			chunk(w, `{"content":"README.md and main.go."}`, "")
			chunk(w, `{}`, "stop")
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	e := offline()
	e.getenv = func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.URL
		}
		return ""
	}
	out, errb, err := exec(t, e, "", p.args("-p", "what is here?")...)
	require.NoError(t, err, errb)
	assert.Contains(t, errb, "planner: ollama llama3.2")
	assert.Contains(t, errb, "  ✓ list_dir .\n")
	assert.Equal(t, "Two files: README.md and main.go.\n", out)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 2)
	assert.Equal(t, "llama3.2", bodies[0]["model"])
	var tools []string
	for _, tl := range bodies[0]["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	assert.ElementsMatch(t, []string{"read_file", "list_dir", "grep", "write_file", "edit_file", "read_image"}, tools)
	msgs := bodies[1]["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	assert.Equal(t, "tool", last["role"])
	assert.Equal(t, "README.md\nmain.go\n", last["content"], "the model got the tool's result")
	assert.Contains(t, msgs[0].(map[string]any)["content"], "The root directory is "+p.root)
}

// TestTerminalRendering: on a terminal, a status line shows the running
// tool and is erased before anything else is printed, and the diff is in
// color.
func TestTerminalRendering(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	e := offline()
	e.tty = true
	out, errb, err := exec(t, e, "y\n", p.args("-p", "notes", "-permission", "ask")...)
	require.NoError(t, err, errb)
	assert.Contains(t, errb, "\r\x1b[K\x1b[2mrunning: list_dir .\x1b[0m\r\x1b[K  ✓ list_dir .\n")
	assert.Contains(t, errb, "\x1b[2mrunning: write_file NOTES.md\x1b[0m\r\x1b[K\nwrite_file wants to change NOTES.md:\n")
	assert.Contains(t, errb, "\x1b[32m+Task: notes\x1b[0m\n")
	assert.NotContains(t, out, "\x1b", "the reply on stdout has no escape sequences")
	assert.Contains(t, out, "and wrote NOTES.md.")
}
