package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of the last recordings from vercel/ai (see testdata/README.md):
// thinking under context management, summarized thinking streamed with
// whitespace padding, a tool call with a "caller" and the JSON answer that
// follows its result, a tool input wrapping a union, code execution whose
// server blocks split the text into three blocks, an answer that starts
// with the result of a server call made in the turn before, and a stream
// whose server calls come before any text and that writes to the cache.
// Each answer is decoded as the runtime sees it; then the next request is
// built from it (with a result for each client call, or as the
// continuation of the turn when there is none) and checked against what
// the API refuses.
func TestLastRecordings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file   string // in testdata; a .sse file is streamed
		blocks func(t *testing.T) []agentrt.Block
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			// context_management with no edits applied; thinking, then text.
			file: "thinking-context-management.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking("925 divided by 5 = 185", jsonContent(t, "thinking-context-management.json", 0, "signature"), false),
					agentrt.TextBlock("925 ÷ 5 = 185"),
				}
			},
			usage: agentrt.Usage{InputTokens: 69, OutputTokens: 33}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			file: "tool-call-caller-direct.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_01MhUGx2K4rTe9D6nZxtGURs", "getWeather", `{"location":"Tokyo"}`)}
			},
			usage: agentrt.Usage{InputTokens: 822, OutputTokens: 33}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// The text is a JSON document; it stays text.
			file: "text-json-answer.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock(`{"weather":"Tokyo is sunny, 23 C in Tokyo"}`)}
			},
			usage: agentrt.Usage{InputTokens: 807, OutputTokens: 17}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// "container": null and "diagnostics": null at the top level.
			file: "tool-call-nested-wrapper.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_017tkQJeJzrNWUPk9F1WLWuS", "lookup", `{"__ai_sdk_tool_input":{"action":"lookup","id":"123"}}`)}
			},
			usage: agentrt.Usage{InputTokens: 830, OutputTokens: 54}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-6",
		},
		{
			// text_editor and bash code execution calls and their results
			// between three text blocks; the last text has whitespace
			// inside, which is kept.
			file: "code-execution-text-blocks.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll create a Python script to calculate Fibonacci numbers and then execute it to find the 10th Fibonacci number."),
					agentrt.TextBlock("Now let me execute the script:"),
					agentrt.TextBlock(jsonContent(t, "code-execution-text-blocks.json", 6, "text")),
				}
			},
			usage: agentrt.Usage{InputTokens: 7881, OutputTokens: 608}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// Starts with the tool_search_tool_result of a server call made
			// in the turn before, then text and a client call with nested
			// input.
			file: "server-tool-result-then-tool-call.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("Good! I can see the current note structure has one bulleted list item with the text \"hi\". Now I need to add a new bullet point with \"bye\" after it. Let me use the `executeEditorOperation` tool to insert a new bulleted list item."),
					use("toolu_01Vif37vPguXdx5yxixnpvpM", "executeEditorOperation",
						`{"noteId":"d10aa585-982b-4bd9-984e-420f9b3717f7","operations":[{"op":"insert_node","at":{"type":"path","path":[1]},"type":"bulletedListItem","text":"bye"}]}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 1520, OutputTokens: 203}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// Summarized thinking in four deltas and a signature, then text;
			// whitespace padding inside the data lines and a `{"type": "ping"}`.
			file: "thinking-summarized-stream.sse",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking("I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division "+
						"until I reach a remainder of zero, which gives me 21 as the greatest common divisor.",
						streamSignature(t, "thinking-summarized-stream.sse"), false),
					agentrt.TextBlock("# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1: Divide 1071 by 462\n" +
						"$$1071 = 2 \\times 462 + 147$$\n(since 2 × 462 = 924, and 1071 − 924 = 147)\n\n" +
						"## Step 2: Divide 462 by 147\n$$462 = 3 \\times 147 + 21$$\n(since 3 × 147 = 441, and 462 − 441 = 21)\n\n" +
						"## Step 3: Divide 147 by 21\n$$147 = 7 \\times 21 + 0$$\n(since 7 × 21 = 147, remainder is 0)\n\n" +
						"## Conclusion\nSince the remainder is now 0, the algorithm stops. The last non-zero remainder is **21**.\n\n" +
						"$$\\gcd(1071, 462) = 21$$\n\n**Verification:** \n- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓"),
				}
			},
			usage: agentrt.Usage{InputTokens: 47, OutputTokens: 373, ReasoningTokens: 62}, finish: agentrt.FinishStop,
			model: "claude-sonnet-5",
		},
		{
			file: "text-after-tool-result-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The weather in San Francisco is currently sunny with a temperature of 72°F.")}
			},
			usage: agentrt.Usage{InputTokens: 704, OutputTokens: 20}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// Two bash_code_execution calls and results before any text;
			// message_start writes 3068 tokens to the cache, message_delta
			// says 6 + 6289 read + 3337 written, and thinking_tokens 0.
			file: "code-execution-cache-write-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The sum of the squares of the numbers 1 through 12 is **650**.")}
			},
			usage: agentrt.Usage{
				InputTokens: 6 + 6289 + 3337, OutputTokens: 198,
				CacheReadTokens: 6289, CacheWriteTokens: 3337,
			},
			finish: agentrt.FinishStop, model: "claude-sonnet-5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			stream := strings.HasSuffix(tt.file, ".sse")
			r := newReplay(t, fileReply(t, tt.file), jsonReply(fixture(t, "text.json")))
			p := r.provider("claude-sonnet-4-5", nil)
			msgs := []agentrt.Message{agentrt.NewUserMessage("hi")}
			resp, deltas := planStreamed(t, p, &agentrt.ModelRequest{Messages: msgs}, stream)

			want := agentrt.NewAssistantMessage(tt.blocks(t)...)
			require.Equal(t, want, resp.Message)
			for _, u := range resp.Message.ToolUses() {
				require.True(t, json.Valid(u.Input), "input of %s: %s", u.ID, u.Input)
			}
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, tt.finish, resp.Finish)
			require.Equal(t, tt.model, resp.Model)
			if stream {
				require.Equal(t, textOf(want), strings.Join(deltas, ""), "OnText got the text, and only it")
			}

			// The next request: the answer, then a result for each call.
			msgs = append(msgs, resp.Message)
			for _, u := range resp.Message.ToolUses() {
				msgs = append(msgs, agentrt.NewToolMessage(u.ID, "done", false))
			}
			_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
			require.NoError(t, err)
			reqs := r.requests()
			require.Len(t, reqs, 2)
			sent := checkSendable(t, reqs[1].body)
			require.Len(t, sent, len(msgs)-len(resp.Message.ToolUses())+min(1, len(resp.Message.ToolUses())))
			require.Equal(t, "assistant", sent[1].Role)
		})
	}
}

// The tool call and the JSON answer recorded after its result: the
// follow-up holds the call and its result, as the API accepted them.
func TestLastRecordedToolCallFollowup(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "tool-call-caller-direct.json")), jsonReply(fixture(t, "text-json-answer.json")))
	p := r.provider("claude-sonnet-4-5", nil)
	msgs := []agentrt.Message{agentrt.NewUserMessage("What is the weather in Tokyo?")}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	msgs = append(msgs, resp.Message, agentrt.NewToolMessage(uses[0].ID, "sunny, 23 C", false))
	resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	require.Equal(t, `{"weather":"Tokyo is sunny, 23 C in Tokyo"}`, resp.Message.Text())

	require.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"What is the weather in Tokyo?"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01MhUGx2K4rTe9D6nZxtGURs","name":"getWeather","input":{"location":"Tokyo"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01MhUGx2K4rTe9D6nZxtGURs","content":[{"type":"text","text":"sunny, 23 C"}]}]}
	]`, jsonOf(t, r.requests()[1].json(t)["messages"]))
}

