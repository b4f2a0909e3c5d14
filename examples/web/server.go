package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/termtext"
)

//go:embed page.html
var page []byte

// server is the web app: one agent whose sessions live in a JSONL store.
// It keeps no state of its own between requests: a run that waits for a
// person's approval has stopped (agentrt.StopPending), its pending calls
// are in the session file, and the next request resumes it, in this
// process or in the next one after a restart.
type server struct {
	ag    *agentrt.Agent
	store *agentrt.JSONLStore
	mux   *http.ServeMux
}

// newServer returns the app over dir: sessions in dir/sessions, and the
// files the agent may read and write in dir/workspace.
func newServer(dir string, planner agentrt.Planner) (*server, error) {
	store, err := agentrt.NewJSONLStore(filepath.Join(dir, "sessions"), nil)
	if err != nil {
		return nil, err
	}
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	s := &server{
		ag: &agentrt.Agent{
			Name:         "web",
			Instructions: "You are a helpful assistant with a small workspace of text files. Use the tools to read and write files; every write waits for the user's approval.",
			Tools:        workspaceTools(ws),
			Planner:      planner,
			Permission:   agentrt.PermissionFunc(approveWrites),
			Store:        store,
		},
		store: store,
		mux:   http.NewServeMux(),
	}
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	s.mux.HandleFunc("GET /api/sessions", s.list)
	s.mux.HandleFunc("GET /api/sessions/{id}", s.show)
	s.mux.HandleFunc("POST /api/sessions/{id}/run", s.run)
	s.mux.HandleFunc("POST /api/sessions/{id}/approve", s.approve)
	return s, nil
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close closes the session store.
func (s *server) Close() error { return s.store.Close() }

// approveWrites lets read-only tools run and leaves every write to the
// person at the page, who answers later: the run stops until then. A
// path that leaves the workspace is refused without asking.
func approveWrites(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	if req.Tool.ReadOnly {
		return agentrt.Decision{Allow: true}, nil
	}
	if in, ok := req.Input.(WriteIn); ok && !filepath.IsLocal(in.Path) {
		return agentrt.Decision{Reason: fmt.Sprintf("permission denied: %q is outside the workspace", in.Path)}, nil
	}
	return agentrt.Decision{Pending: true}, nil
}

// sessionJSON is a session in the list.
type sessionJSON struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Updated  string `json:"updated"`
	Messages int    `json:"messages"`
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	infos, err := s.store.List(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out := []sessionJSON{}
	for _, in := range infos {
		out = append(out, sessionJSON{ID: in.ID, Title: in.Title, Updated: in.Updated.Format("2006-01-02 15:04:05"), Messages: in.Messages})
	}
	writeJSON(w, out)
}

// pendingJSON is a call waiting for the person. The card shows Shown,
// the input exactly as the model sent it (Raw), every byte visible: in
// the form of the timeline of `agentrt show` (termtext.Safe), a bidi
// override as \u202e, a tag character as \U000e0041. Approve sends Raw
// back, and the call runs only if it is still the one shown.
type pendingJSON struct {
	ToolUseID string          `json:"tool_use_id"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input"`
	Shown     string          `json:"shown"`
	Raw       []byte          `json:"raw"` // base64 in JSON: byte-exact
}

func pendingOf(d agentrt.Done) []pendingJSON {
	out := []pendingJSON{}
	for _, p := range d.Pending {
		in, err := json.Marshal(p.Input)
		if err != nil || p.Input == nil {
			in = p.RawInput
		}
		out = append(out, pendingJSON{
			ToolUseID: p.ToolUseID, Tool: termtext.Safe(p.Tool.Name), Input: in,
			Shown: termtext.Safe(string(p.RawInput), '\n'), Raw: p.RawInput,
		})
	}
	return out
}

// show returns a session's transcript and its pending calls.
func (s *server) show(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	msgs, err := s.store.Load(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pending, busy := []pendingJSON{}, false
	// Resume without approvals runs nothing: for a pending session it
	// stops at once, listing the calls; any other is ErrNotPending.
	for ev, err := range s.ag.Resume(r.Context(), id) {
		if d, ok := ev.(agentrt.Done); ok {
			pending = pendingOf(d)
		}
		switch {
		case err == nil, errors.Is(err, agentrt.ErrNotPending):
		case errors.Is(err, agentrt.ErrSessionBusy):
			busy = true
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	// The input of each tool call, as its line in the transcript shows it.
	shown := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				shown[b.ID] = termtext.Safe(string(b.Input))
			}
		}
	}
	writeJSON(w, map[string]any{"id": id, "messages": msgs, "pending": pending, "busy": busy, "inputs_shown": shown})
}

// maxBody bounds a request's JSON body.
const maxBody = 1 << 20

// run sends the person's message and streams the run.
func (s *server) run(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input string `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&body); err != nil || strings.TrimSpace(body.Input) == "" {
		http.Error(w, "want {\"input\": \"...\"}", http.StatusBadRequest)
		return
	}
	s.stream(w, r, s.ag.Run(r.Context(), r.PathValue("id"), body.Input))
}

// approvalJSON is a person's decision on a pending call; an approval
// carries Raw, the input of the card the person approved.
type approvalJSON struct {
	agentrt.Decision
	Raw []byte
}

// UnmarshalJSON reads the decision and "raw" beside it (Decision has a
// decoder of its own, which would otherwise decode the whole object).
func (a *approvalJSON) UnmarshalJSON(b []byte) error {
	var raw struct {
		Raw []byte `json:"raw"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	a.Raw = raw.Raw
	return json.Unmarshal(b, &a.Decision)
}

// approve resumes a pending session with the person's decisions and
// streams the rest of the run. An approval whose Raw is not, byte for
// byte, the input of the pending call (the person approved something
// else) fails with 409 Conflict, and nothing runs.
func (s *server) approve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Approvals []approvalJSON `json:"approvals"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&body); err != nil || len(body.Approvals) == 0 {
		http.Error(w, "want {\"approvals\": [...]}", http.StatusBadRequest)
		return
	}
	id := r.PathValue("id")
	pending := map[string][]byte{}
	for ev := range s.ag.Resume(r.Context(), id) { // runs nothing: lists the calls
		if d, ok := ev.(agentrt.Done); ok {
			for _, p := range d.Pending {
				pending[p.ToolUseID] = p.RawInput
			}
		}
	}
	var approvals []agentrt.Decision
	for _, a := range body.Approvals {
		if raw, ok := pending[a.ToolUseID]; ok && a.Allow && !bytes.Equal(raw, a.Raw) {
			http.Error(w, fmt.Sprintf("the input of call %q is not the one approved", a.ToolUseID), http.StatusConflict)
			return
		}
		approvals = append(approvals, a.Decision)
	}
	s.stream(w, r, s.ag.Resume(r.Context(), id, approvals...))
}

// stream writes a run's events as Server-Sent Events: text, tool_call
// (with the input as its line shows it: shown), permission, tool_result,
// done, error.
func (s *server) stream(w http.ResponseWriter, r *http.Request, run func(func(agentrt.Event, error) bool)) {
	flusher, _ := w.(http.Flusher)
	started := false
	send := func(event string, v any) {
		if !started {
			started = true
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	for ev, err := range run {
		if err != nil {
			if !started {
				code := http.StatusInternalServerError
				switch {
				case errors.Is(err, agentrt.ErrSessionBusy):
					code = http.StatusConflict
				case errors.Is(err, agentrt.ErrNotPending), errors.Is(err, agentrt.ErrInvalidSessionID):
					code = http.StatusBadRequest
				}
				http.Error(w, err.Error(), code)
				return
			}
			send("error", map[string]string{"message": err.Error()})
			return
		}
		switch e := ev.(type) {
		case agentrt.TextDelta:
			send("text", map[string]any{"text": e.Text})
		case agentrt.ToolCall:
			send("tool_call", map[string]any{"id": e.ToolUseID, "tool": e.Tool.Name, "input": json.RawMessage(e.RawInput), "shown": termtext.Safe(string(e.RawInput)), "read_only": e.Tool.ReadOnly})
		case agentrt.PermissionDecision:
			send("permission", map[string]any{"id": e.ToolUseID, "tool": e.Tool, "allow": e.Decision.Allow, "pending": e.Decision.Pending, "source": e.Decision.Source, "reason": e.Decision.Reason})
		case agentrt.ToolResult:
			send("tool_result", map[string]any{"id": e.Message.ToolUseID, "tool": e.Tool, "content": e.Message.Content, "is_error": e.Message.IsError})
		case agentrt.Done:
			send("done", map[string]any{"reason": e.Reason, "final_text": e.FinalText, "detail": e.Detail, "pending": pendingOf(e)})
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// WriteIn is the input of write_file.
type WriteIn struct {
	Path    string `json:"path" jsonschema:"description=a relative path in the workspace" validate:"required"`
	Content string `json:"content"`
}

// PathIn is the input of read_file.
type PathIn struct {
	Path string `json:"path" validate:"required"`
}

// workspaceTools are the agent's tools over the directory ws; every
// access goes through os.Root, confined to it.
func workspaceTools(ws string) []agentrt.Tool {
	open := func() (*os.Root, error) { return os.OpenRoot(ws) }
	return []agentrt.Tool{
		agentrt.NewTool("list_files", "List the files of the workspace.", func(context.Context, struct{}) ([]string, error) {
			root, err := open()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			files := []string{}
			err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return err
			})
			sort.Strings(files)
			return files, err
		}, agentrt.ReadOnly()),
		agentrt.NewTool("read_file", "Read a file of the workspace.", func(_ context.Context, in PathIn) (string, error) {
			root, err := open()
			if err != nil {
				return "", err
			}
			defer root.Close()
			b, err := root.ReadFile(in.Path)
			return string(b), err
		}, agentrt.ReadOnly()),
		agentrt.NewTool("write_file", "Write a file of the workspace (the user approves each write).", func(_ context.Context, in WriteIn) (string, error) {
			root, err := open()
			if err != nil {
				return "", err
			}
			defer root.Close()
			if dir := filepath.Dir(in.Path); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil {
					return "", err
				}
			}
			if err := root.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %s (%d bytes)", in.Path, len(in.Content)), nil
		}),
	}
}
