package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// textReply is a minimal completed Responses API answer.
const textReply = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5",
"output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],
"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`

// mcpNever is a remote MCP tool that never asks for approval.
func mcpNever() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfMcp: &responses.ToolMcpParam{
		ServerLabel:     "docs",
		ServerURL:       oai.String("https://mcp.example.com/mcp"),
		RequireApproval: responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: oai.String("never")},
	}}
}

// TestResponsesServerToolsAfterFunctionTools checks that ServerTools
// follow the request's function tools in "tools", in their order, the
// same on every call, and that tool_choice is sent with them.
func TestResponsesServerToolsAfterFunctionTools(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: []byte(textReply)})
	p := srv.responses(&openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{
		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
		responses.ToolParamOfFileSearch([]string{"vs_123"}),
		mcpNever(),
	}})
	req := weatherRequest()
	req.ToolChoice = agentrt.ToolChoice{Mode: "auto"}
	for range 2 {
		_, err := p.Plan(context.Background(), req)
		require.NoError(t, err)
	}
	want := `[
		{"type":"function","name":"weather","description":"Get weather information for a location","strict":true,
		 "parameters":{"type":"object","properties":{"location":{"type":"string","description":"the city"}},"required":["location"],"additionalProperties":false}},
		{"type":"web_search"},
		{"type":"file_search","vector_store_ids":["vs_123"]},
		{"type":"mcp","server_label":"docs","server_url":"https://mcp.example.com/mcp","require_approval":"never"}
	]`
	for i := range 2 {
		body := srv.request(i).Body
		assert.JSONEq(t, want, field(t, body, "tools"), "call %d", i)
		assert.JSONEq(t, `"auto"`, field(t, body, "tool_choice"), "call %d", i)
	}
}

// TestResponsesServerToolsOnly checks a request without function tools:
// "tools" holds the server tools alone, and ToolChoice is sent for them.
func TestResponsesServerToolsOnly(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: []byte(textReply)})
	p := srv.responses(&openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{
		{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{Container: responses.ToolCodeInterpreterContainerUnionParam{
			OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{},
		}}},
		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
	}})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Roll two dice 100 times.")}}
	_, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	req.ToolChoice = agentrt.ToolChoice{Mode: "none"}
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)

	want := `[{"type":"code_interpreter","container":{"type":"auto"}},{"type":"web_search"}]`
	first, second := srv.request(0).Body, srv.request(1).Body
	assert.JSONEq(t, want, field(t, first, "tools"))
	assert.NotContains(t, first, "tool_choice", "no ToolChoice, none sent")
	assert.JSONEq(t, want, field(t, second, "tools"))
	assert.JSONEq(t, `"none"`, field(t, second, "tool_choice"))

	// Without ServerTools, a request without tools has no "tools".
	plain := newReplay(t, reply{body: []byte(textReply)})
	_, err = plain.responses(nil).Plan(context.Background(), req)
	require.NoError(t, err)
	assert.NotContains(t, plain.request(0).Body, "tools")
	assert.NotContains(t, plain.request(0).Body, "tool_choice")
}

// TestResponsesServerToolsExtraFieldsReplace checks what ExtraFields'
// doc says: a "tools" field there replaces the whole list, function
// tools and ServerTools included.
func TestResponsesServerToolsExtraFieldsReplace(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: []byte(textReply)})
	p := srv.responses(&openai.ResponsesOptions{
		ServerTools: []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)},
		ExtraFields: map[string]any{"tools": []any{map[string]any{"type": "image_generation"}}},
	})
	_, err := p.Plan(context.Background(), weatherRequest())
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"image_generation"}]`, field(t, srv.request(0).Body, "tools"))
}

// TestResponsesServerToolsCopied checks that NewResponses copies the
// slice: replacing an element afterwards changes nothing.
func TestResponsesServerToolsCopied(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: []byte(textReply)})
	tools := []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{"vs_1"})}
	p := srv.responses(&openai.ResponsesOptions{ServerTools: tools})
	tools[0] = responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"file_search","vector_store_ids":["vs_1"]}]`, field(t, srv.request(0).Body, "tools"))
}

