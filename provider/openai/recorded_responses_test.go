package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay more recorded answers of OpenAI's
// Responses API (vercel/ai fixtures, see testdata/responses/README.md):
// the "parallel" wrapper of several calls, multiple text parts and
// messages, phases, encrypted reasoning in streams, items the runtime
// cannot represent (MCP, custom, apply_patch, local shell and client tool
// search calls, a program), and errors.

// TestRecordedResponsesShapes replays each recording as it was recorded,
// streamed or not, and checks every block, the usage and the finish.
func TestRecordedResponsesShapes(t *testing.T) {
	t.Parallel()
	wrapperCalls := []wantBlock{
		toolUse("call_parallel_0", "weather", `{"location":"San Francisco"}`),
		toolUse("call_parallel_1", "cityAttractions", `{"city":"Rome"}`),
	}
	cases := []recordedCase{
		{
			// One call of "parallel" wrapping two calls: two tool_use blocks.
			name: "parallel wrapper", file: "parallel-wrapper.json",
			blocks: wrapperCalls,
			usage:  agentrt.Usage{InputTokens: 34, OutputTokens: 28}, finish: agentrt.FinishToolUse, model: "gpt-5.4",
		},
		{
			// The same streamed; response.completed has no output.
			name: "parallel wrapper streamed", file: "parallel-wrapper-stream.sse", stream: true,
			blocks: wrapperCalls,
			usage:  agentrt.Usage{InputTokens: 34, OutputTokens: 28}, finish: agentrt.FinishToolUse, model: "gpt-5.4",
		},
		{
			name: "two output_text parts", file: "multiple-output-text-parts.json",
			blocks: []wantBlock{text("First. Second.")},
			usage:  agentrt.Usage{InputTokens: 1, OutputTokens: 2}, finish: agentrt.FinishStop, model: "gpt-5-mini",
		},
		{
			// A commentary message, then the final answer, in order.
			name: "phases", file: "phase-commentary.json",
			blocks: []wantBlock{
				withID(thinking("Thinking about the answer..."), "rs_phase_001"),
				text("I'm going to use the web search tool"),
				text("The capital of France is Paris."),
			},
			usage: agentrt.Usage{InputTokens: 50, OutputTokens: 100, ReasoningTokens: 20}, finish: agentrt.FinishStop, model: "gpt-5.3-codex",
		},
		{
			// GitHub Copilot: item ids change from event to event,
			// encrypted_content null, copilot_usage next to the response.
			name: "copilot summary and text streamed", file: "copilot-reasoning-text-stream.sse", stream: true,
			blocks: []wantBlock{
				withID(thinking("**Counting character occurrences**"), "capture-id-70"),
				text("There are **3** letter **“r”**s in **“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**."),
			},
			usage: agentrt.Usage{InputTokens: 19, OutputTokens: 105, ReasoningTokens: 44}, finish: agentrt.FinishStop, model: "gpt-5.3-codex",
		},
		{
			name: "encrypted reasoning and a call streamed", file: "reasoning-encrypted-tool-call-stream.sse", stream: true,
			blocks: []wantBlock{
				withID(thinking(""), "rs_0039ff4ed0aeca1e016ac948b4e4c887d2bbf14d31fdc26ccd"),
				toolUse("call_LUBOONF2cY8HDQdBwiEQ9fk1", "lookupCode", `{}`),
			},
			usage: agentrt.Usage{InputTokens: 55, OutputTokens: 25, ReasoningTokens: 9}, finish: agentrt.FinishToolUse, model: "gpt-5.2-2025-12-11",
		},
		{
			// A function call made by a program item (left out).
			// The reasoning before the program item is not kept.
			name: "programmatic call", file: "programmatic-tool-call.json",
			blocks: []wantBlock{
				toolUse("call_rj6LW6NEyodD5YVKeoexoLNz", "getInventory", `{"sku":"sku_123"}`),
			},
			usage: agentrt.Usage{InputTokens: 631, OutputTokens: 139, ReasoningTokens: 55}, finish: agentrt.FinishToolUse, model: "gpt-5.6-sol",
		},
		{
			// mcp_list_tools, mcp_approval_request and mcp_call are left
			// out, and the reasoning before the approval request with them.
			name: "hosted mcp with an approval", file: "mcp-approval.json",
			blocks: []wantBlock{
				withID(thinking(""), "rs_0b55229f4889c40a00693a0feab6f88195a2841d18c1665b6e"),
				long(text("I ran one search. Here are five top headlines from"), "brief summaries for any of these?", 545),
			},
			usage: agentrt.Usage{InputTokens: 553, OutputTokens: 177, ReasoningTokens: 128}, finish: agentrt.FinishStop, model: "gpt-5-mini-2025-08-07",
		},
		{
			name: "custom tool call", file: "custom-tool-call.json",
			usage: agentrt.Usage{InputTokens: 50, OutputTokens: 20}, finish: agentrt.FinishStop, model: "gpt-5.2-codex",
		},
		{
			name: "apply_patch call", file: "apply-patch-call.json",
			usage: agentrt.Usage{InputTokens: 642, OutputTokens: 67}, finish: agentrt.FinishStop, model: "gpt-5.1-2025-11-13",
		},
		{
			name: "local shell call", file: "local-shell-call.json",
			usage: agentrt.Usage{InputTokens: 407, OutputTokens: 24}, finish: agentrt.FinishStop, model: "gpt-5-codex",
		},
		{
			// The call's arguments are an object, not a string.
			name: "client tool search call", file: "client-tool-search-call.json",
			usage: agentrt.Usage{InputTokens: 65, OutputTokens: 28}, finish: agentrt.FinishStop, model: "gpt-5.4-2026-03-05",
		},
		{
			// tool_usage and cache_write_tokens 0 in the usage.
			name: "text with tool_usage", file: "text-tool-usage.json",
			blocks: []wantBlock{text("OK")},
			usage:  agentrt.Usage{InputTokens: 12, OutputTokens: 2}, finish: agentrt.FinishStop, model: "gpt-4o-mini-2024-07-18",
		},
	}
	replayCases(t, cases, rfixture, responsesAPI)
}

