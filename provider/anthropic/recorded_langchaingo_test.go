package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
	use := func(id, name, input string) agentrt.Block {
		return agentrt.ToolUseBlock(id, name, json.RawMessage(input))
	}
	const sonnet = "claude-sonnet-4-5-20250929"
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
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			file := "langchaingo/" + tt.file
			stream := strings.HasSuffix(tt.file, ".sse")
			rep := jsonReply(fixture(t, file))
			if stream {
				rep = sseReply(fixture(t, file))
			}
			r := newReplay(t, rep, jsonReply(fixture(t, "text.json")))
			p := r.provider("claude-sonnet-4-5", nil)
			msgs := []agentrt.Message{agentrt.NewUserMessage("hi")}
			req := &agentrt.ModelRequest{Messages: msgs}
			var deltas strings.Builder
			if stream {
				req.OnText = func(d string) { deltas.WriteString(d) }
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)

			want := agentrt.NewAssistantMessage(tt.blocks(t, file)...)
			require.Equal(t, want, resp.Message)
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, tt.finish, resp.Finish)
			require.Equal(t, tt.model, resp.Model)
			if stream {
				require.Equal(t, textOf(want), deltas.String(), "OnText got the text, and only it")
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
			_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
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
	then func(resp *agentrt.ModelResponse) []agentrt.Message
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			replies := make([]reply, len(tt.turns))
			for i, turn := range tt.turns {
				if strings.HasSuffix(turn.reply, ".sse") {
					replies[i] = sseReply(fixture(t, "langchaingo/"+turn.reply))
				} else {
					replies[i] = jsonReply(fixture(t, "langchaingo/"+turn.reply))
				}
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

// The recorded structured-output call: the adapter sends the schema the
// API accepted (additionalProperties false added by the SDK's
// transformation) as output_config.format, and the JSON answer is text.
func TestLangchaingoStructuredOutput(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "langchaingo/structured-output-object.response.json")))
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, NoCache: true})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages:       []agentrt.Message{agentrt.NewUserMessage("What is the capital of France?")},
		MaxTokens:      256,
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"country":{"type":"string"},"capital":{"type":"string"}},"required":["country","capital"]}`),
	})
	require.NoError(t, err)
	require.Equal(t, `{"country":"France","capital":"Paris"}`, resp.Message.Text())
	require.Equal(t, agentrt.Usage{InputTokens: 176, OutputTokens: 12}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	got, want := r.only().raw(t), fixtureJSON(t, "langchaingo/structured-output-object.request.json")
	require.JSONEq(t, jsonOf(t, want), jsonOf(t, got), "with NoCache, the whole body is the recorded one")
}
