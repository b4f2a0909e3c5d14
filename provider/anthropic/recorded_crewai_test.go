package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of recordings made by crewAIInc/crewAI against the real Messages
// API (testdata/crewai/README.md). None was streamed. Each request the API
// accepted is rebuilt from agentrt values and the adapter's request
// compared with it; each answer is decoded as the runtime sees it.

// crewaiRequest returns the recorded request body testdata/crewai/name in
// the form this adapter sends (asSentForm), without crewAI's breakpoints.
func crewaiRequest(t *testing.T, name string) map[string]any {
	t.Helper()
	body := fixtureJSON(t, "crewai/"+name)
	asSentForm(body)
	stripCacheControl(body) // crewAI's breakpoints; the adapter's are removed too
	return body
}

// Extended thinking (budget 5000) on claude-sonnet-4-5, two turns, not
// streamed. The first answer's thinking block goes back with its
// signature, before its text, in the second request, which the API
// accepted and answered with thinking of its own.
func TestCrewAIThinkingAcrossTurns(t *testing.T) {
	t.Parallel()
	r := newReplay(t, fileReply(t, "crewai/thinking-turns-1.response.json"), fileReply(t, "crewai/thinking-turns-2.response.json"))
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, MaxTokens: 10000, ExtraFields: map[string]any{
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 5000},
	}})
	msgs := []agentrt.Message{agentrt.NewUserMessage("What is 2+2?")}

	resp, _ := planStreamed(t, p, &agentrt.ModelRequest{Messages: msgs}, false)
	requireSameFields(t, crewaiRequest(t, "thinking-turns-1.request.json"), r.requests()[0], "model", "max_tokens", "messages", "thinking")
	sig1 := jsonContent(t, "crewai/thinking-turns-1.response.json", 0, "signature")
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("This is a simple arithmetic question. 2+2 equals 4.", sig1),
		agentrt.TextBlock("2 + 2 = 4"),
	), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 43, OutputTokens: 36}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)

	msgs = append(msgs, resp.Message, agentrt.NewUserMessage("Now what is 3+3?"))
	resp, _ = planStreamed(t, p, &agentrt.ModelRequest{Messages: msgs}, false)
	sent := r.requests()[1]
	requireSameFields(t, crewaiRequest(t, "thinking-turns-2.request.json"), sent, "model", "max_tokens", "messages", "thinking")
	checkSendable(t, sent.body)
	checkBreakpoints(t, sent.body)
	sig2 := jsonContent(t, "crewai/thinking-turns-2.response.json", 0, "signature")
	require.NotEqual(t, sig1, sig2)
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("The user is asking me to calculate 3 + 3.\n\n3 + 3 = 6\n\nThis is a straightforward arithmetic question.", sig2),
		agentrt.TextBlock("3 + 3 = 6"),
	), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 67, OutputTokens: 53}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
}

// A PDF (a blank page, 325 bytes) as a base64 document after the question,
// on claude-3-5-haiku: the document block the adapter builds from an
// agentrt document block is the one the API accepted.
func TestCrewAIPDFDocument(t *testing.T) {
	t.Parallel()
	recorded := crewaiRequest(t, "pdf-document.request.json")
	doc := recorded["messages"].([]any)[0].(map[string]any)["content"].([]any)[1].(map[string]any)
	pdf, err := base64.StdEncoding.DecodeString(doc["source"].(map[string]any)["data"].(string))
	require.NoError(t, err)
	require.Len(t, pdf, 325)
	require.Equal(t, "%PDF-1.4\n", string(pdf[:9]))

	r := newReplay(t, fileReply(t, "crewai/pdf-document.response.json"))
	p := r.provider("claude-3-5-haiku-20241022", &Options{MaxRetries: -1, MaxTokens: 4096})
	resp, _ := planStreamed(t, p, &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage(
		"What type of document is this? Answer in one word.",
		agentrt.Block{Type: agentrt.BlockDocument, MediaType: "application/pdf", Data: pdf},
	)}}, false)
	sent := r.only()
	requireSameFields(t, recorded, sent, "model", "max_tokens", "messages")
	checkBreakpoints(t, sent.body)

	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("PDF")), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 1626, OutputTokens: 4}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-3-5-haiku-20241022", resp.Model)
}

