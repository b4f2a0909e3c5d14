package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay more exchanges that pydantic/pydantic-ai
// recorded with api.openai.com: Responses API reasoning with summaries and
// encrypted content across turns, reasoning around a code_interpreter
// call, the refusal of a reasoning item sent without its following item,
// and two bodies of no use to the adapter (logprobs, a reply that is not a
// completion); see testdata/pydanticai/README.md.

// TestRecordedPydanticAIResponses replays Responses API answers.
func TestRecordedPydanticAIResponses(t *testing.T) {
	t.Parallel()
	cases := []recordedCase{
		{
			// Reasoning, a code_interpreter_call, reasoning again, the
			// message. The first reasoning item is followed by the
			// server tool's call, which the adapter does not send back:
			// its summary stays, as a thinking block without id or
			// encrypted content; the second keeps both.
			name: "reasoning around a code_interpreter call", file: pyd("responses-code-interpreter-reasoning.json"),
			blocks: []wantBlock{
				long(thinking("**Calculating expression order**\n\nI need to compute the expression"), "I’ll use my Python tool for this.", 443),
				withID(long(thinking("**Considering numeric results**\n\nI think we need"), "so they have all the information they need!", 401),
					"rs_68cdba63843881a3a9c585d83e4df9f309b7445677780c8f"),
				text("Using standard order of operations (multiplication before addition/subtraction):\n\n65465 - 6544 * 65464 - 6 + 1.02255 = -428,330,955.97745\n\nIf you intended different grouping with parentheses, let me know."),
			},
			usage:  agentrt.Usage{InputTokens: 1493, OutputTokens: 125, ReasoningTokens: 64, CacheReadTokens: 1280},
			finish: agentrt.FinishStop, model: "gpt-5-2025-08-07",
		},
		{
			// A reasoning item with a summary although reasoning_tokens
			// is 0.
			name: "the next turn", file: pyd("responses-code-interpreter-reasoning-followup.response.json"),
			blocks: []wantBlock{
				withID(long(thinking("**Calculating a power of two**\n\n"), "it’s important to communicate it efficiently!", 346),
					"rs_68cdba6c100481a394047de63f3e175009b7445677780c8f"),
				text("256"),
			},
			usage: agentrt.Usage{InputTokens: 793, OutputTokens: 7}, finish: agentrt.FinishStop, model: "gpt-5-2025-08-07",
		},
		{
			name: "reasoning summary then text", file: pyd("responses-reasoning-summary.json"),
			blocks: []wantBlock{
				withID(long(thinking("**Considering answers on meaning**\n\nI want to provide"), "Okay, let's work on creating a balanced answer!", 483),
					"rs_07e4c22b60f9810000697ce6d2ba1481a387699e728e73b334"),
				long(text("People answer this in different ways, and each can be valid:\n\n- Biological:"), "turn that into a clearer sense of purpose.", 1136),
			},
			usage: agentrt.Usage{InputTokens: 13, OutputTokens: 315, ReasoningTokens: 64}, finish: agentrt.FinishStop, model: "gpt-5-2025-08-07",
		},
		{
			// store false, no summary asked: "summary": [], "content": []
			// and the encrypted content; usage with cache_write_tokens 0
			// and tool_usage beside it.
			name: "reasoning with encrypted content only", file: pyd("responses-reasoning-encrypted-only.json"),
			blocks: []wantBlock{
				withID(thinking(""), "rs_0e42c269485e086e016abc35f705ac87d1975abf4ef942f91e"),
				text("It was red."),
			},
			usage: agentrt.Usage{InputTokens: 388, OutputTokens: 142, ReasoningTokens: 128}, finish: agentrt.FinishStop, model: "gpt-5-mini-2025-08-07",
		},
		{
			// include message.output_text.logprobs: the logprobs (some
			// -0.0) beside the text are not mapped.
			name: "text with logprobs", file: pyd("responses-logprobs.json"),
			blocks: []wantBlock{text("The capital of Minas Gerais is Belo Horizonte.")},
			usage:  agentrt.Usage{InputTokens: 25, OutputTokens: 10}, finish: agentrt.FinishStop, model: "gpt-4o-mini-2024-07-18",
		},
	}
	replayCases(t, cases, fixture, responsesAPI)
}

