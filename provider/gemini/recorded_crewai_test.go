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

// Replays of crewAIInc/crewAI VCR cassettes of the Gemini API and of Vertex
// AI express mode (testdata/crewai, see its README.md). crewAI calls the
// API through the Python genai SDK, so its requests have the same field
// names as the adapter's; what differs by design is said where it is
// mapped.

// crewaiRequest decodes a recorded request body.
func crewaiRequest(t *testing.T, name string) map[string]any {
	t.Helper()
	return decode(t, fixture(t, "crewai/"+name))
}

// crewaiSpec is the first function declaration of a recorded request as a
// ToolSpec: its name, description and parameters (whose upper-case genai
// types are written in lower case, as JSON Schema has them).
func crewaiSpec(t *testing.T, request string) agentrt.ToolSpec {
	t.Helper()
	decl := at(t, crewaiRequest(t, request), "tools", 0, "functionDeclarations", 0).(map[string]any)
	return agentrt.ToolSpec{Name: decl["name"].(string), Description: decl["description"].(string), InputSchema: mustJSON(t, lowerTypes(decl["parameters"]))}
}

// requireCrewaiRequest checks that the adapter sent the recorded request's
// keys unchanged.
func requireCrewaiRequest(t *testing.T, got recorded, request string, keys ...string) {
	t.Helper()
	want := crewaiRequest(t, request)
	for _, k := range keys {
		require.Equal(t, want[k], got.Body[k], "%s of %s", k, request)
	}
}

// crewaiStop is the generationConfig crewAI sends with its agents (stop
// sequences), given to the adapter through Options.ExtraFields.
var crewaiStop = map[string]any{"generationConfig": map[string]any{"stopSequences": []any{"\nObservation:"}}}

// Recorded (TestGeminiToolCallStreaming, gemini-2.0-flash): the whole answer
// is one event holding the function calls, STOP and the usage; the calls
// have no id and no thought signature. Each call gets its own id, made from
// the responseId, and the request matches crewAI's: the user turn and the
// declaration, types in upper case.
func TestCrewAIStreamedToolCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, prompt, rid string
		cities            []string
		usage             agentrt.Usage
	}{
		{"stream-tool-call", "What is the temperature in San Francisco?", "h99badGPDrP-x_APraXUmAM",
			[]string{"San Francisco"}, agentrt.Usage{InputTokens: 36, OutputTokens: 8}},
		{"stream-two-calls", "What is the temperature in Paris and London?", "h99baZTLOoSShMIPgYaAgQw",
			[]string{"Paris", "London"}, agentrt.Usage{InputTokens: 37, OutputTokens: 14}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, "crewai/"+tc.name+".sse"))
			p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.0-flash", nil)
			var texts []string
			got, err := p.Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage(tc.prompt)},
				Tools:    []agentrt.ToolSpec{crewaiSpec(t, tc.name+".request.json")},
				OnText:   func(s string) { texts = append(texts, s) },
			})
			require.NoError(t, err)

			sent := srv.only(t)
			require.True(t, strings.HasSuffix(sent.Path, "/models/gemini-2.0-flash:streamGenerateContent"), sent.Path)
			require.Equal(t, "alt=sse", sent.Query)
			requireCrewaiRequest(t, sent, tc.name+".request.json", "contents", "tools")

			var want []agentrt.Block
			for i, city := range tc.cities {
				want = append(want, use("call_"+tc.rid+"_"+string(rune('0'+i)), "get_current_temperature", `{"city":`+strconvQuote(city)+`}`))
			}
			require.Equal(t, agentrt.NewAssistantMessage(want...), got.Message)
			requireSigs(t, make([]string, len(want)), got.Message)
			require.Empty(t, texts)
			require.Equal(t, agentrt.FinishToolUse, got.Finish)
			require.Equal(t, tc.usage, got.Usage)
			require.Equal(t, "gemini-2.0-flash", got.Model)
		})
	}
}

// Recorded (test_google_streaming_returns_usage_metrics): with a bad key, a
// streamed call is answered HTTP 400 with the JSON error body, under
// Content-Type text/event-stream. It is an authentication error, not
// retried.
func TestCrewAIStreamAPIKeyInvalid(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, reply{status: 400, header: map[string][]string{"Content-Type": {"text/event-stream"}},
		body: fixture(t, "crewai/stream-api-key-invalid.json")})
	p, w := newTestProvider(t, srv, nil)
	req := crewaiRequest(t, "express-mode.request.json")
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   at(t, req, "systemInstruction", "parts", 0, "text").(string),
		Messages: []agentrt.Message{agentrt.NewUserMessage(at(t, req, "contents", 0, "parts", 0, "text").(string))},
		OnText:   func(string) {},
	})
	require.Nil(t, resp)
	require.ErrorIs(t, err, agentrt.ErrAuth)
	var pe *agentrt.ProviderError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 400, pe.StatusCode)
	require.Equal(t, "INVALID_ARGUMENT", pe.Code)
	require.Equal(t, "API key not valid. Please pass a valid API key.", pe.Message)
	require.True(t, strings.HasSuffix(srv.only(t).Path, ":streamGenerateContent"), "not retried")
	require.Empty(t, w.all())
}

