package anthropic

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Replays of pydantic-ai's recordings of server tools and Anthropic-defined
// tools (testdata/pydanticai/README.md): the advisor tool (a server tool
// whose result block, advisor_tool_result, is newer than the blocks this
// adapter knows), code execution after thinking, and the memory tool (a
// client tool whose definition only names its type). The server and
// Anthropic-defined tools the SDK types are declared with ServerTools
// (code execution, memory), the advisor, which it does not type, through
// ExtraFields.

// recordedTools returns the "tools" of the recorded request
// testdata/pydanticai/name, for ExtraFields.
func recordedTools(t *testing.T, name string) []any {
	t.Helper()
	tools, ok := fixtureJSON(t, "pydanticai/"+name)["tools"].([]any)
	require.True(t, ok && len(tools) > 0, "tools of %s", name)
	return tools
}

// withoutBlocks removes the content blocks of the given types from the
// messages of a recorded request, and returns how many it removed.
func withoutBlocks(body map[string]any, types ...string) int {
	removed := 0
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		content, _ := msg["content"].([]any)
		kept := content[:0:0]
		for _, c := range content {
			b, _ := c.(map[string]any)
			drop := false
			for _, typ := range types {
				drop = drop || b["type"] == typ
			}
			if drop {
				removed++
				continue
			}
			kept = append(kept, c)
		}
		msg["content"] = kept
	}
	return removed
}

// anthropicThinking returns the thinking block this adapter makes of a
// "thinking" block with text and signature.
func anthropicThinking(text, sig string) agentrt.Block {
	return agentrt.Block{Type: agentrt.BlockThinking, Text: text, Signature: []byte(sig), Provider: "anthropic"}
}

// A conversation with the advisor tool (advisor_20260301), recorded by
// pydantic-ai in two calls. The first answer holds a thinking block (empty
// text, a signature), text, the advisor's server_tool_use, its
// advisor_tool_result (a block type this adapter does not know) and the
// final text: the answer parses, the two server blocks are left out, and
// the rest keeps its order. Its usage has the advisor's own sampling
// (claude-opus-4-8) as an "advisor_message" entry of usage.iterations; the
// top-level counts, which the adapter reports, are the executor's alone
// (the sum of the "message" entries), so the advisor's tokens are not in
// Usage. The second call, with the next user question, is the one the API
// accepted, minus the two server blocks (doc.go: they are not sent back).
func TestPydanticAIAdvisorToolConversation(t *testing.T) {
	t.Parallel()
	const (
		first   = "advisor-replay-1.response.json"
		request = "advisor-replay-2.request.json"
	)
	r := newReplay(t,
		jsonReply(pyd(t, first)),
		jsonReply(pyd(t, "advisor-replay-2.response.json")))
	p := r.provider("claude-sonnet-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"tools": recordedTools(t, request),
	}})
	msgs := []agentrt.Message{agentrt.NewUserMessage("What's 2+2? Consult your advisor first.")}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("", jsonContent(t, "pydanticai/"+first, 0, "signature")),
		agentrt.TextBlock(`Task: answer "What's 2+2?" -- trivial arithmetic; initial read is that the answer is simply 4.`),
		agentrt.TextBlock("2 + 2 = 4."),
	), resp.Message)
	require.Equal(t, "2 + 2 = 4.", resp.Message.Blocks[2].Text, "the text after the advisor's result")
	// Executor: 1128 + 1289 in, 121 + 12 out; the advisor's 2529 in and
	// 38 out are not counted.
	require.Equal(t, agentrt.Usage{InputTokens: 2417, OutputTokens: 133, ReasoningTokens: 55}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-5", resp.Model)

	msgs = append(msgs, resp.Message, agentrt.NewUserMessage("And what is that plus one?"))
	resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("2 + 2 + 1 = 5.")), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 1311, OutputTokens: 16}, resp.Usage)

	reqs := r.requests()
	require.Len(t, reqs, 2)
	recorded := recordedRequest(t, request)
	require.Equal(t, 2, withoutBlocks(recorded, "server_tool_use", "advisor_tool_result"))
	requireSameFields(t, recorded, reqs[1], "model", "max_tokens", "messages", "tools")
	msgsSent := checkSendable(t, reqs[1].body)
	require.Len(t, msgsSent, 3)
	first0, _ := recorded["messages"].([]any)
	require.JSONEq(t, jsonOf(t, first0[:1]), jsonOf(t, reqs[0].json(t)["messages"]), "the first call's messages")
}

