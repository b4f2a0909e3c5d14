package jsonplanner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonplanner"
)

// textModel is a fake Provider for a model without native tool calling: it
// answers each request with the next scripted text and records what it was
// asked (messages copied, so later appends by the caller cannot hide a
// mistake).
type textModel struct {
	mu       sync.Mutex
	answers  []string
	finish   agentrt.FinishReason // of every answer; "" means FinishStop
	requests []agentrt.ModelRequest
}

var _ agentrt.Planner = (*textModel)(nil)

func newTextModel(answers ...string) *textModel { return &textModel{answers: answers} }

// usagePerCall is what every answer of a textModel costs.
var usagePerCall = agentrt.Usage{InputTokens: 100, OutputTokens: 10}

func (m *textModel) Plan(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := *req
	r.Messages = slices.Clone(req.Messages)
	m.requests = append(m.requests, r)
	if len(m.requests) > len(m.answers) {
		return nil, fmt.Errorf("textModel: call %d, only %d answers scripted", len(m.requests), len(m.answers))
	}
	finish := m.finish
	if finish == "" {
		finish = agentrt.FinishStop
	}
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(agentrt.TextBlock(m.answers[len(m.requests)-1])),
		Usage:   usagePerCall,
		Finish:  finish,
		Model:   "text-model-1",
	}, nil
}

// add scripts more answers.
func (m *textModel) add(answers ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers = append(m.answers, answers...)
}

func (m *textModel) Requests() []agentrt.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

type weatherIn struct {
	City string `json:"city" jsonschema:"description=the city name" validate:"required"`
}

func weatherTool() agentrt.Tool {
	return agentrt.NewTool("get_weather", "Get the current weather for a city.",
		func(_ context.Context, in weatherIn) (string, error) {
			return "18°C and sunny in " + in.City, nil
		}, agentrt.ReadOnly())
}

func timeTool() agentrt.Tool {
	return agentrt.NewRawTool("get_time", "Get the current time.", json.RawMessage(`{"type":"object","properties":{}}`),
		func(context.Context, json.RawMessage) (string, error) { return "12:00", nil }, agentrt.ReadOnly())
}

// weatherRequest is a first-turn request of an agent with the weather and
// time tools.
func weatherRequest() *agentrt.ModelRequest {
	return &agentrt.ModelRequest{
		SessionID: "s1",
		Turn:      1,
		System:    "You are a weather assistant.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Weather in Paris?")},
		Tools:     []agentrt.ToolSpec{weatherTool().Spec(), timeTool().Spec()},
	}
}

func toolUse(id, name, input string) agentrt.Message {
	return agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id, name, json.RawMessage(input)))
}

