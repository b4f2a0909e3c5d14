package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Tests against responses recorded from the live API (see
// testdata/README.md): the request the adapter sends, field by field, and
// the response it parses.

func TestTextRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-5", nil)

	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "Be brief.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("Hello, how are you?")},
	})
	require.NoError(t, err)

	got := r.only()
	assert.Equal(t, "POST", got.method)
	assert.Equal(t, "/v1/messages", got.path)
	assert.Equal(t, "Bearer test-key", got.header.Get("Authorization"))
	assert.Equal(t, "2026-10-21", got.header.Get("Anthropic-Version"))
	body := got.json(t)
	assert.Equal(t, "claude-sonnet-4-5", body["model"])
	assert.EqualValues(t, DefaultMaxTokens, body["max_tokens"])
	assert.JSONEq(t, `[{"type":"text","text":"Be brief."}]`, jsonOf(t, body["system"]))
	assert.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"Hello, how are you?"}]}]`, jsonOf(t, body["messages"]))
	for _, key := range []string{"tools", "tool_choice", "stream", "temperature", "output_config"} {
		assert.NotContains(t, body, key)
	}
	assert.Len(t, body, 4, "model, max_tokens, system, messages: %v", body)

	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(
		"Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?")), resp.Message)
	assert.Equal(t, agentrt.Usage{InputTokens: 12, OutputTokens: 29}, resp.Usage)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)
}

func TestTextStreamRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "text-stream.sse")))
	p := r.provider("claude-sonnet-4-5", nil)

	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Hello, how are you?")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)

	body := r.only().json(t)
	assert.Equal(t, true, body["stream"])
	assert.NotContains(t, body, "system", "no system prompt was given")
	assert.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"Hello, how are you?"}]}]`, jsonOf(t, body["messages"]))

	assert.Equal(t, []string{"Hello", "! I", "'m doing well, thank you for asking", ". How are you doing today?", " Is", " there anything I can help you with?"}, deltas)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(strings.Join(deltas, ""))), resp.Message)
	// message_delta's cumulative output_tokens (30) replaces message_start's (1).
	assert.Equal(t, agentrt.Usage{InputTokens: 12, OutputTokens: 30}, resp.Usage)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)
}

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`)

func TestToolCallRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "tool-call.json")))
	p := r.provider("claude-sonnet-4-5", nil)

	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the weather in Tokyo?")},
		Tools:    []agentrt.ToolSpec{{Name: "getWeather", Description: "Get the weather for a city.", InputSchema: weatherSchema}},
	})
	require.NoError(t, err)

	body := r.only().json(t)
	assert.JSONEq(t, `[{"name":"getWeather","description":"Get the weather for a city.","input_schema":`+string(weatherSchema)+`}]`, jsonOf(t, body["tools"]))
	assert.NotContains(t, body, "tool_choice", "auto is the API's default")

	assert.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("toolu_011GReSD6Lexm9Bs3tXwTC7L", "getWeather", json.RawMessage(`{"city":"Tokyo"}`))), resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 833, OutputTokens: 24}, resp.Usage)
}

func TestToolCallNoArgsRecorded(t *testing.T) {
	t.Parallel()
	const thinking = "<thinking>\nThe updateIssueList tool was provided in the list of available functions. The tool has no required parameters, so it can be called without any additional information needed from the user.\n</thinking>\n\nOkay, I will update the current issue list:"
	tools := []agentrt.ToolSpec{{Name: "updateIssueList", Description: "Update the issue list.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}
	msgs := []agentrt.Message{agentrt.NewUserMessage("Update the issue list.")}

	t.Run("non-streaming", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(fixture(t, "tool-call-no-args.json")))
		resp, err := r.provider("claude-3-opus-20240229", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, Tools: tools})
		require.NoError(t, err)
		assert.Equal(t, agentrt.NewAssistantMessage(
			agentrt.TextBlock(thinking),
			agentrt.ToolUseBlock("toolu_01LRmxn9vGM1d2DZSDBowdZ1", "updateIssueList", json.RawMessage(`{}`))), resp.Message)
		assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
		assert.Equal(t, agentrt.Usage{InputTokens: 602, OutputTokens: 93}, resp.Usage)
		assert.Equal(t, "claude-3-opus-20240229", resp.Model)
	})
	t.Run("streaming", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, sseReply(fixture(t, "tool-call-no-args-stream.sse")))
		var text strings.Builder
		resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: msgs, Tools: tools, OnText: func(d string) { text.WriteString(d) },
		})
		require.NoError(t, err)
		assert.Equal(t, "I'll update the issue list for you.", text.String())
		// The single empty input_json_delta becomes the empty object.
		assert.Equal(t, agentrt.NewAssistantMessage(
			agentrt.TextBlock("I'll update the issue list for you."),
			agentrt.ToolUseBlock("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", json.RawMessage(`{}`))), resp.Message)
		assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
		assert.Equal(t, agentrt.Usage{InputTokens: 565, OutputTokens: 48}, resp.Usage)
	})
}

// The recorded request of the parallel tool call case, rebuilt from agentrt
// values: the adapter must send what the recording client sent (the
// recording also set tool_choice to auto with parallel use allowed, which
// is the API's default and which the adapter leaves out).
var (
	parallelSystem = "You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS."
	parallelTools  = []agentrt.ToolSpec{
		{Name: "add", Description: "Add two numbers", InputSchema: json.RawMessage(`{"properties":{"a":{"description":"first number","type":"integer"},"b":{"description":"second number","type":"integer"}},"required":["a","b"],"type":"object"}`)},
		{Name: "multiply", Description: "Multiply two numbers", InputSchema: json.RawMessage(`{"properties":{"a":{"description":"first number","type":"integer"},"b":{"description":"second number","type":"integer"}},"required":["a","b"],"type":"object"}`)},
	}
	parallelUser = agentrt.NewUserMessage("Add and multiply the number 2 and 3")
	parallelCall = agentrt.NewAssistantMessage(
		agentrt.TextBlock("I'll add and multiply the numbers 2 and 3 for you."),
		agentrt.ToolUseBlock("toolu_01StBeRxDEwsqcc3arbDgpS9", "add", json.RawMessage(`{"a":2,"b":3}`)),
		agentrt.ToolUseBlock("toolu_01AC6WQhj2iRkdYHgTAGMpVQ", "multiply", json.RawMessage(`{"a":2,"b":3}`)),
	)
)

// assertSameRequest checks the fields the adapter sets against a recorded
// request body.
func assertSameRequest(t *testing.T, want, got map[string]any) {
	t.Helper()
	for _, key := range []string{"model", "max_tokens", "system", "messages", "tools"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
	assert.NotContains(t, got, "tool_choice")
}

func TestParallelToolCallsRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "parallel-tool-calls.response.json")))
	resp, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), &agentrt.ModelRequest{
		System:    parallelSystem,
		Messages:  []agentrt.Message{parallelUser},
		Tools:     parallelTools,
		MaxTokens: 4000,
	})
	require.NoError(t, err)

	assertSameRequest(t, fixtureJSON(t, "parallel-tool-calls.request.json"), r.only().json(t))
	assert.Equal(t, parallelCall, resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 507, OutputTokens: 137}, resp.Usage)
	assert.Equal(t, "claude-sonnet-4-20250514", resp.Model)
}

func TestParallelToolResultsFollowupRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "parallel-tool-results-followup.response.json")))
	resp, err := r.provider("claude-sonnet-4-20250514", nil).Plan(context.Background(), &agentrt.ModelRequest{
		System: parallelSystem,
		Messages: []agentrt.Message{
			parallelUser,
			parallelCall,
			agentrt.NewToolMessage("toolu_01StBeRxDEwsqcc3arbDgpS9", "5", false),
			agentrt.NewToolMessage("toolu_01AC6WQhj2iRkdYHgTAGMpVQ", "6", false),
		},
		Tools:     parallelTools,
		MaxTokens: 4000,
	})
	require.NoError(t, err)

	// Both results travel in one user message, in the order of the calls.
	assertSameRequest(t, fixtureJSON(t, "parallel-tool-results-followup.request.json"), r.only().json(t))
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6")), resp.Message)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 705, OutputTokens: 31}, resp.Usage)
}

func TestToolResultThenUserTextRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "tool-result-followup.response.json")))
	resp, err := r.provider("claude-sonnet-4-6", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Search for climate change information."),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("tc1", "search", json.RawMessage(`{"query":"climate change"}`))),
			agentrt.NewToolMessage("tc1", "Climate change is driven by greenhouse gases and affects temperatures, weather patterns, and sea levels.", false),
			agentrt.NewUserMessage("Now summarize what you found in one short sentence."),
		},
		MaxTokens: 128,
	})
	require.NoError(t, err)

	// The recording sent the tool result's content as a string; the
	// adapter sends the equivalent list of one text block. Everything else
	// matches, including the user text merged after the result.
	want := fixtureJSON(t, "tool-result-followup.request.json")
	result := want["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	result["content"] = []any{map[string]any{"type": "text", "text": result["content"]}}
	got := r.only().json(t)
	for _, key := range []string{"model", "max_tokens", "messages"} {
		assert.JSONEq(t, jsonOf(t, want[key]), jsonOf(t, got[key]), "field %q", key)
	}
	assert.Equal(t, "Climate change, driven by greenhouse gases, impacts global temperatures, weather patterns, and sea levels.", resp.Message.Text())
	assert.Equal(t, agentrt.Usage{InputTokens: 111, OutputTokens: 22}, resp.Usage)
}

func TestParallelToolCallsStreamRecorded(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "parallel-tool-calls-stream.sse")))
	var deltas int
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Search the docs for alpha, beta and gamma at once.")},
		Tools:    []agentrt.ToolSpec{{Name: "searchDocs", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}},
		OnText:   func(string) { deltas++ },
	})
	require.NoError(t, err)

	body := r.only().json(t)
	assert.Equal(t, true, body["stream"])
	assert.JSONEq(t, `[{"name":"searchDocs","input_schema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}]`,
		jsonOf(t, body["tools"]), "a tool without a description has none")

	assert.Zero(t, deltas, "no text in this stream")
	assert.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("toolu_01LtEf4h1QW7KCKLsYMuhTNB", "searchDocs", json.RawMessage(`{"query":"alpha"}`)),
		agentrt.ToolUseBlock("toolu_016tfZE7otAFSBjhc67wu189", "searchDocs", json.RawMessage(`{"query":"beta"}`)),
		agentrt.ToolUseBlock("toolu_01XkU35z8BVWqqc9tijDuLrA", "searchDocs", json.RawMessage(`{"query":"gamma"}`)),
	), resp.Message)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 798, OutputTokens: 110}, resp.Usage)
}

