package gemini

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Replays of simonw/llm-gemini VCR cassettes of the Gemini API
// (testdata/simonw, see its README.md). llm-gemini called
// streamGenerateContent without alt=sse, so the API answered with a JSON
// array; each of its elements is one event of the .sse files.

// simonwSpec is the tool of a recorded request: the name and parameters of
// its function declaration, with the description given, if any.
func simonwSpec(t *testing.T, request, description string) agentrt.ToolSpec {
	t.Helper()
	decl := at(t, decode(t, fixture(t, "simonw/"+request)), "tools", 0, "functionDeclarations", 0).(map[string]any)
	return agentrt.ToolSpec{Name: decl["name"].(string), Description: description, InputSchema: mustJSON(t, decl["parameters"])}
}

// simonwProvider returns a Provider for model that sends the safetySettings
// of the recorded request (through ExtraFields), as llm-gemini did.
func simonwProvider(t *testing.T, srv *replayServer, model, request string) *Provider {
	t.Helper()
	safety := decode(t, fixture(t, "simonw/"+request))["safetySettings"]
	require.NotEmpty(t, safety)
	return New(newClient(t, srv, genai.BackendGeminiAPI, nil), model, &Options{ExtraFields: map[string]any{"safetySettings": safety}})
}

// requireSimonwRequest checks a request the adapter sent against the one
// llm-gemini sent: the streaming path, and contents and safetySettings equal
// once the recorded body is mapped by simonwToAdapter.
func requireSimonwRequest(t *testing.T, got recorded, model, request string, ids []string) {
	t.Helper()
	require.True(t, strings.HasSuffix(got.Path, "/models/"+model+":streamGenerateContent"), got.Path)
	require.Equal(t, "alt=sse", got.Query)
	want := decode(t, fixture(t, "simonw/"+request))
	simonwToAdapter(t, want, ids)
	require.Equal(t, want["contents"], got.Body["contents"], "contents of %s", request)
	require.Equal(t, want["safetySettings"], got.Body["safetySettings"], "safetySettings of %s", request)
}

// requireSimonwDeclaration compares the function declaration the adapter
// sent with the recorded one, field by field: genai writes the schema
// types in upper case ("OBJECT"), llm-gemini in lower case; genai leaves
// out a null description, and the adapter sends no parameters for an
// object without properties.
func requireSimonwDeclaration(t *testing.T, got recorded, request string) {
	t.Helper()
	want := at(t, decode(t, fixture(t, "simonw/"+request)), "tools", 0, "functionDeclarations", 0).(map[string]any)
	decl := at(t, got.Body, "tools", 0, "functionDeclarations", 0).(map[string]any)
	require.Equal(t, want["name"], decl["name"])
	if d, ok := want["description"].(string); ok {
		require.Equal(t, d, decl["description"])
	} else {
		require.NotContains(t, decl, "description")
	}
	params := lowerTypes(want["parameters"])
	if params, ok := params.(map[string]any); ok && len(params) == 1 && params["type"] == "object" {
		// {"properties": {}, "type": "object"}: a function without
		// parameters, for which ToolParameters gives none.
		require.NotContains(t, decl, "parameters")
		return
	}
	require.Equal(t, params, lowerTypes(decl["parameters"]))
}

// lowerTypes returns a JSON schema with its "type" values in lower case,
// without empty "properties" and "propertyOrdering".
func lowerTypes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch {
			case k == "propertyOrdering":
			case k == "properties" && len(e.(map[string]any)) == 0:
			case k == "type":
				out[k] = strings.ToLower(e.(string))
			default:
				out[k] = lowerTypes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = lowerTypes(e)
		}
		return out
	}
	return v
}

// simonwToAdapter rewrites a recorded llm-gemini request body into what the
// adapter sends for the same conversation: the snake_case keys
// function_call and function_response (which the API also reads) become
// functionCall and functionResponse; llm-gemini's call ids become ids (the
// adapter's, in order of appearance; a call without id gets the next one,
// and so does the result after it); an empty args object is left out, as
// genai does; and an empty text part without signature, which llm-gemini
// sends before a call, is left out, as the adapter sends no empty text in
// a model turn.
func simonwToAdapter(t *testing.T, body map[string]any, ids []string) {
	t.Helper()
	byRecorded := map[string]string{}
	next := 0
	last := ""
	for _, c := range asMaps(body["contents"]) {
		var parts []any
		for _, part := range asMaps(c["parts"]) {
			if text, ok := part["text"]; ok && text == "" && part["thoughtSignature"] == nil {
				continue
			}
			if fc, ok := part["function_call"].(map[string]any); ok {
				delete(part, "function_call")
				part["functionCall"] = fc
				require.Less(t, next, len(ids), "more calls than ids")
				id, _ := fc["id"].(string)
				fc["id"], last = ids[next], ids[next]
				if id != "" {
					byRecorded[id] = ids[next]
				}
				next++
				if args, ok := fc["args"].(map[string]any); ok && len(args) == 0 {
					delete(fc, "args")
				}
			}
			if fr, ok := part["function_response"].(map[string]any); ok {
				delete(part, "function_response")
				part["functionResponse"] = fr
				id, _ := fr["id"].(string)
				if id == "" {
					fr["id"] = last
				} else {
					mapped, ok := byRecorded[id]
					require.True(t, ok, "result %s answers no call before it", id)
					fr["id"] = mapped
				}
			}
			parts = append(parts, part)
		}
		c["parts"] = parts
	}
	require.Equal(t, len(ids), next, "calls in the recorded request")
}

