package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Recorded answers of the Gemini API and Vertex AI (vercel/ai, see
// testdata/README.md) replayed through Plan: the decoded blocks, their
// thought signatures, the text deltas, the usage, the finish reason and the
// model.
func TestRecordedAnswers(t *testing.T) {
	t.Parallel()
	const gemmaThought = "*   User input: \"Reply with exactly: hello\"\n    " +
		"*   Constraint: The response must be \"exactly: hello\".\n    *   Goal: Comply with the specific" +
		" instruction.\n\n    *   The user wants a single word: \"hello\".\n\n    *   Input: \"Reply" +
		" with exactly: hello\"\n    *   Output: \"hello\""
	const codeAnswer = "The code execution resulted in the following output:\n\n```\nok\n```\n\n" +
		"Followed by an error:\n\n```python\nZeroDivisionError: division by zero\n```"
	thinking := func(text string) agentrt.Block { return agentrt.Block{Type: agentrt.BlockThinking, Text: text} }

	for _, tc := range []struct {
		name   string
		file   string
		stream bool
		vertex bool
		blocks []agentrt.Block // without their signatures
		// sigs holds, for each block, the start of its thought signature
		// in base64, or "" for none.
		sigs   []string
		deltas []string
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			name: "vertex: thought, a call without args, then three calls streamed in pieces",
			file: "vertex-no-args-calls-stream.sse", stream: true, vertex: true,
			blocks: []agentrt.Block{
				thinking("**Processing User Requests**\n\nI've started by understanding the user's instructions. " +
					"Currently, I'm focusing on the initial steps: reading the specified theme using the appropriate tool. " +
					"Next, I plan to tackle reading the screens, beginning with screen \"A,\" then proceeding with \"B\" " +
					"and \"C\" in parallel as instructed.\n\n\n"),
				use("call__vr4aYiWEJnYodAPkujX0QM_0", "read_theme", `{}`),
				use("call__vr4aYiWEJnYodAPkujX0QM_1", "read_screen", `{"id":"A"}`),
				use("call__vr4aYiWEJnYodAPkujX0QM_2", "read_screen", `{"id":"B"}`),
				use("call__vr4aYiWEJnYodAPkujX0QM_3", "read_screen", `{"id":"C"}`),
			},
			sigs:   []string{"", "AY89a18a8/Loc2wl", "", "", ""},
			usage:  agentrt.Usage{InputTokens: 249, OutputTokens: 58 + 183, ReasoningTokens: 183},
			finish: agentrt.FinishToolUse, model: "gemini-3-flash-preview",
		},
		{
			name: "vertex: array arguments in pieces, the last piece ends the call",
			file: "vertex-partial-args-array-stream.sse", stream: true, vertex: true,
			blocks: []agentrt.Block{use("call_3noMaojQL_2s6tkPiO26qQ4_0", "writeItems",
				`{"operations":[{"action":"add","description":"Fresh red apple","itemid":"apple_001","price":0.5},`+
					`{"action":"add","description":"Ripe yellow banana","itemid":"banana_001","price":0.3}]}`)},
			sigs:   []string{"AY89a19ZkXSMGh/b"},
			usage:  agentrt.Usage{InputTokens: 54, OutputTokens: 74 + 121, ReasoningTokens: 121},
			finish: agentrt.FinishToolUse, model: "gemini-3-flash-preview",
		},
		{
			name: "thought parts streamed, then the text",
			file: "thought-parts-stream.sse", stream: true,
			blocks: []agentrt.Block{thinking(gemmaThought), agentrt.TextBlock("hello")},
			sigs:   []string{"", ""},
			deltas: []string{"hello"},
			usage:  agentrt.Usage{InputTokens: 6, OutputTokens: 1 + 76, ReasoningTokens: 76},
			finish: agentrt.FinishStop, model: "gemma-4-26b-a4b-it",
		},
		{
			name: "the signature of the text in a last, empty, part",
			file: "text-signature-last-part-stream.sse", stream: true,
			blocks: []agentrt.Block{agentrt.TextBlock("4")},
			sigs:   []string{"EpcCCpQCARFNMg9G"},
			deltas: []string{"4"},
			usage:  agentrt.Usage{InputTokens: 15, OutputTokens: 1 + 52, ReasoningTokens: 52},
			finish: agentrt.FinishStop, model: "gemini-3-flash-preview",
		},
		{
			name: "text, then a call with the API's id",
			file: "text-then-tool-call-stream.sse", stream: true,
			blocks: []agentrt.Block{agentrt.TextBlock("Let me check."), use("g1bmv6il", "get_weather", `{"city":"San Francisco"}`)},
			sigs:   []string{"", "EqsGCqgGARFNMg/o"},
			deltas: []string{"Let me check."},
			usage:  agentrt.Usage{InputTokens: 83, OutputTokens: 21 + 178, ReasoningTokens: 178},
			finish: agentrt.FinishToolUse, model: "gemini-3.1-pro-preview",
		},
		{
			name:   "code execution parts are left out, with their signatures",
			file:   "code-execution.json",
			blocks: []agentrt.Block{agentrt.TextBlock(codeAnswer)},
			// The text's own signature, not the executableCode's (EjQKMgFyyNp8VRG2...).
			sigs:   []string{"EjQKMgFyyNp8EcK2"},
			usage:  agentrt.Usage{InputTokens: 23 + 289, OutputTokens: 35},
			finish: agentrt.FinishStop, model: "gemini-3-flash-preview",
		},
		{
			name:   "tool-use prompt tokens count as input; an empty text is no block",
			file:   "tool-use-prompt-usage.json",
			usage:  agentrt.Usage{InputTokens: 55 + 89, OutputTokens: 51 + 56, ReasoningTokens: 56},
			finish: agentrt.FinishStop, model: "gemini-3.6-flash",
		},
		{
			name:   "an image model that made no image: empty content, NO_IMAGE",
			file:   "finish-no-image.json",
			usage:  agentrt.Usage{InputTokens: 9},
			finish: agentrt.FinishOther, model: "gemini-3.1-flash-image-preview",
		},
		{
			name:   "a blocked prompt",
			file:   "prompt-blocked.json",
			usage:  agentrt.Usage{InputTokens: 9},
			finish: agentrt.FinishContentFilter, model: "gemini-3.7-flash",
		},
		{
			name: "a blocked prompt, streamed",
			file: "prompt-blocked-stream.sse", stream: true,
			usage:  agentrt.Usage{InputTokens: 9},
			finish: agentrt.FinishContentFilter, model: "gemini-3.7-flash",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, tc.file))
			backend := genai.BackendGeminiAPI
			if tc.vertex {
				backend = genai.BackendVertexAI
			}
			p := New(newClient(t, srv, backend, nil), testModel, nil)
			var deltas []string
			req := textRequest(false)
			if tc.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)

			path := srv.only(t).Path
			if tc.stream {
				require.True(t, strings.HasSuffix(path, ":streamGenerateContent"), path)
			} else {
				require.True(t, strings.HasSuffix(path, ":generateContent"), path)
			}
			require.Equal(t, agentrt.NewAssistantMessage(tc.blocks...), plain(resp.Message))
			requireSigs(t, tc.sigs, resp.Message)
			for _, u := range resp.Message.ToolUses() {
				require.True(t, json.Valid(u.Input), "input of %s: %s", u.ID, u.Input)
			}
			require.Equal(t, tc.deltas, deltas)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.model, resp.Model)
		})
	}
}