// The advisor's answer streamed (content_block_start of an
// advisor_tool_result, a server_tool_use whose only input_json_delta is
// empty): the same message as the non-streaming call, the text deltas
// passed on as they came, the usage from message_delta (the executor's).
func TestPydanticAIAdvisorToolStream(t *testing.T) {
	t.Parallel()
	const name = "advisor-stream.sse"
	r := newReplay(t, sseReply(pyd(t, name)))
	p := r.provider("claude-sonnet-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"tools": recordedTools(t, "advisor-replay-2.request.json"),
	}})
	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages:  []agentrt.Message{agentrt.NewUserMessage("What's 2+2? Consult your advisor first.")},
		MaxTokens: 4096,
		OnText:    func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	sig := regexp.MustCompile(`"signature":"([^"]+)"`).FindSubmatch(pyd(t, name))
	require.NotNil(t, sig)
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("", string(sig[1])),
		agentrt.TextBlock(`The task asks "What's 2+2?" — a trivial arithmetic question; my initial read is that the answer is simply 4, but I'll consult the advisor as instructed before finalizing.`),
		agentrt.TextBlock("The answer is **4**."),
	), resp.Message)
	require.Equal(t, []string{
		`The task asks "What's 2+2?"`,
		" — a trivial arithmetic question; my initial read is that the answer is simply 4, but I'll cons",
		"ult the advisor as instructed before finalizing.",
		"The", " answer is **4**.",
	}, deltas, "the advisor's result text is not passed to OnText")
	// message_delta: 2411 in (1128 + 1283), 145 out (135 + 10); the
	// advisor's 2543 in and 18 out are left out.
	require.Equal(t, agentrt.Usage{InputTokens: 2411, OutputTokens: 145, ReasoningTokens: 47}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-5", resp.Model)
}

// The advisor's result redacted (advisor_redacted_result with
// encrypted_content, the advisor being claude-fable-5): left out like the
// plain one.
func TestPydanticAIAdvisorToolRedacted(t *testing.T) {
	t.Parallel()
	const name = "advisor-redacted.response.json"
	r := newReplay(t, jsonReply(pyd(t, name)))
	p := r.provider("claude-sonnet-5", nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's 2+2? Consult your advisor first.")}, MaxTokens: 4096,
	})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("", jsonContent(t, "pydanticai/"+name, 0, "signature")),
		agentrt.TextBlock("The task asks a simple arithmetic question (2+2), and my initial read is that the answer is straightforwardly 4; I'll consult the advisor as instructed before finalizing."),
		agentrt.TextBlock("2 + 2 = 4"),
	), resp.Message)
	// 1128 + 1354 in, 155 + 11 out; the advisor's 2564 in and 99 out are
	// not counted.
	require.Equal(t, agentrt.Usage{InputTokens: 2482, OutputTokens: 166, ReasoningTokens: 71}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
}

