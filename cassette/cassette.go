// Package cassette records a test's calls to a model API once, with a real
// key, and replays them offline afterwards: a cassette is a YAML file of
// HTTP exchanges (go-vcr's format) that the vendor SDK client the provider
// adapters take reads through an *http.Client.
//
//	rec := cassette.New(t, "testdata/weather", &cassette.Options{KeyEnv: []string{"ANTHROPIC_API_KEY"}})
//	client := sdk.NewClient(option.WithHTTPClient(rec.Client()), option.WithAPIKey(os.Getenv("ANTHROPIC_API_KEY")))
//
// # Modes
//
// The environment variable AGENTRT_CASSETTE (see [EnvMode]) picks the mode
// for every cassette of a test run:
//
//   - replay: serve the cassette; a missing cassette fails the test.
//   - record: call the real API and write the cassette, replacing it.
//   - auto (the default, also when unset): replay if the cassette exists,
//     else record if one of Options.KeyEnv is set, else skip the test
//     with a message saying how to record it.
//
// # What is written
//
// Each exchange as it went on the wire: method, URL, request headers and
// body, status, response headers and body (an SSE stream byte for byte).
// Credentials are removed before anything is written or replayed:
// Authorization and every header or query parameter whose name says key,
// token, secret, auth or cookie; any text equal to a removed value, or to
// the value of an Options.KeyEnv variable, is replaced wherever else it
// appears.
//
// # Matching
//
// In replay, a request is served the first exchange not yet replayed with
// the same method and URL path whose body is the same JSON (key order and
// spacing aside), without the fields Options.Ignore names and the tool-call
// ids the runtime makes up ([IDFields]). A request that matches none fails
// the test with the first JSON path that differs and both values, such as
//
//	messages[1].content[0].text: recorded "…2+40…" ≠ sent "…2+41…"
//
// and so does an exchange of the cassette that was never asked for.
package cassette

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	vcr "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"
)

// EnvMode is the environment variable that chooses the [Mode].
const EnvMode = "AGENTRT_CASSETTE"

// Mode says whether a cassette is recorded or replayed.
type Mode string

// The modes; see the package doc.
const (
	Auto   Mode = "auto"
	Record Mode = "record"
	Replay Mode = "replay"
)

// IDFields are request fields never compared: the ids of tool calls and
// results in the four wire formats, which a runtime or adapter may make
// up anew on every run.
var IDFields = []string{
	"messages[*].tool_calls[*].id",             // OpenAI Chat Completions
	"messages[*].tool_call_id",                 // OpenAI Chat Completions
	"input[*].call_id",                         // OpenAI Responses function_call and function_call_output
	"messages[*].content[*].id",                // Anthropic tool_use
	"messages[*].content[*].tool_use_id",       // Anthropic tool_result
	"contents[*].parts[*].functionCall.id",     // Gemini
	"contents[*].parts[*].functionResponse.id", // Gemini
}

// Options configure a cassette. The zero value is valid.
type Options struct {
	// Mode, when set, wins over the environment variable EnvMode.
	Mode Mode
	// KeyEnv names the environment variables that hold an API key: in
	// auto mode a missing cassette is recorded only when one is set, and
	// their values never reach the file.
	KeyEnv []string
	// Ignore lists more request body fields not compared, as JSON paths
	// in which * stands for any key or index: "metadata.user_id",
	// "messages[*].content[*].cache_control". A path covers the field's
	// whole value.
	Ignore []string
	// Transport sends the requests being recorded; nil means
	// http.DefaultTransport. Replay never uses it.
	Transport http.RoundTripper
}

// TB is the part of testing.TB a Recorder uses; *testing.T and
// *testing.B are TBs.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
}

// Recorder records to or replays from one cassette file. Its methods are
// safe for concurrent use; the test's cleanup stops it.
type Recorder struct {
	t      TB
	file   string
	mode   Mode
	rec    *recorder.Recorder
	ignore [][]string
	keys   []string

	mu       sync.Mutex
	want     []*vcr.Interaction // in replay: the cassette's exchanges
	replayed map[int]bool       // the ids of those replayed
}

