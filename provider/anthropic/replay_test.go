package anthropic

import (
	"bytes"
	"context"
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

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// reply is one HTTP response a replay server sends.
type reply struct {
	status int               // 0 means 200
	header map[string]string // extra headers
	body   []byte
	// handler, when set, writes the response itself (for streams that
	// stall or break); status, header and body are then ignored. body is
	// the request body, already read.
	handler func(w http.ResponseWriter, req *http.Request, body []byte)
}

// jsonReply returns a 200 reply with a JSON body.
func jsonReply(body []byte) reply {
	return reply{body: body, header: map[string]string{"Content-Type": "application/json"}}
}

// sseReply returns a 200 reply with an event stream body.
func sseReply(body []byte) reply {
	return reply{body: body, header: map[string]string{"Content-Type": "text/event-stream"}}
}

// use is a tool_use block with input as its JSON.
func use(id, name, input string) agentrt.Block {
	return agentrt.ToolUseBlock(id, name, json.RawMessage(input))
}

// fileReply returns a 200 reply with the bytes of testdata/name: an event
// stream for a .sse file, JSON otherwise.
func fileReply(t *testing.T, name string) reply {
	t.Helper()
	if strings.HasSuffix(name, ".sse") {
		return sseReply(fixture(t, name))
	}
	return jsonReply(fixture(t, name))
}

// planStreamed makes one call of p with req, streamed when stream (OnText
// collects the deltas), and returns the answer and the deltas.
func planStreamed(t *testing.T, p *Provider, req *agentrt.ModelRequest, stream bool) (*agentrt.ModelResponse, []string) {
	t.Helper()
	var deltas []string
	req.OnText = nil
	if stream {
		req.OnText = func(d string) { deltas = append(deltas, d) }
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	return resp, deltas
}

// eitherReply answers a streaming request with the event stream sse and
// any other with the JSON body plain.
func eitherReply(plain, sse []byte) reply {
	return reply{handler: func(w http.ResponseWriter, _ *http.Request, body []byte) {
		var req struct{ Stream bool }
		_ = json.Unmarshal(body, &req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(sse)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(plain)
	}}
}

// errorReply returns an error response with a JSON body.
func errorReply(status int, body string, header ...string) reply {
	h := map[string]string{"Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return reply{status: status, body: []byte(body), header: h}
}

// seen is one request a replay server received.
type seen struct {
	method string
	path   string
	header http.Header
	body   []byte
	at     time.Time // when the server received it
}

// json decodes the request body into a map, without the prompt-cache
// breakpoints (cache_control) that the adapter sets by default: most
// recordings were made without them. TestCacheBreakpoints* check them,
// with raw.
func (s seen) json(t *testing.T) map[string]any {
	t.Helper()
	m := s.raw(t)
	stripCacheControl(m)
	return m
}

// raw decodes the request body into a map as it is.
func (s seen) raw(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(s.body, &m), "request body: %s", s.body)
	return m
}

// stripCacheControl removes every "cache_control" key from v.
func stripCacheControl(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "cache_control")
		for _, e := range v {
			stripCacheControl(e)
		}
	case []any:
		for _, e := range v {
			stripCacheControl(e)
		}
	}
}

// replay is an httptest server that answers the requests it gets with
// replies, in order, and records each request.
type replay struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []seen
}

func newReplay(t *testing.T, replies ...reply) *replay {
	t.Helper()
	r := &replay{t: t, replies: replies}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replay) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	n := len(r.reqs)
	r.reqs = append(r.reqs, seen{method: req.Method, path: req.URL.Path, header: req.Header.Clone(), body: body, at: at})
	var rep reply
	ok := n < len(r.replies)
	if ok {
		rep = r.replies[n]
	}
	r.mu.Unlock()
	if !ok {
		r.t.Errorf("replay: unexpected request %d: %s", n+1, body)
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"replay: no reply left"}}`, http.StatusTeapot)
		return
	}
	if rep.handler != nil {
		rep.handler(w, req, body)
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(rep.body)
}

// requests returns the requests received so far.
func (r *replay) requests() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// only returns the one request received, failing the test otherwise.
func (r *replay) only() seen {
	r.t.Helper()
	reqs := r.requests()
	require.Len(r.t, reqs, 1, "requests received")
	return reqs[0]
}

// client returns an SDK client pointed at the replay server.
func (r *replay) client() sdk.Client {
	return sdk.NewClient(
		option.WithBaseURL(r.srv.URL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(r.srv.Client()),
	)
}

// provider returns a Provider on the replay server. Retries are off
// unless opts says otherwise.
func (r *replay) provider(model string, opts *Options) *Provider {
	if opts == nil {
		opts = &Options{MaxRetries: -1}
	}
	return New(r.client(), model, opts)
}

// fixture returns the bytes of testdata/name.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// fixtureJSON decodes testdata/name.
func fixtureJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, name), &m))
	return m
}

// jsonOf re-encodes v so that two decoded values can be compared with
// JSONEq.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// cut returns a copy of b up to (not including) the first occurrence of
// marker, failing the test if it is absent.
func cut(t *testing.T, b []byte, marker string) []byte {
	t.Helper()
	i := bytes.Index(b, []byte(marker))
	require.GreaterOrEqual(t, i, 0, "marker %q not found", marker)
	return bytes.Clone(b[:i])
}
