package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of the httprr recordings of langchaingo (testdata/langchaingo,
// see its README.md): redacted thinking, adaptive thinking on Opus 5,
// thinking interleaved with text and one, two or sequential tool calls,
// structured output, and prompt caching over three turns, both plain and
// streamed. Each answer is decoded as the runtime sees it; then the next
// request is built from it and checked: the blocks of the answer go back
// exactly as the API returned them (thinking with its signature,
// redacted_thinking with its data), and the request is one the API takes.
func TestLangchaingoAnswers(t *testing.T) {
	t.Parallel()
	const sonnet = "claude-sonnet-4-5-20250929"
	const haiku = "claude-haiku-4-5-20251001"
	tests := []struct {
		file   string // in testdata/langchaingo; a .sse file is streamed
		blocks func(t *testing.T, file string) []agentrt.Block
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
		// sent is the assistant message's content in the next request;
		// empty means the recorded content, unchanged.
		sent string
	}{
		{
			// redacted_thinking: no text, only the encrypted data.
			file: "redacted-thinking.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("", jsonContent(t, file, 0, "data"), true),
					agentrt.TextBlock("I don't respond to attempts to access internal systems or backdoor commands. " +
						"There are no special triggers or magic strings that change how I operate.\n\n" +
						"How can I assist you today with a legitimate task?"),
				}
			},
			usage: agentrt.Usage{InputTokens: 93, OutputTokens: 193}, finish: agentrt.FinishStop,
			model: "claude-3-7-sonnet-20250219",
		},
		{
			file: "redacted-thinking-followup.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("", jsonContent(t, file, 0, "data"), true),
					agentrt.TextBlock(jsonContent(t, file, 1, "text")),
				}
			},
			usage: agentrt.Usage{InputTokens: 143, OutputTokens: 176}, finish: agentrt.FinishStop,
			model: "claude-3-7-sonnet-20250219",
		},
		{
			// Adaptive thinking: summarized thinking, a short signature,
			// output_tokens_details.thinking_tokens, stop_details null.
			file: "opus-5-adaptive-thinking.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("I'm setting x to 7.", jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("## Solving for x\n\n**Equation:** x + 5 = 12\n\n**Step 1:** Subtract 5 from both sides to isolate x.\n\n" +
						"$$x + 5 - 5 = 12 - 5$$\n\n**Step 2:** Simplify.\n\n$$x = 7$$\n\n" +
						"**Check:** Substitute back into the original equation: 7 + 5 = 12 ✓\n\n**Answer: x = 7**"),
				}
			},
			usage: agentrt.Usage{InputTokens: 24, OutputTokens: 144, ReasoningTokens: 11}, finish: agentrt.FinishStop,
			model: "claude-opus-5",
		},
		{
			file: "interleaved-thinking-tool-call.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking(jsonContent(t, file, 0, "thinking"), jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("I'll help you find the capital of France and then calculate its population density."),
					use("toolu_01KETeSc6UVFNQc26GRNBdvX", "search", `{"query":"capital of France"}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 791, OutputTokens: 149}, finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			file: "parallel-tool-calls-thinking.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking(jsonContent(t, file, 0, "thinking"), jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("I'll get both the weather and time information for Boston."),
					use("toolu_01Pm8yB7EWqPLcqs7q6CZLwF", "get_weather", `{"location":"Boston"}`),
					use("toolu_01HZ1ZdpZQujsQX8oNutwTfd", "get_time", `{"location":"Boston"}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 797, OutputTokens: 200}, finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			// Thinking straight before the tool call, with no text.
			file: "sequential-thinking-tool-call.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("The user wants me to:\n1. Calculate (5 + 3)\n2. Then multiply that result by 2\n\n"+
						"I can do this in one calculation: (5 + 3) * 2\n\nLet me use the calculate function to compute this.",
						jsonContent(t, file, 0, "signature"), false),
					use("toolu_01DEbz4aVH2QyU3TVqydqZpN", "calculate", `{"expression":"(5 + 3) * 2"}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 745, OutputTokens: 125}, finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			file: "sequential-thinking-followup.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking(jsonContent(t, file, 0, "thinking"), jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("The calculation is: **(5 + 3) × 2 = 8 × 2 = 16**\n\nWait, let me recalculate that to verify:"),
					use("toolu_016gA6ur1kRmB1T6mfsipJ4X", "calculate", `{"expression":"8 * 2"}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 890, OutputTokens: 190}, finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			// The first of three cached turns: 10 new input tokens, 3775
			// written to the cache.
			file: "multiturn-cache-1.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking(jsonContent(t, file, 0, "thinking"), jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("I'll help you fetch the sales data and calculate the total."),
					use("toolu_01P4vRC8iixnXvBvmteWaxGN", "fetch_data", `{"query":"sales data"}`),
				}
			},
			usage:  agentrt.Usage{InputTokens: 10 + 3775, OutputTokens: 143, CacheWriteTokens: 3775},
			finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			file: "multiturn-cache-2.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("Great! I got the sales data: [100, 200, 300]. Now I need to calculate the total. "+
						"I'll use the calculate function to sum these values.", jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("Now let me calculate the total of these sales:"),
					use("toolu_01WP2FzrnXpCrURz14ts8Pr7", "calculate", `{"expression":"100 + 200 + 300"}`),
				}
			},
			usage:  agentrt.Usage{InputTokens: 13 + 171 + 3775, OutputTokens: 114, CacheReadTokens: 3775, CacheWriteTokens: 171},
			finish: agentrt.FinishToolUse, model: sonnet,
		},
		{
			file: "multiturn-cache-3.response.json",
			blocks: func(t *testing.T, file string) []agentrt.Block {
				return []agentrt.Block{
					thinking("Perfect! The calculation is complete. The total sales is 600.", jsonContent(t, file, 0, "signature"), false),
					agentrt.TextBlock("**Results:**\n\nThe sales data retrieved shows three sales values: **100, 200, and 300**.\n\nThe **total sales** is: **600**"),
				}
			},
			usage:  agentrt.Usage{InputTokens: 12 + 139 + 3946, OutputTokens: 59, CacheReadTokens: 3946, CacheWriteTokens: 139},
			finish: agentrt.FinishStop, model: sonnet,
		},
		{
			// Structured output: the JSON document is the text.
			file: "structured-output-object.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock(`{"country":"France","capital":"Paris"}`)}
			},
			usage: agentrt.Usage{InputTokens: 176, OutputTokens: 12}, finish: agentrt.FinishStop, model: sonnet,
		},
		{
			// Streamed tool call whose input arrives in 5 input_json_delta
			// events, the first one empty; message_start and message_delta
			// both carry the cache write.
			file: "tool-results-cache-1-stream.sse",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{use("toolu_017gFQvN2ViSK2BLwq8bwwhc", "get_weather", `{"location":"Paris, France"}`)}
			},
			usage:  agentrt.Usage{InputTokens: 3 + 1881, OutputTokens: 55, CacheWriteTokens: 1881},
			finish: agentrt.FinishToolUse, model: sonnet,
			sent: `[{"type":"tool_use","id":"toolu_017gFQvN2ViSK2BLwq8bwwhc","name":"get_weather","input":{"location":"Paris, France"}}]`,
		},
		{
			file: "tool-results-cache-2-stream.sse",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The current weather in Paris, France is sunny with a temperature of 22°C (approximately 72°F).")}
			},
			usage:  agentrt.Usage{InputTokens: 6 + 72 + 1881, OutputTokens: 27, CacheReadTokens: 1881, CacheWriteTokens: 72},
			finish: agentrt.FinishStop, model: sonnet,
			sent: `[{"type":"text","text":"The current weather in Paris, France is sunny with a temperature of 22°C (approximately 72°F)."}]`,
		},
		{
			file: "tool-results-cache-3-stream.sse",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{use("toolu_019DHu8vHnnTfwnzfCP6RnN9", "get_weather", `{"location":"London, UK"}`)}
			},
			usage:  agentrt.Usage{InputTokens: 3 + 37 + 1953, OutputTokens: 55, CacheReadTokens: 1953, CacheWriteTokens: 37},
			finish: agentrt.FinishToolUse, model: sonnet,
			sent: `[{"type":"tool_use","id":"toolu_019DHu8vHnnTfwnzfCP6RnN9","name":"get_weather","input":{"location":"London, UK"}}]`,
		},
		{
			// A tool call with a "caller" (direct), which does not go back.
			file: "tool-call.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{use("toolu_01FMmo5afixJM2KfHR2p7qnU", "getCurrentWeather", `{"location":"Boston, MA"}`)}
			},
			usage: agentrt.Usage{InputTokens: 604, OutputTokens: 56}, finish: agentrt.FinishToolUse, model: haiku,
			sent: `[{"type":"tool_use","id":"toolu_01FMmo5afixJM2KfHR2p7qnU","name":"getCurrentWeather","input":{"location":"Boston, MA"}}]`,
		},
		{
			file: "tool-result-followup.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The current weather in Boston, MA is **72°F and sunny**. It's a nice day!")}
			},
			usage: agentrt.Usage{InputTokens: 680, OutputTokens: 25}, finish: agentrt.FinishStop, model: haiku,
		},
		{
			// Streamed: text in 3 deltas, then a call whose input comes in
			// 8 chunks (the first empty) and a call without arguments
			// whose only chunk is empty.
			file: "text-two-tool-calls-stream.sse",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll calculate the tip and get the waiter's name for you."),
					use("toolu_01UhMrWkCgWyQ9rMPESVvW7Q", "calculateTip", `{"billAmount":50,"tipPercentage":15}`),
					use("toolu_01TegCH28tEiPxz2ecyuYFh9", "getWaiterName", `{}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 679, OutputTokens: 111}, finish: agentrt.FinishToolUse, model: sonnet,
			sent: `[{"type":"text","text":"I'll calculate the tip and get the waiter's name for you."},` +
				`{"type":"tool_use","id":"toolu_01UhMrWkCgWyQ9rMPESVvW7Q","name":"calculateTip","input":{"billAmount":50,"tipPercentage":15}},` +
				`{"type":"tool_use","id":"toolu_01TegCH28tEiPxz2ecyuYFh9","name":"getWaiterName","input":{}}]`,
		},
		{
			// Thinking disabled: thinking_tokens 0, no thinking block.
			file: "thinking-disabled.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("ready")}
			},
			usage: agentrt.Usage{InputTokens: 16, OutputTokens: 4}, finish: agentrt.FinishStop, model: "claude-sonnet-5",
		},
		{
			file: "structured-output-array.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock(`{"planets":["Mercury","Venus","Earth"]}`)}
			},
			usage: agentrt.Usage{InputTokens: 173, OutputTokens: 14}, finish: agentrt.FinishStop, model: sonnet,
		},
		{
			// cache_creation.ephemeral_1h_input_tokens 6001: a write with
			// a 1-hour TTL counts as a cache write like any other.
			file: "ttl-cache-1.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("Hello! 👋 How can I help you today?")}
			},
			usage:  agentrt.Usage{InputTokens: 7 + 6001, OutputTokens: 16, CacheWriteTokens: 6001},
			finish: agentrt.FinishStop, model: haiku,
		},
		{
			file: "ttl-cache-2.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("Hello! 👋 How can I help you today?")}
			},
			usage:  agentrt.Usage{InputTokens: 7 + 6001, OutputTokens: 16, CacheReadTokens: 6001},
			finish: agentrt.FinishStop, model: haiku,
		},
		{
			// cache_creation.ephemeral_5m_input_tokens 10001.
			file: "explicit-cache-1.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("Hello! 👋 How can I help you today?")}
			},
			usage:  agentrt.Usage{InputTokens: 7 + 10001, OutputTokens: 16, CacheWriteTokens: 10001},
			finish: agentrt.FinishStop, model: haiku,
		},
		{
			file: "explicit-cache-2.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("Hello! 👋\n\nHow can I help you today?")}
			},
			usage:  agentrt.Usage{InputTokens: 7 + 10001, OutputTokens: 16, CacheReadTokens: 10001},
			finish: agentrt.FinishStop, model: haiku,
		},
		{
			// The tools cached, the 332 tokens of the message not.
			file: "tools-cache-1.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("I'd be happy to help you with the weather! However, I need to know which location you're interested in. " +
					"Could you please tell me:\n\n1. What city and state (e.g., San Francisco, CA) or city and country (e.g., London, UK) would you like the weather for?\n" +
					"2. Would you prefer the temperature in Celsius or Fahrenheit?")}
			},
			usage:  agentrt.Usage{InputTokens: 332 + 1546, OutputTokens: 86, CacheWriteTokens: 1546},
			finish: agentrt.FinishStop, model: sonnet,
		},
		{
			file: "tools-cache-2.response.json",
			blocks: func(*testing.T, string) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("I'd be happy to help you with the weather! However, I need to know which location you're interested in. " +
					"Could you please provide a city and state (e.g., San Francisco, CA) or city and country (e.g., London, UK)?")}
			},
			usage:  agentrt.Usage{InputTokens: 332 + 1546, OutputTokens: 58, CacheReadTokens: 1546},
			finish: agentrt.FinishStop, model: sonnet,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			file := "langchaingo/" + tt.file
			stream := strings.HasSuffix(tt.file, ".sse")
			r := newReplay(t, fileReply(t, file), jsonReply(fixture(t, "text.json")))
			p := r.provider("claude-sonnet-4-5", nil)
			msgs := []agentrt.Message{agentrt.NewUserMessage("hi")}
			resp, deltas := planStreamed(t, p, &agentrt.ModelRequest{Messages: msgs}, stream)

			want := agentrt.NewAssistantMessage(tt.blocks(t, file)...)
			require.Equal(t, want, resp.Message)
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, tt.finish, resp.Finish)
			require.Equal(t, tt.model, resp.Model)
			if stream {
				require.Equal(t, textOf(want), strings.Join(deltas, ""), "OnText got the text, and only it")
			}

			// The next request: the answer, then a result for each call or
			// the user's next message.
			msgs = append(msgs, resp.Message)
			for _, u := range resp.Message.ToolUses() {
				msgs = append(msgs, agentrt.NewToolMessage(u.ID, "done", false))
			}
			if len(resp.Message.ToolUses()) == 0 {
				msgs = append(msgs, agentrt.NewUserMessage("Go on."))
			}
			_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
			require.NoError(t, err)
			reqs := r.requests()
			require.Len(t, reqs, 2)
			sent := checkSendable(t, reqs[1].body)
			require.Len(t, sent, 3)

			wantSent := tt.sent
			if wantSent == "" {
				wantSent = jsonOf(t, fixtureJSON(t, file)["content"])
			}
			messages, ok := reqs[1].json(t)["messages"].([]any)
			require.True(t, ok)
			require.JSONEq(t, wantSent, jsonOf(t, messages[1].(map[string]any)["content"]),
				"the answer goes back as the API returned it")
		})
	}
}

// lcTurn is one exchange of a recorded conversation.
type lcTurn struct {
	reply   string // the answer, in testdata/langchaingo; a .sse file is streamed
	request string // the request the recording client sent for it
	// then returns the messages that follow the answer in the next turn.
	then  func(resp *agentrt.ModelResponse) []agentrt.Message
	usage agentrt.Usage // the answer's, checked when set
}

// results answers each tool call of resp with the result given by name.
func results(byName map[string]string) func(*agentrt.ModelResponse) []agentrt.Message {
	return func(resp *agentrt.ModelResponse) []agentrt.Message {
		var out []agentrt.Message
		for _, u := range resp.Message.ToolUses() {
			out = append(out, agentrt.NewToolMessage(u.ID, byName[u.Name], false))
		}
		return out
	}
}

// next returns the user's next message.
func next(text string) func(*agentrt.ModelResponse) []agentrt.Message {
	return func(*agentrt.ModelResponse) []agentrt.Message {
		return []agentrt.Message{agentrt.NewUserMessage(text)}
	}
}

// TestLangchaingoConversations replays recorded conversations turn by turn
// and compares each request the adapter sends with the one the recording
// client sent and the API accepted: model, system, messages, tools,
// max_tokens, thinking, output_config and stream, field by field, without
// the cache_control keys (compared separately). Two differences are
// expected. The recording clients sent a tool_result's content as a string,
// this adapter as the equivalent list of one text block; and they sent
// "temperature", which this adapter does not.
func TestLangchaingoConversations(t *testing.T) {
	t.Parallel()
	marker := "MultiTurnToolThinkingCaching-v1 "
	multiTurnTools := []agentrt.ToolSpec{
		{
			Name: "fetch_data", Description: strings.Repeat(marker+"Fetch data from database. ", 40),
			InputSchema: json.RawMessage(`{"properties":{"query":{"type":"string"}},"required":["query"],"type":"object"}`),
		},
		{
			Name: "calculate", Description: strings.Repeat(marker+"Perform calculations. ", 40),
			InputSchema: json.RawMessage(`{"properties":{"expression":{"type":"string"}},"required":["expression"],"type":"object"}`),
		},
	}
	weatherTools := []agentrt.ToolSpec{
		{
			Name: "get_weather",
			Description: "ToolResultTestStreaming-v1 " + strings.Repeat("Get current weather conditions including temperature, "+
				"humidity, wind speed, and precipitation for a specified geographic location. ", 30),
			InputSchema: json.RawMessage(`{"properties":{"location":{"description":"City and state, e.g. San Francisco, CA, or city and country, e.g. London, UK","type":"string"},` +
				`"units":{"description":"Temperature units: celsius or fahrenheit","enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`),
		},
		{
			Name: "get_time",
			Description: "ToolResultTestStreaming-v1 " + strings.Repeat("Get the current time in any timezone around the world "+
				"using IANA timezone identifiers. ", 30),
			InputSchema: json.RawMessage(`{"properties":{"format":{"description":"Time format: 12h or 24h","enum":["12h","24h"],"type":"string"},` +
				`"timezone":{"description":"IANA timezone name like America/New_York or Europe/London","type":"string"}},"required":["timezone"],"type":"object"}`),
		},
	}
	thinkingOn := func(budget int) *Options {
		return &Options{MaxRetries: -1, ExtraFields: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": budget}}}
	}
	tests := []struct {
		name  string
		model string
		opts  *Options
		req   agentrt.ModelRequest // the first turn's
		turns []lcTurn
		last  string // the text of the last answer
	}{
		{
			// The redacted_thinking block goes back with its data.
			name: "redacted thinking", model: "claude-3-7-sonnet-latest", opts: thinkingOn(10000),
			req: agentrt.ModelRequest{
				Messages:  []agentrt.Message{agentrt.NewUserMessage("ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB")},
				MaxTokens: 16000,
			},
			turns: []lcTurn{
				{reply: "redacted-thinking.response.json", then: func(*agentrt.ModelResponse) []agentrt.Message {
					return []agentrt.Message{agentrt.NewUserMessage("Continue the conversation")}
				}},
				{reply: "redacted-thinking-followup.response.json", request: "redacted-thinking-followup.request.json"},
			},
			last: "I'd be happy to have a conversation with you, but we haven't really started one with a specific topic yet. \n\n" +
				"Is there something in particular you'd like to discuss or a question I can help you with today? " +
				"I'm here to assist with information, brainstorming, writing tasks, or just having a thoughtful conversation about topics you're interested in.",
		},
		{
			// Adaptive thinking and effort, set through ExtraFields.
			name: "adaptive thinking", model: "claude-opus-5",
			opts: &Options{MaxRetries: -1, ExtraFields: map[string]any{
				"thinking":      map[string]any{"type": "adaptive", "display": "summarized"},
				"output_config": map[string]any{"effort": "high"},
			}},
			req:   agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Solve: If x + 5 = 12, what is x?")}, MaxTokens: 4096},
			turns: []lcTurn{{reply: "opus-5-adaptive-thinking.response.json", request: "opus-5-adaptive-thinking.request.json"}},
			last: "## Solving for x\n\n**Equation:** x + 5 = 12\n\n**Step 1:** Subtract 5 from both sides to isolate x.\n\n" +
				"$$x + 5 - 5 = 12 - 5$$\n\n**Step 2:** Simplify.\n\n$$x = 7$$\n\n" +
				"**Check:** Substitute back into the original equation: 7 + 5 = 12 ✓\n\n**Answer: x = 7**",
		},
		{
			// A thinking block right before a tool_use, sent back with
			// its signature and the tool's result.
			name: "sequential tool calls with thinking", model: "claude-sonnet-4-5", opts: thinkingOn(2048),
			req: agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("Calculate (5 + 3) and then multiply by 2")},
				Tools: []agentrt.ToolSpec{{Name: "calculate", Description: "Perform a calculation",
					InputSchema: json.RawMessage(`{"properties":{"expression":{"type":"string"}},"required":["expression"],"type":"object"}`)}},
				MaxTokens: 4096,
			},
			turns: []lcTurn{
				{reply: "sequential-thinking-tool-call.response.json", then: results(map[string]string{"calculate": "8"})},
				{reply: "sequential-thinking-followup.response.json", request: "sequential-thinking-followup.request.json"},
			},
			last: "The calculation is: **(5 + 3) × 2 = 8 × 2 = 16**\n\nWait, let me recalculate that to verify:",
		},
		{
			// Three turns with a long system prompt and tools, each answer
			// with thinking, text and a tool call: every thinking block of
			// the session goes back, signed, each turn.
			name: "multi-turn tool calls with thinking and caching", model: "claude-sonnet-4-5", opts: thinkingOn(2048),
			req: agentrt.ModelRequest{
				System:    strings.Repeat(marker+"You are a helpful assistant that helps with data analysis and calculations. ", 60),
				Messages:  []agentrt.Message{agentrt.NewUserMessage("Fetch sales data and calculate the total")},
				Tools:     multiTurnTools,
				MaxTokens: 4096,
			},
			turns: []lcTurn{
				{reply: "multiturn-cache-1.response.json", request: "multiturn-cache-1.request.json",
					then: results(map[string]string{"fetch_data": `{"sales": [100, 200, 300]}`})},
				{reply: "multiturn-cache-2.response.json", request: "multiturn-cache-2.request.json",
					then: results(map[string]string{"calculate": `{"result": 600}`})},
				{reply: "multiturn-cache-3.response.json", request: "multiturn-cache-3.request.json"},
			},
			last: "**Results:**\n\nThe sales data retrieved shows three sales values: **100, 200, and 300**.\n\nThe **total sales** is: **600**",
		},
		{
			// Streamed: a call, its result, the answer, and a new question.
			name: "streamed tool results with caching", model: "claude-sonnet-4-5",
			req: agentrt.ModelRequest{
				Messages:  []agentrt.Message{agentrt.NewUserMessage("What's the weather in Paris?")},
				Tools:     weatherTools,
				MaxTokens: 200,
			},
			turns: []lcTurn{
				{reply: "tool-results-cache-1-stream.sse", request: "tool-results-cache-1.request.json",
					then: results(map[string]string{"get_weather": "Sunny, 22°C"})},
				{reply: "tool-results-cache-2-stream.sse", request: "tool-results-cache-2.request.json",
					then: func(*agentrt.ModelResponse) []agentrt.Message {
						return []agentrt.Message{agentrt.NewUserMessage("What about London?")}
					}},
				{reply: "tool-results-cache-3-stream.sse", request: "tool-results-cache-3.request.json"},
			},
		},
		{
			// Three plain turns under one cached system prompt: the first
			// writes it, each next one reads the prefix the one before
			// wrote and writes its own new messages (23 tokens).
			name: "conversation with caching", model: "claude-sonnet-4-5",
			req: agentrt.ModelRequest{
				System:    "ConvTest-v1 " + strings.Repeat("You are a helpful assistant with extensive knowledge. ", 200),
				Messages:  []agentrt.Message{agentrt.NewUserMessage("What is 2+2?")},
				MaxTokens: 100,
			},
			turns: []lcTurn{
				{reply: "conversation-cache-1.response.json", request: "conversation-cache-1.request.json",
					then: next("What is 3+3?"), usage: agentrt.Usage{InputTokens: 3 + 1819, OutputTokens: 13, CacheWriteTokens: 1819}},
				{reply: "conversation-cache-2.response.json", request: "conversation-cache-2.request.json",
					then:  next("What is 5+5?"),
					usage: agentrt.Usage{InputTokens: 3 + 23 + 1819, OutputTokens: 13, CacheReadTokens: 1819, CacheWriteTokens: 23}},
				{reply: "conversation-cache-3.response.json", request: "conversation-cache-3.request.json",
					usage: agentrt.Usage{InputTokens: 3 + 23 + 1842, OutputTokens: 13, CacheReadTokens: 1842, CacheWriteTokens: 23}},
			},
			last: "5 + 5 = 10",
		},
		{
			// A call and its result (a string that is not JSON), the
			// call's "caller" left out when it goes back.
			name: "tool call and result", model: "claude-haiku-4-5",
			req: agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("What is the weather in Boston?")},
				Tools: []agentrt.ToolSpec{{Name: "getCurrentWeather", Description: "Get the current weather in a given location",
					InputSchema: json.RawMessage(`{"properties":{"location":{"description":"The city and state, e.g. San Francisco, CA","type":"string"},` +
						`"unit":{"enum":["fahrenheit","celsius"],"type":"string"}},"required":["location"],"type":"object"}`)}},
				MaxTokens: 16384,
			},
			turns: []lcTurn{
				{reply: "tool-call.response.json", request: "tool-call.request.json",
					then: results(map[string]string{"getCurrentWeather": `{"Boston","72 and sunny"}`})},
				{reply: "tool-result-followup.response.json", request: "tool-result-followup.request.json"},
			},
			last: "The current weather in Boston, MA is **72°F and sunny**. It's a nice day!",
		},
		{
			// Streamed; the prompt's < and > escaped as \u003c and \u003e
			// by the recording client; a tool without parameters.
			name: "streamed text and two tool calls", model: "claude-sonnet-4-5",
			req: agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("Calculate a 15% tip on a $50 bill and tell me who is the waiter " +
					"in the format: '<waiterName> should get a tip of <tipAmount>'")},
				Tools: []agentrt.ToolSpec{
					{Name: "calculateTip", Description: "Calculate tip amount based on bill total and percentage",
						InputSchema: json.RawMessage(`{"properties":{"billAmount":{"description":"The total bill amount","type":"number"},` +
							`"tipPercentage":{"description":"The tip percentage","type":"number"}},"required":["billAmount","tipPercentage"],"type":"object"}`)},
					{Name: "getWaiterName", Description: "Get the name of the waiter", InputSchema: json.RawMessage(`{"properties":{},"type":"object"}`)},
				},
				MaxTokens: 16384,
			},
			turns: []lcTurn{{reply: "text-two-tool-calls-stream.sse", request: "text-two-tool-calls-stream.request.json"}},
			last:  "I'll calculate the tip and get the waiter's name for you.",
		},
		{
			// Thinking turned off through ExtraFields.
			name: "thinking disabled", model: "claude-sonnet-5",
			opts: &Options{MaxRetries: -1, ExtraFields: map[string]any{"thinking": map[string]any{"type": "disabled"}}},
			req: agentrt.ModelRequest{
				Messages:  []agentrt.Message{agentrt.NewUserMessage("Reply with just the word: ready")},
				MaxTokens: 64,
			},
			turns: []lcTurn{{reply: "thinking-disabled.response.json", request: "thinking-disabled.request.json"}},
			last:  "ready",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			replies := make([]reply, len(tt.turns))
			for i, turn := range tt.turns {
				replies[i] = fileReply(t, "langchaingo/"+turn.reply)
			}
			r := newReplay(t, replies...)
			p := r.provider(tt.model, tt.opts)
			req := tt.req
			req.Messages = append([]agentrt.Message(nil), req.Messages...)
			var resp *agentrt.ModelResponse
			for i, turn := range tt.turns {
				req.OnText = nil
				var deltas strings.Builder
				stream := strings.HasSuffix(turn.reply, ".sse")
				if stream {
					req.OnText = func(d string) { deltas.WriteString(d) }
				}
				var err error
				resp, err = p.Plan(context.Background(), &req)
				require.NoError(t, err, "turn %d", i+1)
				if stream {
					require.Equal(t, resp.Message.Text(), deltas.String(), "turn %d: OnText", i+1)
				}
				if turn.usage != (agentrt.Usage{}) {
					require.Equal(t, turn.usage, resp.Usage, "turn %d: usage", i+1)
				}

				reqs := r.requests()
				require.Len(t, reqs, i+1)
				checkSendable(t, reqs[i].body)
				checkBreakpoints(t, reqs[i].body)
				if turn.request != "" {
					got, want := reqs[i].json(t), fixtureJSON(t, "langchaingo/"+turn.request)
					stripCacheControl(want)
					toolResultsAsBlocks(want)
					for _, k := range []string{"model", "system", "messages", "tools", "max_tokens", "thinking", "output_config", "stream"} {
						require.JSONEq(t, jsonOf(t, want[k]), jsonOf(t, got[k]), "turn %d: request field %q", i+1, k)
					}
				}
				req.Messages = append(req.Messages, resp.Message)
				if turn.then != nil {
					req.Messages = append(req.Messages, turn.then(resp)...)
				}
			}
			if tt.last != "" {
				require.Equal(t, tt.last, resp.Message.Text())
			}
		})
	}
}

