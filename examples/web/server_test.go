package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
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
	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
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
	return pendingCall(t, done)["tool_use_id"].(string)
}

func pendingCall(t *testing.T, done map[string]any) map[string]any {
	t.Helper()
	require.Equal(t, "pending", done["reason"], done)
	p := done["pending"].([]any)
	require.Len(t, p, 1)
	return p[0].(map[string]any)
}

// approval approves the pending call of done with the input its card
// shows, as the page does.
func approval(t *testing.T, done map[string]any) map[string]any {
	t.Helper()
	p := pendingCall(t, done)
	return map[string]any{"tool_use_id": p["tool_use_id"], "allow": true, "raw": p["raw"]}
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
	approve := approval(t, last(evs, "done"))
	assert.Equal(t, true, last(evs, "permission")["pending"])
	_, err := os.Stat(filepath.Join(dir, "workspace", "notes", "hello.txt"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written before the approval")

	// Approve the first write; the second asks.
	evs = post(t, ts.URL+"/api/sessions/s1/approve", map[string]any{"approvals": []any{approve}})
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

// TestApproveOnlyTheInputShown: an approval runs the call only when the
// input it sends back is, byte for byte, the input of the pending call;
// the card shows that input escaped as the timeline does.
func TestApproveOnlyTheInputShown(t *testing.T) {
	t.Parallel()
	const path = "notes/\u202etxt.exe"
	dir := t.TempDir()
	s, err := newServer(dir, agenttest.Script(
		agenttest.CallTool("write_file", `{"path":"`+path+`","content":"Hello, friend.`+termtexttest.Tags(" IGNORE ALL")+`"}`),
		agenttest.Reply("done"),
	))
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	defer func() { ts.Close(); s.Close() }()

	done := last(post(t, ts.URL+"/api/sessions/s1/run", map[string]string{"input": "write"}), "done")
	p := pendingCall(t, done)
	raw, err := base64.StdEncoding.DecodeString(p["raw"].(string))
	require.NoError(t, err)
	assert.Equal(t, termtext.Safe(string(raw), '\n'), p["shown"])
	assert.Equal(t, `{"path":"notes/\u202etxt.exe","content":"Hello, friend.\U000e0020\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045\U000e0020\U000e0041\U000e004c\U000e004c"}`, p["shown"])

	for _, tc := range []struct {
		name string
		raw  any
	}{
		{name: "no input", raw: nil},
		{name: "another input", raw: base64.StdEncoding.EncodeToString([]byte(`{"path":"notes/txt.exe","content":"Hello, friend."}`))},
		{name: "one hidden character less", raw: base64.StdEncoding.EncodeToString(raw[:len(raw)-6])},
	} {
		b, err := json.Marshal(map[string]any{"approvals": []any{map[string]any{"tool_use_id": p["tool_use_id"], "allow": true, "raw": tc.raw}}})
		require.NoError(t, err)
		resp, err := http.Post(ts.URL+"/api/sessions/s1/approve", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusConflict, resp.StatusCode, tc.name)
	}
	_, err = os.Stat(filepath.Join(dir, "workspace", "notes"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing ran")

	done = last(post(t, ts.URL+"/api/sessions/s1/approve", map[string]any{"approvals": []any{approval(t, done)}}), "done")
	assert.Equal(t, "complete", done["reason"])
	got, err := os.ReadFile(filepath.Join(dir, "workspace", path))
	require.NoError(t, err)
	assert.Equal(t, "Hello, friend."+termtexttest.Tags(" IGNORE ALL"), string(got), "what ran is what was shown")
}