// recordedItems returns the input items of a recorded Responses request.
func recordedItems(t *testing.T, name string) []map[string]any {
	t.Helper()
	var items []map[string]any
	require.NoError(t, json.Unmarshal([]byte(recordedField(t, name, "input")), &items))
	return items
}

// sentItems returns the input items of a request the replay server got.
func sentItems(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	var items []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, body, "input")), &items))
	return items
}

// gpt-5 with the code_interpreter tool and reasoning summaries: reasoning,
// a code_interpreter_call, reasoning, the message. The recorded next turn
// (store left at its default, true) sent all four items back, the call by
// its id with "outputs": null, and the API accepted it. The adapter,
// stateless (store false), sends back what it can send without the call:
// the second reasoning item (id, summary, encrypted content, as
// recorded), then the message's text; the first reasoning item, whose
// following item is the call, is left out.
func TestRecordedPydanticAICodeInterpreterFollowUp(t *testing.T) {
	t.Parallel()
	const (
		first  = "responses-code-interpreter-reasoning.json"
		second = "responses-code-interpreter-reasoning-followup.response.json"
		sent   = "responses-code-interpreter-reasoning-followup.request.json"
	)
	srv := newReplay(t, reply{body: fixture(t, pyd(first))}, reply{body: fixture(t, pyd(second))})
	p := srv.responses(&openai.ResponsesOptions{
		ReasoningEffort: "low", ReasoningSummary: "detailed",
		ServerTools: []responses.ToolUnionParam{{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
			Container: responses.ToolCodeInterpreterContainerUnionParam{
				OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{},
			},
		}}},
	})
	req := &agentrt.ModelRequest{
		Messages:   []agentrt.Message{agentrt.NewUserMessage("what is 65465-6544 * 65464-6+1.02255")},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 3)
	kept := resp.Message.Blocks[0]
	assert.Empty(t, kept.ID, "the reasoning before the call is not sent back")
	assert.Empty(t, kept.Signature)
	assert.Equal(t, "rs_68cdba63843881a3a9c585d83e4df9f309b7445677780c8f", resp.Message.Blocks[1].ID)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("how about 2 to the power of 8?"))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "256", resp.Message.Text())

	rec := recordedItems(t, pyd(sent))
	require.Len(t, rec, 6)
	require.Equal(t, "reasoning", rec[1]["type"])
	require.Equal(t, "code_interpreter_call", rec[2]["type"])
	require.Equal(t, "reasoning", rec[3]["type"])
	require.Equal(t, "message", rec[4]["type"])
	body := srv.request(1).Body
	got := sentItems(t, body)
	require.Len(t, got, 4, "user, the second reasoning item, the text, user: %v", got)
	assert.Equal(t, map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": rec[0]["content"]}}}, got[0])
	assert.Equal(t, rec[3], got[1], "the reasoning item as the API accepted it")
	assert.Equal(t, rec[4], got[2], "the output message, with its id, as the API accepted it")
	assert.Equal(t, map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": rec[5]["content"]}}}, got[3])

	for i := range 2 {
		b := srv.request(i).Body
		assert.JSONEq(t, recordedField(t, pyd(sent), "tools"), field(t, b, "tools"), "request %d", i)
		assert.JSONEq(t, recordedField(t, pyd(sent), "tool_choice"), field(t, b, "tool_choice"), "request %d", i)
		assert.JSONEq(t, recordedField(t, pyd(sent), "reasoning"), field(t, b, "reasoning"), "request %d", i)
		// The recording also asked for code_interpreter_call.outputs,
		// which the adapter does not read.
		assert.JSONEq(t, `["reasoning.encrypted_content"]`, field(t, b, "include"), "request %d", i)
		assert.Equal(t, false, b["store"], "request %d", i)
	}
}

// The recording client changed the text of the answer that followed a
// reasoning item and sent the item with the new text as an assistant
// message without id: the API (store left at true) refused it, HTTP 400,
// "Item 'rs_…' of type 'reasoning' was provided without its required
// following item.", code null. From a session whose assistant text was
// edited after the fact (the text block lost its item id) the adapter
// used to build the same input items; it now leaves the reasoning item
// out, since the item that followed it cannot go back with its id. The
// recorded refusal, served anyway, is an ErrInvalidRequest with the API's
// message, not retried.
func TestRecordedPydanticAIReasoningWithoutFollowingItem(t *testing.T) {
	t.Parallel()
	const refused = "responses-error-400-reasoning-without-following-item.request.json"
	srv := newReplay(t,
		reply{body: fixture(t, pyd("responses-reasoning-summary.json"))},
		reply{status: 400, body: fixture(t, pyd("responses-error-400-reasoning-without-following-item.json"))})
	p := srv.responses(&openai.ResponsesOptions{ReasoningEffort: "low", ReasoningSummary: "detailed", MaxRetries: -1})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("What is the meaning of life?")}}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.Blocks, 2)

	edited := resp.Message
	edited.Blocks = []agentrt.Block{resp.Message.Blocks[0], agentrt.TextBlock("The meaning of life is 42")}
	req.Messages = append(req.Messages, edited, agentrt.NewUserMessage("Anything to add?"))
	_, err = p.Plan(context.Background(), req)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.Equal(t, 400, pe.StatusCode)
	assert.Equal(t, "invalid_request_error", pe.Code, "code null: the type stands for it")
	assert.Equal(t, "Item 'rs_07e4c22b60f9810000697ce6d2ba1481a387699e728e73b334' of type 'reasoning' was provided without its required following item.", pe.Message)
	assert.Zero(t, pe.RetryAfter)
	assert.Equal(t, 2, srv.count(), "not retried")

	// The adapter's input is the refused one without its reasoning item
	// (and with its user messages as lists of input_text parts).
	rec := recordedItems(t, pyd(refused))
	require.Len(t, rec, 4)
	require.Equal(t, "reasoning", rec[1]["type"])
	got := sentItems(t, srv.request(1).Body)
	require.Len(t, got, 3, "user, assistant, user: no reasoning item")
	for gi, ri := range map[int]int{0: 0, 2: 3} {
		assert.Equal(t, []any{map[string]any{"type": "input_text", "text": rec[ri]["content"]}}, got[gi]["content"], "item %d", gi)
		assert.Equal(t, rec[ri]["role"], got[gi]["role"], "item %d", gi)
	}
	assert.Equal(t, rec[2], got[1], "the edited answer, without id")
	assert.JSONEq(t, recordedField(t, pyd(refused), "reasoning"), field(t, srv.request(1).Body, "reasoning"))
}

