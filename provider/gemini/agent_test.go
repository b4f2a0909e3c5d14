package gemini

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

type cityIn struct {
	City string `json:"city" jsonschema:"description=City name"`
}

type calcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

// The seed's task, end to end: "what do the temperatures of Beijing and
// Shanghai add up to?" The model asks for both cities' weather in one turn
// (parallel calls), adds the two with the calculator, then answers. The
// three streamed answers are written here in the Gemini API's wire format
// (testdata/written/agent-turn-*.sse); the requests are checked as the
// server received them.
func TestAgentWeatherAndCalculator(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "written/agent-turn-1.sse"),
		ok(t, "written/agent-turn-2.sse"),
		ok(t, "written/agent-turn-3.sse"))
	p, _ := newTestProvider(t, srv, nil)

	temps := map[string]int{"Beijing": 25, "Shanghai": 28}
	weather := agentrt.NewTool("get_weather", "Current temperature of a city, in °C.",
		func(_ context.Context, in cityIn) (map[string]any, error) {
			c, ok := temps[in.City]
			if !ok {
				return nil, fmt.Errorf("unknown city %q", in.City)
			}
			return map[string]any{"city": in.City, "temp_c": c}, nil
		}, agentrt.ReadOnly())
	calculator := agentrt.NewTool("calculator", "Arithmetic on two numbers.",
		func(_ context.Context, in calcIn) (float64, error) {
			switch in.Op {
			case "add":
				return in.A + in.B, nil
			case "sub":
				return in.A - in.B, nil
			case "mul":
				return in.A * in.B, nil
			}
			return in.A / in.B, nil
		}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools.",
		Tools:        []agentrt.Tool{weather, calculator},
		Planner:      p,
		Permission:   agentrt.AllowAll(),
		Store:        store,
	}
	const question = "What do the temperatures of Beijing and Shanghai add up to?"
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", question))
	require.NoError(t, err)

	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "Together, Beijing (25°C) and Shanghai (28°C) add up to 53°C.", done.FinalText)
	assert.Equal(t, 3, done.Turns)
	assert.Equal(t, agentrt.Usage{InputTokens: 112 + 190 + 262, OutputTokens: 30 + 48 + 31 + 19 + 18, ReasoningTokens: 48 + 19}, done.Usage)
	var streamed strings.Builder
	for _, d := range agenttest.Filter[agentrt.TextDelta](events) {
		streamed.WriteString(d.Text)
	}
	assert.Equal(t, "Beijing is 25°C and Shanghai is 28°C. Together, Beijing (25°C) and Shanghai (28°C) add up to 53°C.", streamed.String())
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 3)
	for _, r := range results {
		assert.False(t, r.Message.IsError, "%v", r.Message)
	}

	msgs, err := store.Load(context.Background(), "s1")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)

	reqs := srv.reqs()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.Equal(t, "/v1beta/models/"+testModel+":streamGenerateContent", r.Path, "request %d", i+1)
		jsonEq(t, `{"role":"user","parts":[{"text":"You are a careful assistant. Use the tools."}]}`, r.Body["systemInstruction"])
		jsonEq(t, `[{"functionDeclarations":[
			{"name":"get_weather","description":"Current temperature of a city, in °C.",
			 "parameters":{"type":"OBJECT","required":["city"],"properties":{"city":{"type":"STRING","description":"City name"}}}},
			{"name":"calculator","description":"Arithmetic on two numbers.",
			 "parameters":{"type":"OBJECT","required":["op","a","b"],"properties":{
				"op":{"type":"STRING","enum":["add","sub","mul","div"]},"a":{"type":"NUMBER"},"b":{"type":"NUMBER"}}}}]}]`,
			r.Body["tools"], "request %d", i+1)
	}
	sig1 := base64.StdEncoding.EncodeToString([]byte("signature-of-turn-1"))
	sig2 := base64.StdEncoding.EncodeToString([]byte("signature-of-turn-2"))
	turn1 := `{"role":"model","parts":[
		{"functionCall":{"id":"call_agentTurn1_0","name":"get_weather","args":{"city":"Beijing"}},"thoughtSignature":"` + sig1 + `"},
		{"functionCall":{"id":"call_agentTurn1_1","name":"get_weather","args":{"city":"Shanghai"}}}]}`
	results1 := `{"role":"user","parts":[
		{"functionResponse":{"id":"call_agentTurn1_0","name":"get_weather","response":{"output":"{\"city\":\"Beijing\",\"temp_c\":25}"}}},
		{"functionResponse":{"id":"call_agentTurn1_1","name":"get_weather","response":{"output":"{\"city\":\"Shanghai\",\"temp_c\":28}"}}}]}`
	turn2 := `{"role":"model","parts":[
		{"text":"Beijing is 25°C and Shanghai is 28°C. "},
		{"functionCall":{"id":"call_agentTurn2_0","name":"calculator","args":{"a":25,"b":28,"op":"add"}},"thoughtSignature":"` + sig2 + `"}]}`
	results2 := `{"role":"user","parts":[
		{"functionResponse":{"id":"call_agentTurn2_0","name":"calculator","response":{"output":"53"}}}]}`
	user := `{"role":"user","parts":[{"text":"` + question + `"}]}`
	jsonEq(t, `[`+user+`]`, reqs[0].Body["contents"])
	jsonEq(t, `[`+user+`,`+turn1+`,`+results1+`]`, reqs[1].Body["contents"])
	jsonEq(t, `[`+user+`,`+turn1+`,`+results1+`,`+turn2+`,`+results2+`]`, reqs[2].Body["contents"])
}