// Recorded (test_google_express_mode_works): Vertex AI in express mode (an
// API key, no project) takes the publishers/google/models path; the answer
// carries Vertex's createTime and trafficType. The request's system
// instruction, contents and stop sequences (through ExtraFields) are
// crewAI's.
func TestCrewAIVertexExpressMode(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "crewai/express-mode.json"))
	p := New(newClient(t, srv, genai.BackendVertexAI, nil), "gemini-2.0-flash-exp", &Options{ExtraFields: crewaiStop})
	req := crewaiRequest(t, "express-mode.request.json")
	got, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   at(t, req, "systemInstruction", "parts", 0, "text").(string),
		Messages: []agentrt.Message{agentrt.NewUserMessage(at(t, req, "contents", 0, "parts", 0, "text").(string))},
	})
	require.NoError(t, err)
	sent := srv.only(t)
	require.True(t, strings.HasSuffix(sent.Path, "/publishers/google/models/gemini-2.0-flash-exp:generateContent"), sent.Path)
	require.NotContains(t, sent.Path, "/projects/")
	requireCrewaiRequest(t, sent, "express-mode.request.json", "contents", "systemInstruction", "generationConfig")

	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The capital of Japan is Tokyo.\nFinal Answer: Tokyo\n")), got.Message)
	require.Equal(t, agentrt.FinishStop, got.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 163, OutputTokens: 13}, got.Usage)
	require.Equal(t, "gemini-2.0-flash-exp", got.Model)
}

// Recorded (test_gemini_tool_returning_float, gemini-2.0-flash-001): a call
// with integer args and no id; after its result the model answers with an
// empty text, no candidatesTokenCount, and STOP. The follow-up matches the
// one the API accepted, but for what differs by design: the adapter's call
// id in the call and its result, the skip signature on a call the model
// gave none, the result as {"output": text} where crewAI sent {"result":
// 30000}, and the result and the next user text in one user turn (crewAI
// sent two user turns in a row).
func TestCrewAIToolResultThenEmptyAnswer(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "crewai/float-call.json"), ok(t, "crewai/float-empty-answer.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.0-flash-001", &Options{ExtraFields: crewaiStop})
	first := crewaiRequest(t, "float-call.request.json")
	req := &agentrt.ModelRequest{
		System:   at(t, first, "systemInstruction", "parts", 0, "text").(string),
		Messages: []agentrt.Message{agentrt.NewUserMessage(at(t, first, "contents", 0, "parts", 0, "text").(string))},
		Tools:    []agentrt.ToolSpec{crewaiSpec(t, "float-call.request.json")},
	}
	call, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	const id = "call_bLBzabiACaP3-8YP7s-P6QI_0"
	require.Equal(t, agentrt.NewAssistantMessage(use(id, "sum_numbers", `{"a":10000,"b":20000}`)), call.Message)
	requireSigs(t, []string{""}, call.Message)
	require.Equal(t, agentrt.FinishToolUse, call.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 127, OutputTokens: 7}, call.Usage)
	require.Equal(t, "gemini-2.0-flash-001", call.Model)

	followup := crewaiRequest(t, "float-followup.request.json")
	next := at(t, followup, "contents", 3, "parts", 0, "text").(string)
	req.Messages = append(req.Messages, call.Message, agentrt.NewToolMessage(id, "30000", false), agentrt.NewUserMessage(next))
	answer, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Empty(t, answer.Message.Blocks)
	require.Empty(t, answer.Message.Text())
	require.Equal(t, agentrt.FinishStop, answer.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 171}, answer.Usage)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	for i, name := range []string{"float-call.request.json", "float-followup.request.json"} {
		requireCrewaiRequest(t, reqs[i], name, "systemInstruction", "tools", "generationConfig")
	}
	requireCrewaiRequest(t, reqs[0], "float-call.request.json", "contents")
	contents := asMaps(followup["contents"])
	require.Len(t, contents, 4)
	fc := at(t, contents[1], "parts", 0).(map[string]any)
	at(t, fc, "functionCall").(map[string]any)["id"] = id
	fc["thoughtSignature"] = base64.StdEncoding.EncodeToString(skipSignature)
	fr := at(t, contents[2], "parts", 0, "functionResponse").(map[string]any)
	require.Equal(t, map[string]any{"result": 30000.0}, fr["response"])
	fr["id"], fr["response"] = id, map[string]any{"output": "30000"}
	merged := map[string]any{"role": "user", "parts": []any{at(t, contents[2], "parts", 0), at(t, contents[3], "parts", 0)}}
	require.Equal(t, []any{contents[0], contents[1], merged}, reqs[1].Body["contents"])
}