// A reasoning item with no summary ("summary": [], store false) goes back
// with "summary": [] and its encrypted content, the shape the API accepted
// in the request that the same cassette recorded before this answer
// (interaction 1: such an item, then the output message by its id, the
// image_generation_call between them left out).
func TestRecordedPydanticAIEncryptedOnlyReasoningFollowUp(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("responses-reasoning-encrypted-only.json"))})
	p := srv.responses(nil)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("What color was the circle?")}}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	th := resp.Message.Blocks[0]
	sig := string(th.Signature)
	assert.True(t, strings.HasPrefix(sig, "gAAAAABqvDX4t5a1"), "signature %.20s…", sig)
	assert.True(t, strings.HasSuffix(sig, "ImbQWdgW5"), "signature …%s", sig[max(0, len(sig)-20):])
	assert.Len(t, sig, 1932)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("And its shape?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	got := sentItems(t, srv.request(1).Body)
	require.Len(t, got, 4)
	assert.Equal(t, map[string]any{
		"type": "reasoning", "id": "rs_0e42c269485e086e016abc35f705ac87d1975abf4ef942f91e",
		"summary": []any{}, "encrypted_content": sig,
	}, got[1])
	msg := got[2]
	assert.True(t, strings.HasPrefix(msg["id"].(string), "msg_"), "the message's item id: %v", msg["id"])
	delete(msg, "id")
	assert.Equal(t, map[string]any{"type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": "It was red.", "annotations": []any{}}}}, msg)
}

// pydantic-ai's test of an invalid reply: HTTP 200 with {"x": 42} (the
// body written by the recording project) is a bad response, not an empty
// answer.
func TestRecordedPydanticAIChatInvalidResponse(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: fixture(t, pyd("chat-invalid-response.json"))})
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the capital of France?")},
	})
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	assert.Zero(t, pe.StatusCode)
	assert.Contains(t, pe.Message, "no choices")
}
