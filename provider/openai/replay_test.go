package openai_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/provider/openai"
)

// reply is one scripted HTTP answer of a replay server.
type reply struct {
	status int               // 0 means 200
	header map[string]string // extra response headers
	body   []byte
	// sse serves body as text/event-stream, one event per write and flush,
	// as the API does.
	sse bool
	// hold keeps the response open after body until the client goes away
	// (a stalled stream); the server then closes replayServer.gone.
	hold bool
}

// recorded is a request the replay server received.
type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte // the body as sent, its key order kept
	At     time.Time
}

// replayServer answers Chat Completions calls with scripted replies, in
// order (the last one repeats), and records every request.
type replayServer struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	replies  []reply
	requests []recorded
	gone     chan struct{}
}

func newReplay(t *testing.T, replies ...reply) *replayServer {
	t.Helper()
	require.NotEmpty(t, replies)
	s := &replayServer{t: t, replies: replies, gone: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("replay server: reading the request: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("replay server: request body is not a JSON object: %v\n%s", err, raw)
	}
	s.mu.Lock()
	s.requests = append(s.requests, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw, At: time.Now()})
	rep := s.replies[min(len(s.requests), len(s.replies))-1]
	s.mu.Unlock()

	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if rep.sse {
		for _, ev := range sseEvents(rep.body) {
			_, _ = w.Write(ev)
			w.(http.Flusher).Flush()
		}
	} else {
		_, _ = w.Write(rep.body)
	}
	if rep.hold {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(s.gone)
	}
}

// provider returns a Provider whose client talks to the replay server.
func (s *replayServer) provider(opts *openai.Options) *openai.Provider {
	client := oai.NewClient(option.WithBaseURL(s.URL+"/v1"), option.WithAPIKey("test-key"))
	return openai.New(client, "gpt-4o", opts)
}

// responses returns a Responses planner whose client talks to the replay
// server.
func (s *replayServer) responses(opts *openai.ResponsesOptions) *openai.Responses {
	client := oai.NewClient(option.WithBaseURL(s.URL+"/v1"), option.WithAPIKey("test-key"))
	return openai.NewResponses(client, "gpt-5", opts)
}

// request returns the i-th request received.
func (s *replayServer) request(i int) recorded {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(s.t, len(s.requests), i, "the server received %d requests", len(s.requests))
	return s.requests[i]
}

func (s *replayServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// fixture reads a file of testdata.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// sseEvents splits an SSE body into its events, each with its blank line.
func sseEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+2])
		b = b[i+2:]
	}
	return out
}

// withoutEvents returns the SSE body without the events containing any of
// the given substrings.
func withoutEvents(b []byte, drop ...string) []byte {
	var out []byte
next:
	for _, ev := range sseEvents(b) {
		for _, d := range drop {
			if bytes.Contains(ev, []byte(d)) {
				continue next
			}
		}
		out = append(out, ev...)
	}
	return out
}

// jsonEq asserts that got, encoded as JSON, equals the JSON text want.
func jsonEq(t *testing.T, want string, got any, msgAndArgs ...any) {
	t.Helper()
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(b), msgAndArgs...)
}

// field returns body[key] as a JSON text, for compact assertions.
func field(t *testing.T, body map[string]any, key string) string {
	t.Helper()
	v, ok := body[key]
	require.True(t, ok, "request has no %q field: %v", key, body)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
