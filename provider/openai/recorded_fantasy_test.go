package openai_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// The tests in this file replay answers recorded by charmbracelet/fantasy
// (go-vcr cassettes) from OpenAI-compatible servers and gateways (llama.cpp
// server, the Hugging Face router, Groq, Z.ai, Cerebras, Vercel AI Gateway,
// OpenRouter, Azure OpenAI) and from the Responses API; see
// testdata/README.md, "Recorded by charmbracelet/fantasy".

// TestRecordedFantasyChatCompletions replays Chat Completions answers.
func TestRecordedFantasyChatCompletions(t *testing.T) {
	t.Parallel()
	florence := `{"location":"Florence, Italy"}`
	add, multiply := `{"a":2,"b":3}`, `{"a":2,"b":3}`
	cases := []recordedCase{
		{
			// The cached prompt tokens are in timings.cache_n, not in usage.
			name: "llama.cpp reasoning_content and a tool call", file: "fantasy/llamacpp-reasoning-tool-call.json",
			blocks: []wantBlock{
				thinking(`User asks: "What's the weather in Florence, Italy?" We have a tool "weather" to get weather information. We should call it.`),
				toolUse("u36jVf07R9qUqfK2POEsHz6i6DUtUlrb", "weather", florence),
			},
			usage: agentrt.Usage{InputTokens: 139, OutputTokens: 55, CacheReadTokens: 134}, finish: agentrt.FinishToolUse, model: "openai/gpt-oss-20b",
		},
		{
			name: "llama.cpp reasoning_content and text", file: "fantasy/llamacpp-reasoning-tool-result-followup.json",
			blocks: []wantBlock{
				long(thinking(`We received a response from the weather function: "40 C".`), "So reply with that.", 431),
				text("The current temperature in Florence, Italy is **40\u202f°C**."),
			},
			usage: agentrt.Usage{InputTokens: 175, OutputTokens: 116, CacheReadTokens: 82}, finish: agentrt.FinishStop, model: "openai/gpt-oss-20b",
		},
		{
			// No content field; the model name differs from the one asked for.
			name: "hugging face router tool call", file: "fantasy/huggingface-tool-call.json",
			blocks: []wantBlock{toolUse("a937be9d7", "weather", `{"location":"Florence,Italy"}`)},
			usage:  agentrt.Usage{InputTokens: 277, OutputTokens: 25}, finish: agentrt.FinishToolUse, model: "qwen-3-coder-480b",
		},
		{
			name: "groq kimi parallel tool calls", file: "fantasy/groq-kimi-parallel-tool-calls.json",
			blocks: []wantBlock{toolUse("functions.add:0", "add", add), toolUse("functions.multiply:1", "multiply", multiply)},
			usage:  agentrt.Usage{InputTokens: 211, OutputTokens: 41}, finish: agentrt.FinishToolUse, model: "moonshotai/kimi-k2-instruct-0905",
		},
		{
			// The content is "\n\n" next to the tool call; it is kept as it came.
			name: "z.ai reasoning_content, blank text and a tool call", file: "fantasy/zai-reasoning-blank-text-tool-call.json",
			blocks: []wantBlock{
				long(thinking("The user is asking for the weather in Florence, It"), "d use this exact value for the location parameter.", 278),
				text("\n\n"),
				toolUse("call_-8303649628005950554", "weather", `{"location":"Florence,Italy"}`),
			},
			usage: agentrt.Usage{InputTokens: 179, OutputTokens: 79, CacheReadTokens: 43}, finish: agentrt.FinishToolUse, model: "glm-4.5",
		},
		{
			name: "cerebras parallel tool calls", file: "fantasy/cerebras-parallel-tool-calls.json",
			blocks: []wantBlock{toolUse("c35d15b73", "add", add), toolUse("c5e304cf7", "multiply", multiply)},
			usage:  agentrt.Usage{InputTokens: 412, OutputTokens: 59}, finish: agentrt.FinishToolUse, model: "qwen-3-coder-480b",
		},
		{
			// Usage and provider_metadata on the finish chunk, no usage chunk.
			name: "vercel ai gateway tool call streamed", file: "fantasy/vercel-gateway-tool-call-stream.sse", stream: true,
			blocks: []wantBlock{toolUse("mbK8hEFBfrxbyEg3", "weather", florence)},
			usage:  agentrt.Usage{InputTokens: 28, OutputTokens: 9, ReasoningTokens: 72}, finish: agentrt.FinishToolUse, model: "google/gemini-3-pro-preview",
		},
		{
			name: "vercel ai gateway text streamed", file: "fantasy/vercel-gateway-text-stream.sse", stream: true,
			blocks: []wantBlock{text("The current temperature in Florence, Italy is 40°C.")},
			usage:  agentrt.Usage{InputTokens: 40, OutputTokens: 14}, finish: agentrt.FinishStop, model: "google/gemini-3-pro-preview",
		},
		{
			// Blank lines before the JSON; reasoning next to reasoning_details.
			name: "openrouter reasoning and a tool call", file: "fantasy/openrouter-reasoning-tool-call.json",
			blocks: []wantBlock{
				long(thinking("**Defining the User's Intent**\n\nI've jus"), " need, presenting current conditions.\n\n\n", 649),
				toolUse("tool_weather_Bn0mvxtpCZhM3MQlxpIi", "weather", florence),
			},
			usage: agentrt.Usage{InputTokens: 28, OutputTokens: 103, ReasoningTokens: 94}, finish: agentrt.FinishToolUse, model: "google/gemini-3-pro-preview-20251117",
		},
		{
			name: "openrouter text with reasoning null", file: "fantasy/openrouter-text-followup.json",
			blocks: []wantBlock{text("It looks like it is currently 40°C (104°F) in Florence, Italy.")},
			usage:  agentrt.Usage{InputTokens: 54, OutputTokens: 23}, finish: agentrt.FinishStop, model: "google/gemini-3-pro-preview-20251117",
		},
		{
			name: "azure openai o4-mini tool call", file: "fantasy/azure-o4-mini-tool-call.json",
			blocks: []wantBlock{toolUse("call_rfeAbQsZMZkrFFYTcqxPegzY", "weather", florence)},
			usage:  agentrt.Usage{InputTokens: 64, OutputTokens: 215, ReasoningTokens: 192}, finish: agentrt.FinishToolUse, model: "o4-mini-2025-04-16",
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// TestRecordedFantasyResponses replays Responses API answers: two
// parallel function calls, then the answer to their outputs.
func TestRecordedFantasyResponses(t *testing.T) {
	t.Parallel()
	cases := []recordedCase{
		{
			name: "parallel function calls", file: "fantasy/responses-parallel-tool-calls.json",
			blocks: []wantBlock{
				toolUse("call_fWTsR6VaKuyav2YHicLHxgUu", "add", `{"a":2,"b":3}`),
				toolUse("call_KLpoIGIQ4rbE8b3AWCUaui6g", "multiply", `{"a":2,"b":3}`),
			},
			usage: agentrt.Usage{InputTokens: 54, OutputTokens: 50}, finish: agentrt.FinishToolUse, model: "gpt-4o-2024-08-06",
		},
		{
			name: "answer to the function outputs", file: "fantasy/responses-tool-results-followup.json",
			blocks: []wantBlock{text("The sum of 2 and 3 is 5, and their product is 6.")},
			usage:  agentrt.Usage{InputTokens: 156, OutputTokens: 21}, finish: agentrt.FinishStop, model: "gpt-4o-2024-08-06",
		},
	}
	replayCases(t, cases, fixture, responsesAPI)
}

// TestCachedTokensElsewhere checks the other places servers put the
// cached prompt tokens, with bodies written here in those servers' shapes
// (no recording has them alone): DeepSeek's prompt_cache_hit_tokens
// without prompt_tokens_details, Moonshot's usage.cached_tokens, and
// llama.cpp server's timings on a stream's usage chunk.
func TestCachedTokensElsewhere(t *testing.T) {
	t.Parallel()
	reply1 := func(usage, extra string) string {
		return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":` + usage + extra + `}`
	}
	cases := []struct {
		name   string
		body   string
		stream bool
		want   int
	}{
		{name: "deepseek", body: reply1(`{"prompt_tokens":90,"completion_tokens":2,"total_tokens":92,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":26}`, ""), want: 64},
		{name: "moonshot", body: reply1(`{"prompt_tokens":90,"completion_tokens":2,"total_tokens":92,"cached_tokens":80}`, ""), want: 80},
		{name: "openai wins", body: reply1(`{"prompt_tokens":90,"completion_tokens":2,"total_tokens":92,"prompt_tokens_details":{"cached_tokens":32}}`, `,"timings":{"cache_n":88,"prompt_n":2}`), want: 32},
		{
			name: "llama.cpp stream", stream: true, want: 134,
			body: `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ok"}}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}` + "\n\n" +
				`data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}` + "\n\n" +
				`data: {"choices":[],"created":1,"id":"c","model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":139,"total_tokens":140},"timings":{"cache_n":134,"prompt_n":5}}` + "\n\n" +
				"data: [DONE]\n\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newReplay(t, reply{body: []byte(c.body), sse: c.stream}).provider(nil)
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			if c.stream {
				req.OnText = func(string) {}
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, c.want, resp.Usage.CacheReadTokens)
		})
	}
}