// Recorded (TestGeminiMultimodalIntegration.test_analyze_text_file,
// gemini-2.0-flash): a text file sent as inlineData of type text/plain, then
// a text answer with avgLogprobs.
func TestCrewAITextFileInput(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "crewai/text-file.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.0-flash", nil)
	req := crewaiRequest(t, "text-file.request.json")
	data, err := base64.StdEncoding.DecodeString(at(t, req, "contents", 0, "parts", 1, "inlineData", "data").(string))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "Review Guidelines\n"))
	got, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage(at(t, req, "contents", 0, "parts", 0, "text").(string),
			agentrt.DocumentBlock("review_guidelines.txt", "text/plain", data))},
	})
	require.NoError(t, err)
	requireCrewaiRequest(t, srv.only(t), "text-file.request.json", "contents")
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The text file outlines guidelines for providing effective feedback,"+
		" emphasizing clarity, specificity, a balance of positive and constructive criticism, respect, objectivity,"+
		" actionable suggestions, and careful proofreading.\n")), got.Message)
	require.Equal(t, agentrt.FinishStop, got.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 136, OutputTokens: 36}, got.Usage)
	require.Equal(t, "gemini-2.0-flash", got.Model)
}

// Recorded (test_gemini_agent_kickoff_structured_output_without_tools,
// gemini-2.5-flash): a response schema with titles, descriptions, an array
// and additionalProperties false. The adapter sends it as crewAI did,
// propertyOrdering in the schema's order included; the JSON answer comes
// without thought parts, its thoughts counted in the usage.
func TestCrewAIStructuredOutput(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "crewai/structured-output.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.5-flash", &Options{ExtraFields: crewaiStop})
	var raw struct {
		GenerationConfig struct {
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "crewai/structured-output.request.json"), &raw))
	const ordering = `, "propertyOrdering": ["topic", "key_points", "summary"]`
	schema := string(raw.GenerationConfig.ResponseJSONSchema)
	require.Contains(t, schema, ordering)
	req := crewaiRequest(t, "structured-output.request.json")
	got, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:         at(t, req, "systemInstruction", "parts", 0, "text").(string),
		Messages:       []agentrt.Message{agentrt.NewUserMessage(at(t, req, "contents", 0, "parts", 0, "text").(string))},
		ResponseSchema: json.RawMessage(strings.Replace(schema, ordering, "", 1)),
	})
	require.NoError(t, err)
	requireCrewaiRequest(t, srv.only(t), "structured-output.request.json", "contents", "systemInstruction", "generationConfig")

	var answer struct {
		Topic     string   `json:"topic"`
		KeyPoints []string `json:"key_points"`
		Summary   string   `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(got.Message.Text()), &answer))
	require.Equal(t, "Benefits of Remote Work", answer.Topic)
	require.Len(t, answer.KeyPoints, 4)
	require.Len(t, got.Message.Blocks, 1)
	require.Equal(t, agentrt.FinishStop, got.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 51, OutputTokens: 90 + 162, ReasoningTokens: 162}, got.Usage)
	require.Equal(t, "gemini-2.5-flash", got.Model)
}

// Recorded (test_gemini_async_conversation, gemini-3-pro-preview): a
// history whose model turn is a text without thought signature (written
// by the caller, not answered by Gemini) is taken by a Gemini 3 model. The
// adapter sends it the same way, without adding a signature; the answer's
// text keeps its own.
func TestCrewAIUnsignedModelTextTaken(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "crewai/conversation.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-pro-preview", nil)
	got, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("My name is Alice."),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Hello Alice! Nice to meet you.")),
		agentrt.NewUserMessage("What is my name?"),
	}})
	require.NoError(t, err)
	requireCrewaiRequest(t, srv.only(t), "conversation.request.json", "contents")
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Your name is Alice.")), plain(got.Message))
	requireSigs(t, []string{"EvQDCvEDAXLI2nz9GP8047tG13f7"}, got.Message)
	require.Equal(t, agentrt.FinishStop, got.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 21, OutputTokens: 5 + 114, ReasoningTokens: 114}, got.Usage)
	require.Equal(t, "gemini-3-pro-preview", got.Model)
}
