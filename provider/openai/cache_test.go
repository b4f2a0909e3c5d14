package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The default prompt_cache_key is a hash of the session id: the same for
// every call of a session, with nothing of the id in it.
func TestPromptCacheKey(t *testing.T) {
	t.Parallel()
	const derived = "agentrt-42657379cce79355" // SHA-256 of "user-7/session-42"
	planners := map[string]func(s *replayServer) agentrt.Planner{
		"chat":        func(s *replayServer) agentrt.Planner { return s.provider(nil) },
		"chat key":    func(s *replayServer) agentrt.Planner { return s.provider(&openai.Options{PromptCacheKey: "k1"}) },
		"chat no key": func(s *replayServer) agentrt.Planner { return s.provider(&openai.Options{NoPromptCacheKey: true}) },
		"compatible":  func(s *replayServer) agentrt.Planner { return openai.NewCompatible(s.URL+"/v1", "", "m", nil) },
		"compatible key": func(s *replayServer) agentrt.Planner {
			return openai.NewCompatible(s.URL+"/v1", "", "m", &openai.Options{PromptCacheKey: "k1"})
		},
		"responses": func(s *replayServer) agentrt.Planner { return s.responses(nil) },
		"responses key": func(s *replayServer) agentrt.Planner {
			return s.responses(&openai.ResponsesOptions{PromptCacheKey: "k1"})
		},
		"responses no key": func(s *replayServer) agentrt.Planner {
			return s.responses(&openai.ResponsesOptions{NoPromptCacheKey: true})
		},
	}
	tests := []struct {
		planner, session string
		want             string // "" for no field
	}{
		{"chat", "user-7/session-42", derived},
		{"chat", "", ""},
		{"chat key", "user-7/session-42", "k1"},
		{"chat no key", "user-7/session-42", ""},
		{"compatible", "user-7/session-42", ""},
		{"compatible key", "user-7/session-42", "k1"},
		{"responses", "user-7/session-42", derived},
		{"responses", "", ""},
		{"responses key", "user-7/session-42", "k1"},
		{"responses no key", "user-7/session-42", ""},
	}
	for _, tt := range tests {
		t.Run(tt.planner+"/"+tt.session, func(t *testing.T) {
			t.Parallel()
			body := fixture(t, "text.json")
			if strings.HasPrefix(tt.planner, "responses") {
				body = rfixture(t, "pdf-input-file.json")
			}
			srv := newReplay(t, reply{body: body})
			_, err := planners[tt.planner](srv).Plan(context.Background(), &agentrt.ModelRequest{
				SessionID: tt.session, Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
			require.NoError(t, err)
			got, ok := srv.request(0).Body["prompt_cache_key"]
			if tt.want == "" {
				assert.False(t, ok, "prompt_cache_key %v", got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// The request shape of explicit caching, written from the API reference
// (the openai-go v3.98.0 types and their docs: prompt_cache_options and
// prompt_cache_breakpoint on content parts): no request with explicit
// caching was recorded; a recorded reply to one checks the options
// (TestResponsesExplicitCacheRecorded). The breakpoints go on the system prompt,
// the end of the session's messages (the tool results, not the recall
// hook's trailing user message) and where the call before ended (the
// user's message); every system, user and tool content is a list of parts.
func TestExplicitCacheRequest(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	p := srv.provider(&openai.Options{ExplicitCache: true, CacheTTL: "30m", NoPromptCacheKey: true})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System: "sys",
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("weather?"),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "weather", json.RawMessage(`{"city":"Rome"}`)),
				agentrt.ToolUseBlock("c2", "weather", json.RawMessage(`{"city":"Oslo"}`))),
			agentrt.NewToolMessage("c1", "sunny", false),
			agentrt.NewToolMessage("c2", "rain", false),
			agentrt.NewUserMessage("[recalled] likes tea"),
		},
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	jsonEq(t, `{"mode":"explicit","ttl":"30m"}`, body["prompt_cache_options"])
	bp := `"prompt_cache_breakpoint":{"mode":"explicit","ttl":"30m"}`
	jsonEq(t, `[
		{"role":"system","content":[{"type":"text","text":"sys",`+bp+`}]},
		{"role":"user","content":[{"type":"text","text":"weather?",`+bp+`}]},
		{"role":"assistant","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}},
			{"id":"c2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},
		{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"sunny"}]},
		{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"rain",`+bp+`}]},
		{"role":"user","content":[{"type":"text","text":"[recalled] likes tea"}]}
	]`, body["messages"])
	assert.NotContains(t, body, "prompt_cache_key")

	// Off by default: no options, no breakpoints, string contents.
	srv2 := newReplay(t, reply{body: fixture(t, "text.json")})
	_, err = srv2.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{System: "sys", Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.NotContains(t, srv2.request(0).Body, "prompt_cache_options")
	jsonEq(t, `[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]`, srv2.request(0).Body["messages"])
}

// The Responses API reports cache writes as cache_write_tokens (written
// from the API reference: the recorded responses have 0 or none).
func TestResponsesCacheUsage(t *testing.T) {
	t.Parallel()
	var body map[string]any
	require.NoError(t, json.Unmarshal(rfixture(t, "pdf-input-file.json"), &body))
	body["usage"] = map[string]any{"input_tokens": 3000, "input_tokens_details": map[string]any{"cached_tokens": 2048, "cache_write_tokens": 900},
		"output_tokens": 4, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 3004}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	srv := newReplay(t, reply{body: b})
	resp, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.Equal(t, agentrt.Usage{InputTokens: 3000, OutputTokens: 4, CacheReadTokens: 2048, CacheWriteTokens: 900}, resp.Usage)
}

// Explicit caching on the Responses API, written from the API reference
// as TestExplicitCacheRequest: breakpoints on the developer message, the
// last function_call_output of the session (not the recall hook's
// trailing message) and the user's message, where the call before ended.
func TestResponsesExplicitCacheRequest(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "pdf-input-file.json")})
	p := srv.responses(&openai.ResponsesOptions{ExplicitCache: true, NoPromptCacheKey: true})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System: "sys",
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("weather?"),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "weather", json.RawMessage(`{"city":"Rome"}`)),
				agentrt.ToolUseBlock("c2", "weather", json.RawMessage(`{"city":"Oslo"}`))),
			agentrt.NewToolMessage("c1", "sunny", false),
			agentrt.NewToolMessage("c2", "rain", false),
			agentrt.NewUserMessage("[recalled] likes tea"),
		},
	})
	require.NoError(t, err)
	body := srv.request(0).Body
	jsonEq(t, `{"mode":"explicit"}`, body["prompt_cache_options"])
	bp := `"prompt_cache_breakpoint":{"mode":"explicit"}`
	jsonEq(t, `[
		{"role":"developer","content":[{"type":"input_text","text":"sys",`+bp+`}]},
		{"role":"user","content":[{"type":"input_text","text":"weather?",`+bp+`}]},
		{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Rome\"}"},
		{"type":"function_call","call_id":"c2","name":"weather","arguments":"{\"city\":\"Oslo\"}"},
		{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"sunny"}]},
		{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"rain",`+bp+`}]},
		{"role":"user","content":[{"type":"input_text","text":"[recalled] likes tea"}]}
	]`, body["input"])
}

