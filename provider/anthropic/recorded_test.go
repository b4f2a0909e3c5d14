package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of more recordings from vercel/ai (see testdata/README.md, which
// also names the few streams written there rather than recorded):
// server tools (web fetch, code execution, tool search, MCP) mixed with
// client tool calls, compaction, thinking with its text or omitted,
// tool_use blocks with a "caller", and message_delta counts that replace
// those of message_start. Each is decoded as the runtime sees it: text,
// tool calls, thinking with its signature, usage and finish reason. The
// blocks the runtime has no type for (server_tool_use, *_tool_result,
// mcp_tool_use, compaction) are left out of the message.

func TestMoreRecordings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file   string // in testdata; a .sse file is streamed
		blocks func(t *testing.T) []agentrt.Block
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			// message_delta's input_tokens (61) replaces message_start's (43).
			file: "message-delta-input-tokens-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("pong")}
			},
			usage: agentrt.Usage{InputTokens: 61, OutputTokens: 2}, finish: agentrt.FinishStop,
			model: "claude-opus-4-5-20251101",
		},
		{
			file: "text-emoji-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("Hi! 👋 How can I help you today?")}
			},
			usage: agentrt.Usage{InputTokens: 10, OutputTokens: 16}, finish: agentrt.FinishStop,
			model: "claude-haiku-4-5-20251001",
		},
		{
			file: "tool-call-caller-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("Let me check."),
					agentrt.ToolUseBlock("toolu_01Ni1uw4HXYxUhc4iFMqx7yY", "get_weather", json.RawMessage(`{"city":"San Francisco"}`)),
				}
			},
			usage: agentrt.Usage{InputTokens: 624, OutputTokens: 59}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// web_fetch (a server tool) fails, then a client tool is
			// called with no input; Anthropic's whitespace padding after
			// the data JSON is kept.
			file: "server-tool-then-tool-call-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll follow these steps in order.\n\nStep 1: Calling web_fetch on https://httpbin.org/status/500"),
					agentrt.TextBlock("Step 2: web_fetch has returned (with an error, but it has completed).\n\nStep 3: Now calling display_products"),
					agentrt.ToolUseBlock("toolu_01FUuDcCDweLziH8QvQFQLtV", "display_products", json.RawMessage(`{}`)),
				}
			},
			usage: agentrt.Usage{InputTokens: 2509, OutputTokens: 158}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// Omitted thinking (a signature only), two bash_code_execution
			// calls and their results, then text. message_delta's cache
			// counts replace message_start's.
			file: "code-execution-stream.sse",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking("", streamSignature(t, "code-execution-stream.sse"), false),
					agentrt.TextBlock("The sum of the squares of the integers from 1 to 12 is **650**."),
				}
			},
			usage: agentrt.Usage{
				InputTokens: 6 + 9429 + 452, OutputTokens: 383, ReasoningTokens: 182,
				CacheReadTokens: 9429, CacheWriteTokens: 452,
			},
			finish: agentrt.FinishStop, model: "claude-sonnet-5",
		},
		{
			file: "tool-search-then-tool-call-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("Great! I found a weather tool. Let me get the current weather data for San Francisco."),
					agentrt.ToolUseBlock("toolu_01UmPwkecewaEpMupy2ywk8b", "get_temp_data", json.RawMessage(`{"location":"San Francisco, CA"}`)),
				}
			},
			usage: agentrt.Usage{InputTokens: 1681, OutputTokens: 163}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			// The whole message, stop reason included, in message_start.
			file: "message-start-content-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.ToolUseBlock("toolu_followup", "lookup_customer", json.RawMessage(`{"id":"customer_123"}`)),
				}
			},
			finish: agentrt.FinishToolUse, model: "claude-sonnet-4-6",
		},
		{
			// A second message_start for the same message is ignored: the
			// first one's counts stand.
			file: "duplicate-message-start-stream.sse",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("ok")}
			},
			usage: agentrt.Usage{InputTokens: 10, OutputTokens: 2}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-20250514",
		},
		{
			file: "mcp-tool.json",
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock("The echo tool responded back with: **\"hello world\"**\n\nAs expected, it simply echoes back the exact message that was sent to it!")}
			},
			usage: agentrt.Usage{InputTokens: 1250, OutputTokens: 88}, finish: agentrt.FinishStop,
			model: "claude-sonnet-4-5-20250929",
		},
		{
			file: "compaction.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{agentrt.TextBlock(jsonContent(t, "compaction.json", 1, "text"))}
			},
			// The top level (682 in, 1320 out) plus the compaction
			// iteration (60385 in, 592 out), which it leaves out.
			usage: agentrt.Usage{InputTokens: 682 + 60385, OutputTokens: 1320 + 592}, finish: agentrt.FinishStop,
			model: "claude-opus-4-6",
		},
		{
			file: "thinking-tool-call-no-args.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking("The user wants me to call checkSandboxErrors immediately.", jsonContent(t, "thinking-tool-call-no-args.json", 0, "signature"), false),
					agentrt.ToolUseBlock("toolu_017R7ACrx7NF7sLDDtvdQ1u9", "checkSandboxErrors", json.RawMessage(`{}`)),
				}
			},
			usage: agentrt.Usage{InputTokens: 599, OutputTokens: 59, ReasoningTokens: 18}, finish: agentrt.FinishToolUse,
			model: "claude-sonnet-4-6",
		},
		{
			file: "thinking-omitted-text.json",
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking("", jsonContent(t, "thinking-omitted-text.json", 0, "signature"), false),
					agentrt.TextBlock("The document lookup tool returned Apple's net sales for fiscal year 2025 as **$416.2 billion**.\n\nThe result was just that one figure. It didn't break revenue down by product or region, compare it with earlier years or name the source document."),
				}
			},
			usage: agentrt.Usage{InputTokens: 972, OutputTokens: 94, ReasoningTokens: 17}, finish: agentrt.FinishStop,
			model: "claude-opus-5-5",
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
			assert.Equal(t, want, resp.Message)
			for _, b := range resp.Message.Blocks {
				if b.Type == agentrt.BlockThinking {
					assert.NotEmpty(t, b.Signature, "a thinking block goes back with its signature")
				}
			}
			assert.Equal(t, tt.usage, resp.Usage)
			assert.Equal(t, tt.finish, resp.Finish)
			assert.Equal(t, tt.model, resp.Model)
			if stream {
				assert.Equal(t, textOf(want), strings.Join(deltas, ""), "OnText got the text, and only it")
			}
		})
	}
}