// Tool search (tool_search_tool_bm25_20251119) over 15 tools declared with
// defer_loading, on claude-sonnet-4-5, not streamed. The deferred tools go
// through ServerTools, each in the place of the agent's tool of its name.
// The answer: text, the server_tool_use and its tool_search_tool_result
// (left out), text, then a call of the tool found, with a "caller".
func TestCrewAIToolSearch(t *testing.T) {
	t.Parallel()
	recorded := crewaiRequest(t, "tool-search.request.json")
	var specs []agentrt.ToolSpec
	servers := []sdk.ToolUnionParam{{OfToolSearchToolBm25_20251119: &sdk.ToolSearchToolBm25_20251119Param{
		Type: sdk.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119,
	}}}
	for _, tool := range recorded["tools"].([]any)[1:] {
		m := tool.(map[string]any)
		name, desc := m["name"].(string), m["description"].(string)
		schema := json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"Input for ` + name + `"}},"required":["input"]}`)
		specs = append(specs, agentrt.ToolSpec{Name: name, Description: desc, InputSchema: schema})
		servers = append(servers, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name: name, Description: param.NewOpt(desc),
			InputSchema:  param.Override[sdk.ToolInputSchemaParam](schema),
			DeferLoading: param.NewOpt(true),
		}})
	}
	require.Len(t, specs, 15)

	r := newReplay(t, fileReply(t, "crewai/tool-search.response.json"))
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, MaxTokens: 4096, ServerTools: servers})
	resp, _ := planStreamed(t, p, &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the weather in Tokyo?")},
		Tools:    specs,
	}, false)
	sent := r.only()
	requireSameFields(t, recorded, sent, "model", "max_tokens", "messages")
	// The same tools; the adapter sends the search tool, which is not one
	// of the agent's, after them.
	byName := func(tools []any) map[string]any {
		out := map[string]any{}
		for _, tool := range tools {
			out[tool.(map[string]any)["name"].(string)] = tool
		}
		return out
	}
	got := sent.json(t)["tools"].([]any)
	require.Len(t, got, 16)
	require.Equal(t, "tool_search_tool_bm25", got[15].(map[string]any)["name"])
	require.JSONEq(t, jsonOf(t, byName(recorded["tools"].([]any))), jsonOf(t, byName(got)))
	// Every tool is a ServerTools copy, which the adapter does not mark:
	// the one breakpoint is on the question (the deferred tools are not
	// part of the prompt prefix anyway).
	raw := sent.raw(t)
	for i, tool := range raw["tools"].([]any) {
		require.NotContains(t, tool, "cache_control", "tools[%d]", i)
	}
	require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"What is the weather in Tokyo?","cache_control":{"type":"ephemeral"}}]}]`,
		jsonOf(t, raw["messages"]))

	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.TextBlock("I'll search for a weather-related tool to help you get the weather information for Tokyo."),
		agentrt.TextBlock("Great! I found a weather tool. Let me get the current weather conditions for Tokyo."),
		use("toolu_01R3FavQLuTrwNvEk9gMaViK", "get_weather", `{"input":"Tokyo"}`),
	), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 1566, OutputTokens: 155}, resp.Usage)
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)
}