// Recorded (llm-gemini test_tools): gemini-2.5-flash with includeThoughts
// streams a thought summary without signature, then a signed call of
// pelican_name_generator with empty args; given the result, it calls the
// tool again, this time with no signature at all (a later step of the
// same turn); the second result gets the text answer. The follow-ups the
// API accepted carry the first call with its signature and leave the
// unsigned thought out, as the adapter does.
func TestSimonwToolsThinking(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "simonw/tools-call.sse"),
		ok(t, "simonw/tools-second-call.sse"),
		ok(t, "simonw/tools-answer.sse"))
	p := simonwProvider(t, srv, "gemini-2.5-flash", "tools-call.request.json")
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Two names for a pet pelican")},
		Tools:    []agentrt.ToolSpec{simonwSpec(t, "tools-call.request.json", "")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	}
	thought := "**Generating Pelican Names**\n\nOkay, I'm thinking I should use the `pelican_name_generator` tool to address the user's request. It seems straightforward: call it twice to get two different names for the pet pelican. It's a quick plan.\n\n\n"

	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(
		agentrt.Block{Type: agentrt.BlockThinking, Text: thought},
		use("call_OYpyaqycKd2V_uMP65TsgA0_0", "pelican_name_generator", `{}`)),
		plain(first.Message))
	requireSigs(t, []string{"", "ClgBEU0yD8z3tYzbgjZ1jc6l"}, first.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 32, OutputTokens: 12 + 42, ReasoningTokens: 42}, first.Usage)
	require.Equal(t, agentrt.FinishToolUse, first.Finish)
	require.Equal(t, "gemini-2.5-flash", first.Model)

	id1 := first.Message.ToolUses()[0].ID
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(id1, "Charles", false))
	second, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(use("call_OopyavzdMqTQjrEPqLCdqAc_0", "pelican_name_generator", `{}`)), second.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 105, OutputTokens: 13}, second.Usage)
	require.Equal(t, agentrt.FinishToolUse, second.Finish)

	id2 := second.Message.ToolUses()[0].ID
	req.Messages = append(req.Messages, second.Message, agentrt.NewToolMessage(id2, "Sammy", false))
	third, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("How about Charles and Sammy?")), third.Message)
	require.Equal(t, []string{"How", " about Charles and Sammy?"}, deltas)
	require.Equal(t, agentrt.Usage{InputTokens: 137, OutputTokens: 6}, third.Usage)
	require.Equal(t, agentrt.FinishStop, third.Finish)

	reqs := srv.reqs()
	require.Len(t, reqs, 3)
	requireSimonwRequest(t, reqs[0], "gemini-2.5-flash", "tools-call.request.json", nil)
	requireSimonwDeclaration(t, reqs[0], "tools-call.request.json")
	requireSimonwRequest(t, reqs[1], "gemini-2.5-flash", "tools-followup.request.json", []string{id1})

	// The second call came without signature; the adapter, which cannot
	// tell it from a call of another provider, sends Google's skip
	// signature on it, where llm-gemini sent none (and the API took that).
	call2 := at(t, reqs[2].Body, "contents", 3, "parts", 0).(map[string]any)
	require.Equal(t, base64.StdEncoding.EncodeToString(skipSignature), call2["thoughtSignature"])
	delete(call2, "thoughtSignature")
	requireSimonwRequest(t, reqs[2], "gemini-2.5-flash", "tools-followup-2.request.json", []string{id1, id2})
}

