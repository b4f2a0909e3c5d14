package cassette_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/cassette"
)

// fakeT stands in for the test a Recorder belongs to, so that a test can
// see the failures and skips the Recorder reports. Cleanups run when the
// test calls finish.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	skipped  string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	panic(stop{})
}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped = sprintf(format, args...)
	panic(stop{})
}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// finish runs the cleanups, last first, as the testing package does.
func (f *fakeT) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
}

type stop struct{}

// newRecorder calls cassette.New on f, returning nil when it skipped or
// failed the test.
func newRecorder(f *fakeT, name string, opts *cassette.Options) (r *cassette.Recorder) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				panic(v)
			}
			r = nil
		}
	}()
	return cassette.New(f, name, opts)
}

// vendor is a fake model API that answers every POST with reply.
func fakeServer(t *testing.T, status int, contentType, reply string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Set-Cookie", "session=cookie-value-123456")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to url through client and returns the response body.
func post(t *testing.T, client *http.Client, url, body string, header ...string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b), nil
}

func TestRecordThenReplayServesTheSameBytes(t *testing.T) {
	t.Parallel()
	const sse = "event: message_start\ndata: {\"type\":\"message_start\"    }\n\nevent: message_stop\ndata: {}\n\n"
	srv := fakeServer(t, http.StatusOK, "text/event-stream", sse)
	name := filepath.Join(t.TempDir(), "stream")

	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	require.NotNil(t, r)
	assert.Equal(t, cassette.Record, r.Mode())
	got, err := post(t, r.Client(), srv.URL+"/v1/messages", `{"model":"m","stream":true}`)
	require.NoError(t, err)
	assert.Equal(t, sse, got)
	rec.finish()
	assert.Empty(t, rec.errors)
	srv.Close() // replay must not need it

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
	require.NotNil(t, r)
	// Another host, keys in another order, other spacing: the same request.
	got, err = post(t, r.Client(), "https://api.example.com/v1/messages", `{ "stream": true, "model": "m" }`)
	require.NoError(t, err)
	assert.Equal(t, sse, got, "the stream byte for byte")
	play.finish()
	assert.Empty(t, play.errors)
}

func TestReplayKeepsTheStatus(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, http.StatusTooManyRequests, "application/json", `{"error":{"type":"rate_limit_error"}}`)
	name := filepath.Join(t.TempDir(), "429")
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	_, err := post(t, r.Client(), srv.URL+"/v1/messages", `{}`)
	require.NoError(t, err)
	rec.finish()

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
	resp, err := r.Client().Post("http://x/v1/messages", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	play.finish()
	assert.Empty(t, play.errors)
}

func TestNoSecretReachesTheCassette(t *testing.T) {
	const (
		envKey    = "sk-env-key-0123456789abcdef"
		bearer    = "sk-bearer-0123456789abcdef"
		xAPIKey   = "sk-ant-x-api-key-0123456789"
		googKey   = "AIza-goog-header-0123456789"
		queryKey  = "AIza-query-param-0123456789"
		customKey = "custom-token-0123456789abcdef"
	)
	t.Setenv("CASSETTE_TEST_KEY", envKey)
	// The vendor echoes a key into its answer, as some error messages do.
	srv := fakeServer(t, http.StatusUnauthorized, "application/json", `{"error":"bad key `+queryKey+` or `+envKey+`"}`)
	name := filepath.Join(t.TempDir(), "secrets")

	f := &fakeT{TB: t}
	r := newRecorder(f, name, &cassette.Options{Mode: cassette.Record, KeyEnv: []string{"CASSETTE_TEST_KEY"}})
	_, err := post(t, r.Client(), srv.URL+"/v1beta/models/m:generateContent?key="+queryKey+"&alt=sse",
		`{"note":"the env key `+envKey+` pasted into a prompt"}`,
		"Authorization", "Bearer "+bearer,
		"X-Api-Key", xAPIKey,
		"X-Goog-Api-Key", googKey,
		"X-Custom-Token", customKey,
	)
	require.NoError(t, err)
	f.finish()
	require.Empty(t, f.errors)

	b, err := os.ReadFile(name + ".yaml")
	require.NoError(t, err)
	file := string(b)
	for _, secret := range []string{envKey, bearer, xAPIKey, googKey, queryKey, customKey, "cookie-value-123456"} {
		assert.NotContains(t, file, secret)
	}
	assert.Contains(t, file, "alt=sse", "other query parameters stay")
	assert.Contains(t, file, "[redacted]")
	assert.NotContains(t, strings.ToLower(file), "authorization")
	assert.NotContains(t, strings.ToLower(file), "x-goog-api-key")
}

