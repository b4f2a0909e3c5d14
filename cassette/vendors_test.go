package cassette_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	antsdk "github.com/anthropics/anthropic-sdk-go/v2"
	antopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	oai "github.com/openai/openai-go/v3"
	oaiopt "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/cassette"
	"github.com/agentrt/agentrt/provider/anthropic"
	"github.com/agentrt/agentrt/provider/gemini"
	"github.com/agentrt/agentrt/provider/openai"
)

// vendor is one provider adapter, built on an *http.Client.
type vendor struct {
	name   string // the directory under the wire fixtures and testdata
	keyEnv string
	// provider returns the adapter on hc, with retries off.
	provider func(t *testing.T, hc *http.Client) agentrt.Planner
}

// testKey is the API key the tests send when no real one is set; no
// cassette may hold it.
const testKey = "sk-test-key-0123456789abcdef"

func apiKey(env string) string {
	if k := os.Getenv(env); k != "" {
		return k
	}
	return testKey
}

var vendors = []vendor{
	{name: "anthropic", keyEnv: "ANTHROPIC_API_KEY", provider: func(t *testing.T, hc *http.Client) agentrt.Planner {
		c := antsdk.NewClient(antopt.WithHTTPClient(hc), antopt.WithAPIKey(apiKey("ANTHROPIC_API_KEY")), antopt.WithMaxRetries(0))
		return anthropic.New(c, "claude-sonnet-4-5-20250929", &anthropic.Options{MaxRetries: -1})
	}},
	{name: "openai", keyEnv: "OPENAI_API_KEY", provider: func(t *testing.T, hc *http.Client) agentrt.Planner {
		c := oai.NewClient(oaiopt.WithHTTPClient(hc), oaiopt.WithAPIKey(apiKey("OPENAI_API_KEY")), oaiopt.WithMaxRetries(0))
		return openai.New(c, "gpt-4.1-nano", &openai.Options{MaxRetries: -1})
	}},
	// The Responses API planner, asking for what the recorded requests
	// asked for: high effort and a reasoning summary.
	{name: "openai-responses", keyEnv: "OPENAI_API_KEY", provider: func(t *testing.T, hc *http.Client) agentrt.Planner {
		c := oai.NewClient(oaiopt.WithHTTPClient(hc), oaiopt.WithAPIKey(apiKey("OPENAI_API_KEY")), oaiopt.WithMaxRetries(0))
		return openai.NewResponses(c, "gpt-5", &openai.ResponsesOptions{ReasoningEffort: "high", ReasoningSummary: "auto", MaxRetries: -1})
	}},
	{name: "gemini", keyEnv: "GEMINI_API_KEY", provider: func(t *testing.T, hc *http.Client) agentrt.Planner {
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey: apiKey("GEMINI_API_KEY"), Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		})
		require.NoError(t, err)
		return gemini.New(c, "gemini-2.5-flash", &gemini.Options{MaxRetries: -1})
	}},
}

// wireDir is where the recorded vendor exchanges are: shared/ beside the
// repository.
var wireDir = filepath.Join("..", "..", "shared", "fixtures", "wire")

// reply is one answer of a fake vendor: a status and a body, given or
// read from a wire fixture.
type reply struct {
	status  int    // 0 means 200
	fixture string // a file under wireDir/VENDOR, or
	body    string // the body itself
	header  map[string]string
}

// fakeVendor is an http.RoundTripper that answers the requests it gets
// with replies, in order: the vendor a cassette records in these tests.
type fakeVendor struct {
	t       *testing.T
	dir     string
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte // the requests' bodies
}

func newFakeVendor(t *testing.T, v vendor, replies ...reply) *fakeVendor {
	return &fakeVendor{t: t, dir: filepath.Join(wireDir, v.name), replies: replies}
}