// asSentForm rewrites, in a decoded request body, what another client
// spelled in an equivalent form into the form this adapter sends: a
// message's content, a tool_result's content and the system prompt given
// as a string, as a list of one text block; a tool's empty description
// (the default) left out.
func asSentForm(body map[string]any) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if s, ok := msg["content"].(string); ok {
			msg["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
	}
	toolResultsAsBlocks(body)
	if s, ok := body["system"].(string); ok {
		body["system"] = []any{map[string]any{"type": "text", "text": s}}
	}
	tools, _ := body["tools"].([]any)
	for _, tool := range tools {
		if m, _ := tool.(map[string]any); m["description"] == "" {
			delete(m, "description")
		}
	}
}

// toolResultsAsBlocks rewrites, in a decoded request body, each
// tool_result whose content is a string into the equivalent list of one
// text block, the form this adapter sends.
func toolResultsAsBlocks(body map[string]any) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			if s, ok := b["content"].(string); ok && b["type"] == "tool_result" {
				b["content"] = []any{map[string]any{"type": "text", "text": s}}
			}
		}
	}
}

// checkBreakpoints checks the cache_control marks of a request body
// against the API's rules: at most 4, none on a thinking or
// redacted_thinking block; and, as the recorded clients did, one on the
// system prompt when there is one (on the last tool otherwise) and one on
// the last block of the last message of the session.
func checkBreakpoints(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		System []map[string]any
		Tools  []map[string]any
		// Messages' blocks.
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var marks []string
	for i, b := range req.System {
		if b["cache_control"] != nil {
			marks = append(marks, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, b := range req.Tools {
		if b["cache_control"] != nil {
			marks = append(marks, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, m := range req.Messages {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				require.NotContains(t, []string{"thinking", "redacted_thinking"}, b["type"], "cache_control on messages[%d].content[%d]", i, j)
				marks = append(marks, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	require.LessOrEqual(t, len(marks), 4, "cache breakpoints: %v", marks)
	if len(req.System) > 0 {
		require.Contains(t, marks, fmt.Sprintf("system[%d]", len(req.System)-1))
	} else if len(req.Tools) > 0 {
		require.Contains(t, marks, fmt.Sprintf("tools[%d]", len(req.Tools)-1))
	}
	last := len(req.Messages) - 1
	require.Contains(t, marks, fmt.Sprintf("messages[%d].content[%d]", last, len(req.Messages[last].Content)-1))
}

// The recorded structured-output calls, with an object schema and with an
// array inside one: the adapter sends the schema the API accepted
// (additionalProperties false added by the SDK's transformation) as
// output_config.format, and the JSON answer is text.
func TestLangchaingoStructuredOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, prompt, schema string
		file                 string // the request and response, in testdata/langchaingo
		text                 string
		usage                agentrt.Usage
	}{
		{
			name: "object", prompt: "What is the capital of France?", file: "structured-output-object",
			schema: `{"type":"object","properties":{"country":{"type":"string"},"capital":{"type":"string"}},"required":["country","capital"]}`,
			text:   `{"country":"France","capital":"Paris"}`, usage: agentrt.Usage{InputTokens: 176, OutputTokens: 12},
		},
		{
			name: "array", prompt: "List the first three planets from the sun.", file: "structured-output-array",
			schema: `{"type":"object","properties":{"planets":{"type":"array","items":{"type":"string"}}},"required":["planets"]}`,
			text:   `{"planets":["Mercury","Venus","Earth"]}`, usage: agentrt.Usage{InputTokens: 173, OutputTokens: 14},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, jsonReply(fixture(t, "langchaingo/"+tt.file+".response.json")))
			p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, NoCache: true})
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
				Messages:       []agentrt.Message{agentrt.NewUserMessage(tt.prompt)},
				MaxTokens:      256,
				ResponseSchema: json.RawMessage(tt.schema),
			})
			require.NoError(t, err)
			require.Equal(t, tt.text, resp.Message.Text())
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)

			got, want := r.only().raw(t), fixtureJSON(t, "langchaingo/"+tt.file+".request.json")
			require.JSONEq(t, jsonOf(t, want), jsonOf(t, got), "with NoCache, the whole body is the recorded one")
		})
	}
}