// The encrypted content of a reasoning item is kept as the thinking
// block's Signature (streamed: the one response.completed carries, not
// those of the earlier events) and sent back with the function's output.
func TestRecordedResponsesEncryptedReasoning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		stream bool
		prefix string
		n      int
	}{
		{"reasoning-encrypted-tool-call-stream.sse", true, "gAAAAABqyUi12Hqs", 1572},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: rfixture(t, c.file), sse: c.stream})
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			if c.stream {
				req.OnText = func(string) {}
			}
			p := srv.responses(nil)
			first, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			require.Len(t, first.Message.Blocks, 2)
			sig := string(first.Message.Blocks[0].Signature)
			assert.True(t, strings.HasPrefix(sig, c.prefix), "signature %.20s…", sig)
			assert.Len(t, sig, c.n)

			call := first.Message.Blocks[1]
			req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(call.ID, "42", false))
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			input := srv.request(1).Body["input"].([]any)
			require.Len(t, input, 4)
			item := input[1].(map[string]any)
			assert.Equal(t, "reasoning", item["type"])
			assert.Equal(t, first.Message.Blocks[0].ID, item["id"])
			assert.Equal(t, sig, item["encrypted_content"])
			assert.Equal(t, call.ID, input[2].(map[string]any)["call_id"])
			assert.Equal(t, "function_call_output", input[3].(map[string]any)["type"])
		})
	}
}

