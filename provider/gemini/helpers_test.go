package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// reply is one scripted answer of a replayServer.
type reply struct {
	status int
	header http.Header
	body   []byte
	// stall: after writing body, signal the server's stalled channel and
	// wait until the client goes away.
	stall bool
	// abort: after writing body, drop the connection without ending the
	// response properly.
	abort bool
}

// recorded is a request the replayServer received.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// replayServer answers requests with scripted replies, in order, and
// records them. A request beyond the script fails the test.
type replayServer struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	replies  []reply
	requests []recorded

	stalled chan struct{} // receives once per stalled reply, after its body is written
	gone    chan struct{} // receives once per stalled reply, when the client went away
}

func newReplayServer(t *testing.T, replies ...reply) *replayServer {
	t.Helper()
	s := &replayServer{t: t, replies: replies, stalled: make(chan struct{}, 8), gone: make(chan struct{}, 8)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("replay server: reading the request: %v", err)
	}
	rec := recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &rec.Body); err != nil {
			s.t.Errorf("replay server: request body is not JSON: %v\n%s", err, raw)
		}
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, rec)
	var rp reply
	ok := n < len(s.replies)
	if ok {
		rp = s.replies[n]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("replay server: unexpected request %d to %s", n+1, r.URL.Path)
		http.Error(w, `{"error":{"code":500,"message":"unexpected request","status":"INTERNAL"}}`, http.StatusInternalServerError)
		return
	}
	for k, v := range rp.header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		if strings.HasPrefix(string(rp.body), "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
	}
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(rp.body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	switch {
	case rp.stall:
		s.stalled <- struct{}{}
		<-r.Context().Done()
		s.gone <- struct{}{}
	case rp.abort:
		panic(http.ErrAbortHandler)
	}
}

// reqs returns the requests received so far.
func (s *replayServer) reqs() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

// only returns the single request received, failing if there were others.
func (s *replayServer) only(t *testing.T) recorded {
	t.Helper()
	reqs := s.reqs()
	require.Len(t, reqs, 1, "requests received")
	return reqs[0]
}

// fixture reads a file of testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	require.NoError(t, err)
	return b
}

// ok replies 200 with a fixture (JSON or SSE).
func ok(t testing.TB, name string) reply { return reply{body: fixture(t, name)} }

// fail replies with an HTTP error status and a fixture body.
func fail(t testing.TB, status int, name string) reply {
	return reply{status: status, body: fixture(t, name)}
}

// sseEvents splits an SSE fixture into its events, framing included.
func sseEvents(t testing.TB, name string) []string {
	t.Helper()
	body := string(fixture(t, name))
	var out []string
	for _, ev := range strings.SplitAfter(body, "\r\n\r\n") {
		if ev != "" {
			out = append(out, ev)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// waits records the retry waits a Provider asked for, instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

const testModel = "gemini-2.5-flash"

// newClient returns a genai client for the Gemini API pointed at srv.
func newClient(t testing.TB, srv *replayServer, backend genai.Backend, retry *genai.HTTPRetryOptions) *genai.Client {
	t.Helper()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     "test-key",
		Backend:    backend,
		HTTPClient: srv.Client(),
		HTTPOptions: genai.HTTPOptions{
			BaseURL:      srv.URL,
			RetryOptions: retry,
		},
	})
	require.NoError(t, err)
	return client
}

// newTestProvider returns a Provider for the Gemini API backend pointed at
// srv, whose retry waits are recorded instead of slept.
func newTestProvider(t testing.TB, srv *replayServer, opts *Options) (*Provider, *waits) {
	t.Helper()
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), testModel, opts)
	w := &waits{}
	p.sleep = w.sleep
	return p, w
}

// at walks a decoded JSON value by object keys and array indexes.
func at(t testing.TB, v any, path ...any) any {
	t.Helper()
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.Truef(t, ok, "at %v: %T is not an object", path[:i], v)
			v, ok = m[k]
			require.Truef(t, ok, "at %v: no key %q in %v", path[:i], k, m)
		case int:
			a, ok := v.([]any)
			require.Truef(t, ok, "at %v: %T is not an array", path[:i], v)
			require.Lessf(t, k, len(a), "at %v: index %d out of %d", path[:i], k, len(a))
			v = a[k]
		}
	}
	return v
}

// jsonEq checks that got, encoded as JSON, equals the JSON text want.
func jsonEq(t testing.TB, want string, got any, msgAndArgs ...any) {
	t.Helper()
	b, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, want, string(b), msgAndArgs...)
}

// decode decodes a JSON fixture.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// plain returns m without the thought signatures (and their Provider) of
// its blocks, for comparing the rest; tests check signatures on their own.
func plain(m agentrt.Message) agentrt.Message {
	m.Blocks = append([]agentrt.Block(nil), m.Blocks...)
	for i := range m.Blocks {
		m.Blocks[i].Signature, m.Blocks[i].Provider = nil, ""
	}
	return m
}

// requireSigs checks, per block of m, that its signature starts with the
// base64 prefix in sigs, or that it has none where sigs has "".
func requireSigs(t *testing.T, sigs []string, m agentrt.Message) {
	t.Helper()
	require.Len(t, sigs, len(m.Blocks), "one expected signature per block")
	for i, b := range m.Blocks {
		if sigs[i] == "" {
			require.Empty(t, b.Signature, "block %d", i)
			continue
		}
		got := base64.StdEncoding.EncodeToString(b.Signature)
		require.True(t, strings.HasPrefix(got, sigs[i]), "block %d: signature %s", i, got)
		require.Equal(t, "gemini", b.Provider, "block %d", i)
	}
}

// use is a tool_use block with input as its JSON.
func use(id, name, input string) agentrt.Block {
	return agentrt.ToolUseBlock(id, name, json.RawMessage(input))
}
