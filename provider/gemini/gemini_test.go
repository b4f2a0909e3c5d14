package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Tools of the recorded requests, as a user of agentrt would write them.

type weatherIn struct {
	Location string `json:"location" jsonschema:"description=The location to get the weather for"`
}

type arithIn struct {
	A int `json:"a" jsonschema:"description=first number"`
	B int `json:"b" jsonschema:"description=second number"`
}

func weatherSpec() agentrt.ToolSpec {
	return agentrt.NewTool("weather", "Get the weather in a location",
		func(context.Context, weatherIn) (string, error) { return "", nil }, agentrt.ReadOnly()).Spec()
}

func arithSpecs() []agentrt.ToolSpec {
	add := agentrt.NewTool("add", "Add two numbers",
		func(_ context.Context, in arithIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	mul := agentrt.NewTool("multiply", "Multiply two numbers",
		func(_ context.Context, in arithIn) (int, error) { return in.A * in.B, nil }, agentrt.ReadOnly())
	return []agentrt.ToolSpec{add.Spec(), mul.Spec()}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t)
	p, _ := newTestProvider(t, srv, nil)
	assert.Equal(t, agentrt.ProviderInfo{Name: "gemini", Model: testModel}, p.Describe())
}

// Recorded: gemini/text.json (vercel/ai).
func TestText(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	temp := 0.25
	p, _ := newTestProvider(t, srv, &Options{Temperature: &temp, MaxTokens: 1000})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:    "Answer briefly.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("How many r's are in strawberry?")},
		MaxTokens: 256,
	})
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "POST", req.Method)
	assert.Equal(t, "/v1beta/models/"+testModel+":generateContent", req.Path)
	assert.Equal(t, "test-key", req.Header.Get("x-goog-api-key"))
	jsonEq(t, `[{"role":"user","parts":[{"text":"How many r's are in strawberry?"}]}]`, req.Body["contents"])
	jsonEq(t, `{"role":"user","parts":[{"text":"Answer briefly."}]}`, req.Body["systemInstruction"])
	jsonEq(t, `{"maxOutputTokens":256,"temperature":0.25}`, req.Body["generationConfig"],
		"ModelRequest.MaxTokens wins over Options.MaxTokens")
	assert.NotContains(t, req.Body, "tools", "no tools, no declarations")
	assert.NotContains(t, req.Body, "toolConfig")

	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(
		"There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.")), plain(resp.Message))
	assert.Equal(t, "gemini", resp.Message.Blocks[0].Provider, "the text's thought signature is kept")
	assert.NotEmpty(t, resp.Message.Blocks[0].Signature)
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 9, OutputTokens: 28 + 244, ReasoningTokens: 244}, resp.Usage, "thoughts count as output")
	assert.Equal(t, "gemini-3-pro-preview", resp.Model)
}

// Recorded: gemini/text-stream.sse (vercel/ai).
func TestTextStream(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text-stream.sse"))
	p, _ := newTestProvider(t, srv, &Options{MaxTokens: 512})
	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("How many r's are in strawberry?")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "/v1beta/models/"+testModel+":streamGenerateContent", req.Path)
	assert.Equal(t, "alt=sse", req.Query)
	jsonEq(t, `{"maxOutputTokens":512}`, req.Body["generationConfig"], "Options.MaxTokens applies when the request has none")
	assert.NotContains(t, req.Body, "systemInstruction", "no system prompt, no systemInstruction")

	assert.Equal(t, []string{"There are **3**", ` "r"s in strawberry.` + "\n\nst**r**awbe**rr**y"}, deltas)
	assert.NotEmpty(t, resp.Message.Blocks[0].Signature, "the signature of the last, empty, chunk is kept on the text")
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(strings.Join(deltas, ""))), plain(resp.Message),
		"the streamed message is the one the deltas add up to")
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 9, OutputTokens: 23 + 185, ReasoningTokens: 185}, resp.Usage, "usage of the last chunk")
	assert.Equal(t, "gemini-3-pro-preview", resp.Model)
}

