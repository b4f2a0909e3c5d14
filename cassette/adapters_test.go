package cassette_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
	agent   bool                         // run the weather agent, else one Plan call
	request func() *agentrt.ModelRequest // of the Plan call; nil asks the weather question
	check   func(t *testing.T, r result)
}

// standardCases are the cases of every vendor. A vendor whose recordings
// lack one says why in noRecording; the other cases are made only where
// fixtures names their recordings.
var standardCases = []string{"text", "text-stream", "thinking-stream", "error-400", "agent"}

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
	// The Responses API. "text" is the recorded answer to a question on a
	// PDF, whose request is not stored (as the other vendors' "text" answers
	// another question than the weather one). The agent's two calls are not
	// streamed: the recorded follow-up is a whole JSON body.
	"openai-responses": {
		"text":            {"pdf-input-file.json"},
		"thinking":        {"reasoning-summary-tool-call.response.json"},
		"thinking-stream": {"reasoning-summary-tool-call-stream.sse"},
		"agent":           {"reasoning-summary-tool-call.response.json", "reasoning-summary-tool-result-followup.response.json"},
		"tool-choice":     {"tool-choice-function.json"},
	},
	"gemini": {
		"text": {"text.json"}, "text-stream": {"text-stream.sse"},
		"thinking-stream": {"thinking-tool-call-stream.sse"},
		"error-400":       {"error-400-invalid-argument.json"},
		"agent":           {"thinking-tool-call-stream.sse", "text-stream.sse"},
	},
}

// noRecording says, per vendor, why a standard case has no cassette: the
// wire fixtures hold no such exchange, and none is written by hand.
var noRecording = map[string]map[string]string{
	"openai-responses": {
		"text-stream": "the wire fixtures hold no streamed text answer of the Responses API (the streamed follow-up is only inside orig/)",
		"error-400":   "the wire fixtures hold no error answer of the Responses API",
	},
}

