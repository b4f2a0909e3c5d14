package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay more recorded Responses API answers
// (vercel/ai fixtures, see testdata/responses/README.md): server-side
// image generation, custom and apply_patch calls streamed, a forced call
// of o3, a programmatic call, gpt-6-sol with reasoning "none", a stream
// that holds several responses one after the other, and error bodies.

// The encrypted content and summary of the first response of
// reasoning-encrypted-multi-response-stream.sse (its response.completed).
const (
	multiSummary   = "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product."
	multiSigPrefix = "gAAAAABpPDIVYBwu2ljdVyeU"
	multiSigSuffix = "O77p3N5iD1gzQ=="
	multiSigLen    = 1060
)

// TestRecordedResponsesMore replays each recording as it was recorded,
// streamed or not, and checks every block, the usage, the finish and the
// text handed to OnText.
func TestRecordedResponsesMore(t *testing.T) {
	t.Parallel()
	cases := []recordedCase{
		{
			// A reasoning item, an image_generation_call (left out) with a
			// partial image event, then a message whose text is empty.
			// The reasoning before the image_generation_call is not kept.
			name: "image generation streamed", file: "image-generation-stream.sse", stream: true,
			usage:  agentrt.Usage{InputTokens: 2941, OutputTokens: 1249, ReasoningTokens: 1024, CacheReadTokens: 1920},
			finish: agentrt.FinishStop, model: "gpt-5-2025-08-07",
		},
		{
			// custom_tool_call_input.delta events are not text.
			name: "custom text tool streamed", file: "custom-text-tool-stream.sse", stream: true,
			usage: agentrt.Usage{InputTokens: 93, OutputTokens: 51}, finish: agentrt.FinishStop, model: "gpt-5.2-codex",
		},
		{
			name: "apply_patch delete streamed", file: "apply-patch-delete-stream.sse", stream: true,
			usage: agentrt.Usage{InputTokens: 24}, finish: agentrt.FinishStop, model: "gpt-5.1-2025-11-13",
		},
		{
			// A body without id, created_at or tools.
			name: "answer after a web search, store false", file: "web-search-replay-store-false.json",
			blocks: []wantBlock{text("I have noted the prior search for the mayor of Paris.")},
			usage:  agentrt.Usage{InputTokens: 36, OutputTokens: 13}, finish: agentrt.FinishStop, model: "gpt-4.1-mini-2025-04-14",
		},
		{
			name: "reasoning none, phase final_answer", file: "reasoning-none-sampling.json",
			blocks: []wantBlock{text("ok")},
			usage:  agentrt.Usage{InputTokens: 13, OutputTokens: 5}, finish: agentrt.FinishStop, model: "gpt-6-sol",
		},
		{
			name: "o3 forced call", file: "o3-forced-function-call.json",
			blocks: []wantBlock{
				withID(thinking(""), "rs_08c7eac45286fefb006a5f41bc7b8881a3a8cc432451e96393"),
				toolUse("call_2mhz5FtwkZnzXQkTOMtYZpZH", "semantic_scholar_search", `{"query":"machine learning","limit":10,"offset":0,"year":0}`),
			},
			usage: agentrt.Usage{InputTokens: 114, OutputTokens: 88}, finish: agentrt.FinishToolUse, model: "o3-2025-04-16",
		},
		{
			// A call made by a program, status in_progress, usage all 0.
			name: "programmatic call only", file: "programmatic-tool-call-2.json",
			blocks: []wantBlock{toolUse("call_IYnPSr6i8TyBPs1H9U539pUP", "getDemand", `{"sku":"sku_123"}`)},
			finish: agentrt.FinishToolUse, model: "gpt-5.6-sol",
		},
		{
			// Four responses in one stream: the first one is the answer,
			// not the last (text only) nor a mix of them.
			name: "several responses in one stream", file: "reasoning-encrypted-multi-response-stream.sse", stream: true,
			blocks: []wantBlock{
				withID(thinking(multiSummary), "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"),
				toolUse("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator", `{"a":12,"b":7,"op":"add"}`),
			},
			usage: agentrt.Usage{InputTokens: 134, OutputTokens: 28}, finish: agentrt.FinishToolUse, model: "gpt-5.1-codex-max",
		},
	}
	replayCases(t, cases, rfixture, responsesAPI)
}

// A stream is read up to its first response.completed: the reasoning of
// the first response keeps the encrypted content of that event, no text
// of the later responses reaches OnText, and the follow-up request sends
// the reasoning, the call and its output back.
func TestRecordedResponsesStreamEndsAtCompleted(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: rfixture(t, "reasoning-encrypted-multi-response-stream.sse"), sse: true},
		reply{body: rfixture(t, "web-search-replay-store-false.json")})
	p := srv.responses(nil)
	var streamed strings.Builder
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Compute (12+7)*3*10.")},
		OnText:   func(s string) { streamed.WriteString(s) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Empty(t, streamed.String())
	require.Len(t, first.Message.Blocks, 2)
	sig := string(first.Message.Blocks[0].Signature)
	require.True(t, strings.HasPrefix(sig, multiSigPrefix), "signature %.30s…", sig)
	require.True(t, strings.HasSuffix(sig, multiSigSuffix), "signature …%s", sig[max(0, len(sig)-20):])
	require.Len(t, sig, multiSigLen)

	req.OnText = nil
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "19", false))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	input := srv.request(1).Body["input"].([]any)
	require.Len(t, input, 4)
	reasoning := input[1].(map[string]any)
	require.Equal(t, "reasoning", reasoning["type"])
	require.Equal(t, "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9", reasoning["id"])
	require.Equal(t, sig, reasoning["encrypted_content"])
	require.Equal(t, []any{map[string]any{"type": "summary_text", "text": multiSummary}}, reasoning["summary"])
	jsonEq(t, `{"type":"function_call","call_id":"call_AB6AaRZ1FYZB2RwS6A5vbdqn","name":"calculator","arguments":"{\"a\":12,\"b\":7,\"op\":\"add\"}"}`, withoutCallIDs(t, input[2:3])[0])
	jsonEq(t, `{"type":"function_call_output","call_id":"call_AB6AaRZ1FYZB2RwS6A5vbdqn","output":"19"}`, input[3])
}