// Recorded: gemini/tool-call.json and gemini/tool-call-stream.sse (vercel/ai).
func TestToolCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, next, responseID, sig string
		usage                             agentrt.Usage
		stream                            bool
	}{
		{"non-stream", "tool-call.json", "text.json", "m36LaZGyCLz1xs0PtNSB-QU",
			"EskgCsYgAb4+9vtF7/499YQS2bjZs3xcQI+iAl+ILn29nK1j0Kg6su7QsUUUk3nrAAfnS2w5WiVvlcCqu9fAebJ2cvfaEyBahEt5",
			agentrt.Usage{InputTokens: 29, OutputTokens: 15 + 893, ReasoningTokens: 893}, false},
		{"stream", "tool-call-stream.sse", "text-stream.sse", "b36LacjwM668nsEP2tbsgQQ",
			"EqUCCqICAb4+9vsh8Pd5taZVoPzSvjWWwzBrvhEQWBLCGa7IdY8FBMm7Z6dCKFU3Ft0la15gF7RaHe1NlPRygQec0bFwPDfMwGcUOMNiJiNIKxusCs4ejCZRuouNYQ4etEIt7CujEUHiILLfZXSJZYhs4UCrD2bLqPq0sE0lWgYJnzHkkKUOnMsA2hKffAhtF4DWn5INYj8pPssvch/2VpDFW2F9XSE04zLDzkIWF2eztJX50Y0lTehRZC3FW7fOrXCzGx+PwdataD6eXlF5O1zn+86XtmktOs2DEp4o1PMvXFFAXe8GGvPt8Idf3UtHMq7AsapwMW9sjiKj+FJk54m+9LMTSaj7C86smfvoQryYBEHTVazr1bEnpl4bPG5JUtm2yAMkHj4=",
			agentrt.Usage{InputTokens: 29, OutputTokens: 15 + 45, ReasoningTokens: 45}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, tc.file), ok(t, tc.next))
			p, _ := newTestProvider(t, srv, nil)
			req := &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("What is the weather in San Francisco?")},
				Tools:    []agentrt.ToolSpec{weatherSpec()},
			}
			var deltas []string
			if tc.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)

			body := srv.reqs()[0].Body
			jsonEq(t, `[{"functionDeclarations":[{
				"name":"weather","description":"Get the weather in a location",
				"parameters":{"type":"OBJECT","required":["location"],
					"properties":{"location":{"type":"STRING","description":"The location to get the weather for"}}}}]}]`,
				body["tools"])

			id := "call_" + tc.responseID + "_0"
			assert.Equal(t, agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock(id, "weather", json.RawMessage(`{"location":"San Francisco"}`))), plain(resp.Message))
			assert.Equal(t, tc.sig, base64.StdEncoding.EncodeToString(resp.Message.Blocks[0].Signature), "the thought signature is kept in the block")
			assert.Equal(t, agentrt.FinishToolUse, resp.Finish, "finishReason STOP with a function call")
			assert.Equal(t, tc.usage, resp.Usage)
			assert.Empty(t, deltas, "an empty text part is no delta")

			// The follow-up sends the call back with its thought signature.
			req.Messages = append(req.Messages, resp.Message, agentrt.NewToolMessage(id, "61F, foggy", false))
			_, err = p.Plan(context.Background(), req)
			require.NoError(t, err)
			follow := srv.reqs()[1].Body
			jsonEq(t, `{"role":"model","parts":[{
				"functionCall":{"id":"`+id+`","name":"weather","args":{"location":"San Francisco"}},
				"thoughtSignature":"`+tc.sig+`"}]}`, at(t, follow, "contents", 1))
			jsonEq(t, `{"role":"user","parts":[{"functionResponse":{"id":"`+id+`","name":"weather","response":{"output":"61F, foggy"}}}]}`,
				at(t, follow, "contents", 2))
		})
	}
}