// The recorded 429 of the API: a rate_limit_error with
// x-should-retry: true and no Retry-After. The request went with a beta
// header, which the adapter has no option for: it is set on the client
// (option.WithHeader), and reaches the API with the adapter's request.
// The recording client sent "temperature": 0, as Options.Temperature
// does, and the user's text as a string, which the adapter sends as a
// list of one text block.
func TestLangchaingoRateLimited(t *testing.T) {
	t.Parallel()
	r := newReplay(t, errorReply(http.StatusTooManyRequests, string(fixture(t, "langchaingo/rate-limit-429.response.json")),
		"X-Should-Retry", "true", "Request-Id", "req_011CPg15DzD4eqU5RwJ2ReXS"))
	client := sdk.NewClient(option.WithBaseURL(r.srv.URL), option.WithAPIKey("test-api-key"), option.WithHTTPClient(r.srv.Client()),
		option.WithHeader("anthropic-beta", "tools-2024-05-16"))
	zero := 0.0
	p := New(client, "claude-3-opus-20240229", &Options{MaxRetries: -1, NoCache: true, Temperature: &zero})
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's the weather like?")},
		Tools: []agentrt.ToolSpec{{Name: "get_weather", Description: "Get the weather for a location",
			InputSchema: json.RawMessage(`{"properties":{"location":{"description":"The location to get weather for","type":"string"}},"required":["location"],"type":"object"}`)}},
		MaxTokens: 100,
	})
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, agentrt.ErrRateLimited)
	require.Equal(t, http.StatusTooManyRequests, pe.StatusCode)
	require.Equal(t, "rate_limit_error", pe.Code)
	require.Equal(t, "Number of concurrent connections has exceeded your rate limit. Please try again later or contact sales at "+
		"https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.", pe.Message)
	require.Zero(t, pe.RetryAfter)

	sent := r.only() // MaxRetries -1: no retry, despite x-should-retry
	require.Equal(t, "tools-2024-05-16", sent.header.Get("Anthropic-Beta"))
	want := fixtureJSON(t, "langchaingo/rate-limit-429.request.json")
	msgs := want["messages"].([]any)
	m := msgs[0].(map[string]any)
	m["content"] = []any{map[string]any{"type": "text", "text": m["content"]}}
	require.JSONEq(t, jsonOf(t, want), jsonOf(t, sent.raw(t)))
}