// Recorded (llm-gemini test_tools_with_gemini_3_thought_signatures):
// gemini-3-flash-preview streams a signed multiply call without id, then an
// empty text with STOP; the answer to the result streams in two chunks and
// an empty text whose usage (promptTokenCount 121) differs from the
// earlier chunks' (89). The follow-up the API accepted carries the call
// with its signature, and its result.
func TestSimonwGemini3ThoughtSignatures(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "simonw/gemini3-call.sse"), ok(t, "simonw/gemini3-answer.sse"))
	p := simonwProvider(t, srv, "gemini-3-flash-preview", "gemini3-call.request.json")
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is 5 times 3?")},
		Tools:    []agentrt.ToolSpec{simonwSpec(t, "gemini3-call.request.json", "Multiply two numbers.")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(use("call_6XJFadi3PJOx-sAPgJ3S6Qs_0", "multiply", `{"x":5,"y":3}`)), plain(first.Message))
	requireSigs(t, []string{"Et0BCtoBAXLI2nwMB4momyXT"}, first.Message)
	require.Empty(t, deltas)
	require.Equal(t, agentrt.Usage{InputTokens: 60, OutputTokens: 16 + 32, ReasoningTokens: 32}, first.Usage)
	require.Equal(t, agentrt.FinishToolUse, first.Finish)
	require.Equal(t, "gemini-3-flash-preview", first.Model)

	id := first.Message.ToolUses()[0].ID
	req.Messages = append(req.Messages, first.Message, agentrt.NewToolMessage(id, "15", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("5 times 3 is 15.")), resp.Message)
	require.Equal(t, []string{"5 times 3", " is 15."}, deltas)
	require.Equal(t, agentrt.Usage{InputTokens: 121, OutputTokens: 9}, resp.Usage, "the last chunk's usage")
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	requireSimonwRequest(t, reqs[0], "gemini-3-flash-preview", "gemini3-call.request.json", nil)
	requireSimonwDeclaration(t, reqs[0], "gemini3-call.request.json")
	requireSimonwRequest(t, reqs[1], "gemini-3-flash-preview", "gemini3-followup.request.json", []string{id})
}

// Recorded (llm-gemini test_tools_with_nested_pydantic_models):
// gemini-flash-latest, answered by gemini-3.6-flash, streams a signed call
// with an API-given id and nested arguments; the answer to the result ends
// with an empty text part that signs the text before it. The follow-up the
// API accepted carries the API's id in the call and in the result.
func TestSimonwNestedToolArgs(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "simonw/nested-call.sse"), ok(t, "simonw/nested-answer.sse"))
	p := simonwProvider(t, srv, "gemini-flash-latest", "nested-call.request.json")
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Add Alice who is 30 years old and lives at 123 Main St, San Francisco, CA 94102 to the database")},
		Tools:    []agentrt.ToolSpec{simonwSpec(t, "nested-call.request.json", "Add a person with their address to the database")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(use("whZntcQw", "add_person",
		`{"address":{"city":"San Francisco","street":"123 Main St","zipcode":"94102"},"age":30,"name":"Alice"}`)),
		plain(first.Message))
	requireSigs(t, []string{"EsYFCsMFARFNMg/JPnxoLqVv"}, first.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 201, OutputTokens: 51 + 183, ReasoningTokens: 183}, first.Usage)
	require.Equal(t, agentrt.FinishToolUse, first.Finish)
	require.Equal(t, "gemini-3.6-flash", first.Model)

	req.Messages = append(req.Messages, first.Message,
		agentrt.NewToolMessage("whZntcQw", "Added Alice (age 30) living at 123 Main St, San Francisco", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	text := "Alice (age 30) living at 123 Main St, San Francisco, CA 94102 has been successfully added to the database."
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(text)), plain(resp.Message))
	requireSigs(t, []string{"EoEBCn8BEU0yD/faeXJsFE5o"}, resp.Message)
	require.Equal(t, []string{"Alice (age 30)", " living at 123 Main St, San Francisco, CA 94102 has been successfully added to the database."}, deltas)
	require.Equal(t, agentrt.Usage{InputTokens: 467, OutputTokens: 34 + 13, ReasoningTokens: 13}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "gemini-3.6-flash", resp.Model)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	requireSimonwRequest(t, reqs[0], "gemini-flash-latest", "nested-call.request.json", nil)
	requireSimonwDeclaration(t, reqs[0], "nested-call.request.json")
	requireSimonwRequest(t, reqs[1], "gemini-flash-latest", "nested-followup.request.json", []string{"whZntcQw"})
}

