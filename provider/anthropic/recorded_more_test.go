package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of further recordings (vercel/ai and one fantasy cassette, see
// testdata/README.md): MCP and code execution streamed, server tools
// called by code execution, web fetch failing, tool search before and after
// a client call, context management, the memory tool, a turn resumed with
// its whole content in message_start, and Claude on Vertex AI filling a
// forced tool. Each is decoded as the runtime sees it; the server tool
// blocks (server_tool_use, *_tool_result, mcp_*) are left out, and the
// text, calls, usage, finish reason and model must come out exactly.
func TestRecordedShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file   string // in testdata; a .sse file is streamed
		blocks func(t *testing.T) []agentrt.Block
		deltas []string // the text given to OnText, for a stream
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			// mcp_tool_use (its input streamed) and mcp_tool_result, then
			// text; message_delta's input_tokens (1250) replace 589.
			file: "mcp-tool-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The echo tool responded back with: **hello world**\n\nIt simply echoed back the exact message that was sent to it.")}
			},
			deltas: []string{"The echo tool responde", "d back with: **hello world**\n\nIt simply echoed back", " the exact message that was sent to it."},
			usage:  agentrt.Usage{InputTokens: 1250, OutputTokens: 83}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// code_execution runs web_fetch: a server_tool_use whose whole
			// input is in content_block_start (caller code_execution), a
			// web_fetch_tool_result and a code_execution_tool_result, then
			// text; message_delta carries the container.
			file: "code-execution-web-fetch-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The page at **example.com** is a simple placeholder page explaining that the domain " +
					"is reserved for use in illustrative documentation examples and does not require prior permission to reference.")}
			},
			usage: agentrt.Usage{InputTokens: 7172, OutputTokens: 144}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-6",
		},
		{
			// message_start says 3057 tokens written to the cache;
			// message_delta's counts (6 + 6267 read + 3326 written) replace
			// them.
			file: "code-execution-cache-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The sum of the squares of the integers from 1 to 12 is **650**.")}
			},
			deltas: []string{"The", " sum of the squares of the integers from 1 to 12 is **650**."},
			usage: agentrt.Usage{
				InputTokens: 6 + 6267 + 3326, OutputTokens: 198,
				CacheReadTokens: 6267, CacheWriteTokens: 3326,
			},
			finish: agentrt.FinishStop, model: "claude-sonnet-5",
		},
		{
			// context_management in message_delta; the text starts with
			// blank lines, which are kept.
			file: "context-management-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("\n\nHere's a comparison of the weather in both cities:\n\n" +
					"**San Francisco:**\n- Temperature: 72°F\n- Condition: Sunny\n\n**New York:**\n- Temperature: 65°F\n- Condition: Cloudy\n\n" +
					"**Summary:**\nSan Francisco is warmer than New York by 7 degrees (72°F vs 65°F) and has better weather conditions " +
					"with sunny skies, while New York is experiencing cloudy conditions. If you're looking for warm and sunny weather, " +
					"San Francisco is the better choice right now.")}
			},
			usage: agentrt.Usage{InputTokens: 859, OutputTokens: 122}, finish: agentrt.FinishStop,
			model: "claude-haiku-4-5-20251001",
		},
		{
			// A client call, then a tool_search_tool_bm25 server call after
			// it, in the same message: the client call is kept whole.
			file: "tool-call-then-server-tool-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll help you with this task. Let me start by reading the note tree to see the current structure, and then search for the right tools to add a bullet point."),
					use("toolu_01U8pzAHj2vNdPCA2Kf8JjeN", "readNoteTree", `{"noteId":"d10aa585-982b-4bd9-984e-420f9b3717f7"}`),
				}
			},
			usage: agentrt.Usage{InputTokens: 879, OutputTokens: 177}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// A turn resumed while code execution calls a client tool: the
			// whole message, tool_use (with a caller) and stop reason
			// included, is in message_start; then only message_stop.
			file: "message-start-tool-call-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_015dGLMbwBKv1ZRQr6KdJzeH", "rollDie", `{"player":"player2"}`)}
			},
			finish: agentrt.FinishToolUse, model: "claude-sonnet-4-5-20250929",
		},
		{
			// Claude on Vertex AI (streamRawPredict) filling a forced tool:
			// the nested input arrives in 28 input_json_delta events, with
			// Anthropic's whitespace padding after the JSON.
			file: "fantasy/vertex-claude-3-7-sonnet-object-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_vrtx_01TpniKAvXfPprSuYGgYUUSx", "Book",
					`{"title":"The Lord of the Rings","author":{"name":"J.R.R. Tolkien","nationality":"British"},"genres":["Fantasy","Adventure","Epic"],"published_year":1954}`)}
			},
			usage: agentrt.Usage{InputTokens: 548, OutputTokens: 119}, finish: agentrt.FinishToolUse,
			model: "claude-3-7-sonnet-20250219",
		},
		{
			// code_execution calls web_search three times: server_tool_use
			// and web_search_tool_result blocks with callers, an
			// encrypted_code_execution_result, then text.
			file: "server-tools-called-by-code.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The three searches completed.")}
			},
			usage: agentrt.Usage{InputTokens: 100, OutputTokens: 100}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-6",
		},
		{
			// text, a web_fetch server call, its web_fetch_tool_result_error,
			// text: two text blocks.
			file: "web-fetch-error-result.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll fetch the PDF document from the URL you provided to see what it says about AI."),
					agentrt.TextBlock(jsonContent(t, "web-fetch-error-result.json", 3, "text")),
				}
			},
			usage: agentrt.Usage{InputTokens: 1902, OutputTokens: 214}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-20250514",
		},
		{
			// A tool_search_tool_regex server call, then a client call with
			// input {}: stop_reason tool_use.
			file: "server-tool-then-tool-call.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_01NzvD554s3u5Bv4HX1yLXZK", "continue_tool", `{}`)}
			},
			usage: agentrt.Usage{InputTokens: 843, OutputTokens: 81}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-5-5",
		},
		{
			// The next answer starts with the tool_search_tool_result (an
			// error) of the server call above.
			file: "server-tool-result-then-text.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock(jsonContent(t, "server-tool-result-then-text.json", 1, "text"))}
			},
			usage: agentrt.Usage{InputTokens: 1014, OutputTokens: 115}, finish: agentrt.FinishStop,
			model: "claude-sonnet-5-5",
		},
		{
			// The memory tool is a client tool; context_management at the
			// top level.
			file: "memory-tool-call.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{use("toolu_01TvNvpwszD4hKeudmbfyWiV", "memory", `{"command":"view","path":"/memories"}`)}
			},
			usage: agentrt.Usage{InputTokens: 1614, OutputTokens: 69}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// output_tokens_details with thinking_tokens 0, stop_details
			// and inference_geo.
			file: "text-thinking-tokens-zero.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("OK")}
			},
			usage: agentrt.Usage{InputTokens: 13, OutputTokens: 4}, finish: agentrt.FinishStop,
			model: "claude-opus-4-8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			stream := strings.HasSuffix(tt.file, ".sse")
			r := newReplay(t, fileReply(t, tt.file))
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			resp, deltas := planStreamed(t, r.provider("claude-sonnet-4-5", nil), req, stream)

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
				if tt.deltas != nil {
					require.Equal(t, tt.deltas, deltas)
				}
			}
		})
	}
}