// Code execution (code_execution_20260120) with thinking on: thinking,
// then the server's bash_code_execution call and its
// bash_code_execution_tool_result, then text. The adapter's request is the
// recorded one (the tool given as ServerTools, thinking through
// ExtraFields); the answer keeps the thinking and the text, not the server
// blocks nor the top-level "container". Continuing the conversation sends
// that turn back as thinking and text, which passes checkSendable.
func TestPydanticAICodeExecutionAfterThinking(t *testing.T) {
	t.Parallel()
	const (
		name    = "code-execution-thinking.response.json"
		request = "code-execution-thinking.request.json"
	)
	recorded := recordedRequest(t, request)
	r := newReplay(t, jsonReply(pyd(t, name)), jsonReply(fixture(t, "text.json")))
	p := r.provider("claude-sonnet-4-6", &Options{
		MaxRetries:  -1,
		ServerTools: []sdk.ToolUnionParam{{OfCodeExecutionTool20260120: &sdk.CodeExecutionTool20260120Param{}}},
		ExtraFields: map[string]any{"thinking": recorded["thinking"]},
	})
	req := &agentrt.ModelRequest{
		System:     "Always use the code execution tool for math.",
		Messages:   []agentrt.Message{agentrt.NewUserMessage("How much is 3 * 12390?")},
		MaxTokens:  4096,
		ToolChoice: agentrt.ToolChoice{Mode: "auto"},
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	requireSameFields(t, recorded, r.requests()[0], "model", "max_tokens", "system", "messages", "thinking", "tool_choice", "tools")
	require.Equal(t, agentrt.NewAssistantMessage(
		anthropicThinking("The user wants to calculate 3 * 12390.", jsonContent(t, "pydanticai/"+name, 0, "signature")),
		agentrt.TextBlock("The result of **3 × 12,390 = 37,170**."),
	), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 4692, OutputTokens: 106}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "claude-sonnet-4-6", resp.Model)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("How about 4 * 12390?"))
	_, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 2)
	sent := checkSendable(t, reqs[1].body)
	require.Len(t, sent, 3)
	var assistant []string
	for _, b := range sent[1].Content {
		assistant = append(assistant, b.Type)
	}
	require.Equal(t, []string{"thinking", "text"}, assistant)
}

// The memory tool (memory_20250818), an Anthropic-defined client tool: the
// model calls it with a plain tool_use, which comes out as a tool call;
// its result goes back in the request the API accepted, field by field:
// the agent's tool "memory" is sent as the ServerTools entry of that name.
// The final answer
// begins with two newlines, kept as sent.
func TestPydanticAIMemoryTool(t *testing.T) {
	t.Parallel()
	const request = "memory-tool-2.request.json"
	recorded := recordedRequest(t, request)
	r := newReplay(t,
		jsonReply(pyd(t, "memory-tool-1.response.json")),
		jsonReply(pyd(t, "memory-tool-2.response.json")))
	p := r.provider("claude-sonnet-4-5", &Options{
		MaxRetries:  -1,
		ServerTools: []sdk.ToolUnionParam{{OfMemoryTool20250818: &sdk.MemoryTool20250818Param{}}},
	})
	memory := []agentrt.ToolSpec{{Name: "memory", Description: "the agent's own", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	auto := agentrt.ToolChoice{Mode: "auto"}
	msgs := []agentrt.Message{agentrt.NewUserMessage("Where do I live?")}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096, Tools: memory, ToolChoice: auto})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.TextBlock("I'll check my memory to see if I have information about where you live."),
		agentrt.ToolUseBlock("toolu_01YC8RhZeDTZRbb8n1gUFTmb", "memory", json.RawMessage(`{"command":"view","path":"/memories"}`)),
	), resp.Message)
	require.Equal(t, agentrt.FinishToolUse, resp.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 1577, OutputTokens: 86}, resp.Usage)
	require.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)

	msgs = append(msgs, resp.Message, agentrt.NewToolMessage("toolu_01YC8RhZeDTZRbb8n1gUFTmb", "The user lives in Mexico City.", false))
	resp, err = p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs, MaxTokens: 4096, Tools: memory, ToolChoice: auto})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("\n\nAccording to my memory, you live in **Mexico City**.")), resp.Message)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 1679, OutputTokens: 16}, resp.Usage)

	reqs := r.requests()
	require.Len(t, reqs, 2)
	requireSameFields(t, recorded, reqs[1], "model", "max_tokens", "messages", "tools", "tool_choice")
	checkSendable(t, reqs[1].body)
	all, _ := recorded["messages"].([]any)
	require.JSONEq(t, jsonOf(t, all[:1]), jsonOf(t, reqs[0].json(t)["messages"]), "the first call's messages")
}