// A turn the API paused (pause_turn) is continued by sending the answer
// back as the last message. The API refuses that message when it ends with
// thinking or with whitespace, so the trailing thinking is left out (and
// the message with it when nothing else is left) and the whitespace at the
// end of its last text is trimmed. The bodies are the recorded summarized
// thinking stream, cut after the thinking block or with "\n\n" added to
// its last text delta, and stopped with pause_turn (edited here).
func TestContinuedTurnEndsWithoutThinkingOrWhitespace(t *testing.T) {
	t.Parallel()
	rec := fixture(t, "thinking-summarized-stream.sse")
	paused := func(body []byte) []byte {
		out := bytes.Replace(body, []byte(`"stop_reason":"end_turn"`), []byte(`"stop_reason":"pause_turn"`), 1)
		require.Contains(t, string(out), "pause_turn")
		return out
	}
	thinkingOnly := append(cut(t, rec, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1"),
		[]byte("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":70}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")...)
	trailingSpace := bytes.Replace(rec, []byte(`22 ✓"}`), []byte(`22 ✓\n\n"}`), 1)
	require.NotEqual(t, rec, trailingSpace)
	sig := streamSignature(t, "thinking-summarized-stream.sse")

	tests := []struct {
		name string
		body []byte
		sent string // the messages of the continuation
	}{
		{
			name: "thinking only",
			body: paused(thinkingOnly),
			sent: `[{"role":"user","content":[{"type":"text","text":"gcd(1071, 462)?"}]}]`,
		},
		{
			name: "text ending with whitespace",
			body: paused(trailingSpace),
			sent: `[{"role":"user","content":[{"type":"text","text":"gcd(1071, 462)?"}]},
				{"role":"assistant","content":[{"type":"thinking","thinking":` + jsonString(t, "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division "+
				"until I reach a remainder of zero, which gives me 21 as the greatest common divisor.") + `,"signature":"` + sig + `"},
				{"type":"text","text":` + jsonString(t, "# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1: Divide 1071 by 462\n"+
				"$$1071 = 2 \\times 462 + 147$$\n(since 2 × 462 = 924, and 1071 − 924 = 147)\n\n"+
				"## Step 2: Divide 462 by 147\n$$462 = 3 \\times 147 + 21$$\n(since 3 × 147 = 441, and 462 − 441 = 21)\n\n"+
				"## Step 3: Divide 147 by 21\n$$147 = 7 \\times 21 + 0$$\n(since 7 × 21 = 147, remainder is 0)\n\n"+
				"## Conclusion\nSince the remainder is now 0, the algorithm stops. The last non-zero remainder is **21**.\n\n"+
				"$$\\gcd(1071, 462) = 21$$\n\n**Verification:** \n- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓") + `}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, sseReply(tt.body), jsonReply(fixture(t, "text.json")))
			p := r.provider("claude-sonnet-5", nil)
			msgs := []agentrt.Message{agentrt.NewUserMessage("gcd(1071, 462)?")}
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, OnText: func(string) {}})
			require.NoError(t, err)
			require.Equal(t, agentrt.FinishOther, resp.Finish)
			require.Equal(t, agentrt.BlockThinking, resp.Message.Blocks[0].Type)
			require.Equal(t, sig, string(resp.Message.Blocks[0].Signature))

			_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: append(msgs, resp.Message)})
			require.NoError(t, err)
			body := r.requests()[1].body
			checkSendable(t, body)
			var sent struct{ Messages json.RawMessage }
			require.NoError(t, json.Unmarshal(body, &sent))
			require.JSONEq(t, tt.sent, stripped(t, sent.Messages))
			if tt.name == "text ending with whitespace" {
				require.True(t, strings.HasSuffix(resp.Message.Text(), "✓\n\n"), "the session keeps the text as it came")
			}
		})
	}
}

// sentMessage is a message of a request body, as the API reads it.
type sentMessage struct {
	Role    string
	Content []struct {
		Type      string
		Text      *string
		Signature string
		ID        string
		ToolUseID string `json:"tool_use_id"`
	}
}

// checkSendable checks a request body for what the API refuses: an empty
// message, roles that do not alternate, a text of whitespace alone, a
// thinking block without its signature, a tool_use without its
// tool_result in the next message (or a tool_result without its tool_use
// in the message before), and a final assistant message ending with
// thinking or whitespace. It returns the messages.
func checkSendable(t *testing.T, body []byte) []sentMessage {
	t.Helper()
	var req struct{ Messages []sentMessage }
	require.NoError(t, json.Unmarshal(body, &req), "request body: %s", body)
	msgs := req.Messages
	require.NotEmpty(t, msgs)
	require.Equal(t, "user", msgs[0].Role, "the first message is the user's")
	for i, m := range msgs {
		require.NotEmpty(t, m.Content, "message %d is empty", i)
		if i > 0 {
			require.NotEqual(t, msgs[i-1].Role, m.Role, "messages %d and %d have one role", i-1, i)
		}
		uses := map[string]bool{}
		for j, b := range m.Content {
			switch b.Type {
			case "text":
				require.NotNil(t, b.Text, "message %d, block %d: text without text", i, j)
				require.NotEmpty(t, strings.TrimSpace(*b.Text), "message %d, block %d: text of whitespace alone", i, j)
			case "thinking":
				require.NotEmpty(t, b.Signature, "message %d, block %d: thinking without a signature", i, j)
			case "tool_use":
				uses[b.ID] = true
			case "tool_result":
				require.Positive(t, i, "tool_result in the first message")
				found := false
				for _, u := range msgs[i-1].Content {
					found = found || u.Type == "tool_use" && u.ID == b.ToolUseID
				}
				require.True(t, found, "message %d: tool_result for %s without its tool_use", i, b.ToolUseID)
			}
		}
		if len(uses) > 0 && i+1 < len(msgs) {
			for _, b := range msgs[i+1].Content {
				if b.Type == "tool_result" {
					delete(uses, b.ToolUseID)
				}
			}
			require.Empty(t, uses, "message %d: tool_use without its tool_result", i)
		}
	}
	if last := msgs[len(msgs)-1]; last.Role == "assistant" {
		b := last.Content[len(last.Content)-1]
		require.NotContains(t, []string{"thinking", "redacted_thinking"}, b.Type, "the final assistant message ends with thinking")
		if b.Type == "text" {
			require.False(t, strings.TrimRightFunc(*b.Text, unicode.IsSpace) != *b.Text, "the final assistant message ends with whitespace")
		}
	}
	return msgs
}

// stripped returns raw JSON without its cache_control keys.
func stripped(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	stripCacheControl(v)
	return jsonOf(t, v)
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	return jsonOf(t, s)
}
