package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of charmbracelet/fantasy cassettes (testdata/fantasy, see
// testdata/README.md): Claude on Vertex AI (streamRawPredict, the same
// event stream with msg_vrtx_ ids and message_delta carrying output_tokens
// only), and a thinking stream recorded with prompt caching. Each answer is
// decoded, then the follow-up with the tool's result is built and compared
// with the request the API accepted, block by block.
func TestFantasyRecordings(t *testing.T) {
	t.Parallel()
	weather := agentrt.ToolSpec{
		Name:        "weather",
		Description: "Get weather information for a location",
		InputSchema: json.RawMessage(`{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object"}`),
	}
	const thought = "The user is asking for weather information for Florence, Italy. I have access to a weather " +
		"function that requires a location parameter. The user has provided the location as \"Florence, Italy\". " +
		"I have all the required parameters to make this function call."
	tests := []struct {
		file     string // the streamed answer, in testdata/fantasy
		followup string // the recorded follow-up request, in testdata/fantasy
		prompt   string
		extras   map[string]any
		max      int
		blocks   func(t *testing.T) []agentrt.Block
		deltas   string
		usage    agentrt.Usage
		model    string
	}{
		{
			file:     "vertex-claude-3-7-sonnet-tool-stream.sse",
			followup: "vertex-claude-3-7-sonnet-tool-followup.request.json",
			prompt:   "What's the weather in Florence,Italy?", max: 4000,
			blocks: func(*testing.T) []agentrt.Block {
				return []agentrt.Block{
					agentrt.TextBlock("I'll check the current weather in Florence, Italy for you."),
					agentrt.ToolUseBlock("toolu_vrtx_01HCzehdpw6xDu3CDVXSFHFh", "weather", json.RawMessage(`{"location":"Florence,Italy"}`)),
				}
			},
			deltas: "I'll check the current weather in Florence, Italy for you.",
			usage:  agentrt.Usage{InputTokens: 394, OutputTokens: 67},
			model:  "claude-3-7-sonnet-20250219",
		},
		{
			file:     "thinking-cache-control-stream.sse",
			followup: "thinking-cache-control-followup.request.json",
			prompt:   "What's the weather in Florence, Italy?", max: 8096,
			extras: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 4000}},
			blocks: func(t *testing.T) []agentrt.Block {
				return []agentrt.Block{
					thinking(thought, streamSignature(t, "fantasy/thinking-cache-control-stream.sse"), false),
					agentrt.ToolUseBlock("toolu_012Y7zdiwQJuNXf7QjpkJtC6", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)),
				}
			},
			usage: agentrt.Usage{InputTokens: 423, OutputTokens: 111},
			model: "claude-sonnet-4-20250514",
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".sse"), func(t *testing.T) {
			t.Parallel()
			r := newReplay(t, sseReply(fixture(t, "fantasy/"+tt.file)), sseReply(fixture(t, "text-stream.sse")))
			p := r.provider("claude-sonnet-4-20250514", &Options{MaxRetries: -1, ExtraFields: tt.extras})
			var deltas strings.Builder
			req := &agentrt.ModelRequest{
				System:    "You are a helpful assistant",
				Messages:  []agentrt.Message{agentrt.NewUserMessage(tt.prompt)},
				Tools:     []agentrt.ToolSpec{weather},
				MaxTokens: tt.max,
				OnText:    func(d string) { deltas.WriteString(d) },
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, agentrt.NewAssistantMessage(tt.blocks(t)...), resp.Message)
			require.Equal(t, tt.deltas, deltas.String())
			require.Equal(t, tt.usage, resp.Usage)
			require.Equal(t, agentrt.FinishToolUse, resp.Finish)
			require.Equal(t, tt.model, resp.Model)

			uses := resp.Message.ToolUses()
			require.Len(t, uses, 1)
			req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage(uses[0].ID, "40 C", false))
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)

			reqs := r.requests()
			require.Len(t, reqs, 2)
			got, want := reqs[1].json(t), fixtureJSON(t, "fantasy/"+tt.followup)
			stripCacheControl(want)
			for _, k := range []string{"messages", "system", "tools", "max_tokens", "thinking"} {
				require.JSONEq(t, jsonOf(t, want[k]), jsonOf(t, got[k]), "request field %q", k)
			}
		})
	}
}

// The follow-up of the thinking stream recorded with prompt caching puts
// its breakpoints where the recording client did, and the API accepted:
// on the system prompt, on the tool_use after the (unmarked) thinking
// block, and on the tool_result.
func TestFantasyThinkingCacheBreakpoints(t *testing.T) {
	t.Parallel()
	r := newReplay(t, sseReply(fixture(t, "fantasy/thinking-cache-control-stream.sse")), sseReply(fixture(t, "text-stream.sse")))
	p := r.provider("claude-sonnet-4-20250514", &Options{MaxRetries: -1,
		ExtraFields: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 4000}}})
	req := &agentrt.ModelRequest{
		System:    "You are a helpful assistant",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence, Italy?")},
		MaxTokens: 8096,
		OnText:    func(string) {},
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage(uses[0].ID, "40 C", false))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)

	got := r.requests()[1].raw(t)
	want := fixtureJSON(t, "fantasy/thinking-cache-control-followup.request.json")
	require.JSONEq(t, jsonOf(t, want["messages"]), jsonOf(t, got["messages"]))
	require.JSONEq(t, jsonOf(t, want["system"]), jsonOf(t, got["system"]))
}