// searchTool is the tool of the tool-choice-function recording, as the
// recorded response echoes it.
var searchTool = agentrt.ToolSpec{
	Name:        "semantic_scholar_search",
	Description: "Search academic papers using Semantic Scholar API.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string","description":"The text to search for. Convert the question to a sensible search query."},
		"limit":{"type":"integer","description":"The maximum number of results to return. Min 5, max 100."},
		"offset":{"type":"integer","minimum":0,"description":"The pagination offset."},
		"year":{"type":"integer","description":"Restrict results to this publication year."}},
		"required":["query"],"additionalProperties":false}`),
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
		{name: "agent", replies: replies(f["agent"], 0), stream: streamed(f["agent"]), agent: true, check: func(t *testing.T, r result) {
			done, ok := agenttest.Done(r.Events)
			require.True(t, ok, "error %v %q", r.Err, r.Other)
			assert.Equal(t, agentrt.StopComplete, done.Reason)
			assert.Len(t, agenttest.Filter[agentrt.ToolResult](r.Events), 1)
			if streamed(f["agent"]) {
				assert.NotEmpty(t, agenttest.Filter[agentrt.TextDelta](r.Events))
			}
			require.NotEmpty(t, r.Session)
			assert.NotEmpty(t, r.Session[len(r.Session)-1].Text(), "the answer")
			agenttest.AssertInvariants(t, r.Session)
		}},
		// A reasoning model's tool call, whole: the reasoning comes with
		// its encrypted content.
		{name: "thinking", replies: replies(f["thinking"], 0), check: func(t *testing.T, r result) {
			require.Nil(t, r.Err, "error %q", r.Other)
			require.Len(t, r.Response.Message.Blocks, 2)
			assert.Equal(t, agentrt.BlockThinking, r.Response.Message.Blocks[0].Type)
			assert.NotEmpty(t, r.Response.Message.Blocks[0].Text, "the summary")
			assert.NotEmpty(t, r.Response.Message.Blocks[0].Signature, "the encrypted content")
			assert.Equal(t, "weather", r.Response.Message.Blocks[1].Name)
			assert.Equal(t, agentrt.FinishToolUse, r.Response.Finish)
			assert.Positive(t, r.Response.Usage.ReasoningTokens)
		}},
		// A forced function: the request names it in tool_choice. The
		// recording's request is not stored: ours has the tool and
		// tool_choice the recorded response echoes, and a question of our
		// own.
		{name: "tool-choice", replies: replies(f["tool-choice"], 0), request: func() *agentrt.ModelRequest {
			return &agentrt.ModelRequest{
				Messages:   []agentrt.Message{agentrt.NewUserMessage("Search for papers about machine learning")},
				Tools:      []agentrt.ToolSpec{searchTool},
				ToolChoice: agentrt.ToolChoice{Mode: "tool", Name: searchTool.Name},
			}
		}, check: func(t *testing.T, r result) {
			require.Nil(t, r.Err, "error %q", r.Other)
			require.NotEmpty(t, r.Response.Message.Blocks)
			last := r.Response.Message.Blocks[len(r.Response.Message.Blocks)-1]
			assert.Equal(t, agentrt.BlockToolUse, last.Type)
			assert.Equal(t, searchTool.Name, last.Name)
			assert.JSONEq(t, `{"query":"machine learning","limit":10}`, string(last.Input))
		}},
	}
}

// exchange runs case c on planner p.
func exchange(t *testing.T, p agentrt.Planner, c wireCase) result {
	if c.agent {
		if !c.stream {
			p = unstreamed(p)
		}
		return runAgent(t, weatherAgent(p, system, toolDesc), question)
	}
	if c.request != nil {
		return plan(p, c.request(), c.stream)
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
// events and session. A standard case a vendor has no recording for is
// skipped with the reason noRecording gives. AGENTRT_CASSETTE=record
// remakes the cassettes.
func TestWireCassettes(t *testing.T) {
	t.Parallel()
	for _, v := range vendors {
		for _, c := range wireCases(v) {
			if len(c.replies) == 0 && !slices.Contains(standardCases, c.name) {
				continue
			}
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				if len(c.replies) == 0 {
					reason := noRecording[v.name][c.name]
					require.NotEmpty(t, reason, "no fixtures for a standard case, and noRecording says not why")
					t.Skip(reason)
				}
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

// recordedJSON decodes the body of a request or response a cassette holds.
func recordedJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	return m
}

// TestResponsesReasoningRoundTripsThroughTheCassette: in the Responses
// agent cassette, the follow-up request sends back the reasoning item of
// the first answer, with the encrypted content the vendor sent; replayed,
// the session keeps that content as the thinking block's signature.
// (TestReplayFailsOnAChangedRequest changes it.)
func TestResponsesReasoningRoundTripsThroughTheCassette(t *testing.T) {
	t.Parallel()
	name := filepath.Join("testdata", "openai-responses", "agent")
	cas, err := vcr.Load(name)
	require.NoError(t, err)
	require.Len(t, cas.Interactions, 2)
	item := recordedJSON(t, cas.Interactions[0].Response.Body)["output"].([]any)[0].(map[string]any)
	require.Equal(t, "reasoning", item["type"])
	enc, _ := item["encrypted_content"].(string)
	require.NotEmpty(t, enc)

	input := recordedJSON(t, cas.Interactions[1].Request.Body)["input"].([]any)
	require.Len(t, input, 5, "developer, user, reasoning, function call, its output")
	assert.Equal(t, map[string]any{"type": "reasoning", "id": item["id"], "encrypted_content": enc, "summary": item["summary"]}, input[2])

	v := vendors[slices.IndexFunc(vendors, func(v vendor) bool { return v.name == "openai-responses" })]
	rec := cassette.New(t, name, &cassette.Options{Mode: cassette.Replay})
	r := runAgent(t, weatherAgent(agentPlanner(v.provider(t, rec.Client()), fixtures[v.name]["agent"]), system, toolDesc), question)
	require.Len(t, r.Session, 4)
	thinking := r.Session[1].Blocks[0]
	assert.Equal(t, agentrt.BlockThinking, thinking.Type)
	assert.Equal(t, enc, string(thinking.Signature))
}

// TestResponsesToolChoiceInTheCassette: the request of the tool-choice
// cassette forces the function the recorded response echoes.
func TestResponsesToolChoiceInTheCassette(t *testing.T) {
	t.Parallel()
	cas, err := vcr.Load(filepath.Join("testdata", "openai-responses", "tool-choice"))
	require.NoError(t, err)
	require.Len(t, cas.Interactions, 1)
	want := recordedJSON(t, cas.Interactions[0].Response.Body)["tool_choice"]
	assert.Equal(t, map[string]any{"type": "function", "name": "semantic_scholar_search"}, want)
	assert.Equal(t, want, recordedJSON(t, cas.Interactions[0].Request.Body)["tool_choice"])
}