// The server call that came before the client call is not sent back: the
// follow-up's assistant turn is the client call alone, followed by its
// result.
func TestRecordedServerCallNotResent(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		jsonReply(fixture(t, "server-tool-then-tool-call.json")),
		jsonReply(fixture(t, "server-tool-result-then-text.json")))
	p := r.provider("claude-sonnet-5-5", nil)
	msgs := []agentrt.Message{agentrt.NewUserMessage("Search with the pattern \"[\", then call continue_tool.")}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	msgs = append(msgs, resp.Message, agentrt.NewToolMessage(uses[0].ID, `{"continued":true}`, false))
	resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(resp.Message.Text(), "I made both calls."))

	reqs := r.requests()
	require.Len(t, reqs, 2)
	require.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Search with the pattern \"[\", then call continue_tool."}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01NzvD554s3u5Bv4HX1yLXZK","name":"continue_tool","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01NzvD554s3u5Bv4HX1yLXZK","content":[{"type":"text","text":"{\"continued\":true}"}]}]}
	]`, jsonOf(t, reqs[1].json(t)["messages"]))
}

// Recorded HTTP 400 bodies about tool blocks (their status is not stored;
// vercel/ai's tests give 400): a typed invalid-request error with the
// API's type and message.
func TestRecordedToolBlockErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ file, msg string }{
		{
			file: "error-400-server-tool-result.response.json",
			msg: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_issue_17366_invalid. " +
				"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		},
		{
			file: "error-400-tool-use-without-result.response.json",
			msg: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_issue8112_custom. " +
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		},
		{
			file: "error-400-tool-reference.response.json",
			msg:  "Tool reference 'lookup_documents' not found in available tools",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, errorReply(400, string(fixture(t, tt.file))))
			resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
				OnText:   func(string) {},
			})
			require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
			require.Nil(t, resp)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, 400, pe.StatusCode)
			require.Equal(t, "invalid_request_error", pe.Code)
			require.Equal(t, tt.msg, pe.Message)
			require.Len(t, r.requests(), 1, "not retried")
		})
	}
}
