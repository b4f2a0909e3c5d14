package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// TestResponsesItemIDs checks when the output item ids kept on text and
// tool_use blocks go back: only beside the reasoning items they followed,
// all of which must go back too (the API pairs them by id and refuses an
// item whose reasoning item is missing); never with PreviousResponseID's
// resend, which sends no reasoning, nor from another vendor's blocks.
func TestResponsesItemIDs(t *testing.T) {
	t.Parallel()
	reasoning := agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_1", Signature: []byte("enc"), Provider: "openai-responses"}
	unsendable := agentrt.Block{Type: agentrt.BlockThinking, ID: "rs_0", Text: "no encrypted content", Provider: "openai-responses"}
	text := agentrt.Block{Type: agentrt.BlockText, Text: "Sunny.", Signature: []byte("msg_1"), Provider: "openai-responses"}
	call := agentrt.Block{Type: agentrt.BlockToolUse, ID: "call_1", Name: "weather", Input: json.RawMessage(`{}`), Signature: []byte("fc_1"), Provider: "openai-responses"}
	foreign := agentrt.Block{Type: agentrt.BlockText, Text: "Sunny.", Signature: []byte("gemini-sig"), Provider: "gemini"}
	tests := []struct {
		name   string
		blocks []agentrt.Block
		opts   *openai.ResponsesOptions
		want   string // the assistant's items, as JSON
	}{
		{"with its reasoning", []agentrt.Block{reasoning, text, call}, nil, `[
			{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"},
			{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Sunny.","annotations":[]}]},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{}"}]`},
		// One reasoning item cannot go back: none does (rs_1 without the
		// message's id would be refused as a reasoning item without its
		// following item).
		{"a reasoning item that cannot go back", []agentrt.Block{unsendable, reasoning, text}, nil, `[
			{"role":"assistant","content":"Sunny."}]`},
		{"no reasoning", []agentrt.Block{text, call}, nil, `[
			{"role":"assistant","content":"Sunny."},
			{"type":"function_call","call_id":"call_1","name":"weather","arguments":"{}"}]`},
		{"PreviousResponseID resend", []agentrt.Block{reasoning, text}, &openai.ResponsesOptions{PreviousResponseID: true}, `[
			{"role":"assistant","content":"Sunny."}]`},
		// The text after the reasoning has no item id of this API: the
		// reasoning item cannot go back without it.
		{"another vendor's", []agentrt.Block{reasoning, foreign}, nil, `[
			{"role":"assistant","content":"Sunny."}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(textReply)})
			msgs := []agentrt.Message{agentrt.NewUserMessage("weather?"), agentrt.NewAssistantMessage(tt.blocks...), agentrt.NewUserMessage("and tomorrow?")}
			_, err := srv.responses(tt.opts).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
			require.NoError(t, err)
			var input []json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(0).Body, "input")), &input))
			require.GreaterOrEqual(t, len(input), 2)
			got, err := json.Marshal(input[1 : len(input)-1])
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}
