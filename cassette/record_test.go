package cassette_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/cassette"
)

// vendorErrors are error answers in each vendor's documented shape. The
// wire fixtures hold no real 429 or 500.
var vendorErrors = map[string]map[int]reply{
	"anthropic": {
		429: {status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`},
		500: {status: 500, body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fz"}`},
	},
	"openai": {
		429: {status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"Rate limit reached for gpt-4.1-nano on tokens per min (TPM): Limit 200000, Used 200000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
		500: {status: 500, body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`},
	},
	// The Responses API answers errors in the same shape as Chat
	// Completions.
	"openai-responses": {
		429: {status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"Rate limit reached for gpt-5 on tokens per min (TPM): Limit 30000, Used 30000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
		500: {status: 500, body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`},
	},
	"gemini": {
		429: {status: 429, body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`},
		500: {status: 500, body: `{"error":{"code":500,"message":"An internal error has occurred. Please retry or try a different model.","status":"INTERNAL"}}`},
	},
}

// record runs fn on a planner that records to cassette name through a
// fake vendor answering replies, then on one that replays it, and returns
// both results.
func recordThenReplay(t *testing.T, v vendor, replies []reply, fn func(agentrt.Planner) result) (recorded, replayed result) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "c")
	rec := &fakeT{TB: t}
	r := newRecorder(rec, name, &cassette.Options{Mode: cassette.Record, Transport: newFakeVendor(t, v, replies...)})
	require.NotNil(t, r)
	recorded = fn(v.provider(t, r.Client()))
	rec.finish()
	require.Empty(t, rec.errors)

	play := &fakeT{TB: t}
	r = newRecorder(play, name, &cassette.Options{Mode: cassette.Replay})
	require.NotNil(t, r)
	replayed = fn(v.provider(t, r.Client()))
	play.finish()
	require.Empty(t, play.errors)
	return recorded, replayed
}

func TestRecordThenReplayGivesTheSameEventsAndSession(t *testing.T) {
	t.Parallel()
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			var replies []reply
			for _, f := range fixtures[v.name]["agent"] {
				replies = append(replies, reply{fixture: f})
			}
			recorded, replayed := recordThenReplay(t, v, replies, func(p agentrt.Planner) result {
				return runAgent(t, weatherAgent(agentPlanner(p, fixtures[v.name]["agent"]), system, toolDesc), question)
			})
			require.NotEmpty(t, recorded.Events)
			assert.Equal(t, recorded.Events, replayed.Events)
			assert.Equal(t, recorded.Session, replayed.Session)
			assert.Len(t, recorded.Session, 4, "user, tool call, tool result, answer")
		})
	}
}

func TestVendorErrorsReplayAsTheSameProviderError(t *testing.T) {
	t.Parallel()
	for _, v := range vendors {
		for _, status := range []int{429, 500} {
			t.Run(v.name+"/"+http.StatusText(status), func(t *testing.T) {
				t.Parallel()
				recorded, replayed := recordThenReplay(t, v, []reply{vendorErrors[v.name][status]}, func(p agentrt.Planner) result {
					return plan(p, &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage(question)}}, false)
				})
				require.NotNil(t, recorded.Err, "error %q", recorded.Other)
				assert.Equal(t, recorded.Err, replayed.Err)
				assert.Equal(t, status, replayed.Err.StatusCode)
				assert.NotEmpty(t, replayed.Err.Message)
				want := agentrt.ErrRateLimited
				if status == 500 {
					want = agentrt.ErrOverloaded
				}
				assert.ErrorIs(t, replayed.Err, want)
			})
		}
	}
}

func TestStreamingReplaysDeltaByDelta(t *testing.T) {
	t.Parallel()
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			var replies []reply
			for _, f := range fixtures[v.name]["text-stream"] {
				replies = append(replies, reply{fixture: f})
			}
			if replies == nil {
				reason := noRecording[v.name]["text-stream"]
				require.NotEmpty(t, reason, "no text stream, and noRecording says not why")
				t.Skip(reason)
			}
			recorded, replayed := recordThenReplay(t, v, replies, func(p agentrt.Planner) result {
				return plan(p, &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage(question)}}, true)
			})
			require.Greater(t, len(recorded.Deltas), 1)
			assert.Equal(t, recorded.Deltas, replayed.Deltas)
		})
	}
}

// TestReplayFailsOnAChangedRequest changes the agent of the committed
// "agent" cassettes (its system prompt, its tool's description, input
// schema or result, its input; for the Responses API also the encrypted
// content of the reasoning its follow-up sends back), and checks that
// replay fails naming the JSON path of what it then sends otherwise.
func TestReplayFailsOnAChangedRequest(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{
		"anthropic": {
			"tool result":      `messages[2].content[0].content[0].text: recorded "40 C and sunny in Florence, Italy" ≠ sent "41 C and sunny in Florence, Italy"`,
			"system prompt":    `system[0].text: recorded "You are a helpful assistant." ≠ sent "You are a terse assistant."`,
			"tool description": `tools[0].description: recorded "Get the weather for a location." ≠ sent "Get the forecast for a location."`,
			"tool input":       `tools[0].input_schema.properties.location.description: recorded "the city" ≠ sent "the town"`,
			"user input":       `messages[0].content[0].text: recorded "What's the weather in Florence?" ≠ sent "What's the weather in Florida?"`,
		},
		"openai": {
			"tool result":      `messages[3].content: recorded "40 C and sunny in Florence, Italy" ≠ sent "41 C and sunny in Florence, Italy"`,
			"system prompt":    `messages[0].content: recorded "You are a helpful assistant." ≠ sent "You are a terse assistant."`,
			"tool description": `tools[0].function.description: recorded "Get the weather for a location." ≠ sent "Get the forecast for a location."`,
			"tool input":       `tools[0].function.parameters.properties.location.description: recorded "the city" ≠ sent "the town"`,
			"user input":       `messages[1].content: recorded "What's the weather in Florence?" ≠ sent "What's the weather in Florida?"`,
		},
		"openai-responses": {
			"tool result":       `input[4].output: recorded "40 C and sunny in Florence, Italy" ≠ sent "41 C and sunny in Florence, Italy"`,
			"system prompt":     `input[0].content: recorded "You are a helpful assistant." ≠ sent "You are a terse assistant."`,
			"tool description":  `tools[0].description: recorded "Get the weather for a location." ≠ sent "Get the forecast for a location."`,
			"tool input":        `tools[0].parameters.properties.location.description: recorded "the city" ≠ sent "the town"`,
			"user input":        `input[1].content[0].text: recorded "What's the weather in Florence?" ≠ sent "What's the weather in Florida?"`,
			"encrypted content": `input[2].encrypted_content: recorded "gAAAAABqPBJHBSKG_nXh…" ≠ sent "GAAAAABQPBJHBSKG_NXH…"`,
		},
		"gemini": {
			"tool result":      `contents[2].parts[0].functionResponse.response.output: recorded "40 C and sunny in Florence, Italy" ≠ sent "41 C and sunny in Florence, Italy"`,
			"system prompt":    `systemInstruction.parts[0].text: recorded "You are a helpful assistant." ≠ sent "You are a terse assistant."`,
			"tool description": `tools[0].functionDeclarations[0].description: recorded "Get the weather for a location." ≠ sent "Get the forecast for a location."`,
			"tool input":       `tools[0].functionDeclarations[0].parameters.properties.location.description: recorded "the city" ≠ sent "the town"`,
			"user input":       `contents[0].parts[0].text: recorded "What's the weather in Florence?" ≠ sent "What's the weather in Florida?"`,
		},
	}
	for _, v := range vendors {
		for change, msg := range want[v.name] {
			t.Run(v.name+"/"+change, func(t *testing.T) {
				t.Parallel()
				f := &fakeT{TB: t}
				r := newRecorder(f, filepath.Join("testdata", v.name, "agent"), &cassette.Options{Mode: cassette.Replay})
				require.NotNil(t, r)
				input := question
				if change == "user input" {
					input = strings.Replace(question, "Florence", "Florida", 1)
				}
				a := changedAgent(agentPlanner(v.provider(t, r.Client()), fixtures[v.name]["agent"]), change)
				a.Retry = agentrt.RetryPolicy{MaxAttempts: 1}
				var runErr error
				for _, err := range a.Run(context.Background(), "s1", input) {
					if err != nil {
						runErr = err
					}
				}
				var mismatch *cassette.MismatchError
				require.ErrorAs(t, runErr, &mismatch, "the run fails")
				assert.Equal(t, msg, mismatch.Diff)
				require.NotEmpty(t, f.errors, "the test fails")
				assert.Contains(t, f.errors[0], msg)
			})
		}
	}
}

// townIn is weatherIn with another description of its field.
type townIn struct {
	Location string `json:"location" jsonschema:"description=the town"`
}

// changedAgent is weatherAgent on p with one change.
func changedAgent(p agentrt.Planner, change string) *agentrt.Agent {
	switch change {
	case "system prompt":
		return weatherAgent(p, strings.Replace(system, "helpful", "terse", 1), toolDesc)
	case "tool description":
		return weatherAgent(p, system, strings.Replace(toolDesc, "weather", "forecast", 1))
	case "tool input":
		ag := weatherAgent(p, system, toolDesc)
		ag.Tools[0] = agentrt.NewTool("weather", toolDesc,
			func(_ context.Context, in townIn) (string, error) { return "40 C and sunny in " + in.Location, nil },
			agentrt.ReadOnly())
		return ag
	case "encrypted content":
		// The session's reasoning came back changed (upper-cased) from
		// where it was kept.
		changed := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			r := *req
			r.Messages = slices.Clone(req.Messages)
			for i, m := range r.Messages {
				m.Blocks = slices.Clone(m.Blocks)
				for j, b := range m.Blocks {
					if b.Type == agentrt.BlockThinking {
						m.Blocks[j].Signature = bytes.ToUpper(b.Signature)
					}
				}
				r.Messages[i] = m
			}
			return p.Plan(ctx, &r)
		})
		return weatherAgent(changed, system, toolDesc)
	case "tool result":
		ag := weatherAgent(p, system, toolDesc)
		ag.Tools[0] = agentrt.NewTool("weather", toolDesc,
			func(_ context.Context, in weatherIn) (string, error) { return "41 C and sunny in " + in.Location, nil },
			agentrt.ReadOnly())
		return ag
	}
	return weatherAgent(p, system, toolDesc)
}

// TestNoSecretInTheCommittedCassettes: the cassettes were recorded with
// testKey; neither it nor a credential header is in any of them.
func TestNoSecretInTheCommittedCassettes(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s := strings.ToLower(string(b))
		for _, secret := range []string{strings.ToLower(testKey), "authorization", "x-api-key", "x-goog-api-key", "key="} {
			assert.NotContains(t, s, secret, f)
		}
	}
}