func (f *fakeVendor) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, body)
	if len(f.replies) == 0 {
		return nil, fmt.Errorf("fake vendor: no reply left for %s %s", req.Method, req.URL.Path)
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	b := []byte(r.body)
	ctype := "application/json"
	if r.fixture != "" {
		var err error
		b, err = os.ReadFile(filepath.Join(f.dir, r.fixture))
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(r.fixture, ".sse") {
			ctype = "text/event-stream"
		}
	}
	status := r.status
	if status == 0 {
		status = http.StatusOK
	}
	h := http.Header{"Content-Type": {ctype}}
	for k, v := range r.header {
		h.Set(k, v)
	}
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: req,
	}, nil
}

// result is what one exchange produced, in a form two runs can be
// compared in.
type result struct {
	Response *agentrt.ModelResponse
	Deltas   []string
	Err      *agentrt.ProviderError // Err cleared
	Other    string                 // an error that is no ProviderError
	Events   []agentrt.Event        // times cleared
	Session  []agentrt.Message
}

// plan calls p once with a one-message request, streaming when stream.
func plan(p agentrt.Planner, req *agentrt.ModelRequest, stream bool) result {
	var r result
	if stream {
		req.OnText = func(d string) { r.Deltas = append(r.Deltas, d) }
	}
	resp, err := p.Plan(context.Background(), req)
	r.Response = resp
	r.setErr(err)
	return r
}

func (r *result) setErr(err error) {
	if err == nil {
		return
	}
	var pe *agentrt.ProviderError
	if errors.As(err, &pe) {
		c := *pe
		c.Err = nil
		r.Err = &c
		return
	}
	r.Other = err.Error()
}

// weatherIn is the input of the weather tool the recorded models call.
type weatherIn struct {
	Location string `json:"location" jsonschema:"description=the city"`
}

// weatherAgent is an agent with one tool, on p.
func weatherAgent(p agentrt.Planner, instructions, toolDesc string) *agentrt.Agent {
	weather := agentrt.NewTool("weather", toolDesc,
		func(_ context.Context, in weatherIn) (string, error) { return "40 C and sunny in " + in.Location, nil },
		agentrt.ReadOnly())
	return &agentrt.Agent{Instructions: instructions, Tools: []agentrt.Tool{weather}, Planner: p, Store: &agentrt.MemoryStore{}}
}

// agentPlanner is p for an agent run on the recorded answers files: p
// itself when they are streams, else p with OnText cleared, since an
// agent streams every call and a whole JSON body is no stream.
func agentPlanner(p agentrt.Planner, files []string) agentrt.Planner {
	if streamed(files) {
		return p
	}
	return unstreamed(p)
}

// unstreamed is p with OnText cleared: it makes whole calls.
func unstreamed(p agentrt.Planner) agentrt.Planner {
	return agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		r := *req
		r.OnText = nil
		return p.Plan(ctx, &r)
	})
}

// streamed reports whether the recorded answers files are all streams.
func streamed(files []string) bool {
	for _, f := range files {
		if !strings.HasSuffix(f, ".sse") {
			return false
		}
	}
	return len(files) > 0
}

// runAgent runs ag on input in session "s1" and returns its events, times
// cleared, and the session.
func runAgent(t *testing.T, ag *agentrt.Agent, input string) result {
	var r result
	for ev, err := range ag.Run(context.Background(), "s1", input) {
		if err != nil {
			r.setErr(err)
			continue
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			e.Start = time.Time{}
			ev = e
		case agentrt.ToolResult:
			e.Duration = 0
			ev = e
		}
		r.Events = append(r.Events, ev)
	}
	msgs, err := ag.Store.Load(context.Background(), "s1")
	require.NoError(t, err)
	r.Session = msgs
	return r
}

// newCassette is cassette.New for the committed cassettes of these tests:
// replayed, or recorded from the wire fixtures (through fake) when
// AGENTRT_CASSETTE=record.
func newCassette(t *testing.T, name string, fake http.RoundTripper) *cassette.Recorder {
	mode := cassette.Replay
	if os.Getenv(cassette.EnvMode) == string(cassette.Record) {
		mode = cassette.Record
	}
	return cassette.New(t, name, &cassette.Options{Mode: mode, Transport: fake, KeyEnv: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}})
}