// After answers with server-side or custom items, the next request holds
// only items the API takes without stored responses: messages, reasoning
// with its encrypted content, function calls and their outputs.
func TestRecordedResponsesMoreFollowUp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		stream bool
		types  []string // the item types of the follow-up input
	}{
		{"image-generation-stream.sse", true, []string{"message", "message"}},
		{"custom-text-tool-stream.sse", true, []string{"message", "message"}},
		{"apply-patch-delete-stream.sse", true, []string{"message", "message"}},
		{"o3-forced-function-call.json", false, []string{"message", "reasoning", "function_call", "function_call_output"}},
		{"programmatic-tool-call-2.json", false, []string{"message", "function_call", "function_call_output"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: rfixture(t, c.file), sse: c.stream}, reply{body: rfixture(t, "web-search-replay-store-false.json")})
			p := srv.responses(nil)
			req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
			if c.stream {
				req.OnText = func(string) {}
			}
			first, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			req.OnText = nil // the second reply is a JSON body
			req.Messages = append(req.Messages, first.Message)
			if first.Finish == agentrt.FinishToolUse {
				for _, b := range first.Message.Blocks {
					if b.Type == agentrt.BlockToolUse {
						req.Messages = append(req.Messages, agentrt.NewToolMessage(b.ID, "done", false))
					}
				}
			} else {
				req.Messages = append(req.Messages, agentrt.NewUserMessage("and now?"))
			}
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			body := srv.request(1).Body
			require.Equal(t, false, body["store"])
			var types []string
			for _, it := range body["input"].([]any) {
				item := it.(map[string]any)
				typ, _ := item["type"].(string)
				if typ == "" {
					typ = "message" // an easy input message has a role and no type
					require.Contains(t, []any{"user", "assistant", "developer"}, item["role"])
				}
				if typ == "reasoning" {
					require.NotEmpty(t, item["encrypted_content"], "reasoning without encrypted content: %v", item)
				}
				types = append(types, typ)
			}
			require.Equal(t, c.types, types)
		})
	}
}

// TestRecordedResponsesMoreErrors replays the remaining recorded error
// bodies, served with 400 as the API documents them.
func TestRecordedResponsesMoreErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file    string
		code    string
		message string
	}{
		{"error-400-input-must-be-items.json", "invalid_request", "Invalid request body: [INVALID_ARGUMENT] input must be string or input items"},
		{"error-400-shell-output-without-call.json", "invalid_request_error", "No tool call found for shell call output with call_id call_Mh54tZUuj5gccgizm3BBx288."},
		{"error-400-tool-choice-not-found.json", "invalid_request_error", "Tool choice 'web_search' not found in 'tools' parameter."},
		{"error-400-missing-arguments.json", "missing_required_parameter", "Missing required parameter: 'input[0].arguments'."},
		{"error-400-output-without-call.json", "invalid_request_error", "No tool call found for function call output with call_id call_SjdIRQnfceiXp0D5eZCcjlxW."},
		{"error-400-duplicate-mcp-item.json", "invalid_request_error", "Duplicate item found with id mcpr_022444f7f0878ab8006a766d20b08881a290edfa9c9943f2ae. Remove duplicate items from your input and try again."},
		{"error-400-missing-namespace.json", "invalid_request_error", "Missing namespace for function_call 'create_widget'. It does not exist in the default namespace. Round-trip the model's function_call item with its namespace field included."},
		{"error-400-output-schema.json", "invalid_value", "Invalid function_call_output.output: expected a JSON string because the function declares output_schema."},
		{"error-400-duplicate-tool-search-item.json", "invalid_request_error", "Duplicate item found with id tsc_077457e674332594006a606a565ac081a090a3f60cd0d63c21. Remove duplicate items from your input and try again."},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{status: 400, body: rfixture(t, c.file)})
			for _, stream := range []bool{false, true} {
				req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
				if stream {
					req.OnText = func(string) { t.Error("no text") }
				}
				_, err := srv.responses(&openai.ResponsesOptions{MaxRetries: -1}).Plan(context.Background(), req)
				var pe *agentrt.ProviderError
				require.True(t, errors.As(err, &pe), "%T: %v", err, err)
				require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
				require.Equal(t, 400, pe.StatusCode)
				require.Equal(t, c.code, pe.Code)
				require.Equal(t, c.message, pe.Message)
			}
			require.Equal(t, 2, srv.count())
		})
	}
}