// The "parallel" wrapper: kept as it is when the request declares a tool
// of that name; its calls are not chained with previous_response_id (the
// API knows only the wrapper's call id); a recording whose first and last
// events are cut JSON is a clear error, not a partial answer.
func TestRecordedResponsesParallelWrapper(t *testing.T) {
	t.Parallel()
	t.Run("declared tool named parallel", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{body: rfixture(t, "parallel-wrapper.json")})
		resp, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			Tools:    []agentrt.ToolSpec{{Name: "parallel", Description: "Run tools.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		})
		require.NoError(t, err)
		require.Len(t, resp.Message.Blocks, 1)
		assert.Equal(t, "call_parallel", resp.Message.Blocks[0].ID)
		assert.Equal(t, "parallel", resp.Message.Blocks[0].Name)
	})
	t.Run("not chained", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{body: rfixture(t, "parallel-wrapper.json")}, reply{body: rfixture(t, "text-tool-usage.json")})
		p := srv.responses(&openai.ResponsesOptions{PreviousResponseID: true})
		req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
		first, err := p.Plan(context.Background(), req)
		require.NoError(t, err)
		req.Messages = append(req.Messages, first.Message,
			agentrt.NewToolMessage("call_parallel_0", "sunny", false), agentrt.NewToolMessage("call_parallel_1", "Colosseum", false))
		_, err = p.Plan(context.Background(), req)
		require.NoError(t, err)
		body := srv.request(1).Body
		assert.NotContains(t, body, "previous_response_id")
		jsonEq(t, `[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
			{"type":"function_call","call_id":"call_parallel_0","name":"weather","arguments":"{\"location\":\"San Francisco\"}"},
			{"type":"function_call","call_id":"call_parallel_1","name":"cityAttractions","arguments":"{\"city\":\"Rome\"}"},
			{"type":"function_call_output","call_id":"call_parallel_0","output":"sunny"},
			{"type":"function_call_output","call_id":"call_parallel_1","output":"Colosseum"}]`, body["input"])
	})
	t.Run("malformed events", func(t *testing.T) {
		t.Parallel()
		srv := newReplay(t, reply{body: rfixture(t, "parallel-wrapper-malformed-stream.sse"), sse: true})
		_, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, OnText: func(string) {}})
		var pe *agentrt.ProviderError
		require.True(t, errors.As(err, &pe), "%T: %v", err, err)
		assert.ErrorIs(t, err, agentrt.ErrBadResponse)
	})
}

// TestRecordedResponsesErrors replays recorded error bodies (their HTTP
// status is not stored: 400, and 429 for insufficient_quota, as the API
// documents them) and a stream whose only event after response.created
// is response.failed.
func TestRecordedResponsesErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		reply   reply
		kind    error
		status  int
		code    string
		message string
	}{
		{
			name: "unsupported temperature, code null", reply: reply{status: 400, body: rfixture(t, "error-400-unsupported-temperature.json")},
			kind: agentrt.ErrInvalidRequest, status: 400, code: "invalid_request_error",
			message: "Unsupported parameter: 'temperature' is not supported with this model.",
		},
		{
			name: "invalid json schema", reply: reply{status: 400, body: rfixture(t, "error-400-invalid-json-schema.json")},
			kind: agentrt.ErrInvalidRequest, status: 400, code: "invalid_json_schema",
			message: "Invalid schema for response_format 'response': In context=('properties', 'elements', 'items', 'properties', 'shared'), reference to component '#/$defs/Shared' which was not found in the schema.",
		},
		{
			name: "insufficient quota", reply: reply{status: 429, body: rfixture(t, "error-insufficient-quota.json")},
			kind: agentrt.ErrRateLimited, status: 429, code: "insufficient_quota",
			message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
		},
		{
			name: "response.failed in a stream", reply: reply{body: rfixture(t, "error-response-failed-stream.sse"), sse: true},
			kind: agentrt.ErrRateLimited, code: "rate_limit_exceeded",
			message: "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, c.reply)
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			if c.reply.sse {
				req.OnText = func(string) { t.Error("no text") }
			}
			_, err := srv.responses(&openai.ResponsesOptions{MaxRetries: -1}).Plan(context.Background(), req)
			var pe *agentrt.ProviderError
			require.True(t, errors.As(err, &pe), "%T: %v", err, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Equal(t, c.status, pe.StatusCode)
			assert.Equal(t, c.code, pe.Code)
			assert.Equal(t, c.message, pe.Message)
			assert.Equal(t, 1, srv.count())
		})
	}
}