// A recorded reply of the Responses API to a request with explicit
// caching (vercel/ai's issue-19921 fixture, gpt-5.6-sol): the API echoes
// the prompt_cache_options it accepted, and ours are the same. The request
// itself was not recorded, so the breakpoints on its parts are checked
// against the API reference only (TestResponsesExplicitCacheRequest).
func TestResponsesExplicitCacheRecorded(t *testing.T) {
	t.Parallel()
	recorded := rfixture(t, "explicit-cache.json")
	srv := newReplay(t, reply{body: recorded})
	p := srv.responses(&openai.ResponsesOptions{ExplicitCache: true, CacheTTL: "30m"})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{System: "Answer OK.", Messages: []agentrt.Message{agentrt.NewUserMessage("Say OK")}})
	require.NoError(t, err)
	var echoed struct {
		Options json.RawMessage `json:"prompt_cache_options"`
	}
	require.NoError(t, json.Unmarshal(recorded, &echoed))
	jsonEq(t, string(echoed.Options), srv.request(0).Body["prompt_cache_options"])
	assert.Equal(t, []agentrt.Block{agentrt.TextBlock("OK")}, resp.Message.Blocks)
	assert.Equal(t, agentrt.Usage{InputTokens: 41, OutputTokens: 5}, resp.Usage)
	assert.Equal(t, "gpt-5.6-sol", resp.Model)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
}
