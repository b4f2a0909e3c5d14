package anthropic

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// The seed's task, end to end: an Agent with a weather tool and a
// calculator answers "What is the sum of today's temperatures in Beijing
// and Shanghai?" through this adapter, against a server that replays three
// streamed answers written here in the API's wire format
// (testdata/written/agent-*.sse). The requests the server saw are checked too.

type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Beijing" validate:"required"`
}

type weatherOut struct {
	City        string  `json:"city"`
	TempCelsius float64 `json:"temp_celsius"`
	Sky         string  `json:"sky"`
}

type calcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div" validate:"oneof=add sub mul div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

func seedTools() []agentrt.Tool {
	today := map[string]weatherOut{
		"beijing":  {City: "Beijing", TempCelsius: 12, Sky: "clear"},
		"shanghai": {City: "Shanghai", TempCelsius: 17.5, Sky: "cloudy"},
	}
	weather := func(_ context.Context, in weatherIn) (weatherOut, error) {
		w, ok := today[strings.ToLower(in.City)]
		if !ok {
			return weatherOut{}, fmt.Errorf("no weather data for %q", in.City)
		}
		return w, nil
	}
	calc := func(_ context.Context, in calcIn) (float64, error) {
		switch in.Op {
		case "add":
			return in.A + in.B, nil
		case "sub":
			return in.A - in.B, nil
		case "mul":
			return in.A * in.B, nil
		}
		return in.A / in.B, nil
	}
	return []agentrt.Tool{
		agentrt.NewTool("weather", "Today's weather in a city.", weather, agentrt.ReadOnly()),
		agentrt.NewTool("calculator", "Apply op to a and b.", calc, agentrt.ReadOnly()),
	}
}

func TestAgentEndToEnd(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		sseReply(fixture(t, "written/agent-1-weather-calls.sse")),
		sseReply(fixture(t, "written/agent-2-calculator-call.sse")),
		sseReply(fixture(t, "written/agent-3-final-answer.sse")),
	)
	store := &agentrt.MemoryStore{}
	tools := seedTools()
	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools:        tools,
		Planner:      r.provider("claude-sonnet-4-5", nil),
		Permission:   agentrt.AllowAll(),
		Store:        store,
	}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", "What is the sum of today's temperatures in Beijing and Shanghai?"))
	require.NoError(t, err)

	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.", done.FinalText)
	assert.Equal(t, 3, done.Turns)
	assert.Equal(t, agentrt.Usage{InputTokens: 702 + 901 + 990, OutputTokens: 96 + 71 + 28}, done.Usage)

	var deltas strings.Builder
	for _, d := range agenttest.Filter[agentrt.TextDelta](events) {
		deltas.WriteString(d.Text)
	}
	assert.Equal(t, "I'll check the weather in both cities.Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.", deltas.String())

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 3)
	assert.Equal(t, `{"city":"Beijing","temp_celsius":12,"sky":"clear"}`, results[0].Message.Content)
	assert.Equal(t, `{"city":"Shanghai","temp_celsius":17.5,"sky":"cloudy"}`, results[1].Message.Content)
	assert.Equal(t, "29.5", results[2].Message.Content)
	for _, res := range results {
		assert.False(t, res.Message.IsError, res.Message.Content)
	}

	session, err := store.Load(context.Background(), "s1")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, session)
	require.Len(t, session, 7, "user, assistant, 2 results, assistant, result, assistant")

	// What the API was sent, turn by turn.
	reqs := r.requests()
	require.Len(t, reqs, 3)
	for i, req := range reqs {
		body := req.json(t)
		assert.Equal(t, true, body["stream"], "request %d", i)
		assert.Equal(t, "claude-sonnet-4-5", body["model"])
		assert.JSONEq(t, `[{"type":"text","text":"You are a careful assistant. Use the tools for facts and arithmetic."}]`, jsonOf(t, body["system"]))
		assert.JSONEq(t, `[
			{"name":"weather","description":"Today's weather in a city.","input_schema":`+string(tools[0].Spec().InputSchema)+`},
			{"name":"calculator","description":"Apply op to a and b.","input_schema":`+string(tools[1].Spec().InputSchema)+`}
		]`, jsonOf(t, body["tools"]), "request %d", i)
	}
	const user = `{"role":"user","content":[{"type":"text","text":"What is the sum of today's temperatures in Beijing and Shanghai?"}]}`
	const turn1 = `{"role":"assistant","content":[
			{"type":"text","text":"I'll check the weather in both cities."},
			{"type":"tool_use","id":"toolu_01WrittenBeijing","name":"weather","input":{"city":"Beijing"}},
			{"type":"tool_use","id":"toolu_01WrittenShanghai","name":"weather","input":{"city":"Shanghai"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_01WrittenBeijing","content":[{"type":"text","text":"{\"city\":\"Beijing\",\"temp_celsius\":12,\"sky\":\"clear\"}"}]},
			{"type":"tool_result","tool_use_id":"toolu_01WrittenShanghai","content":[{"type":"text","text":"{\"city\":\"Shanghai\",\"temp_celsius\":17.5,\"sky\":\"cloudy\"}"}]}]}`
	const turn2 = `{"role":"assistant","content":[
			{"type":"tool_use","id":"toolu_01WrittenAdd","name":"calculator","input":{"op":"add","a":12,"b":17.5}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_01WrittenAdd","content":[{"type":"text","text":"29.5"}]}]}`
	assert.JSONEq(t, `[`+user+`]`, jsonOf(t, reqs[0].json(t)["messages"]))
	assert.JSONEq(t, `[`+user+`,`+turn1+`]`, jsonOf(t, reqs[1].json(t)["messages"]))
	assert.JSONEq(t, `[`+user+`,`+turn1+`,`+turn2+`]`, jsonOf(t, reqs[2].json(t)["messages"]))
}

// A tool failure reaches the model as an is_error tool_result.
func TestAgentToolErrorReachesModel(t *testing.T) {
	t.Parallel()
	first := strings.ReplaceAll(string(fixture(t, "written/agent-1-weather-calls.sse")), "Shanghai", "Atlantis")
	r := newReplay(t,
		sseReply([]byte(first)),
		sseReply(fixture(t, "written/agent-3-final-answer.sse")),
	)
	ag := &agentrt.Agent{
		Tools:      seedTools(),
		Planner:    r.provider("claude-sonnet-4-5", nil),
		Permission: agentrt.AllowAll(),
	}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s1", "Weather in Beijing and Atlantis?"))
	require.NoError(t, err)
	reqs := r.requests()
	require.Len(t, reqs, 2)
	assert.NotContains(t, reqs[0].json(t), "system", "no Instructions, no system prompt")
	msgs := reqs[1].json(t)["messages"].([]any)
	require.Len(t, msgs, 3)
	results := msgs[2].(map[string]any)["content"].([]any)
	require.Len(t, results, 2)
	failed := results[1].(map[string]any)
	assert.Equal(t, "toolu_01WrittenAtlantis", failed["tool_use_id"])
	assert.Equal(t, true, failed["is_error"])
	assert.Contains(t, jsonOf(t, failed["content"]), `no weather data for \"Atlantis\"`)
	assert.NotContains(t, results[0].(map[string]any), "is_error")
}
