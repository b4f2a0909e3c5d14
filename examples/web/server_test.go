package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// sseEvent is one Server-Sent Event of a run.
type sseEvent struct {
	Event string
	Data  map[string]any
}

// post sends a JSON body and reads the SSE stream to its end.
func post(t *testing.T, url string, body any) []sseEvent {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var evs []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data))
		case line == "":
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	require.NoError(t, sc.Err())
	return evs
}

func last(evs []sseEvent, kind string) map[string]any {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event == kind {
			return evs[i].Data
		}
	}
	return nil
}

func kinds(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		if len(out) == 0 || out[len(out)-1] != e.Event {
			out = append(out, e.Event)
		}
	}
	return out
}

func pendingID(t *testing.T, done map[string]any) string {
	t.Helper()
	require.Equal(t, "pending", done["reason"], done)
	p := done["pending"].([]any)
	require.Len(t, p, 1)
	return p[0].(map[string]any)["tool_use_id"].(string)
}

func start(t *testing.T, dir string) (*server, *httptest.Server) {
	t.Helper()
	s, err := newServer(dir, scriptedPlanner())
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	return s, ts
}

// TestServerApprovalsSurviveARestart drives the API as the page does: a
// task streams text and a tool call and stops for approval; the server
// restarts; the session is listed with its pending call; Approve and Deny
// resume it; the file is on disk and the session is valid.
func TestServerApprovalsSurviveARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, ts := start(t, dir)

	evs := post(t, ts.URL+"/api/sessions/s1/run", map[string]string{"input": "greet the world"})
	assert.Equal(t, []string{"text", "tool_call", "permission", "done"}, kinds(evs))
	id := pendingID(t, last(evs, "done"))
	assert.Equal(t, true, last(evs, "permission")["pending"])
	_, err := os.Stat(filepath.Join(dir, "workspace", "notes", "hello.txt"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written before the approval")

	// Approve the first write; the second asks.
	evs = post(t, ts.URL+"/api/sessions/s1/approve", map[string]any{"approvals": []agentrt.Decision{{ToolUseID: id, Allow: true}}})
	assert.Equal(t, []string{"tool_call", "permission", "tool_result", "text", "tool_call", "permission", "done"}, kinds(evs))
	id2 := pendingID(t, last(evs, "done"))
	b, err := os.ReadFile(filepath.Join(dir, "workspace", "notes", "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Hello from agentrt!\nTask: greet the world\n", string(b))

	// The server goes away while the second approval is pending.
	ts.Close()
	require.NoError(t, s.Close())
	s, ts = start(t, dir)
	defer func() { ts.Close(); s.Close() }()

	resp, err := http.Get(ts.URL + "/api/sessions")
	require.NoError(t, err)
	var list []sessionJSON
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	require.Len(t, list, 1)
	assert.Equal(t, "greet the world", list[0].Title)

	resp, err = http.Get(ts.URL + "/api/sessions/s1")
	require.NoError(t, err)
	var shown struct {
		Messages []agentrt.Message `json:"messages"`
		Pending  []pendingJSON     `json:"pending"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&shown))
	resp.Body.Close()
	require.Len(t, shown.Pending, 1, "the pending call survived the restart")
	assert.Equal(t, id2, shown.Pending[0].ToolUseID)
	assert.JSONEq(t, `{"path":"notes/summary.txt","content":"Summary of: greet the world\n"}`, string(shown.Pending[0].Input))

	// An unknown call is refused; Deny ends the run with an answer.
	r2, err := http.Post(ts.URL+"/api/sessions/s1/approve", "application/json", strings.NewReader(`{"approvals":[{"tool_use_id":"nope","allow":true}]}`))
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r2.StatusCode)
	evs = post(t, ts.URL+"/api/sessions/s1/approve", map[string]any{"approvals": []agentrt.Decision{{ToolUseID: id2, Reason: "no summary, thanks"}}})
	done := last(evs, "done")
	assert.Equal(t, "complete", done["reason"])
	assert.Contains(t, done["final_text"], "wrote notes/hello.txt")
	assert.Contains(t, done["final_text"], "no summary, thanks")
	_, err = os.Stat(filepath.Join(dir, "workspace", "notes", "summary.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)

	msgs, err := s.store.Load(context.Background(), "s1")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	assert.Len(t, msgs, 6)
}

func TestEscapingWriteIsRefusedWithoutAsking(t *testing.T) {
	t.Parallel()
	d, err := approveWrites(context.Background(), &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write_file"}, Input: WriteIn{Path: "../x"}})
	require.NoError(t, err)
	assert.False(t, d.Allow)
	assert.False(t, d.Pending)
	d, err = approveWrites(context.Background(), &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write_file"}, Input: WriteIn{Path: "a/b.txt"}})
	require.NoError(t, err)
	assert.True(t, d.Pending)
}