// The split-argument stream and the non-streaming body were recorded for
// the same prompt and carry the same tool input: both paths must return
// identical bytes.
func TestSplitArgsStreamRecorded(t *testing.T) {
	t.Parallel()
	msgs := []agentrt.Message{agentrt.NewUserMessage("Plan the website update.")}
	streamed := newReplay(t, sseReply(fixture(t, "tool-call-stream-split-args.sse")))
	whole := newReplay(t, jsonReply(fixture(t, "tool-call-nested-args.json")))

	sresp, err := streamed.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, OnText: func(string) {}})
	require.NoError(t, err)
	wresp, err := whole.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)

	const input = `{"website_path":"/home/user/pace-landing","tasks":[{"description":"Today you post every run to Strava, but Strava does not answer the question: \"What should I do next after this run?\". It is a great log, but it is not adaptive.","type":"feature","passes":false}]}`
	require.Len(t, sresp.Message.Blocks, 1)
	assert.Equal(t, agentrt.ToolUseBlock("toolu_01Cr31vcGoeeRgi3Eo5Ds8qN", "website_update", json.RawMessage(input)), sresp.Message.Blocks[0])
	require.Len(t, wresp.Message.Blocks, 1)
	assert.Equal(t, agentrt.ToolUseBlock("toolu_01JKBd25gEfr9ZpVvn8quK2v", "website_update", json.RawMessage(input)), wresp.Message.Blocks[0])

	var in struct {
		Tasks []struct{ Description string } `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(sresp.Message.Blocks[0].Input, &in))
	require.Len(t, in.Tasks, 1)
	assert.Contains(t, in.Tasks[0].Description, `question: "What should I do next after this run?".`, "escaped quotes split across chunks")

	assert.Equal(t, agentrt.Usage{InputTokens: 912, OutputTokens: 118}, sresp.Usage)
	assert.Equal(t, agentrt.Usage{InputTokens: 912, OutputTokens: 118}, wresp.Usage)
	assert.Equal(t, agentrt.FinishToolUse, sresp.Finish)
	assert.Equal(t, agentrt.FinishToolUse, wresp.Finish)
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 8
	replies := make([]reply, n)
	for i := range replies {
		replies[i] = eitherReply(fixture(t, "text.json"), fixture(t, "text-stream.sse"))
	}
	r := newReplay(t, replies...)
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{"metadata": map[string]any{"user_id": "u1"}}})

	var wg sync.WaitGroup
	errs := make([]error, n)
	texts := make([]string, n)
	for i := range n {
		wg.Go(func() {
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			if i%2 == 1 {
				req.OnText = func(string) {}
			}
			resp, err := p.Plan(context.Background(), req)
			errs[i] = err
			if err == nil {
				texts[i] = resp.Message.Text()
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.True(t, strings.HasPrefix(texts[i], "Hello! I"), texts[i])
	}
	for _, req := range r.requests() {
		assert.JSONEq(t, `{"user_id":"u1"}`, jsonOf(t, req.json(t)["metadata"]))
	}
}