// New returns the Recorder of the cassette name (the file name.yaml,
// relative to the test's directory), in the mode the options or the
// environment choose. It skips the test in auto mode when there is
// neither a cassette nor a key, and fails it when the cassette cannot be
// read. The test's cleanup stops the recorder: it writes the cassette
// when recording and, when replaying, fails the test if an exchange was
// never asked for.
func New(t TB, name string, opts *Options) *Recorder {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	r := &Recorder{t: t, file: name + ".yaml", replayed: map[int]bool{}}
	mode, err := r.chooseMode(opts)
	if err != nil {
		t.Fatalf("cassette %s: %v", r.file, err)
	}
	r.mode = mode
	if mode == "" {
		t.Skipf("cassette %s: no cassette and none of %v set: set a key and %s=record to record it", r.file, opts.KeyEnv, EnvMode)
	}
	for _, p := range append(append([]string{}, IDFields...), opts.Ignore...) {
		r.ignore = append(r.ignore, parsePath(p))
	}
	for _, k := range opts.KeyEnv {
		if v := os.Getenv(k); v != "" {
			r.keys = append(r.keys, v)
		}
	}
	ropts := []recorder.Option{
		recorder.WithMatcher(r.match),
		recorder.WithSkipRequestLatency(true),
		recorder.WithReplayableInteractions(false),
		recorder.WithHook(r.scrub, recorder.AfterCaptureHook),
		recorder.WithHook(r.scrub, recorder.BeforeSaveHook),
		recorder.WithHook(r.played, recorder.BeforeResponseReplayHook),
	}
	if opts.Transport != nil {
		ropts = append(ropts, recorder.WithRealTransport(opts.Transport))
	}
	if mode == Replay {
		ropts = append(ropts, recorder.WithMode(recorder.ModeReplayOnly))
		c, err := vcr.Load(name)
		if err != nil {
			t.Fatalf("cassette %s: %v", r.file, err)
		}
		r.want = c.Interactions
	} else {
		ropts = append(ropts, recorder.WithMode(recorder.ModeRecordOnly))
	}
	r.rec, err = recorder.New(name, ropts...)
	if err != nil {
		t.Fatalf("cassette %s: %v", r.file, err)
	}
	t.Cleanup(r.stop)
	return r
}

// chooseMode returns the mode to run in, or "" to skip.
func (r *Recorder) chooseMode(opts *Options) (Mode, error) {
	mode := opts.Mode
	if mode == "" {
		mode = Mode(os.Getenv(EnvMode))
	}
	switch mode {
	case Record, Replay:
		return mode, nil
	case Auto, "":
		if _, err := os.Stat(r.file); err == nil {
			return Replay, nil
		}
		for _, k := range opts.KeyEnv {
			if os.Getenv(k) != "" {
				return Record, nil
			}
		}
		return "", nil
	}
	return "", fmt.Errorf("%s=%q: want record, replay or auto", EnvMode, mode)
}

// Mode returns the mode the recorder runs in: Record or Replay.
func (r *Recorder) Mode() Mode { return r.mode }

// Client returns an *http.Client that goes through the cassette, for the
// vendor SDK's option that takes one.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// stop writes the cassette when recording and, when replaying, fails the
// test if an exchange was never asked for.
func (r *Recorder) stop() {
	if err := r.rec.Stop(); err != nil {
		r.t.Errorf("cassette %s: %v", r.file, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode != Replay {
		return
	}
	for _, i := range r.want {
		if !r.replayed[i.ID] {
			r.t.Errorf("cassette %s: %d of %d recorded exchanges were never asked for, the first: %s %s",
				r.file, len(r.want)-len(r.replayed), len(r.want), i.Request.Method, urlPath(i.Request.URL))
			return
		}
	}
}

// played is the go-vcr hook run before an exchange is served: it notes
// the exchange as replayed.
func (r *Recorder) played(i *vcr.Interaction) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replayed[i.ID] = true
	return nil
}

// MismatchError is the error a request that matches no recorded exchange
// gets, wrapped by the SDK and the adapter.
type MismatchError struct {
	// File is the cassette file.
	File string
	// Request is the request's method and path: "POST /v1/messages".
	Request string
	// Diff is the first difference with the first exchange not yet
	// replayed of the same method and path, as "path: recorded X ≠ sent
	// Y", or "" when there is no such exchange.
	Diff string
}

func (e *MismatchError) Error() string {
	if e.Diff == "" {
		return fmt.Sprintf("cassette %s: no recorded exchange for %s", e.File, e.Request)
	}
	return fmt.Sprintf("cassette %s: %s differs from the recording: %s", e.File, e.Request, e.Diff)
}

// bodyKey carries a request's body and match state to the matcher.
type bodyKey struct{}

type matchState struct {
	body []byte
	diff string // with the first candidate of the same method and path
	seen bool
}

// RoundTrip records or replays one exchange. A request that matches no
// recorded exchange fails the test and returns an error naming the first
// difference.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	st := &matchState{body: body}
	req = req.Clone(context.WithValue(req.Context(), bodyKey{}, st))
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if r.mode == Record {
		// Let the transport ask for gzip and decompress it, so the
		// cassette holds the body as text.
		req.Header.Del("Accept-Encoding")
	}
	resp, err := r.rec.RoundTrip(req)
	if errors.Is(err, vcr.ErrInteractionNotFound) {
		err := &MismatchError{File: r.file, Request: req.Method + " " + req.URL.Path, Diff: st.diff}
		r.t.Errorf("%v", err)
		return nil, err
	}
	return resp, err
}

// match is go-vcr's matcher: method, path and the body as JSON.
func (r *Recorder) match(req *http.Request, rec vcr.Request) bool {
	st, _ := req.Context().Value(bodyKey{}).(*matchState)
	if st == nil || req.Method != rec.Method || req.URL.Path != urlPath(rec.URL) {
		return false
	}
	diff := diffBodies([]byte(rec.Body), st.body, r.ignore)
	if diff != "" && !st.seen {
		st.seen, st.diff = true, diff
	}
	return diff == ""
}

// urlPath returns the path of a recorded URL.
func urlPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			u = u[j:]
		} else {
			u = "/"
		}
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u
}