// TestLangchaingoPromptCaching replays recordings that sent one request
// twice: the first answer wrote the prompt cache (5-minute or 1-hour
// TTL), the second read it. The adapter sends the recorded request
// (compared without cache_control) twice, byte for byte the same, and
// puts on the system prompt or the last tool the cache_control the
// recording client put there; a recorded "ttl":"5m" is the API's default,
// which the adapter leaves out.
//
// The adapter has no option for the TTL: its breakpoints are 5 minutes.
// A 1-hour TTL on the system prompt is sent by replacing "system" through
// ExtraFields, as the "1-hour TTL" case does; the adapter's 5-minute
// breakpoint on the last message follows it, which the API accepts
// (longer TTLs first).
func TestLangchaingoPromptCaching(t *testing.T) {
	t.Parallel()
	contextText := func(n int) string {
		return strings.Repeat("Context text with additional content for caching.\n", n)
	}
	sayHello := []agentrt.Message{agentrt.NewUserMessage("Say hello")}
	tests := []struct {
		name    string
		model   string
		opts    *Options
		req     agentrt.ModelRequest
		request string    // the recorded request, sent twice
		replies [2]string // the answers, in testdata/langchaingo
		usage   [2]agentrt.Usage
		// marks are the adapter's cache_control marks on the system
		// prompt and tools, when they differ from the recorded ones.
		marks map[string]map[string]any
	}{
		{
			name: "system prompt, 5 minutes", model: "claude-haiku-4-5",
			req:     agentrt.ModelRequest{System: contextText(1000), Messages: sayHello, MaxTokens: 100},
			request: "explicit-cache.request.json",
			replies: [2]string{"explicit-cache-1.response.json", "explicit-cache-2.response.json"},
			usage: [2]agentrt.Usage{
				{InputTokens: 7 + 10001, OutputTokens: 16, CacheWriteTokens: 10001},
				{InputTokens: 7 + 10001, OutputTokens: 16, CacheReadTokens: 10001},
			},
		},
		{
			name: "system prompt, 1-hour TTL", model: "claude-haiku-4-5",
			opts: &Options{MaxRetries: -1, ExtraFields: map[string]any{"system": []any{map[string]any{
				"type": "text", "text": contextText(600),
				"cache_control": map[string]any{"type": "ephemeral", "ttl": "1h"},
			}}}},
			req:     agentrt.ModelRequest{Messages: sayHello, MaxTokens: 100},
			request: "ttl-cache.request.json",
			replies: [2]string{"ttl-cache-1.response.json", "ttl-cache-2.response.json"},
			usage: [2]agentrt.Usage{
				{InputTokens: 7 + 6001, OutputTokens: 16, CacheWriteTokens: 6001},
				{InputTokens: 7 + 6001, OutputTokens: 16, CacheReadTokens: 6001},
			},
		},
		{
			name: "tools, no system prompt", model: "claude-sonnet-4-5",
			req: agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("What's the weather?")},
				Tools: []agentrt.ToolSpec{
					{
						Name: "get_weather",
						Description: "ToolsTest-v1 " + strings.Repeat("Get current weather conditions including temperature, "+
							"humidity, wind speed, and precipitation for a specified geographic location. ", 30),
						InputSchema: json.RawMessage(`{"properties":{"location":{"description":"City and state, e.g. San Francisco, CA, or city and country, e.g. London, UK","type":"string"},` +
							`"units":{"description":"Temperature units: celsius or fahrenheit","enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`),
					},
					{
						Name: "get_time",
						Description: "ToolsTest-v1 " + strings.Repeat("Get the current time in any timezone around the world "+
							"using IANA timezone identifiers. ", 30),
						InputSchema: json.RawMessage(`{"properties":{"format":{"description":"Time format: 12h or 24h","enum":["12h","24h"],"type":"string"},` +
							`"timezone":{"description":"IANA timezone name like America/New_York or Europe/London","type":"string"}},"required":["timezone"],"type":"object"}`),
					},
				},
				MaxTokens: 100,
			},
			request: "tools-cache.request.json",
			replies: [2]string{"tools-cache-1.response.json", "tools-cache-2.response.json"},
			usage: [2]agentrt.Usage{
				{InputTokens: 332 + 1546, OutputTokens: 86, CacheWriteTokens: 1546},
				{InputTokens: 332 + 1546, OutputTokens: 58, CacheReadTokens: 1546},
			},
		},
		{
			// The recording client marked the system prompt and the last
			// tool; the adapter marks only the system prompt, whose prefix
			// holds the tools (they come first).
			name: "system prompt and tools", model: "claude-sonnet-4-5",
			req: agentrt.ModelRequest{
				System:   "CombinedTest-v1 " + strings.Repeat("You are an expert assistant. ", 50),
				Messages: []agentrt.Message{agentrt.NewUserMessage("Calculate 2+2")},
				Tools: []agentrt.ToolSpec{
					{
						Name: "get_weather",
						Description: "CombinedTest-v1 " + strings.Repeat("Get current weather conditions including temperature, "+
							"humidity, wind speed, and precipitation for a specified geographic location. ", 30),
						InputSchema: json.RawMessage(`{"properties":{"location":{"description":"City and state, e.g. San Francisco, CA, or city and country, e.g. London, UK","type":"string"},` +
							`"units":{"description":"Temperature units: celsius or fahrenheit","enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`),
					},
					{
						Name: "get_time",
						Description: "CombinedTest-v1 " + strings.Repeat("Get the current time in any timezone around the world "+
							"using IANA timezone identifiers. ", 30),
						InputSchema: json.RawMessage(`{"properties":{"format":{"description":"Time format: 12h or 24h","enum":["12h","24h"],"type":"string"},` +
							`"timezone":{"description":"IANA timezone name like America/New_York or Europe/London","type":"string"}},"required":["timezone"],"type":"object"}`),
					},
				},
				MaxTokens: 100,
			},
			request: "tools-system-cache.request.json",
			replies: [2]string{"tools-system-cache-1.response.json", "tools-system-cache-2.response.json"},
			usage: [2]agentrt.Usage{
				{InputTokens: 328 + 1863, OutputTokens: 34, CacheWriteTokens: 1863},
				{InputTokens: 328 + 1863, OutputTokens: 34, CacheReadTokens: 1863},
			},
			marks: map[string]map[string]any{"system[0]": {"type": "ephemeral"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, jsonReply(fixture(t, "langchaingo/"+tt.replies[0])), jsonReply(fixture(t, "langchaingo/"+tt.replies[1])))
			p := r.provider(tt.model, tt.opts)
			for i := range 2 {
				resp, err := p.Plan(context.Background(), &tt.req)
				require.NoError(t, err, "call %d", i+1)
				require.Equal(t, tt.usage[i], resp.Usage, "call %d", i+1)
				require.Equal(t, jsonContent(t, "langchaingo/"+tt.replies[i], 0, "text"), resp.Message.Text(), "call %d", i+1)
			}
			reqs := r.requests()
			require.Len(t, reqs, 2)
			require.Equal(t, string(reqs[0].body), string(reqs[1].body), "the second request repeats the first")

			want := fixtureJSON(t, "langchaingo/"+tt.request)
			recordedMarks := prefixMarks(t, want)
			for _, m := range recordedMarks {
				if m["ttl"] == "5m" {
					delete(m, "ttl")
				}
			}
			require.NotEmpty(t, recordedMarks)
			wantMarks := recordedMarks
			if tt.marks != nil {
				wantMarks = tt.marks
			}
			require.Equal(t, wantMarks, prefixMarks(t, reqs[0].raw(t)), "cache_control on the system prompt and tools")
			checkBreakpoints(t, reqs[0].body)

			got := reqs[0].json(t)
			stripCacheControl(want)
			for _, k := range []string{"model", "system", "messages", "tools", "max_tokens"} {
				require.JSONEq(t, jsonOf(t, want[k]), jsonOf(t, got[k]), "request field %q", k)
			}
		})
	}
}

// prefixMarks returns the cache_control values of the system blocks and
// tools of a decoded request body, by path ("system[0]", "tools[1]").
func prefixMarks(t *testing.T, body map[string]any) map[string]map[string]any {
	t.Helper()
	marks := map[string]map[string]any{}
	for _, k := range []string{"system", "tools"} {
		list, _ := body[k].([]any)
		for i, e := range list {
			b, ok := e.(map[string]any)
			require.True(t, ok, "%s[%d]", k, i)
			if cc, ok := b["cache_control"].(map[string]any); ok {
				marks[fmt.Sprintf("%s[%d]", k, i)] = cc
			}
		}
	}
	return marks
}