// TestResponsesServerToolsRefused checks that NewResponses panics on the
// tools whose calls or approval requests nothing could answer, and takes
// the ones OpenAI runs by itself.
func TestResponsesServerToolsRefused(t *testing.T) {
	t.Parallel()
	mcp := func(approval responses.ToolMcpRequireApprovalUnionParam) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfMcp: &responses.ToolMcpParam{ServerLabel: "docs", ServerURL: oai.String("https://mcp.example.com/mcp"), RequireApproval: approval}}
	}
	refused := []struct {
		name, panic string
		tool        responses.ToolUnionParam
	}{
		{"function", "openai: NewResponses: ServerTools[0]: a function tool belongs in ModelRequest.Tools, as an agentrt tool",
			responses.ToolParamOfFunction("f", map[string]any{"type": "object"}, false)},
		{"custom", "openai: NewResponses: ServerTools[0]: a custom tool is run by the client, and this adapter cannot answer its calls",
			responses.ToolParamOfCustom("grammar")},
		{"computer", "openai: NewResponses: ServerTools[0]: a computer tool is run by the client, and this adapter cannot answer its calls",
			responses.ToolParamOfComputerUsePreview(768, 1024, responses.ComputerUsePreviewToolEnvironmentBrowser)},
		{"local shell", "openai: NewResponses: ServerTools[0]: a local_shell tool is run by the client, and this adapter cannot answer its calls",
			responses.ToolUnionParam{OfLocalShell: &responses.ToolLocalShellParam{}}},
		{"apply patch", "openai: NewResponses: ServerTools[0]: an apply_patch tool is run by the client, and this adapter cannot answer its calls",
			responses.ToolUnionParam{OfApplyPatch: &responses.ApplyPatchToolParam{}}},
		{"namespace", "openai: NewResponses: ServerTools[0]: a namespace of function tools is run by the client, and this adapter cannot answer its calls",
			responses.ToolParamOfNamespace("tools", "ns", nil)},
		{"shell without environment", "openai: NewResponses: ServerTools[0]: a shell tool without a container environment is run by the client, and this adapter cannot answer its calls",
			responses.ToolUnionParam{OfShell: &responses.FunctionShellToolParam{}}},
		{"local shell environment", "openai: NewResponses: ServerTools[0]: a shell tool without a container environment is run by the client, and this adapter cannot answer its calls",
			responses.ToolUnionParam{OfShell: &responses.FunctionShellToolParam{Environment: responses.FunctionShellToolEnvironmentUnionParam{OfLocal: &responses.LocalEnvironmentParam{}}}}},
		{"client tool search", `openai: NewResponses: ServerTools[0]: a tool_search tool with execution "client" is run by the client, and this adapter cannot answer its calls`,
			responses.ToolUnionParam{OfToolSearch: &responses.ToolSearchToolParam{Execution: responses.ToolSearchToolExecutionClient}}},
		{"mcp, default approval", `openai: NewResponses: ServerTools[0]: mcp tool "docs": set RequireApproval to "never": nothing could answer its mcp_approval_request items`,
			mcp(responses.ToolMcpRequireApprovalUnionParam{})},
		{"mcp, always", `openai: NewResponses: ServerTools[0]: mcp tool "docs": set RequireApproval to "never": nothing could answer its mcp_approval_request items`,
			mcp(responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: oai.String("always")})},
		{"mcp, filter", `openai: NewResponses: ServerTools[0]: mcp tool "docs": set RequireApproval to "never": nothing could answer its mcp_approval_request items`,
			mcp(responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalFilter: &responses.ToolMcpRequireApprovalMcpToolApprovalFilterParam{
				Never: responses.ToolMcpRequireApprovalMcpToolApprovalFilterNeverParam{ToolNames: []string{"search"}},
			}})},
		{"empty", "openai: NewResponses: ServerTools[0]: no tool set", responses.ToolUnionParam{}},
	}
	for _, c := range refused {
		assert.PanicsWithValue(t, c.panic, func() {
			openai.NewResponses(oai.NewClient(), "gpt-5", &openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{c.tool}})
		}, c.name)
	}

	accepted := []responses.ToolUnionParam{
		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
		responses.ToolParamOfWebSearchPreview(responses.WebSearchPreviewToolTypeWebSearchPreview),
		responses.ToolParamOfFileSearch([]string{"vs_1"}),
		{OfImageGeneration: &responses.ToolImageGenerationParam{}},
		mcpNever(),
		{OfShell: &responses.FunctionShellToolParam{Environment: responses.FunctionShellToolEnvironmentUnionParam{OfContainerAuto: &responses.ContainerAutoParam{}}}},
		{OfToolSearch: &responses.ToolSearchToolParam{Execution: responses.ToolSearchToolExecutionServer}},
	}
	assert.NotPanics(t, func() {
		openai.NewResponses(oai.NewClient(), "gpt-5", &openai.ResponsesOptions{ServerTools: accepted})
	})
	// The index of the refused tool is in the message.
	assert.PanicsWithValue(t, "openai: NewResponses: ServerTools[2]: no tool set", func() {
		openai.NewResponses(oai.NewClient(), "gpt-5", &openai.ResponsesOptions{ServerTools: append(accepted[:2:2], responses.ToolUnionParam{})})
	})
}