func TestJSONPlannerReadsMessyAnswers(t *testing.T) {
	t.Parallel()
	parisCall := toolUse("json_1_1", "get_weather", `{"city":"Paris"}`)
	tests := []struct {
		name   string
		answer string
		want   agentrt.Message
	}{
		{"plain JSON", `{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}`, parisCall},
		{"fenced", "```json\n{\n  \"action\": \"tool_call\",\n  \"name\": \"get_weather\",\n  \"arguments\": {\"city\": \"Paris\"}\n}\n```", parisCall},
		{"prose before and after", "I should look this up.\n{\"action\":\"tool_call\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\nLet me know if you need more.", parisCall},
		{"two objects: the first wins", `{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}} {"action":"final_answer","answer":"sunny"}`, parisCall},
		{"trailing commas", `{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris",},}`, parisCall},
		{"comments", "{\n// weather first\n\"action\":\"tool_call\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}", parisCall},
		{"arguments as a JSON string", `{"action":"tool_call","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`, parisCall},
		{"extra keys are ignored", `{"thought":"need data","action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}`, parisCall},
		{"action in another case", `{"action":"Tool_Call","name":"get_weather","arguments":{"city":"Paris"}}`, parisCall},
		{"missing arguments mean {}", `{"action":"tool_call","name":"get_time"}`, toolUse("json_1_1", "get_time", `{}`)},
		{"several calls", `{"action":"tool_calls","calls":[{"name":"get_weather","arguments":{"city":"Paris"}},{"name":"get_time","arguments":{}}]}`,
			agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("json_1_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)),
				agentrt.ToolUseBlock("json_1_2", "get_time", json.RawMessage(`{}`)))},
		{"final answer", `{"action":"final_answer","answer":"It is sunny in Paris."}`,
			agentrt.NewAssistantMessage(agentrt.TextBlock("It is sunny in Paris."))},
		{"final answer with a raw newline", "{\"action\":\"final_answer\",\"answer\":\"Sunny.\nWarm.\"}",
			agentrt.NewAssistantMessage(agentrt.TextBlock("Sunny.\nWarm."))},
		{"final answer holding a code fence", "{\"action\":\"final_answer\",\"answer\":\"Run:\\n```sh\\ncurl {x}\\n```\"}",
			agentrt.NewAssistantMessage(agentrt.TextBlock("Run:\n```sh\ncurl {x}\n```"))},
		{"structured final answer", `{"action":"final_answer","answer":{"temp_c": 18, "sky": "sunny"}}`,
			agentrt.NewAssistantMessage(agentrt.TextBlock(`{"temp_c": 18, "sky": "sunny"}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := newTextModel(tt.answer)
			resp, err := jsonplanner.New(model, nil).Plan(t.Context(), weatherRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Message)
			assert.Equal(t, usagePerCall, resp.Usage)
			assert.Equal(t, "text-model-1", resp.Model)
			if tt.want.HasToolUse() {
				assert.Equal(t, agentrt.FinishToolUse, resp.Finish)
			} else {
				assert.Equal(t, agentrt.FinishStop, resp.Finish)
			}
			assert.Len(t, model.Requests(), 1)
		})
	}
}

func TestJSONPlannerProviderRequest(t *testing.T) {
	t.Parallel()
	model := newTextModel(`{"action":"final_answer","answer":"ok"}`)
	req := weatherRequest()
	req.MaxTokens = 512
	req.ResponseSchema = json.RawMessage(`{"type":"object", "properties":{"temp_c":{"type":"number"}}}`)
	req.OnText = func(string) {}
	_, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	require.NoError(t, err)

	reqs := model.Requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Nil(t, got.Tools, "the provider must not see native tools")
	assert.Nil(t, got.OnText, "raw JSON must not be streamed")
	assert.Nil(t, got.ResponseSchema, "the response schema is in the prompt, not forwarded")
	assert.Equal(t, 512, got.MaxTokens)
	assert.Equal(t, "s1", got.SessionID)
	assert.Equal(t, 1, got.Turn)
	assert.Equal(t, req.Messages, got.Messages)

	sys := got.System
	assert.True(t, strings.HasPrefix(sys, "You are a weather assistant.\n\n# Tools\n"), sys)
	assert.Contains(t, sys, "## get_weather\nGet the current weather for a city.\nInput schema: "+string(compactJSON(t, weatherTool().Spec().InputSchema)))
	assert.Contains(t, sys, "## get_time\nGet the current time.\nInput schema: {\"type\":\"object\",\"properties\":{}}")
	assert.Contains(t, sys, `{"action":"tool_call","name":"TOOL_NAME","arguments":{...}}`)
	assert.Contains(t, sys, `{"action":"tool_calls","calls":[`)
	assert.Contains(t, sys, `{"action":"final_answer","answer":"YOUR ANSWER"}`)
	assert.Contains(t, sys, `"Tool result for ID (TOOL_NAME): ..."`)
	assert.True(t, strings.HasSuffix(sys, `must be a JSON value that matches this JSON Schema: {"type":"object","properties":{"temp_c":{"type":"number"}}}`), sys)
}

func compactJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v json.RawMessage
	require.NoError(t, json.Unmarshal(b, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

func TestJSONPlannerWithoutTools(t *testing.T) {
	t.Parallel()
	model := newTextModel(
		`{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}`,
		`{"action":"final_answer","answer":"I cannot check the weather."}`)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Weather in Paris?")}}
	resp, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, "I cannot check the weather.", resp.Message.Text())

	reqs := model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "# Answer format\n\nAnswer with exactly one JSON object, and nothing before or after it:\n"+
		`{"action":"final_answer","answer":"YOUR ANSWER"}`, reqs[0].System)
	assert.Equal(t, "Your previous answer could not be used: unknown tool \"get_weather\": no tools are available, give a final_answer.\n"+
		"Answer again with exactly one JSON object and nothing else, in this form:\n"+
		`{"action":"final_answer","answer":"YOUR ANSWER"}`, reqs[1].Messages[2].Content)
}

// A bad answer goes back to the model with what was wrong; the next answer
// is used, and the usage of both calls is counted.
func TestJSONPlannerCorrectsBadAnswers(t *testing.T) {
	t.Parallel()
	good := `{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}`
	tests := []struct {
		name        string
		bad         string
		finish      agentrt.FinishReason
		wantProblem string
	}{
		{"wrong action", `{"action":"call_tool","name":"get_weather","arguments":{"city":"Paris"}}`, "",
			`unknown action "call_tool": use "tool_call", "tool_calls" or "final_answer"`},
		{"no action", `{"name":"get_weather","arguments":{"city":"Paris"}}`, "", `the JSON object has no "action"`},
		{"action not a string", `{"action":1}`, "", `"action" must be a string`},
		{"unknown tool", `{"action":"tool_call","name":"get_wether","arguments":{"city":"Paris"}}`, "",
			`unknown tool "get_wether": the available tools are "get_time", "get_weather"`},
		{"missing name", `{"action":"tool_call","arguments":{"city":"Paris"}}`, "",
			`a tool call needs a "name": the name of one of the tools`},
		{"arguments not an object", `{"action":"tool_call","name":"get_weather","arguments":["Paris"]}`, "",
			`"arguments" of tool "get_weather" must be a JSON object, not an array`},
		{"a bad call among several", `{"action":"tool_calls","calls":[{"name":"get_time"},{"name":"nope"}]}`, "",
			`calls[1]: unknown tool "nope"`},
		{"empty calls", `{"action":"tool_calls","calls":[]}`, "", `a tool_calls decision needs a non-empty "calls" array`},
		{"final answer without answer", `{"action":"final_answer"}`, "", `a final_answer needs an "answer"`},
		{"no JSON at all", `The weather in Paris is probably nice.`, "", `no JSON object found`},
		{"invalid JSON", `{"action": 'tool_call'}`, "", `the JSON object is not valid JSON: invalid character '\''`},
		{"cut off at the token limit", `{"action":"final_answer","answer":"The weather in Pa`, agentrt.FinishLength,
			`the JSON object is not closed: the text ends inside it (the answer was cut off at the token limit: keep it shorter)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := newTextModel(tt.bad, good)
			model.finish = tt.finish
			req := weatherRequest()
			resp, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
			require.NoError(t, err)
			assert.Equal(t, toolUse("json_1_1", "get_weather", `{"city":"Paris"}`), resp.Message)
			assert.Equal(t, usagePerCall.Add(usagePerCall), resp.Usage, "usage of both attempts")

			reqs := model.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, reqs[0].System, reqs[1].System)
			require.Len(t, reqs[1].Messages, 3)
			assert.Equal(t, req.Messages[0], reqs[1].Messages[0])
			assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(tt.bad)), reqs[1].Messages[1])
			correction := reqs[1].Messages[2]
			assert.Equal(t, agentrt.RoleUser, correction.Role)
			assert.True(t, strings.HasPrefix(correction.Content, "Your previous answer could not be used: "+tt.wantProblem), correction.Content)
			assert.Contains(t, correction.Content, `{"action":"tool_call","name":"TOOL_NAME","arguments":{...}}`)
			assert.Len(t, req.Messages, 1, "the request's messages are not modified")
		})
	}
}

func TestJSONPlannerCorrectionText(t *testing.T) {
	t.Parallel()
	model := newTextModel("", `{"action":"final_answer","answer":"ok"}`)
	_, err := jsonplanner.New(model, nil).Plan(t.Context(), weatherRequest())
	require.NoError(t, err)
	msgs := model.Requests()[1].Messages
	require.Len(t, msgs, 3)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("(empty answer)")), msgs[1])
	assert.Equal(t, "Your previous answer could not be used: no JSON object found.\n"+
		"Answer again with exactly one JSON object and nothing else, in one of these forms:\n"+
		`{"action":"tool_call","name":"TOOL_NAME","arguments":{...}}`+"\n"+
		`{"action":"tool_calls","calls":[{"name":"TOOL_NAME","arguments":{...}},{"name":"TOOL_NAME","arguments":{...}}]}`+"\n"+
		`{"action":"final_answer","answer":"YOUR ANSWER"}`, msgs[2].Content)
}

func TestJSONPlannerGivesUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      *jsonplanner.Options
		wantCalls int
	}{
		{"default: two retries", nil, 3},
		{"zero means the default", &jsonplanner.Options{}, 3},
		{"one retry", &jsonplanner.Options{MaxRetries: 1}, 2},
		{"no retry", &jsonplanner.Options{MaxRetries: -1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			answers := make([]string, 5)
			for i := range answers {
				answers[i] = fmt.Sprintf("I refuse to write JSON (%d). %s", i+1, strings.Repeat("blah ", 100))
			}
			model := newTextModel(answers...)
			resp, err := jsonplanner.New(model, tt.opts).Plan(t.Context(), weatherRequest())
			require.ErrorIs(t, err, jsonplanner.ErrUnparsableDecision)
			assert.Nil(t, resp)
			assert.Len(t, model.Requests(), tt.wantCalls)
			msg := err.Error()
			assert.Contains(t, msg, fmt.Sprintf("(%d attempts): no JSON object found; last answer: \"I refuse to write JSON (%d).", tt.wantCalls, tt.wantCalls))
			assert.Less(t, len(msg), 450, "the last answer is truncated: %s", msg)
		})
	}
}

func TestJSONPlannerProviderError(t *testing.T) {
	t.Parallel()
	boom := &agentrt.ProviderError{Provider: "local", Kind: agentrt.ErrOverloaded}
	calls := 0
	p := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		calls++
		return nil, boom
	})
	_, err := jsonplanner.New(p, nil).Plan(t.Context(), weatherRequest())
	require.ErrorIs(t, err, agentrt.ErrOverloaded)
	assert.NotErrorIs(t, err, jsonplanner.ErrUnparsableDecision)
	assert.Equal(t, 1, calls, "a provider error is not retried by the planner")
}

// The provider sees the session as text: tool_use blocks as the decisions
// that made them, tool results as user messages. New ids stay unique.
func TestJSONPlannerHistory(t *testing.T) {
	t.Parallel()
	session := []agentrt.Message{
		agentrt.NewUserMessage("Hi"),
		agentrt.NewAssistantMessage(agentrt.TextBlock(`Hello! Ask me about <the> weather & time.`)),
		agentrt.NewUserMessage("Weather in Paris and Rome?"),
		agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("json_2_1", "get_weather", json.RawMessage(`{"city": "Paris"}`)),
			agentrt.ToolUseBlock("json_2_2", "get_weather", json.RawMessage(`{"city":"Rome"}`))),
		agentrt.NewToolMessage("json_2_1", "18°C and sunny in Paris", false),
		agentrt.NewToolMessage("json_2_2", "no data for Rome", true),
		// A message from a native tool-calling model earlier in the session.
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me check the time."),
			agentrt.ToolUseBlock("toolu_01", "get_time", nil)),
		agentrt.NewToolMessage("toolu_01", "12:00", false),
	}
	before := slices.Clone(session)
	for i := range before {
		before[i].Blocks = slices.Clone(before[i].Blocks)
	}
	model := newTextModel(`{"action":"tool_call","name":"get_weather","arguments":{"city":"Rome"}}`)
	req := weatherRequest()
	req.Turn = 3
	req.Messages = session[:len(session):len(session)]
	resp, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, toolUse("json_4_1", "get_weather", `{"city":"Rome"}`), resp.Message,
		"the id counts the session's assistant messages")

	want := []agentrt.Message{
		agentrt.NewUserMessage("Hi"),
		agentrt.NewAssistantMessage(agentrt.TextBlock(`{"action":"final_answer","answer":"Hello! Ask me about <the> weather & time."}`)),
		agentrt.NewUserMessage("Weather in Paris and Rome?"),
		agentrt.NewAssistantMessage(agentrt.TextBlock(`{"action":"tool_calls","calls":[{"name":"get_weather","arguments":{"city":"Paris"}},{"name":"get_weather","arguments":{"city":"Rome"}}]}`)),
		agentrt.NewUserMessage("Tool result for json_2_1 (get_weather): 18°C and sunny in Paris\n\n" +
			"Tool error for json_2_2 (get_weather): no data for Rome"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me check the time.\n" + `{"action":"tool_call","name":"get_time","arguments":{}}`)),
		agentrt.NewUserMessage("Tool result for toolu_01 (get_time): 12:00"),
	}
	reqs := model.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, want, reqs[0].Messages)
	assert.Equal(t, before, session, "the session is not modified")
}

// An id already used in the session is never given again.
func TestJSONPlannerIDsAvoidCollisions(t *testing.T) {
	t.Parallel()
	model := newTextModel(`{"action":"tool_call","name":"get_time"}`)
	req := weatherRequest()
	req.Messages = []agentrt.Message{
		agentrt.NewUserMessage("Time?"),
		toolUse("json_2_1", "get_time", `{}`), // made by someone else
		agentrt.NewToolMessage("json_2_1", "11:00", false),
	}
	resp, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, toolUse("json_3_1", "get_time", `{}`), resp.Message)
}

func TestJSONPlannerPrompt(t *testing.T) {
	t.Parallel()
	model := newTextModel(`{"action":"final_answer","answer":"ok"}`)
	tmpl := "{{.Instructions}}\nTOOLS:{{range .Specs}} {{.Name}}={{printf \"%s\" .InputSchema}}{{end}}\n{{.Format}}"
	planner := jsonplanner.New(model, &jsonplanner.Options{Prompt: tmpl})
	req := weatherRequest()
	_, err := planner.Plan(t.Context(), req)
	require.NoError(t, err)
	sys := model.Requests()[0].System
	assert.True(t, strings.HasPrefix(sys, "You are a weather assistant.\nTOOLS: get_weather={\"")) // the schema as JSON
	assert.Contains(t, sys, ` get_time={"type":"object","properties":{}}`+"\n# Answer format\n")
	assert.NotContains(t, sys, "# Tools")

	_, err = jsonplanner.New(model, &jsonplanner.Options{Prompt: "{{.Nope}}"}).Plan(t.Context(), req)
	require.ErrorContains(t, err, "prompt template")
	assert.Len(t, model.Requests(), 1, "no call with a broken prompt")
}

func TestJSONPlannerPanicsOnProgrammerErrors(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "jsonplanner.New: nil Provider", func() { jsonplanner.New(nil, nil) })
	assert.Panics(t, func() {
		jsonplanner.New(newTextModel(), &jsonplanner.Options{Prompt: "{{.Instructions"})
	})
}

type describedModel struct{ *textModel }

func (describedModel) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: "local", Model: "tiny-1"}
}

func TestJSONPlannerDescribe(t *testing.T) {
	t.Parallel()
	d, ok := jsonplanner.New(describedModel{newTextModel()}, nil).(interface{ Describe() agentrt.ProviderInfo })
	require.True(t, ok)
	assert.Equal(t, agentrt.ProviderInfo{Name: "local", Model: "tiny-1"}, d.Describe())
	d, ok = jsonplanner.New(newTextModel(), nil).(interface{ Describe() agentrt.ProviderInfo })
	require.True(t, ok)
	assert.Equal(t, agentrt.ProviderInfo{}, d.Describe())
}

func TestJSONPlannerCancelledBetweenAttempts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	p := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		calls++
		cancel() // the context ends while the model answers badly
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("no json"))}, nil
	})
	_, err := jsonplanner.New(p, nil).Plan(ctx, weatherRequest())
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
}

// A whole run on a model that only returns text: it calls a tool through
// the JSON decision, reads the result, and answers.
func TestJSONPlannerAgentRun(t *testing.T) {
	t.Parallel()
	model := newTextModel(
		"I'll look it up.\n```json\n{\"action\": \"tool_call\", \"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\",},}\n```",
		`{"action":"final_answer","answer":"It is 18°C and sunny in Paris."}`,
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Instructions: "You are a weather assistant.",
		Tools:        []agentrt.Tool{weatherTool()},
		Planner:      jsonplanner.New(model, nil),
		Permission:   agentrt.AllowAll(),
		Store:        store,
	}
	events, err := agenttest.Collect(ag.Run(t.Context(), "s", "Weather in Paris?"))
	require.NoError(t, err)

	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "It is 18°C and sunny in Paris.", done.FinalText)
	assert.Equal(t, 2, done.Turns)
	assert.Equal(t, usagePerCall.Add(usagePerCall), done.Usage)

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 1)
	assert.Equal(t, agentrt.NewToolMessage("json_1_1", "18°C and sunny in Paris", false), results[0].Message)
	assert.NoError(t, results[0].Err)

	deltas := agenttest.Filter[agentrt.TextDelta](events)
	require.Len(t, deltas, 1, "only the final answer is streamed, once")
	assert.Equal(t, agentrt.TextDelta{Turn: 2, Text: "It is 18°C and sunny in Paris."}, deltas[0])

	reqs := model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []agentrt.Message{
		agentrt.NewUserMessage("Weather in Paris?"),
		agentrt.NewAssistantMessage(agentrt.TextBlock(`{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}`)),
		agentrt.NewUserMessage("Tool result for json_1_1 (get_weather): 18°C and sunny in Paris"),
	}, reqs[1].Messages)

	msgs, err := store.Load(t.Context(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	assert.Equal(t, []agentrt.Message{
		agentrt.NewUserMessage("Weather in Paris?"),
		toolUse("json_1_1", "get_weather", `{"city":"Paris"}`),
		agentrt.NewToolMessage("json_1_1", "18°C and sunny in Paris", false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("It is 18°C and sunny in Paris.")),
	}, msgs, "the session holds the decisions, not the raw JSON text")

	// A second run on the same session gets fresh ids.
	model.add(
		`{"action":"tool_call","name":"get_weather","arguments":{"city":"Rome"}}`,
		`{"action":"final_answer","answer":"Rome too."}`)
	_, err = agenttest.Collect(ag.Run(t.Context(), "s", "And Rome?"))
	require.NoError(t, err)
	msgs, err = store.Load(t.Context(), "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 8)
	assert.Equal(t, toolUse("json_3_1", "get_weather", `{"city":"Rome"}`), msgs[5])
}

// A run whose model never gives a usable decision ends with the planner's
// error, and the session stays valid.
func TestJSONPlannerAgentRunGivesUp(t *testing.T) {
	t.Parallel()
	model := newTextModel("nope", "still nope", "no")
	ag := &agentrt.Agent{
		Tools:      []agentrt.Tool{weatherTool()},
		Planner:    jsonplanner.New(model, nil),
		Permission: agentrt.AllowAll(),
	}
	events, err := agenttest.Collect(ag.Run(t.Context(), "s", "Weather?"))
	require.ErrorIs(t, err, jsonplanner.ErrUnparsableDecision)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopError, done.Reason)
	assert.Len(t, model.Requests(), 3)
}

func ExampleNew() {
	// A model without native tool calling: it answers with text only.
	answers := []string{
		"```json\n{\"action\": \"tool_call\", \"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 40}}\n```",
		`{"action": "final_answer", "answer": "2 + 40 = 42"}`,
	}
	calls := 0
	model := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		text := answers[calls]
		calls++
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text))}, nil
	})

	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())

	ag := &agentrt.Agent{
		Instructions: "You are a careful calculator.",
		Tools:        []agentrt.Tool{add},
		Planner:      jsonplanner.New(model, nil),
	}
	for ev, err := range ag.Run(context.Background(), "example", "What is 2+40?") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Println("call:", e.ToolUseID, e.Tool.Name, string(e.RawInput))
		case agentrt.ToolResult:
			fmt.Println("result:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("done:", e.FinalText)
		}
	}
	// Output:
	// call: json_1_1 add {"a":2,"b":40}
	// result: 42
	// done: 2 + 40 = 42
}

// A provider that puts its text in Content, even without a role, is read
// too.
func TestJSONPlannerReadsContent(t *testing.T) {
	t.Parallel()
	p := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		return &agentrt.ModelResponse{Message: agentrt.Message{
			Content: `{"action":"final_answer",`,
			Blocks:  []agentrt.Block{agentrt.TextBlock(`"answer":"from content"}`)},
		}}, nil
	})
	resp, err := jsonplanner.New(p, nil).Plan(t.Context(), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("from content")), resp.Message)
	assert.Equal(t, agentrt.FinishStop, resp.Finish, "an empty finish reason becomes stop")
}
