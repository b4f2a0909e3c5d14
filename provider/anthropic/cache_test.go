package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// breakpoints lists where a request body carries cache_control: "system",
// "tools[i]" or "messages[i][j]" (block j of API message i).
func breakpoints(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		System   []map[string]json.RawMessage `json:"system"`
		Tools    []map[string]json.RawMessage `json:"tools"`
		Messages []struct {
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var at []string
	for _, b := range req.System {
		if b["cache_control"] != nil {
			at = append(at, "system")
		}
	}
	for i, b := range req.Tools {
		if b["cache_control"] != nil {
			at = append(at, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, m := range req.Messages {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				at = append(at, fmt.Sprintf("messages[%d][%d]", i, j))
			}
		}
	}
	return at
}

// Where the default breakpoints go: the system prompt (or the last tool),
// the end of the session's messages and the message before it, never on
// a trailing user message only this call has (a recall hook's), and never
// more than the API's 4, whatever the request holds.
func TestBreakpointPlacement(t *testing.T) {
	t.Parallel()
	png := agentrt.ImageBlock("image/png", []byte("png"))
	call := func(id string) agentrt.Block { return agentrt.ToolUseBlock(id, "weather", json.RawMessage(`{}`)) }
	recall := agentrt.NewUserMessage("[recalled] the user likes tea")
	many := make([]agentrt.ToolSpec, 40)
	for i := range many {
		many[i] = agentrt.ToolSpec{Name: fmt.Sprintf("t%d", i), InputSchema: weatherTool.InputSchema}
	}
	thinking := agentrt.Block{Type: agentrt.BlockThinking, Text: "hm", Signature: []byte("sig"), Provider: providerName}
	tests := []struct {
		name   string
		system string
		tools  []agentrt.ToolSpec
		msgs   []agentrt.Message
		want   []string
	}{
		{"first call", "sys", nil,
			[]agentrt.Message{agentrt.NewUserMessage("hi")},
			[]string{"system", "messages[0][0]"}},
		{"first call with a recall", "sys", nil,
			[]agentrt.Message{agentrt.NewUserMessage("hi"), recall},
			[]string{"system", "messages[0][0]"}},
		{"tool loop", "sys", []agentrt.ToolSpec{weatherTool},
			[]agentrt.Message{agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(call("a"), call("b")),
				agentrt.NewToolMessage("a", "1", false), agentrt.NewToolMessage("b", "2", false)},
			[]string{"system", "messages[1][1]", "messages[2][1]"}},
		{"tool loop with a recall: the tool results, not the recall", "sys", []agentrt.ToolSpec{weatherTool},
			[]agentrt.Message{agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(call("a"), call("b")),
				agentrt.NewToolMessage("a", "1", false), agentrt.NewToolMessage("b", "2", false), recall},
			[]string{"system", "messages[1][1]", "messages[2][1]"}},
		{"the user's next message with a recall", "sys", nil,
			[]agentrt.Message{agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(agentrt.TextBlock("hello")),
				agentrt.NewUserMessage("and now?", png), recall},
			[]string{"system", "messages[1][0]", "messages[2][1]"}},
		{"no system prompt, many tools, images, thinking", "", many,
			[]agentrt.Message{agentrt.NewUserMessage("look", png, png),
				agentrt.NewAssistantMessage(agentrt.TextBlock("ok"), call("a"), thinking),
				{Role: agentrt.RoleTool, ToolUseID: "a", Blocks: []agentrt.Block{png}}, recall, recall},
			[]string{"tools[39]", "messages[1][1]", "messages[2][0]"}},
	}
	p := New(sdk.NewClient(option.WithAPIKey("k")), "m", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			params, err := p.newParams(&agentrt.ModelRequest{System: tt.system, Tools: tt.tools, Messages: tt.msgs})
			require.NoError(t, err)
			body, err := json.Marshal(params)
			require.NoError(t, err)
			got := breakpoints(t, body)
			assert.Equal(t, tt.want, got, "%s", body)
			assert.LessOrEqual(t, strings.Count(string(body), `"cache_control"`), 4)
		})
	}
}

// A recall hook adds a user message to each call only. The next call
// must begin with the bytes the call before marked last, so that it reads
// them from the cache.
func TestBreakpointedPrefixSurvivesRecall(t *testing.T) {
	t.Parallel()
	p := New(sdk.NewClient(option.WithAPIKey("k")), "m", nil)
	session := []agentrt.Message{agentrt.NewUserMessage("hi")}
	var prev []byte
	for turn := range 4 {
		msgs := append(session[:len(session):len(session)], agentrt.NewUserMessage(fmt.Sprintf("[recalled] fact %d", turn)))
		params, err := p.newParams(&agentrt.ModelRequest{System: "sys", Tools: []agentrt.ToolSpec{weatherTool}, Messages: msgs})
		require.NoError(t, err)
		body, err := json.Marshal(params.Messages)
		require.NoError(t, err)
		if prev != nil {
			// The previous body up to its last breakpoint, without the
			// markers, is where this one begins.
			end := closing(prev, strings.LastIndex(string(prev), `"cache_control"`))
			want := strings.ReplaceAll(string(prev[:end]), `"cache_control":{"type":"ephemeral"},`, "")
			got := strings.ReplaceAll(string(body), `"cache_control":{"type":"ephemeral"},`, "")
			assert.True(t, strings.HasPrefix(got, want), "turn %d:\nprev %s\ncur  %s", turn, prev, body)
		}
		prev = body
		id := fmt.Sprintf("c%d", turn)
		session = append(session,
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id, "weather", json.RawMessage(`{}`))),
			agentrt.NewToolMessage(id, "sunny", false))
	}
}

// closing returns the index after the end of the JSON object in which
// b[i] is, at its top level.
func closing(b []byte, i int) int {
	depth, str := 1, false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case str && c == '\\':
			i++
		case c == '"':
			str = !str
		case !str && (c == '{' || c == '['):
			depth++
		case !str && (c == '}' || c == ']'):
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}
