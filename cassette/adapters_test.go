package cassette_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vcr "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/cassette"
)

const (
	system   = "You are a helpful assistant."
	toolDesc = "Get the weather for a location."
	question = "What's the weather in Florence?"
)

// wireCase is one cassette of testdata/VENDOR, made from wire fixtures.
type wireCase struct {
	name    string
	replies []reply
	stream  bool
	agent   bool // run the weather agent, else one Plan call
	check   func(t *testing.T, r result)
}

// fixtures names, per vendor, the wire fixtures of each case.
var fixtures = map[string]map[string][]string{
	"anthropic": {
		"text": {"text.json"}, "text-stream": {"text-stream.sse"},
		"thinking-stream": {"thinking-tool-call-stream.sse"},
		"error-400":       {"error-400-invalid-request.response.json"},
		"agent":           {"thinking-tool-call-stream.sse", "text-stream.sse"},
	},
	"openai": {
		"text": {"text.json"}, "text-stream": {"text-stream.sse"},
		"thinking-stream": {"compat-deepseek-reasoning-content-stream.sse"},
		"error-400":       {"error-400-unsupported-parameter.json"},
		"agent":           {"tool-call-stream.sse", "text-stream.sse"},
	},
	"gemini": {
		"text": {"text.json"}, "text-stream": {"text-stream.sse"},
		"thinking-stream": {"thinking-tool-call-stream.sse"},
		"error-400":       {"error-400-invalid-argument.json"},
		"agent":           {"thinking-tool-call-stream.sse", "text-stream.sse"},
	},
}

func wireCases(v vendor) []wireCase {
	f := fixtures[v.name]
	replies := func(files []string, status int) []reply {
		var out []reply
		for _, name := range files {
			out = append(out, reply{fixture: name, status: status})
		}
		return out
	}
	return []wireCase{
		{name: "text", replies: replies(f["text"], 0), check: func(t *testing.T, r result) {
			require.Nil(t, r.Err)
			assert.NotEmpty(t, r.Response.Message.Text())
			assert.Positive(t, r.Response.Usage.OutputTokens)
		}},
		{name: "text-stream", replies: replies(f["text-stream"], 0), stream: true, check: func(t *testing.T, r result) {
			require.Nil(t, r.Err)
			assert.Greater(t, len(r.Deltas), 1, "delta by delta")
			assert.Equal(t, r.Response.Message.Text(), strings.Join(r.Deltas, ""))
		}},
		{name: "thinking-stream", replies: replies(f["thinking-stream"], 0), stream: true, check: func(t *testing.T, r result) {
			require.Nil(t, r.Err)
			var thinking bool
			for _, b := range r.Response.Message.Blocks {
				thinking = thinking || b.Type == agentrt.BlockThinking
			}
			assert.True(t, thinking, "a thinking block in %s", r.Response.Message)
		}},
		{name: "error-400", replies: replies(f["error-400"], 400), check: func(t *testing.T, r result) {
			require.NotNil(t, r.Err, "error %q", r.Other)
			assert.Equal(t, 400, r.Err.StatusCode)
			assert.ErrorIs(t, r.Err, agentrt.ErrInvalidRequest)
			assert.NotEmpty(t, r.Err.Message)
		}},
		{name: "agent", replies: replies(f["agent"], 0), agent: true, check: func(t *testing.T, r result) {
			done, ok := agenttest.Done(r.Events)
			require.True(t, ok)
			assert.Equal(t, agentrt.StopComplete, done.Reason)
			assert.Len(t, agenttest.Filter[agentrt.ToolResult](r.Events), 1)
			assert.NotEmpty(t, agenttest.Filter[agentrt.TextDelta](r.Events))
			agenttest.AssertInvariants(t, r.Session)
		}},
	}
}

// exchange runs case c on planner p.
func exchange(t *testing.T, p agentrt.Planner, c wireCase) result {
	if c.agent {
		return runAgent(t, weatherAgent(p, system, toolDesc), question)
	}
	tool := weatherAgent(p, system, toolDesc).Tools[0]
	req := &agentrt.ModelRequest{
		System:   system,
		Messages: []agentrt.Message{agentrt.NewUserMessage(question)},
		Tools:    []agentrt.ToolSpec{tool.Spec()},
	}
	return plan(p, req, c.stream)
}

// TestWireCassettes replays, for each adapter, cassettes made from the
// recorded vendor exchanges in shared/fixtures/wire, and checks that each
// gives what the exchange itself gives: the same response, deltas, errors,
// events and session. AGENTRT_CASSETTE=record remakes the cassettes.
func TestWireCassettes(t *testing.T) {
	t.Parallel()
	for _, v := range vendors {
		for _, c := range wireCases(v) {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				name := filepath.Join("testdata", v.name, c.name)
				rec := newCassette(t, name, newFakeVendor(t, v, c.replies...))
				got := exchange(t, v.provider(t, rec.Client()), c)
				c.check(t, got)

				if _, err := os.Stat(filepath.Join(wireDir, v.name)); err != nil {
					t.Skipf("no wire fixtures to compare with: %v", err)
				}
				want := exchange(t, v.provider(t, &http.Client{Transport: newFakeVendor(t, v, c.replies...)}), c)
				assert.Equal(t, want, got, "the exchange through the cassette and without it")

				if rec.Mode() == cassette.Replay {
					cas, err := vcr.Load(name)
					require.NoError(t, err)
					require.Len(t, cas.Interactions, len(c.replies))
					for i, r := range c.replies {
						b, err := os.ReadFile(filepath.Join(wireDir, v.name, r.fixture))
						require.NoError(t, err)
						assert.Equal(t, string(b), cas.Interactions[i].Response.Body, "the vendor's bytes, unchanged")
					}
				}
			})
		}
	}
}
