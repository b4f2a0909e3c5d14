package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// The tests in this file replay more Chat Completions recordings of
// vercel/ai (testdata/vercel2/; see testdata/README.md, "Recorded: more
// compatible servers"): Moonshot, Mistral's magistral and
// mistral-large-4, Perplexity, Qwen (DashScope), xAI, Cerebras and a
// Claude model behind a compatible gateway, and two error bodies.

// TestRecordedChatCompletionsMore replays the recordings of testdata/vercel2.
func TestRecordedChatCompletionsMore(t *testing.T) {
	t.Parallel()
	weatherSF := `{"location":"San Francisco"}`
	cases := []recordedCase{
		{
			// The usage is only in the choice of the finish chunk; there is
			// no usage chunk. It was lost before the fix.
			name: "moonshot usage in the choice", file: "vercel2/compat-moonshot-choice-usage-stream.sse", stream: true,
			blocks: []wantBlock{text("OK.")}, // reasoning_content "" makes no block
			usage:  agentrt.Usage{InputTokens: 12, OutputTokens: 5, ReasoningTokens: 1}, finish: agentrt.FinishStop, model: "kimi-k2.5",
		},
		{
			// The usage both in the finish chunk's choice and in a usage chunk.
			name: "moonshot reasoning streamed", file: "vercel2/compat-moonshot-reasoning-stream.sse", stream: true,
			blocks: []wantBlock{
				thinking(`The user is asking me to reply with exactly "OK". This is a simple request with no ambiguity. I should just respond with "OK" and nothing else.`),
				text("OK"),
			},
			usage: agentrt.Usage{InputTokens: 90, OutputTokens: 50, ReasoningTokens: 33, CacheReadTokens: 90}, finish: agentrt.FinishStop, model: "kimi-k3",
		},
		{
			// The first (and only) tool call is at index 1; no usage at all.
			name: "claude through a compatible gateway", file: "vercel2/compat-claude-tool-call-index-1-stream.sse", stream: true,
			blocks: []wantBlock{text("Reading it."), toolUse("toolu_sanitized", "read_file", `{"path":"a.txt"}`)},
			finish: agentrt.FinishToolUse, model: "claude-haiku-4-5-20251001",
		},
		{
			// Thinking parts, then a text part in a list, then "" with the usage.
			name: "mistral magistral thinking streamed", file: "vercel2/compat-mistral-magistral-thinking-stream.sse", stream: true,
			blocks: []wantBlock{thinking("The user is asking for 2+2. This is basic arithmetic. 2+2=4."), text("2 + 2 = 4")},
			usage:  agentrt.Usage{InputTokens: 10, OutputTokens: 46}, finish: agentrt.FinishStop, model: "magistral-medium-2507",
		},
		{
			// A thinking part with "closed": true; tool_calls null.
			name: "mistral large 4 thinking", file: "vercel2/compat-mistral-large-4-thinking.json",
			blocks: []wantBlock{
				long(thinking(`The user is asking "How many r are in strawberry? Be brief."`), "\n\n Answer: 3", 333),
				text("3"),
			},
			usage: agentrt.Usage{InputTokens: 26, OutputTokens: 112}, finish: agentrt.FinishStop, model: "mistral-large-4",
		},
		{
			// Usage and citations on every chunk, no finish_reason field
			// until the last chunk, whose object is "chat.completion.done".
			name: "perplexity streamed", file: "vercel2/compat-perplexity-text-stream.sse", stream: true,
			blocks: []wantBlock{text("**EcoVista Day**[1][5]")},
			usage:  agentrt.Usage{InputTokens: 11, OutputTokens: 434}, finish: agentrt.FinishStop, model: "sonar",
		},
		{
			name: "qwen reasoning_content", file: "vercel2/compat-qwen-reasoning.json",
			blocks: []wantBlock{
				long(thinking("Okay, so I need to calculate 17 multiplied by 23."), "all methods point to 391. I think that's correct.", 1097),
				text("391"),
			},
			usage: agentrt.Usage{InputTokens: 24, OutputTokens: 504, ReasoningTokens: 496}, finish: agentrt.FinishStop, model: "qwen-plus",
		},
		{
			// Later fragments repeat the type with "id": "", and a last one
			// has empty arguments.
			name: "qwen tool call streamed", file: "vercel2/compat-qwen-tool-call-stream.sse", stream: true,
			blocks: []wantBlock{toolUse("call_eee11723464a4b9eb8cee71d", "weather", weatherSF)},
			usage:  agentrt.Usage{InputTokens: 295, OutputTokens: 22}, finish: agentrt.FinishToolUse, model: "qwen3-max",
		},
		{
			name: "qwen tool call", file: "vercel2/compat-qwen-tool-call.json",
			blocks: []wantBlock{toolUse("call_48dc828f33d7473fa345dd", "set_cell_range", `{"label":"A1:B10"}`)},
			usage:  agentrt.Usage{InputTokens: 202, OutputTokens: 24}, finish: agentrt.FinishToolUse, model: "qwen-plus",
		},
		{
			// xAI counts the reasoning tokens outside completion_tokens
			// (total_tokens is the sum of the three); they are mapped as sent.
			name: "xai reasoning and a tool call streamed", file: "vercel2/compat-xai-reasoning-tool-call-stream.sse", stream: true,
			blocks: []wantBlock{thinking("First, the user is"), toolUse("call_55117580", "weather", weatherSF)},
			usage:  agentrt.Usage{InputTokens: 291, OutputTokens: 26 + 196, ReasoningTokens: 196, CacheReadTokens: 290}, finish: agentrt.FinishToolUse, model: "grok-3-mini",
		},
		{
			// "reasoning" (not reasoning_content), text and a tool call.
			name: "cerebras reasoning, text and a tool call", file: "vercel2/compat-cerebras-reasoning-text-tool-call.json",
			blocks: []wantBlock{
				thinking(`The function returned 2026 as the magic number. Now I need to return this as a JSON object matching the specified schema. The schema requires a "result" property of type string. So I should wrap the magic number in a string.`),
				text(`{"result":"2026"}`),
				toolUse("0babb4517", "nonUsefulTool", `{}`),
			},
			usage: agentrt.Usage{InputTokens: 394, OutputTokens: 63, ReasoningTokens: 50, CacheReadTokens: 256}, finish: agentrt.FinishToolUse, model: "zai-glm-4.7",
		},
	}
	replayCases(t, cases, fixture, chatAPI)
}

