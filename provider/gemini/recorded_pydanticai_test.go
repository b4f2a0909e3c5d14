package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Replays of pydantic/pydantic-ai VCR cassettes of the Gemini API and
// Vertex AI (testdata/pydanticai, see its README.md).

// Recorded (pydantic-ai test_google_model_retry): gemini-2.5-pro calls
// get_capital with a thought signature; the tool fails and the error goes
// back as {"error": ...}; the model calls again with other arguments and a
// new signature; the second result gives a text answer that signs its own
// text part. Each follow-up request carries the contents the API accepted:
// every earlier call with its signature, each result in a user turn after
// its call.
func TestPydanticAIToolErrorRetry(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "pydanticai/retry-call.json"),
		ok(t, "pydanticai/retry-error-result.json"),
		ok(t, "pydanticai/retry-result.json"))
	temp := 0.0
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.5-pro", &Options{Temperature: &temp})
	req := &agentrt.ModelRequest{
		System:   "You are a helpful chatbot.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the capital of France?")},
		Tools: []agentrt.ToolSpec{{
			Name:        "get_capital",
			Description: "Get the capital of a country.",
			InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{"country":{"description":"The country name.","type":"string"}},"required":["country"],"type":"object"}`),
		}},
	}
	errText := "The country is not supported. Use \"La France\" instead.\n\nFix the errors and try again."

	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_SVd8aaP0E4etz7IPqonx0A8_0", "get_capital", json.RawMessage(`{"country":"France"}`))),
		plain(first.Message))
	requireSigs(t, []string{"Ct8DAXLI2nzyZB3noFDSNOb6"}, first.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 57, OutputTokens: 15 + 111, ReasoningTokens: 111}, first.Usage)
	require.Equal(t, agentrt.FinishToolUse, first.Finish)
	require.Equal(t, "gemini-2.5-pro", first.Model)

	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(first.Message.ToolUses()[0].ID, errText, true))
	second, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_TFd8aajpJNifz7IPuJq08AE_0", "get_capital", json.RawMessage(`{"country":"La France"}`))),
		plain(second.Message))
	requireSigs(t, []string{"CtUFAXLI2nxgt22EiUCfSwcU"}, second.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 109, OutputTokens: 16 + 147, ReasoningTokens: 147}, second.Usage)
	require.Equal(t, agentrt.FinishToolUse, second.Finish)

	req.Messages = append(req.Messages, second.Message, agentrt.NewToolMessage(second.Message.ToolUses()[0].ID, "Paris", false))
	third, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The capital of France is Paris.")), plain(third.Message))
	requireSigs(t, []string{"CtMDAXLI2nwxeQ/v3e6EHAjL"}, third.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 142, OutputTokens: 7 + 101, ReasoningTokens: 101}, third.Usage)
	require.Equal(t, agentrt.FinishStop, third.Finish)

	reqs := srv.reqs()
	require.Len(t, reqs, 3)
	ids := []string{first.Message.ToolUses()[0].ID, second.Message.ToolUses()[0].ID}
	for i, name := range []string{"retry-error-result.request.json", "retry-result.request.json"} {
		recorded := decode(t, fixture(t, "pydanticai/"+name))
		pydanticToAdapter(t, recorded, ids[:i+1])
		got := reqs[i+1].Body
		require.Equal(t, recorded["contents"], got["contents"], "request %d: contents", i+2)
		require.Equal(t, recorded["systemInstruction"], got["systemInstruction"], "request %d", i+2)
		require.Equal(t, 0.0, at(t, got, "generationConfig", "temperature"), "request %d", i+2)
		require.True(t, strings.HasSuffix(reqs[i+1].Path, "/models/gemini-2.5-pro:generateContent"), reqs[i+1].Path)
	}
	jsonEq(t, `{"error":`+string(mustJSON(t, errText))+`}`,
		at(t, reqs[1].Body, "contents", 2, "parts", 0, "functionResponse", "response"), "the failed result is an error")
}

// Recorded (pydantic-ai test_google_streaming_tool_call_thought_signature):
// gemini-3-pro-preview streams a whole functionCall with empty args and a
// thought signature, then an empty text part with STOP; the follow-up
// streams text in two chunks and an empty text with STOP, whose usage
// differs from the earlier chunks. The follow-up request carries the
// contents the API accepted.
func TestPydanticAIStreamedCallSignature(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "pydanticai/stream-call-signature.sse"),
		ok(t, "pydanticai/stream-call-signature-followup.sse"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-pro-preview", nil)
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the capital of the user country? Call the tool")},
		Tools: []agentrt.ToolSpec{{
			Name:        "get_country",
			InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`),
		}},
		OnText: func(d string) { deltas = append(deltas, d) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_SVV8aY6uBqe6qtsPmJbEuAM_0", "get_country", json.RawMessage(`{}`))),
		plain(first.Message))
	requireSigs(t, []string{"Et8ECtwEAXLI2nyCB1jKZUE4"}, first.Message)
	require.Empty(t, deltas, "the empty text part is no delta")
	require.Equal(t, agentrt.Usage{InputTokens: 29, OutputTokens: 10 + 110, ReasoningTokens: 110}, first.Usage)
	require.Equal(t, agentrt.FinishToolUse, first.Finish)
	require.Equal(t, "gemini-3-pro-preview", first.Model)

	id := first.Message.ToolUses()[0].ID
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(id, "Mexico", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The capital of Mexico is Mexico City.")), resp.Message)
	require.Equal(t, []string{"The capital of Mexico", " is Mexico City."}, deltas)
	require.Equal(t, agentrt.Usage{InputTokens: 165, OutputTokens: 8}, resp.Usage, "the last chunk's usage")
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.True(t, strings.HasSuffix(r.Path, "/models/gemini-3-pro-preview:streamGenerateContent"), r.Path)
		require.Equal(t, "alt=sse", r.Query)
	}
	recorded := decode(t, fixture(t, "pydanticai/stream-call-signature-followup.request.json"))
	pydanticToAdapter(t, recorded, []string{id})
	require.Equal(t, recorded["contents"], reqs[1].Body["contents"])
}