func TestReplayNamesTheFirstDifference(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, http.StatusOK, "application/json", `{"ok":true}`)
	name := filepath.Join(t.TempDir(), "diff")
	recorded := `{"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Please work this out for me: what is 2+40? Answer with a number and nothing else."}]}],"tools":[{"name":"add","description":"Add two integers."}]}`
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	_, err := post(t, r.Client(), srv.URL+"/v1/messages", recorded)
	require.NoError(t, err)
	rec.finish()

	tests := []struct {
		name, sent, want string
	}{
		{"text", strings.Replace(recorded, "2+40", "2+41", 1),
			`messages[0].content[0].text: recorded "… for me: what is 2+40? Answer with a num…" ≠ sent "… for me: what is 2+41? Answer with a num…"`},
		{"system prompt", strings.Replace(recorded, "Be brief.", "Be terse.", 1),
			`system: recorded "Be brief." ≠ sent "Be terse."`},
		{"tool description", strings.Replace(recorded, "Add two integers.", "Add two numbers.", 1),
			`tools[0].description: recorded "Add two integers." ≠ sent "Add two numbers."`},
		{"field added", strings.Replace(recorded, `"system"`, `"temperature":0,"system"`, 1),
			`temperature: recorded (absent) ≠ sent 0`},
		{"message missing", `{"system":"Be brief.","messages":[],"tools":[{"name":"add","description":"Add two integers."}]}`,
			`messages[0]: recorded {"content":[{"text":"Please work this out for me: what is 2+40? Answer with a number and nothing else.","type":"text"}],"role":"user"} ≠ sent (absent)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			play := &fakeT{TB: t}
			r := newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
			_, err := post(t, r.Client(), "http://x/v1/messages", tt.sent)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			require.Len(t, play.errors, 1, "the test fails")
			assert.Contains(t, play.errors[0], tt.want)
			play.finish()
			assert.Len(t, play.errors, 2, "and the unused exchange is reported")
			assert.Contains(t, play.errors[1], "1 of 1 recorded exchanges were never asked for, the first: POST /v1/messages")
		})
	}
}

func TestReplayIgnoresNamedFields(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, http.StatusOK, "application/json", `{}`)
	name := filepath.Join(t.TempDir(), "ignore")
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	// A Chat Completions tool result, and a Responses API function call
	// and its output.
	_, err := post(t, r.Client(), srv.URL+"/v1/chat/completions",
		`{"metadata":{"user_id":"u-1"},"messages":[{"role":"tool","tool_call_id":"call_abc"}],
		"input":[{"type":"function_call","call_id":"call_abc"},{"type":"function_call_output","call_id":"call_abc"}]}`)
	require.NoError(t, err)
	rec.finish()

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay, Ignore: []string{"metadata.user_id"}})
	_, err = post(t, r.Client(), "http://x/v1/chat/completions",
		`{"metadata":{"user_id":"u-2"},"messages":[{"role":"tool","tool_call_id":"call_xyz"}],
		"input":[{"type":"function_call","call_id":"call_xyz"},{"type":"function_call_output","call_id":"call_xyz"}]}`)
	require.NoError(t, err, "a named field and a tool call id may differ")
	play.finish()
	assert.Empty(t, play.errors)
}

func TestReplayMatchesPathAndMethod(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, http.StatusOK, "application/json", `{}`)
	name := filepath.Join(t.TempDir(), "path")
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	_, err := post(t, r.Client(), srv.URL+"/v1beta/models/m:generateContent", `{}`)
	require.NoError(t, err)
	rec.finish()

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
	_, err = post(t, r.Client(), "http://x/v1beta/models/m:streamGenerateContent", `{}`)
	require.ErrorContains(t, err, "no recorded exchange for POST /v1beta/models/m:streamGenerateContent")
	play.finish()
}

func TestMode(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "there")
	require.NoError(t, os.WriteFile(existing+".yaml", []byte("---\nversion: 2\ninteractions: []\n"), 0o644))
	missing := filepath.Join(dir, "missing")

	tests := []struct {
		name, env, key, cassette string
		want                     cassette.Mode // "" means skipped
		skip                     string
	}{
		{name: "auto replays an existing cassette", env: "auto", cassette: existing, want: cassette.Replay},
		{name: "unset is auto", cassette: existing, want: cassette.Replay},
		{name: "auto records with a key", env: "auto", key: "k", cassette: missing, want: cassette.Record},
		{name: "auto skips without a key", env: "auto", cassette: missing, skip: "no cassette and none of [CASSETTE_MODE_KEY] set: set a key and AGENTRT_CASSETTE=record to record it"},
		{name: "record", env: "record", cassette: existing, want: cassette.Record},
		{name: "replay", env: "replay", key: "k", cassette: existing, want: cassette.Replay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cassette.EnvMode, tt.env)
			t.Setenv("CASSETTE_MODE_KEY", tt.key)
			f := &fakeT{TB: t}
			r := newRecorder(f, tt.cassette, &cassette.Options{KeyEnv: []string{"CASSETTE_MODE_KEY"}})
			if tt.skip != "" {
				assert.Nil(t, r)
				assert.Contains(t, f.skipped, tt.skip)
				return
			}
			require.NotNil(t, r, "errors: %v, skipped: %q", f.errors, f.skipped)
			assert.Equal(t, tt.want, r.Mode())
			if tt.want == cassette.Record {
				f.cleanups = nil // write nothing
			}
			f.finish()
			assert.Empty(t, f.errors)
		})
	}

	t.Run("replay of a missing cassette fails", func(t *testing.T) {
		t.Setenv(cassette.EnvMode, "replay")
		f := &fakeT{TB: t}
		assert.Nil(t, newRecorder(f, missing, nil))
		require.Len(t, f.errors, 1)
		assert.Contains(t, f.errors[0], "missing.yaml")
	})
	t.Run("an unknown mode fails", func(t *testing.T) {
		t.Setenv(cassette.EnvMode, "rewind")
		f := &fakeT{TB: t}
		assert.Nil(t, newRecorder(f, existing, nil))
		require.Len(t, f.errors, 1)
		assert.Contains(t, f.errors[0], `AGENTRT_CASSETTE="rewind": want record, replay or auto`)
	})
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func TestReplayNamesTheExchangeNeverAskedFor(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, http.StatusOK, "application/json", `{}`)
	name := filepath.Join(t.TempDir(), "unused")
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record})
	for _, path := range []string{"/v1/first", "/v1/second", "/v1/third"} {
		_, err := post(t, r.Client(), srv.URL+path, `{}`)
		require.NoError(t, err)
	}
	rec.finish()

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
	_, err := post(t, r.Client(), "http://x/v1/first", `{}`)
	require.NoError(t, err)
	_, err = post(t, r.Client(), "http://x/v1/third", `{}`)
	require.NoError(t, err)
	play.finish()
	require.Len(t, play.errors, 1)
	assert.Contains(t, play.errors[0], "1 of 3 recorded exchanges were never asked for, the first: POST /v1/second")
}