// Recorded: gemini/parallel-tool-calls.request.json / .response.json
// (charmbracelet/fantasy): the request this adapter sends is compared with
// the recorded one, and the recorded answer is parsed.
func TestParallelToolCalls(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "parallel-tool-calls.response.json"))
	p, _ := newTestProvider(t, srv, nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:    "You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Add and multiply the number 2 and 3")},
		Tools:     arithSpecs(),
		MaxTokens: 4000,
	})
	require.NoError(t, err)

	got := srv.only(t).Body
	want := decode(t, fixture(t, "parallel-tool-calls.request.json"))
	for _, k := range []string{"contents", "systemInstruction", "generationConfig", "tools"} {
		assert.Equal(t, want[k], got[k], "request field %q differs from the recorded request", k)
	}
	assert.NotContains(t, got, "toolConfig", "mode AUTO is the default; the adapter does not send it")

	const rid = "WwCzadOqH-mtz7IP8_Se8Ak"
	assert.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_"+rid+"_0", "add", json.RawMessage(`{"a":2,"b":3}`)),
		agentrt.ToolUseBlock("call_"+rid+"_1", "multiply", json.RawMessage(`{"a":2,"b":3}`)),
	), plain(resp.Message))
	assert.NotEmpty(t, resp.Message.Blocks[0].Signature, "Gemini signs the first call of a turn")
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 125, OutputTokens: 36 + 73, ReasoningTokens: 73}, resp.Usage)
	assert.Equal(t, "gemini-2.5-flash", resp.Model)
}

// Recorded: gemini/parallel-tool-calls-stream.request.json / .sse
// (charmbracelet/fantasy): both calls arrive in one event.
func TestParallelToolCallsStream(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "parallel-tool-calls-stream.sse"))
	p, _ := newTestProvider(t, srv, nil)
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:    "You are a helpful assistant. Always use both add and multiply at the same time.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Add and multiply the number 2 and 3")},
		Tools:     arithSpecs(),
		MaxTokens: 4000,
		OnText:    func(d string) { t.Errorf("unexpected text delta %q", d) },
	})
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "alt=sse", req.Query)
	want := decode(t, fixture(t, "parallel-tool-calls-stream.request.json"))
	for _, k := range []string{"contents", "systemInstruction", "generationConfig", "tools"} {
		assert.Equal(t, want[k], req.Body[k], "request field %q differs from the recorded request", k)
	}

	const rid = "XQCzaYWvIqfRz7IPupTlyAk"
	assert.Equal(t, agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_"+rid+"_0", "add", json.RawMessage(`{"a":2,"b":3}`)),
		agentrt.ToolUseBlock("call_"+rid+"_1", "multiply", json.RawMessage(`{"a":2,"b":3}`)),
	), plain(resp.Message), `the recorded args {"b": 3,"a": 2} come out with sorted keys`)
	assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 121, OutputTokens: 36 + 38, ReasoningTokens: 38}, resp.Usage)
}

