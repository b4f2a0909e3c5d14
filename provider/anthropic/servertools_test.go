package anthropic

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// TestServerTools checks the tools a request declares with ServerTools:
// the agent's tools first, a server tool named like one of them in its
// place, the others after them; the cache breakpoint of a request without
// a system prompt on the agent's last tool; a tool choice kept when the
// server tools are the only tools; and requests built concurrently from
// the same Provider (run with -race), since each gets its own copy.
func TestServerTools(t *testing.T) {
	t.Parallel()
	opts := &Options{MaxRetries: -1, ServerTools: []sdk.ToolUnionParam{
		{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{MaxUses: sdk.Int(3)}},
		{OfMemoryTool20250818: &sdk.MemoryTool20250818Param{}},
	}}
	add := agentrt.ToolSpec{Name: "add", Description: "Add.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)}
	memory := agentrt.ToolSpec{Name: "memory", Description: "the agent's own", InputSchema: json.RawMessage(`{"type":"object"}`)}

	t.Run("with the agent's tools", func(t *testing.T) {
		t.Parallel()
		const n = 8
		replies := make([]reply, n)
		for i := range replies {
			replies[i] = jsonReply(fixture(t, "text.json"))
		}
		r := newReplay(t, replies...)
		p := r.provider("claude-sonnet-4-5", opts)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
					Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
					Tools:    []agentrt.ToolSpec{add, memory},
				})
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		reqs := r.requests()
		require.Len(t, reqs, n)
		for _, req := range reqs {
			assert.JSONEq(t, `[
				{"name":"add","description":"Add.","input_schema":{"type":"object","properties":{"a":{"type":"integer"}}},"cache_control":{"type":"ephemeral"}},
				{"name":"memory","type":"memory_20250818"},
				{"name":"web_search","type":"web_search_20250305","max_uses":3}]`, jsonOf(t, req.raw(t)["tools"]))
		}
	})

	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(fixture(t, "text.json")))
		_, err := r.provider("claude-sonnet-4-5", opts).Plan(context.Background(), &agentrt.ModelRequest{
			System:     "Be brief.",
			Messages:   []agentrt.Message{agentrt.NewUserMessage("hi")},
			ToolChoice: agentrt.ToolChoice{Mode: "none"},
		})
		require.NoError(t, err)
		body := r.only().raw(t)
		assert.JSONEq(t, `[{"name":"web_search","type":"web_search_20250305","max_uses":3},{"name":"memory","type":"memory_20250818"}]`, jsonOf(t, body["tools"]))
		assert.JSONEq(t, `{"type":"none"}`, jsonOf(t, body["tool_choice"]), "the runtime's last call after a limit")
	})

	t.Run("ExtraFields tools replace them all", func(t *testing.T) {
		t.Parallel()
		r := newReplay(t, jsonReply(fixture(t, "text.json")))
		o := *opts
		o.ExtraFields = map[string]any{"tools": []any{map[string]any{"type": "web_fetch_20250910", "name": "web_fetch"}}}
		_, err := r.provider("claude-sonnet-4-5", &o).Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("hi")},
			Tools:    []agentrt.ToolSpec{add},
		})
		require.NoError(t, err)
		assert.JSONEq(t, `[{"type":"web_fetch_20250910","name":"web_fetch"}]`, jsonOf(t, r.only().raw(t)["tools"]))
	})
}

// TestServerToolsRefused checks that New refuses a server tool that is
// not one: the zero union encodes as no JSON object.
func TestServerToolsRefused(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, `anthropic: New: ServerTools: a tool that is not a JSON object (null, <nil>)`, func() {
		New(sdk.NewClient(), "claude-sonnet-4-5", &Options{ServerTools: []sdk.ToolUnionParam{{}}})
	})
}