// Automatic caching: a top-level "cache_control" (ephemeral, 5m) given
// through ExtraFields, and the API places the breakpoint itself. The
// adapter then marks no block (doc.go), so both requests are the recorded
// ones as they are, cache_control included, compared without removing any
// mark. The first call writes 1111 tokens to the cache, the second, with
// the answer and a new question, reads them and writes 409 more.
func TestPydanticAIAutomaticCaching(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		jsonReply(pyd(t, "automatic-caching-1.response.json")),
		jsonReply(pyd(t, "automatic-caching-2.response.json")))
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"cache_control": map[string]any{"type": "ephemeral", "ttl": "5m"},
	}})
	first := recordedRequest(t, "automatic-caching-1.request.json")
	question := first["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	require.Len(t, question, 100*len("Please explain what Python is and its main use cases. "))
	req := &agentrt.ModelRequest{
		System:    "You are a helpful assistant.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage(question)},
		MaxTokens: 4096,
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	answer := jsonContent(t, "pydanticai/automatic-caching-1.response.json", 0, "text")
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(answer)), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 3 + 1111, OutputTokens: 397, CacheWriteTokens: 1111}, resp.Usage)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("Can you summarize that in one sentence?"))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "Python is a beginner-friendly, versatile programming language widely used for web development, "+
		"data science, machine learning, automation, and scientific computing.", resp.Message.Text())
	require.Equal(t, agentrt.Usage{InputTokens: 3 + 409 + 1111, OutputTokens: 33, CacheReadTokens: 1111, CacheWriteTokens: 409}, resp.Usage)

	reqs := r.requests()
	require.Len(t, reqs, 2)
	for i, recorded := range []map[string]any{first, recordedRequest(t, "automatic-caching-2.request.json")} {
		sent := reqs[i].raw(t) // cache_control marks kept
		for _, k := range []string{"cache_control", "model", "max_tokens", "system", "messages"} {
			require.JSONEq(t, jsonOf(t, recorded[k]), jsonOf(t, sent[k]), "request %d, field %q", i, k)
		}
		checkSendable(t, reqs[i].body)
	}
}

// Code execution over two calls, the second meant to reuse the first's
// container: pydantic-ai sent the answer's container id as the top-level
// "container" and the turn with its server blocks. This adapter sends the
// same request but for both: the server_tool_use and
// bash_code_execution_tool_result are left out (doc.go), and the
// response's "container" is not kept in the ModelResponse, so no
// "container" is sent (unless set through ExtraFields): the API then runs
// the code in a new container, with the result of the first in the text
// of the turn only.
func TestPydanticAICodeExecutionContainerNotReused(t *testing.T) {
	t.Parallel()
	const request = "container-reuse-2.request.json"
	recorded := recordedRequest(t, request)
	r := newReplay(t,
		jsonReply(pyd(t, "container-reuse-1.response.json")),
		jsonReply(pyd(t, "container-reuse-2.response.json")))
	p := r.provider("claude-sonnet-4-5", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"tools":       recorded["tools"],
		"tool_choice": recorded["tool_choice"],
	}})
	req := &agentrt.ModelRequest{
		System:    "Always use the code execution tool for math.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("How much is 3 * 12390?")},
		MaxTokens: 4096,
	}
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("3 * 12390 = **37,170**")), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 4612, OutputTokens: 80}, resp.Usage)

	req.Messages = append(req.Messages, resp.Message, agentrt.NewUserMessage("And what about 4 * 12390?"))
	resp, err = p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("4 * 12390 = **49,560**")), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 4840, OutputTokens: 80}, resp.Usage)

	reqs := r.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, 2, withoutBlocks(recorded, "server_tool_use", "bash_code_execution_tool_result"))
	requireSameFields(t, recorded, reqs[1], "model", "max_tokens", "system", "messages", "tools", "tool_choice")
	require.Equal(t, "container_011Caqgq9X3d68B2So2LZGmk", recorded["container"])
	require.NotContains(t, reqs[1].json(t), "container")
	checkSendable(t, reqs[1].body)
}