// Recorded: parallel-tool-calls.response.json, then
// parallel-tool-results-followup.request.json / .response.json
// (charmbracelet/fantasy). The results are given in the opposite order of
// the calls, one of them as an error; the adapter sends them in call order,
// the error under "error".
func TestParallelToolResultsFollowup(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "parallel-tool-calls.response.json"), ok(t, "parallel-tool-results-followup.response.json"))
	p, _ := newTestProvider(t, srv, nil)
	req := &agentrt.ModelRequest{
		System:    "You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Add and multiply the number 2 and 3")},
		Tools:     arithSpecs(),
		MaxTokens: 4000,
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	uses := first.Message.ToolUses()
	require.Len(t, uses, 2)

	req.Messages = append(req.Messages, first.Message,
		agentrt.NewToolMessage(uses[1].ID, "multiplication is down for maintenance", true),
		agentrt.NewToolMessage(uses[0].ID, "5", false),
	)
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	got := srv.reqs()[1].Body
	recorded := decode(t, fixture(t, "parallel-tool-results-followup.request.json"))
	// The model turn is the recorded one, except for the ids (fantasy's own
	// "1" and "2"; here the adapter's).
	model := at(t, recorded, "contents", 1).(map[string]any)
	at(t, model, "parts", 0, "functionCall").(map[string]any)["id"] = uses[0].ID
	at(t, model, "parts", 1, "functionCall").(map[string]any)["id"] = uses[1].ID
	assert.Equal(t, model, at(t, got, "contents", 1), "model turn: both calls, the signature on the first only")
	jsonEq(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"`+uses[0].ID+`","name":"add","response":{"output":"5"}}},
		{"functionResponse":{"id":"`+uses[1].ID+`","name":"multiply","response":{"error":"multiplication is down for maintenance"}}}]}`,
		at(t, got, "contents", 2), "results in one user turn, in call order, paired by id and name")
	assert.Len(t, got["contents"], 3)
	for _, k := range []string{"systemInstruction", "generationConfig", "tools"} {
		assert.Equal(t, recorded[k], got[k], "request field %q differs from the recorded request", k)
	}

	assert.Equal(t, "The sum of 2 and 3 is 5. The product of 2 and 3 is 6.", resp.Message.Text())
	assert.False(t, resp.Message.HasToolUse())
	assert.Equal(t, agentrt.FinishStop, resp.Finish)
	assert.Equal(t, agentrt.Usage{InputTokens: 185, OutputTokens: 24}, resp.Usage)
}

// Recorded: gemini/tool-call-forced.response.json, then
// tool-result-followup.request.json / .response.json (vercel/ai). The API
// gave the call an id of its own ("PPik6Btt"), which is kept, and empty
// args; the user's next message joins the function response in one turn,
// as in the recorded request.
func TestToolResultFollowupWithAPIID(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "tool-call-forced.response.json"), ok(t, "tool-result-followup.response.json"))
	p, _ := newTestProvider(t, srv, nil)
	catalog := agentrt.ToolSpec{Name: "catalogSearch", Description: "Returns catalog metadata and a PDF page.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
	req := &agentrt.ModelRequest{
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Call catalogSearch once, then say whether metadata was returned. Do not inspect the PDF.")},
		Tools:     []agentrt.ToolSpec{catalog},
		MaxTokens: 64,
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.ToolUseBlock("PPik6Btt", "catalogSearch", json.RawMessage(`{}`))), plain(first.Message))
	assert.Equal(t, agentrt.FinishToolUse, first.Finish)
	assert.Equal(t, "gemini-3.1-flash-lite", first.Model)

	recorded := decode(t, fixture(t, "tool-result-followup.request.json"))
	fileText := at(t, recorded, "contents", 2, "parts", 1, "text").(string)
	req.Messages = append(req.Messages, first.Message,
		agentrt.NewToolMessage("PPik6Btt", "metadata", false),
		agentrt.NewUserMessage(fileText))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	got := srv.reqs()[1].Body
	assert.Equal(t, at(t, recorded, "contents", 0), at(t, got, "contents", 0))
	// genai leaves out an empty args object (omitempty); the API takes a
	// call without args as a call with none.
	delete(at(t, recorded, "contents", 1, "parts", 0, "functionCall").(map[string]any), "args")
	assert.Equal(t, at(t, recorded, "contents", 1), at(t, got, "contents", 1), "the call with its id and thought signature")
	// The recorded response object is vercel's {name, content}; this adapter
	// sends Google's documented {output}.
	jsonEq(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"PPik6Btt","name":"catalogSearch","response":{"output":"metadata"}}},
		{"text":`+strconvQuote(fileText)+`}]}`, at(t, got, "contents", 2))
	jsonEq(t, `[{"functionDeclarations":[{"name":"catalogSearch","description":"Returns catalog metadata and a PDF page."}]}]`,
		got["tools"], "a tool without parameters is declared without parameters, as recorded")
	assert.Equal(t, recorded["generationConfig"], got["generationConfig"])

	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("Metadata was returned.")), plain(resp.Message))
	assert.Equal(t, agentrt.Usage{InputTokens: 137, OutputTokens: 4}, resp.Usage)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Recorded: gemini/vertex-partial-args-stream.sse and