// A message_start for another message in the middle of the first one (a
// spliced stream) is refused: neither message is complete.
func TestSplicedMessageStart(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "spliced-message-start-stream.sse")))
	resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(string) {},
	})
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	assert.Nil(t, resp)
	assert.Contains(t, err.Error(), "second message_start")
}

// Text that content_block_start already carries reaches OnText too
// (written here: the recordings start text blocks empty).
func TestStreamTextInBlockStart(t *testing.T) {
	t.Parallel()
	body := bytes.Replace(fixture(t, "text-emoji-stream.sse"),
		[]byte(`"content_block":{"type":"text","text":""}`), []byte(`"content_block":{"type":"text","text":"Well. "}`), 1)
	require.Contains(t, string(body), "Well. ")
	var deltas []string
	r := newReplay(t, sseReply(body))
	resp, err := r.provider("claude-haiku-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"Well. ", "Hi!", " ", "👋 How can I help", " you today?"}, deltas)
	assert.Equal(t, "Well. Hi! 👋 How can I help you today?", resp.Message.Text())
}

// The blocks of server tools are not sent back: the next request, with
// the result of the client tool, holds the assistant's text and tool_use
// only, which the API accepts.
func TestServerToolBlocksNotResent(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		sseReply(fixture(t, "server-tool-then-tool-call-stream.sse")),
		jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-5", nil)
	msgs := []agentrt.Message{agentrt.NewUserMessage("Fetch, then display.")}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, OnText: func(string) {}})
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	msgs = append(msgs, resp.Message, agentrt.Message{Role: agentrt.RoleTool, ToolUseID: uses[0].ID, Content: "shown"})
	_, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)

	reqs := r.requests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Fetch, then display."}]},
		{"role":"assistant","content":[
			{"type":"text","text":"I'll follow these steps in order.\n\nStep 1: Calling web_fetch on https://httpbin.org/status/500"},
			{"type":"text","text":"Step 2: web_fetch has returned (with an error, but it has completed).\n\nStep 3: Now calling display_products"},
			{"type":"tool_use","id":"toolu_01FUuDcCDweLziH8QvQFQLtV","name":"display_products","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01FUuDcCDweLziH8QvQFQLtV","content":[{"type":"text","text":"shown"}]}]}
	]`, jsonOf(t, reqs[1].json(t)["messages"]))
}

// Recorded error bodies (their status is not stored; both are HTTP 400
// invalid_request_error), and one of them sent with HTTP 200, as a proxy
// that rewrites the status would.
func TestMoreRecordedErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, msg string
		status    int
	}{
		{
			file: "error-400-orphaned-caller.response.json", status: 400,
			msg: "source tool `srvtoolu_01Issue12504Source` not found for tool use block `toolu_01Issue12504Lookup`",
		},
		{
			file: "error-400-unexpected-tool-use-id.response.json", status: 400,
			msg: "messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks: T1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		},
		{
			file: "error-400-orphaned-caller.response.json", status: 200,
			msg: "source tool `srvtoolu_01Issue12504Source` not found for tool use block `toolu_01Issue12504Lookup`",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+statusName(tt.status), func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, errorReply(tt.status, string(fixture(t, tt.file))))
			resp, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			})
			require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
			assert.NotErrorIs(t, err, agentrt.ErrBadResponse)
			assert.Nil(t, resp)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "invalid_request_error", pe.Code)
			assert.Equal(t, tt.msg, pe.Message)
			if tt.status >= 400 {
				assert.Equal(t, tt.status, pe.StatusCode)
			} else {
				assert.Zero(t, pe.StatusCode, "no error status was sent")
			}
		})
	}
}

func statusName(status int) string {
	if status == 200 {
		return "HTTP 200"
	}
	return "HTTP 4xx"
}

// textOf returns the text blocks of m, joined.
func textOf(m agentrt.Message) string {
	var sb strings.Builder
	for _, b := range m.Blocks {
		if b.Type == agentrt.BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// jsonContent returns field of content[i] of the response body in
// testdata/name.
func jsonContent(t *testing.T, name string, i int, field string) string {
	t.Helper()
	content, ok := fixtureJSON(t, name)["content"].([]any)
	require.True(t, ok && i < len(content), "content[%d] of %s", i, name)
	block, _ := content[i].(map[string]any)
	s, _ := block[field].(string)
	require.NotEmpty(t, s, "content[%d].%s of %s", i, field, name)
	return s
}

// streamSignature returns the signature_delta events of testdata/name,
// joined.
func streamSignature(t *testing.T, name string) string {
	t.Helper()
	var sig strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(fixture(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Delta struct{ Type, Signature string }
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		if ev.Delta.Type == "signature_delta" {
			sig.WriteString(ev.Delta.Signature)
		}
	}
	require.NoError(t, sc.Err())
	require.NotZero(t, sig.Len(), "signature_delta in %s", name)
	return sig.String()
}