// chunkStream frames JSON chunks as a Chat Completions stream.
func chunkStream(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TestStreamToolCallsWithoutIndex replays streams in the shapes of
// vercel/ai's Moonshot fixtures moonshotai-stream-indexless-tool-calls,
// moonshotai-stream-tool-calls and moonshotai-stream-usage-precedence
// (their ids were made up by that project, so the bodies are written here,
// chunk for chunk): tool calls without "index", two to a delta, whose
// arguments follow in the same order, without index or with one.
func TestStreamToolCallsWithoutIndex(t *testing.T) {
	t.Parallel()
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"kimi-k2.5","choices":[{"index":0,`
	cases := []recordedCase{
		{
			// Both fragments of the second delta went to the second call
			// before the fix.
			name: "no index at all",
			file: chunkStream(
				head+`"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				head+`"delta":{"tool_calls":[{"id":"weather_0","type":"function","function":{"name":"weather","arguments":""}},{"id":"time_1","type":"function","function":{"name":"time","arguments":""}}]},"finish_reason":null}]}`,
				head+`"delta":{"tool_calls":[{"function":{"arguments":"{\"location\":\"San Francisco\"}"}},{"function":{"arguments":"{\"zone\":\"UTC\"}"}}]},"finish_reason":null}]}`,
				head+`"delta":{},"finish_reason":"tool_calls","usage":{"prompt_tokens":61,"completion_tokens":25,"total_tokens":86}}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"kimi-k2.5","choices":[],"usage":{"prompt_tokens":61,"completion_tokens":25,"total_tokens":86}}`,
			),
			blocks: []wantBlock{toolUse("weather_0", "weather", `{"location":"San Francisco"}`), toolUse("time_1", "time", `{"zone":"UTC"}`)},
			usage:  agentrt.Usage{InputTokens: 61, OutputTokens: 25}, finish: agentrt.FinishToolUse, model: "kimi-k2.5",
		},
		{
			// The calls come without index, their arguments with one, in
			// reverse order; the answer failed ("no function name") before.
			name: "index only on later fragments",
			file: chunkStream(
				head+`"delta":{"role":"assistant","tool_calls":[{"id":"call-weather","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\""}},{"id":"call-time","type":"function","function":{"name":"get_time","arguments":"{\"zone\":\""}}]},"finish_reason":null}]}`,
				head+`"delta":{"tool_calls":[{"index":1,"function":{"arguments":"UTC\"}"}},{"index":0,"function":{"arguments":"Paris\"}"}}]},"finish_reason":null}]}`,
				head+`"delta":{},"finish_reason":"tool_calls","usage":{"prompt_tokens":11,"completion_tokens":6,"total_tokens":17}}]}`,
			),
			blocks: []wantBlock{toolUse("call-weather", "get_weather", `{"city":"Paris"}`), toolUse("call-time", "get_time", `{"zone":"UTC"}`)},
			usage:  agentrt.Usage{InputTokens: 11, OutputTokens: 6}, finish: agentrt.FinishToolUse, model: "kimi-k2.5",
		},
		{
			// The usage chunk wins over the usage in the finish chunk's choice.
			name: "usage chunk over usage in the choice",
			file: chunkStream(
				head+`"delta":{"content":"OK"},"finish_reason":null}]}`,
				head+`"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"kimi-k2.5","choices":[],"usage":{"prompt_tokens":99,"completion_tokens":33,"total_tokens":132}}`,
			),
			blocks: []wantBlock{text("OK")},
			usage:  agentrt.Usage{InputTokens: 99, OutputTokens: 33}, finish: agentrt.FinishStop, model: "kimi-k2.5",
		},
	}
	for i := range cases {
		cases[i].stream = true
	}
	replayCases(t, cases, inline, chatAPI)
}

// TestRecordedChatErrorsMore replays recorded error bodies of Moonshot and
// Groq (the files do not store the status; the messages say which).
func TestRecordedChatErrorsMore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file string
		status     int
		code, msg  string
	}{
		{
			name: "moonshot model not found", file: "vercel2/compat-moonshot-error-not-found.json", status: http.StatusNotFound,
			code: "resource_not_found_error", msg: "Not found the model definitely-not-a-real-moonshot-model or Permission denied",
		},
		{
			name: "groq json mode with tools", file: "vercel2/compat-groq-error-400-json-mode-with-tools.json", status: http.StatusBadRequest,
			code: "invalid_request_error", msg: "json mode cannot be combined with tool/function calling",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newReplay(t, reply{status: c.status, body: fixture(t, c.file)}).provider(nil)
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
			require.Nil(t, resp)
			var pe *agentrt.ProviderError
			require.True(t, errors.As(err, &pe), "%T: %v", err, err)
			require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
			require.Equal(t, c.status, pe.StatusCode)
			require.Equal(t, c.code, pe.Code)
			require.Equal(t, c.msg, pe.Message)
		})
	}
}