// A crewAI agent with a strict tool (declared with ServerTools, in the
// place of the agent's tool: ToolSpec has no strict flag), a system prompt
// and stop_sequences, on claude-sonnet-4-6: text and a tool call with a
// "caller"; the result goes back and the answer has an emoji outside the
// BMP. Then a separate call forces a structured_output tool (tool_choice
// tool) to format that answer, with the answer as the user's message.
func TestCrewAIStrictToolThenForcedTool(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		fileReply(t, "crewai/structured-output-tools-1.response.json"),
		fileReply(t, "crewai/structured-output-tools-2.response.json"),
		fileReply(t, "crewai/structured-output-tools-3.response.json"))
	addSchema := json.RawMessage(`{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false}`)
	add := agentrt.ToolSpec{Name: "add_numbers", Description: "Add two numbers together and return the sum.", InputSchema: addSchema}
	p := r.provider("claude-sonnet-4-6", &Options{
		MaxRetries: -1, MaxTokens: 4096,
		ExtraFields: map[string]any{"stop_sequences": []string{"\nObservation:"}},
		ServerTools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name: add.Name, Description: param.NewOpt(add.Description),
			InputSchema: param.Override[sdk.ToolInputSchemaParam](addSchema),
			Strict:      param.NewOpt(true),
		}}},
	})
	const system = "You are Calculator. You are a calculator assistant that uses tools to compute results.\n" +
		"Your personal goal is: Perform calculations using available tools"
	msgs := []agentrt.Message{agentrt.NewUserMessage("\nCurrent Task: Calculate 15 + 27 using your add_numbers tool. Report the result.")}
	fields := []string{"model", "max_tokens", "system", "messages", "tools", "stop_sequences"}

	resp, _ := planStreamed(t, p, &agentrt.ModelRequest{System: system, Messages: msgs, Tools: []agentrt.ToolSpec{add}}, false)
	requireSameFields(t, crewaiRequest(t, "structured-output-tools-1.request.json"), r.requests()[0], fields...)
	checkBreakpoints(t, r.requests()[0].body)
	const said = "I'll calculate 15 + 27 right away using the `add_numbers` tool!"
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.TextBlock(said),
		use("toolu_0111pu1MrxY8aTqNzYSWAgQF", "add_numbers", `{"a":15,"b":27}`),
	), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 633, OutputTokens: 92}, resp.Usage)
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, "claude-sonnet-4-6", resp.Model)

	msgs = append(msgs, resp.Message, agentrt.NewToolMessage("toolu_0111pu1MrxY8aTqNzYSWAgQF", "42", false))
	resp, _ = planStreamed(t, p, &agentrt.ModelRequest{System: system, Messages: msgs, Tools: []agentrt.ToolSpec{add}}, false)
	sent := r.requests()[1]
	recorded := crewaiRequest(t, "structured-output-tools-2.request.json")
	// crewAI sent the tool call back without the text before it; the
	// adapter sends the answer as the model wrote it.
	assistant := recorded["messages"].([]any)[1].(map[string]any)
	require.Len(t, assistant["content"], 1)
	assistant["content"] = append([]any{map[string]any{"type": "text", "text": said}}, assistant["content"].([]any)...)
	requireSameFields(t, recorded, sent, fields...)
	checkSendable(t, sent.body)
	checkBreakpoints(t, sent.body)
	answer := "The result of **15 + 27 = 42**! \U0001F9EE\n\nUsing the `add_numbers` tool, I calculated that adding 15 and 27 together gives you a sum of **42**."
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(answer)), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 717, OutputTokens: 52}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	// The formatting call: another request, without the agent's options.
	recorded = crewaiRequest(t, "structured-output-tools-3.request.json")
	format := agentrt.ToolSpec{
		Name: "structured_output", Description: "Output the structured response",
		InputSchema: json.RawMessage(`{"type":"object","description":"Structured output for calculation results.","title":"CalculationResult",` +
			`"properties":{"operation":{"type":"string","description":"The mathematical operation performed","title":"Operation"},` +
			`"result":{"type":"integer","description":"The result of the calculation","title":"Result"},` +
			`"explanation":{"type":"string","description":"Brief explanation of the calculation","title":"Explanation"}},` +
			`"additionalProperties":false,"required":["operation","result","explanation"]}`),
	}
	formatter := r.provider("claude-sonnet-4-6", &Options{MaxRetries: -1, MaxTokens: 4096})
	resp, _ = planStreamed(t, formatter, &agentrt.ModelRequest{
		System:     recorded["system"].([]any)[0].(map[string]any)["text"].(string),
		Messages:   []agentrt.Message{agentrt.NewUserMessage(answer)},
		Tools:      []agentrt.ToolSpec{format},
		ToolChoice: agentrt.ToolChoice{Mode: "tool", Name: "structured_output"},
	}, false)
	sent = r.requests()[2]
	requireSameFields(t, recorded, sent, "model", "max_tokens", "system", "messages", "tools", "tool_choice")
	require.NotContains(t, sent.json(t), "stop_sequences")
	checkBreakpoints(t, sent.body)
	require.Equal(t, agentrt.NewAssistantMessage(use("toolu_01UX2REqVJnQ3qNjHzVV1oNp", "structured_output",
		`{"operation":"add_numbers","result":42,"explanation":"Adding 15 and 27 together gives you a sum of 42."}`)), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 1123, OutputTokens: 84}, resp.Usage)
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, "claude-sonnet-4-6", resp.Model)
}