// vertex-partial-args-nested-stream.sse (vercel/ai, Vertex AI): function
// call arguments streamed in pieces (partialArgs with JSON paths).
func TestSplitArgumentsStream(t *testing.T) {
	t.Parallel()
	t.Run("two sequential calls", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, ok(t, "vertex-partial-args-stream.sse"))
		p := New(newClient(t, srv, genai.BackendVertexAI, nil), "gemini-3.1-pro-preview", nil)
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("Weather in Boston and San Francisco?")},
			OnText:   func(d string) { t.Errorf("unexpected text delta %q", d) },
		})
		require.NoError(t, err)
		assert.Contains(t, srv.only(t).Path, "publishers/google/models/gemini-3.1-pro-preview:streamGenerateContent")

		const rid = "dqHOab6xGLzWodAPkPuViA4"
		require.Len(t, resp.Message.Blocks, 2)
		first, second := resp.Message.Blocks[0], resp.Message.Blocks[1]
		assert.NotEmpty(t, first.Signature, "the signature of the first chunk is kept on the first call")
		assert.Equal(t, "gemini", first.Provider)
		assert.Empty(t, second.Signature)
		first.Signature, first.Provider = nil, ""
		assert.Equal(t, []agentrt.Block{
			agentrt.ToolUseBlock("call_"+rid+"_0", "getWeather", json.RawMessage(`{"location":"Boston"}`)),
			agentrt.ToolUseBlock("call_"+rid+"_1", "getWeather", json.RawMessage(`{"location":"San Francisco"}`)),
		}, []agentrt.Block{first, second})
		assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
		assert.Equal(t, agentrt.Usage{InputTokens: 26, OutputTokens: 23 + 132, ReasoningTokens: 132}, resp.Usage)
	})
	t.Run("nested arguments", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, ok(t, "vertex-partial-args-nested-stream.sse"))
		p := New(newClient(t, srv, genai.BackendVertexAI, nil), "gemini-3.1-pro-preview", nil)
		resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages: []agentrt.Message{agentrt.NewUserMessage("A lasagna recipe, please.")},
			OnText:   func(string) {},
		})
		require.NoError(t, err)
		uses := resp.Message.ToolUses()
		require.Len(t, uses, 1)
		assert.Equal(t, "cookRecipe", uses[0].Name)
		var in struct {
			Recipe struct {
				Name        string `json:"name"`
				Ingredients []struct {
					Amount string `json:"amount"`
					Name   string `json:"name"`
				} `json:"ingredients"`
				Steps []string `json:"steps"`
			} `json:"recipe"`
		}
		dec := json.NewDecoder(strings.NewReader(string(uses[0].Input)))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&in), "input %s", uses[0].Input)
		assert.Equal(t, "Lasagna", in.Recipe.Name)
		require.Len(t, in.Recipe.Ingredients, 10)
		assert.Equal(t, "16 oz", in.Recipe.Ingredients[0].Amount)
		assert.Equal(t, "Lasagna noodles", in.Recipe.Ingredients[0].Name)
		assert.Equal(t, "Pepper", in.Recipe.Ingredients[9].Name)
		require.Len(t, in.Recipe.Steps, 10)
		assert.Equal(t, "Preheat oven to 375°F (190°C).", in.Recipe.Steps[0])
		assert.Equal(t, "Cook lasagna noodles according to package directions, drain and set aside.", in.Recipe.Steps[1],
			"a string value split over two pieces")
		assert.Equal(t, "In a 9x13 baking dish, spread a thin layer of meat sauce.", in.Recipe.Steps[4])
		assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
	})
}

