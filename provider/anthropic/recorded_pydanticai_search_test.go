package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// More replays of pydantic-ai's recordings (testdata/pydanticai/README.md):
// web search streamed, and thinking before a tool call after a plain-text
// answer was refused.

// withoutNulls removes the keys whose value is null from each tool of a
// recorded request: pydantic-ai sent a server tool's unset options as null,
// which the API takes as absent, and the SDK's typed tool leaves them out.
// It returns how many it removed.
func withoutNulls(body map[string]any) int {
	removed := 0
	tools, _ := body["tools"].([]any)
	for _, tool := range tools {
		m, _ := tool.(map[string]any)
		for k, v := range m {
			if v == nil {
				delete(m, k)
				removed++
			}
		}
	}
	return removed
}

// Web search (web_search_20250305) with thinking on claude-sonnet-4-0,
// streamed: thinking, then two rounds of a server_tool_use (its input as
// input_json_delta fragments, the first one empty) and a
// web_search_tool_result (10 results with encrypted content, all in
// content_block_start), with a text block between the two rounds and 11
// after them, 5 of which have citations (citations_delta events before
// their text). The request is
// the recorded one, the tool declared with ServerTools (the recorded
// null options aside); the message keeps the thinking, with its signature,
// and the 12 text blocks in order, without the server blocks and without
// the citations (doc.go); OnText gets the text deltas only; the usage is
// message_delta's (the web search count, server_tool_use, is not mapped).
// The conversation goes on with that turn sent back as thinking and text.
func TestPydanticAIWebSearchStream(t *testing.T) {
	t.Parallel()
	const (
		name    = "web-search-stream.sse"
		request = "web-search-stream.request.json"
	)
	recorded := recordedRequest(t, request)
	require.Equal(t, 4, withoutNulls(recorded))
	r := newReplay(t, sseReply(pyd(t, name)), jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-0", &Options{
		MaxRetries:  -1,
		ServerTools: []sdk.ToolUnionParam{{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{}}},
		ExtraFields: map[string]any{"thinking": recorded["thinking"]},
	})
	req := &agentrt.ModelRequest{
		Messages:   []agentrt.Message{agentrt.NewUserMessage("What is the weather in San Francisco today?")},
		MaxTokens:  4096,
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	var deltas strings.Builder
	req.OnText = func(d string) { deltas.WriteString(d) }
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	requireSameFields(t, recorded, r.requests()[0], "model", "max_tokens", "messages", "stream", "thinking", "tool_choice", "tools")

	texts := []string{
		"Based on the search results, I can see that the information is a bit dated (most results are from about 6 days to a week ago), " +
			"but I can provide you with the available weather information for San Francisco. Let me search for more current information.",
		"Based on the search results, I can provide you with information about San Francisco's weather today (September 16, 2025):\n\n" +
			"According to AccuWeather's forecast, ",
		"today (September 16) shows a high of 76°F and low of 59°F",
		" for San Francisco.\n\nFrom the recent San Francisco Chronicle weather report, ",
		"average mid-September highs in San Francisco are around 70 degrees",
		", so today's forecast of 76°F is slightly above the typical temperature for this time of year.\n\n" +
			"The general weather pattern for San Francisco in September includes:\n- ",
		"Daytime temperatures usually reach 22°C (72°F) in San Francisco in September, falling to 13°C (55°F) at night",
		"\n- ",
		"There are normally 9 hours of bright sunshine each day in San Francisco in September",
		"\n- ",
		"San Francisco experiences minimal rainfall in September, with an average precipitation of just 3mm. Typically, there are no rainy days during this month",
		"\n\nSo for today, you can expect partly sunny to sunny skies with a high around 76°F (24°C) and a low around 59°F (15°C), " +
			"with very little chance of rain. It's shaping up to be a pleasant day in San Francisco!",
	}
	blocks := []agentrt.Block{anthropicThinking(
		"The user is asking about the weather in San Francisco today. This is clearly a request for current, real-time information "+
			"that changes daily, so I should use web search to get up-to-date weather information. According to the guidelines, "+
			"today's date is September 16, 2025.\n\nI should search for current weather in San Francisco. I'll include \"today\" "+
			"in the search query to get the most current information.",
		"Er8ECkYIBxgCKkDp29haxwUos3j9hg3HNQI8e4jcFtinIsLxpzaQR/MhPnIpHkUpSNPatD/C2EVyiEGg2LIO1lhkU/P8XLgiyejFEgzinYyrRtGe03DeFEIaDL63CVUOAo1v/57lpSIw+msm1NHv1h+xLzkbu2YqlXPwjza0tVjwAj7RLUFwB1HpPbdv6hlityaMFb/SwKZZKqYDwbYu36cdPpUcpirpZaKZ/DITzfWJkX93BXmRl5au50mxAiFe9B8XxreADaofra5cmevEaaLH0b5Ze/IC0ja/cJdo9NoVlyHlqdXmex22CAkg0Y/HnsZr8MbnE6GyG9bOqAEhwb6YgKHMaMLDVmElbNSsD7luWtsbw5BDvRaqSSROzTxH4s0dqjUqJsoOBeUXuUqWHSl2KwQi8akELKUnvlDz15ZwFI1yVTHA5nSMFIhjB0jECs1g8PjFkAYTHkHddYR5/SLruy1ENpKU0xjc/hd/O41xnI3PxHBGDKv/hdeSVBKjJ0SDYIwXW96QS5vzlKxYGCqtibj2VxPzUlDITvhn1oO+cjCXClo1lE+ul//+nk7jk7fRkvl1/+pscYCpBoGKprA7CU1kpiggO9pAVUrpZM9vC2jF5/VVVYEoY3CyC+hrNpDWXTUdGdCTofhp2wdWVZzCmO7/+L8SUnlu64YYe9PWsRDuHRe8Lvl0M9EyBrhWnGWQkkk9b+O5uNU5xgE0sjbuGzgYswhwSd7Powb8XbtbW6h7lTbo1M2IQ3Ok0kdt0RAYAQ==",
	)}
	for _, s := range texts {
		blocks = append(blocks, agentrt.TextBlock(s))
	}
	require.Equal(t, agentrt.NewAssistantMessage(blocks...), resp.Message)
	require.Equal(t, strings.Join(texts, ""), deltas.String(), "OnText gets the text deltas, not the thinking nor the search")
	require.Equal(t, agentrt.Usage{InputTokens: 22397, OutputTokens: 637}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-4-20250514", resp.Model)

	req.OnText = nil
	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("And tomorrow?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 2)
	sent := checkSendable(t, reqs[1].body)
	require.Len(t, sent, 3)
	require.Len(t, sent[1].Content, 13)
	require.Equal(t, "thinking", sent[1].Content[0].Type)
	for _, b := range sent[1].Content[1:] {
		require.Equal(t, "text", b.Type)
	}
	require.NotContains(t, string(reqs[1].body), "srvtoolu_", "the server blocks are not sent back")
	// No system prompt and no tool of the agent: the cache breakpoints are
	// on the messages alone (doc.go), the server tool's copy is unmarked.
	raw := reqs[1].raw(t)
	require.JSONEq(t, `[{"name":"web_search","type":"web_search_20250305"}]`, jsonOf(t, raw["tools"]))
	msgs := raw["messages"].([]any)
	last := msgs[2].(map[string]any)["content"].([]any)
	require.Contains(t, last[len(last)-1], "cache_control")
}

// Extended thinking (budget 10000, temperature 1.0) with an output tool,
// on claude-sonnet-4-0: the model first answers with thinking and text
// instead of calling the tool; the application sends its validation
// feedback as the next user message, and the model then thinks again and
// calls the tool. The second request is the recorded one, field by field:
// the first answer's thinking block goes back first, with its text and
// signature as received, then its text. The answers keep thinking,
// text, the tool call and its input as sent.
func TestPydanticAIExtendedThinkingRetry(t *testing.T) {
	t.Parallel()
	const (
		first  = "extended-thinking-1.response.json"
		second = "extended-thinking-2.response.json"
	)
	recorded1, recorded2 := recordedRequest(t, "extended-thinking-1.request.json"), recordedRequest(t, "extended-thinking-2.request.json")
	r := newReplay(t, jsonReply(pyd(t, first)), jsonReply(pyd(t, second)))
	temperature := 1.0
	// max_tokens 50000 is sent without streaming, as recorded, only by a
	// client with a request timeout of its own (pydantic-ai's had one); the
	// SDK refuses it otherwise, and the adapter would stream.
	client := sdk.NewClient(option.WithBaseURL(r.srv.URL), option.WithAPIKey("test-key"),
		option.WithHTTPClient(r.srv.Client()), option.WithRequestTimeout(10*time.Minute))
	p := New(client, "claude-sonnet-4-0", &Options{
		MaxRetries:  -1,
		Temperature: &temperature,
		ExtraFields: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 10000}},
	})
	human := agentrt.ToolSpec{
		Name:        "final_result",
		Description: "A human with a name and age",
		InputSchema: json.RawMessage(`{"properties":{"age":{"type":"integer"},"name":{"type":"string"}},"required":["name","age"],"title":"Human","type":"object"}`),
	}
	req := &agentrt.ModelRequest{
		Messages:   []agentrt.Message{agentrt.NewUserMessage("Create a person")},
		Tools:      []agentrt.ToolSpec{human},
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
		MaxTokens:  50000,
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	requireSameFields(t, recorded1, r.requests()[0], "model", "max_tokens", "messages", "temperature", "thinking", "tool_choice", "tools")
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking(jsonContent(t, "pydanticai/"+first, 0, "thinking"), jsonContent(t, "pydanticai/"+first, 0, "signature")),
		agentrt.TextBlock(jsonContent(t, "pydanticai/"+first, 1, "text")),
	), resp.Message)
	require.True(t, strings.HasPrefix(resp.Message.Blocks[0].Text, "The user is asking me to create a person."))
	require.True(t, strings.HasPrefix(resp.Message.Text(), "I can help you create a person, but I need some information first."))
	require.Equal(t, agentrt.Usage{InputTokens: 426, OutputTokens: 175}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage(
		"Validation feedback:\nPlain text responses are not permitted, please include your response in a tool call\n\nFix the errors and try again."))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 2)
	requireSameFields(t, recorded2, reqs[1], "model", "max_tokens", "messages", "temperature", "thinking", "tool_choice", "tools")
	checkSendable(t, reqs[1].body)
	checkBreakpoints(t, reqs[1].body)
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking(jsonContent(t, "pydanticai/"+second, 0, "thinking"), jsonContent(t, "pydanticai/"+second, 0, "signature")),
		agentrt.ToolUseBlock("toolu_01CiDGGbWTx5u93eq1LDZRH7", "final_result", json.RawMessage(`{"age":30,"name":"John Doe"}`)),
	), resp.Message)
	require.True(t, strings.HasSuffix(resp.Message.Blocks[0].Text, "I'll need to create a person with some default values."))
	require.Equal(t, agentrt.Usage{InputTokens: 525, OutputTokens: 500}, resp.Usage)
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, "claude-sonnet-4-20250514", resp.Model)
}