// Recorded (pydantic-ai, Vertex AI with Model Armor templates): a blocked
// answer is a candidate with no content and finishReason MODEL_ARMOR; a
// blocked prompt has no candidate, promptFeedback.blockReason MODEL_ARMOR
// and a usageMetadata holding only trafficType. Both end as content_filter
// with no block. And (Gemini API, gemini-1.5-flash) an answer without a
// finishReason, not streamed, is taken with finish "other".
func TestPydanticAIFinishes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		file   string
		vertex bool
		blocks []agentrt.Block
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			name: "Model Armor blocks the answer", file: "vertex-model-armor-response.json", vertex: true,
			usage:  agentrt.Usage{InputTokens: 19, OutputTokens: 6 + 27, ReasoningTokens: 27},
			finish: agentrt.FinishContentFilter, model: "gemini-2.5-flash",
		},
		{
			name: "Model Armor blocks the prompt", file: "vertex-model-armor-prompt.json", vertex: true,
			finish: agentrt.FinishContentFilter, model: "gemini-2.5-flash",
		},
		{
			name: "no finishReason", file: "no-finish-reason.json",
			blocks: []agentrt.Block{agentrt.TextBlock("Hello there! How can I help you today?\n")},
			usage:  agentrt.Usage{InputTokens: 7, OutputTokens: 11},
			finish: agentrt.FinishOther, model: "gemini-1.5-flash",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, "pydanticai/"+tc.file))
			backend := genai.BackendGeminiAPI
			if tc.vertex {
				backend = genai.BackendVertexAI
			}
			p := New(newClient(t, srv, backend, nil), "gemini-2.5-flash", nil)
			resp, err := p.Plan(context.Background(), textRequest(false))
			require.NoError(t, err)
			path := srv.only(t).Path
			if tc.vertex {
				require.True(t, strings.HasSuffix(path, "/publishers/google/models/gemini-2.5-flash:generateContent"), path)
			}
			require.Equal(t, agentrt.NewAssistantMessage(tc.blocks...), resp.Message)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.model, resp.Model)
		})
	}
}

// pydanticToAdapter rewrites a recorded pydantic-ai request body into what
// the adapter sends for the same conversation: pydantic-ai's call ids
// become ids (the adapter's, in order of appearance), an empty args object
// is left out, its {"return_value": x} results become {"output": x}, and
// its URL-safe base64 signatures are re-encoded in standard base64 (the
// same bytes; the Go SDK encodes []byte that way).
func pydanticToAdapter(t *testing.T, body map[string]any, ids []string) {
	t.Helper()
	byPyd := map[string]string{}
	for _, c := range asMaps(body["contents"]) {
		for _, part := range asMaps(c["parts"]) {
			if s, ok := part["thoughtSignature"].(string); ok {
				b, err := base64.URLEncoding.DecodeString(s)
				require.NoError(t, err)
				part["thoughtSignature"] = base64.StdEncoding.EncodeToString(b)
			}
			if fc, ok := part["functionCall"].(map[string]any); ok {
				pyd := fc["id"].(string)
				if _, seen := byPyd[pyd]; !seen {
					require.Less(t, len(byPyd), len(ids), "more calls than ids")
					byPyd[pyd] = ids[len(byPyd)]
				}
				fc["id"] = byPyd[pyd]
				if args, ok := fc["args"].(map[string]any); ok && len(args) == 0 {
					// genai leaves out an empty args object (omitempty);
					// the API takes a call without args as one with none.
					delete(fc, "args")
				}
			}
			if fr, ok := part["functionResponse"].(map[string]any); ok {
				id, ok := byPyd[fr["id"].(string)]
				require.True(t, ok, "result %v answers no call before it", fr["id"])
				fr["id"] = id
				resp := fr["response"].(map[string]any)
				if v, ok := resp["return_value"]; ok {
					fr["response"] = map[string]any{"output": v}
				}
			}
		}
	}
	require.Len(t, byPyd, len(ids))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