// Recorded (vercel/ai): HTTP 400 for function calling with JSON output on
// a model before Gemini 3. The status is not in the file; the test that
// recorded it names 400.
func TestRecordedJSONWithToolsRefused(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, fail(t, 400, "error-400-json-with-tools.json"))
	p, w := newTestProvider(t, srv, nil)
	req := textRequest(false)
	req.Tools = []agentrt.ToolSpec{weatherSpec()}
	req.ResponseSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	_, err := p.Plan(context.Background(), req)
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 400, pe.StatusCode)
	require.Equal(t, "INVALID_ARGUMENT", pe.Code)
	require.Equal(t, "Function calling with a response mime type: 'application/json' is unsupported", pe.Message)
	require.Len(t, srv.reqs(), 1, "not retried")
	require.Empty(t, w.all())
}

// Written here, from the shape of code-execution.json: a text before the
// code keeps no signature of the executableCode part after it, and the
// texts around the code (and its result) make one block.
func TestCodeExecutionAfterText(t *testing.T) {
	t.Parallel()
	body := `{"candidates":[{"content":{"parts":[
		{"text":"Let me run it."},
		{"executableCode":{"language":"PYTHON","code":"print(2+3)"},"thoughtSignature":"EjQKMgFyyNp8VRG2"},
		{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"5\n"}},
		{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"EjQKMgFyyNp8EcK2"},
		{"text":" The answer is 5."}],"role":"model"},"finishReason":"STOP","index":0}],
		"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":8,"toolUsePromptTokenCount":40},
		"modelVersion":"gemini-3-flash-preview","responseId":"written1"}`
	for _, stream := range []bool{false, true} {
		b := body
		if stream {
			b = "data: " + strings.NewReplacer("\n", "", "\t", "").Replace(body) + "\r\n\r\n"
		}
		srv := newReplayServer(t, reply{body: []byte(b)})
		p, _ := newTestProvider(t, srv, nil)
		resp, err := p.Plan(context.Background(), textRequest(stream))
		require.NoError(t, err)
		require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Let me run it. The answer is 5.")), resp.Message,
			"no signature on the text (stream %v)", stream)
		require.Equal(t, agentrt.FinishStop, resp.Finish)
		require.Equal(t, agentrt.Usage{InputTokens: 50, OutputTokens: 8}, resp.Usage)
	}
}