// TestResponsesPendingMCPApproval replays the recorded hosted MCP answer
// (mcp-approval.json) cut after its mcp_approval_request, as a response
// that waits for an approval ends: an error, not an empty answer. The
// whole recording, whose mcp_call answers the request, is mapped as
// before (see TestRecordedResponses).
func TestResponsesPendingMCPApproval(t *testing.T) {
	t.Parallel()
	var body map[string]any
	require.NoError(t, json.Unmarshal(rfixture(t, "mcp-approval.json"), &body))
	output := body["output"].([]any)
	require.Equal(t, "mcp_approval_request", output[2].(map[string]any)["type"])
	require.Equal(t, "mcp_call", output[3].(map[string]any)["type"])
	body["output"] = output[:3]
	cut, err := json.Marshal(body)
	require.NoError(t, err)

	srv := newReplay(t, reply{body: cut}, reply{body: rfixture(t, "mcp-approval.json")})
	p := srv.responses(&openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{mcpNever()}})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Japan's headlines today?")}}
	_, err = p.Plan(context.Background(), req)
	require.Error(t, err)
	assert.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	var pe *agentrt.ProviderError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, `the response waits for the approval of a call of "web_search_exa" on MCP server "exa" (mcp_approval_request mcpr_0b55229f4889c40a00693a0fe3bf388195b59568945917f764), which this adapter cannot give: declare the mcp tool with require_approval "never"`, pe.Message)

	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err, "an approval request that an mcp_call answers is no error")
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
}

// TestResponsesReasoningBeforeServerTool checks a reply whose reasoning
// items precede a web_search_call and a message, in the shape the API
// sends: the item before the server tool's call, which is not sent back,
// keeps its summary as text but is not sent back either (the API refuses
// a reasoning item without the item that followed it); the one before the
// message is sent back with its encrypted content.
func TestResponsesReasoningBeforeServerTool(t *testing.T) {
	t.Parallel()
	const answer = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini",
"output":[
 {"id":"rs_search","type":"reasoning","summary":[{"type":"summary_text","text":"Searching the news."}],"encrypted_content":"gAAAA-search"},
 {"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"news"}},
 {"id":"rs_answer","type":"reasoning","summary":[],"encrypted_content":"gAAAA-answer"},
 {"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here is the news.","annotations":[]}]}],
"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`
	srv := newReplay(t, reply{body: []byte(answer)}, reply{body: []byte(textReply)})
	p := srv.responses(&openai.ResponsesOptions{ServerTools: []responses.ToolUnionParam{
		responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
	}})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("news?")}}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, []agentrt.Block{
		{Type: agentrt.BlockThinking, Text: "Searching the news.", Provider: "openai-responses"},
		{Type: agentrt.BlockThinking, ID: "rs_answer", Signature: []byte("gAAAA-answer"), Provider: "openai-responses"},
		{Type: agentrt.BlockText, Text: "Here is the news.", Signature: []byte("msg_1"), Provider: "openai-responses"},
	}, first.Message.Blocks)

	req.Messages = append(req.Messages, first.Message, agentrt.NewUserMessage("more?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	var input []map[string]any
	require.NoError(t, json.Unmarshal([]byte(field(t, srv.request(1).Body, "input")), &input))
	var types []string
	for _, item := range input {
		types = append(types, stringOr(item["type"])+stringOr(item["role"])+":"+stringOr(item["id"]))
	}
	assert.Equal(t, []string{"user:", "reasoning:rs_answer", "messageassistant:msg_1", "user:"}, types)
}

// stringOr returns v if it is a string, "" otherwise.
func stringOr(v any) string {
	s, _ := v.(string)
	return s
}