// Written here: a history whose calls this Provider did not produce (ids
// from another vendor) gets Google's documented skip signature on the first
// call of each model turn, and consecutive user messages share one turn.
func TestRequestHistoryFromElsewhere(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "text.json"))
	p, _ := newTestProvider(t, srv, nil)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Weather in Paris and Rome?"),
			agentrt.NewUserMessage("In Celsius."),
			agentrt.NewAssistantMessage(
				agentrt.TextBlock("Let me check."),
				agentrt.ToolUseBlock("toolu_01", "weather", json.RawMessage(`{"location":"Paris"}`)),
				agentrt.ToolUseBlock("toolu_02", "weather", nil),
			),
			agentrt.NewToolMessage("toolu_01", "18C", false),
			agentrt.NewToolMessage("toolu_02", `invalid input: field "location" is required`, true),
			agentrt.NewAssistantMessage(agentrt.TextBlock("")),
			agentrt.NewUserMessage("Thanks."),
		},
		Tools: []agentrt.ToolSpec{weatherSpec()},
	})
	require.NoError(t, err)
	skip := base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))
	jsonEq(t, `[
		{"role":"user","parts":[{"text":"Weather in Paris and Rome?"},{"text":"In Celsius."}]},
		{"role":"model","parts":[
			{"text":"Let me check."},
			{"functionCall":{"id":"toolu_01","name":"weather","args":{"location":"Paris"}},"thoughtSignature":"`+skip+`"},
			{"functionCall":{"id":"toolu_02","name":"weather"}}]},
		{"role":"user","parts":[
			{"functionResponse":{"id":"toolu_01","name":"weather","response":{"output":"18C"}}},
			{"functionResponse":{"id":"toolu_02","name":"weather","response":{"error":"invalid input: field \"location\" is required"}}},
			{"text":"Thanks."}]}]`, srv.only(t).Body["contents"],
		"an empty assistant message is left out; empty args are sent as none")
}

func TestRequestOptions(t *testing.T) {
	t.Parallel()
	t.Run("extra fields and response schema", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t, ok(t, "text.json"))
		p, _ := newTestProvider(t, srv, &Options{
			MaxTokens: 100,
			ExtraFields: map[string]any{
				"generationConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 0}},
				"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
			},
		})
		_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
			Messages:       []agentrt.Message{agentrt.NewUserMessage("hi")},
			ResponseSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
		})
		require.NoError(t, err)
		body := srv.only(t).Body
		jsonEq(t, `{"maxOutputTokens":100,"thinkingConfig":{"thinkingBudget":0},
			"responseMimeType":"application/json",
			"responseJsonSchema":{"type":"object","properties":{"n":{"type":"integer"}},"propertyOrdering":["n"],"required":["n"],"additionalProperties":false}}`,
			body["generationConfig"], "extra fields merged into the adapter's; the response schema is sent as JSON Schema")
		jsonEq(t, `[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`, body["safetySettings"])
	})
	t.Run("invalid requests are refused before sending", func(t *testing.T) {
		t.Parallel()
		srv := newReplayServer(t)
		p, _ := newTestProvider(t, srv, nil)
		for name, req := range map[string]*agentrt.ModelRequest{
			"orphan tool result": {Messages: []agentrt.Message{agentrt.NewUserMessage("hi"), agentrt.NewToolMessage("nope", "x", false)}},
			"bad tool schema":    {Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}, Tools: []agentrt.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}}},
		} {
			_, err := p.Plan(context.Background(), req)
			require.Error(t, err, name)
			assert.ErrorIs(t, err, agentrt.ErrInvalidRequest, name)
		}
		assert.Empty(t, srv.reqs())
	})
}

// One Provider used from many goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 8
	replies := make([]reply, 0, n)
	for range n {
		replies = append(replies, ok(t, "parallel-tool-calls-stream.sse"))
	}
	srv := newReplayServer(t, replies...)
	p, _ := newTestProvider(t, srv, nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
				Messages: []agentrt.Message{agentrt.NewUserMessage("Add and multiply 2 and 3")},
				Tools:    arithSpecs(),
				OnText:   func(string) {},
			})
			if err == nil && len(resp.Message.ToolUses()) != 2 {
				err = assert.AnError
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Len(t, srv.reqs(), n)
}

// TestNewRefusesNegativeMaxTokens: a negative Options.MaxTokens is a
// programmer error, not "no cap".
func TestNewRefusesNegativeMaxTokens(t *testing.T) {
	t.Parallel()
	client := newClient(t, newReplayServer(t), genai.BackendGeminiAPI, nil)
	assert.PanicsWithValue(t, "gemini: New: negative MaxTokens -1", func() { New(client, testModel, &Options{MaxTokens: -1}) })
	assert.NotPanics(t, func() { New(client, testModel, &Options{MaxTokens: 0}) })
}