// Recorded (llm-gemini): single streamed answers. A call with an API-given
// id and arguments its declaration does not list; a text signed by the
// empty part after it; gemini-1.5-flash-latest chunks without index nor
// responseId, whose first usage counts 10 prompt tokens and the last 9;
// structured output with the OpenAPI response_schema (gemini-1.5) and with
// a JSON schema holding anyOf and null (gemini-3.6-flash, a thought summary
// first). The adapter's request has the recorded contents; its response
// schema, sent as responseJsonSchema, is the recorded one.
func TestSimonwStreamedAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, model string // file: the .sse and .request.json in testdata/simonw
		tools             bool
		schema            bool
		blocks            []agentrt.Block // without their signatures
		sigs              []string
		usage             agentrt.Usage
		finish            agentrt.FinishReason
		version           string
	}{
		{
			name: "call with an API-given id", file: "stream-tool-call", model: "gemini-3-flash-preview", tools: true,
			blocks: []agentrt.Block{use("c9bjmkfz", "pelican_name_generator", `{"type":"funny"}`)},
			sigs:   []string{"EosJCogJAb4+9vvm5UYUGfJL"},
			usage:  agentrt.Usage{InputTokens: 28, OutputTokens: 19 + 248, ReasoningTokens: 248},
			finish: agentrt.FinishToolUse, version: "gemini-3-flash-preview",
		},
		{
			name: "text signed by the empty part after it", file: "stream-text", model: "gemini-3-flash-preview",
			blocks: []agentrt.Block{agentrt.TextBlock("Hello")},
			sigs:   []string{"ErUBCrIBAb4+9vtUrRp3cSNP"},
			usage:  agentrt.Usage{InputTokens: 4, OutputTokens: 1 + 27, ReasoningTokens: 27},
			finish: agentrt.FinishStop, version: "gemini-3-flash-preview",
		},
		{
			name: "gemini-1.5: the last usage counts", file: "prompt-1.5", model: "gemini-1.5-flash-latest",
			blocks: []agentrt.Block{agentrt.TextBlock("Percy\n")},
			sigs:   []string{""},
			usage:  agentrt.Usage{InputTokens: 9, OutputTokens: 2},
			finish: agentrt.FinishStop, version: "gemini-1.5-flash-latest",
		},
		{
			name: "gemini-1.5 structured output", file: "pydantic-schema", model: "gemini-1.5-flash-latest", schema: true,
			blocks: []agentrt.Block{agentrt.TextBlock(`{"age": 3, "bio": "A fluffy Samoyed with exceptional intelligence and a love for belly rubs. He's mastered several tricks, including fetching the newspaper and opening doors.", "name": "Cloud"}`)},
			sigs:   []string{""},
			usage:  agentrt.Usage{InputTokens: 10, OutputTokens: 46},
			finish: agentrt.FinishStop, version: "gemini-1.5-flash-latest",
		},
		{
			name: "structured output after a thought summary", file: "nested-optional", model: "gemini-flash-latest", schema: true,
			blocks: []agentrt.Block{
				{Type: agentrt.BlockThinking, Text: "**Initiating the JSON structure**\n\nI'm starting by analyzing the request: I need to generate a JSON object. The core task is to model \"Bob\" at \"TechCorp\". I'm focusing on crafting valid JSON. I'll make sure there are no extraneous elements, like comments, and that it strictly adheres to JSON's syntactic rules. I want to build a clean JSON representation.\n\n\n"},
				agentrt.TextBlock(`{"name":"Bob","employer":{"company_name":"TechCorp"}}`),
			},
			sigs:   []string{"", "EsINCr8NARFNMg/Uhbb4MDC/"},
			usage:  agentrt.Usage{InputTokens: 11, OutputTokens: 14 + 381, ReasoningTokens: 381},
			finish: agentrt.FinishStop, version: "gemini-3.6-flash",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			request := tc.file + ".request.json"
			recordedBody := decode(t, fixture(t, "simonw/"+request))
			srv := newReplayServer(t, ok(t, "simonw/"+tc.file+".sse"))
			p := simonwProvider(t, srv, tc.model, request)
			var deltas []string
			req := &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage(at(t, recordedBody, "contents", 0, "parts", 0, "text").(string))},
				OnText:   func(d string) { deltas = append(deltas, d) },
			}
			if tc.tools {
				req.Tools = []agentrt.ToolSpec{simonwSpec(t, request, "")}
			}
			var want any
			if tc.schema {
				want = at(t, recordedBody, "generationConfig", "response_schema")
				req.ResponseSchema = mustJSON(t, want)
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, agentrt.NewAssistantMessage(tc.blocks...), plain(resp.Message))
			requireSigs(t, tc.sigs, resp.Message)
			text := ""
			for _, b := range tc.blocks {
				if b.Type == agentrt.BlockText {
					text += b.Text
				}
			}
			require.Equal(t, text, strings.Join(deltas, ""))
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.version, resp.Model)

			got := srv.only(t)
			requireSimonwRequest(t, got, tc.model, request, nil)
			if tc.tools {
				requireSimonwDeclaration(t, got, request)
			}
			if tc.schema {
				require.Equal(t, "application/json", at(t, got.Body, "generationConfig", "responseMimeType"))
				schema := at(t, got.Body, "generationConfig", "responseJsonSchema")
				dropPropertyOrdering(schema)
				require.Equal(t, want, schema)
			}
		})
	}
}
