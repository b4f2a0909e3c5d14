package openai_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

type calcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

// TestAgentRun drives the seed's task ("what do the temperatures of
// Beijing and Shanghai add up to?") end to end: a real Agent with a weather
// tool and a calculator, on this Provider, against a server that replays
// three streamed answers written here in the API's wire format
// (testdata/written/agent-turn*.sse): two parallel weather calls, then text
// and a calculator call, then the final answer.
func TestAgentRun(t *testing.T) {
	t.Parallel()
	srv := newReplay(t,
		reply{body: fixture(t, "written/agent-turn1.sse"), sse: true},
		reply{body: fixture(t, "written/agent-turn2.sse"), sse: true},
		reply{body: fixture(t, "written/agent-turn3.sse"), sse: true},
	)
	var mu sync.Mutex
	var units []string
	weather := agentrt.NewTool("get_weather", "Current temperature of a city.",
		func(_ context.Context, in weatherIn) (string, error) {
			mu.Lock()
			units = append(units, in.City+":"+in.Unit)
			mu.Unlock()
			temps := map[string]int{"Beijing": 21, "Shanghai": 25}
			c, ok := temps[in.City]
			if !ok {
				return "", fmt.Errorf("no data for %q", in.City)
			}
			return fmt.Sprintf("%s: %d°C", in.City, c), nil
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
			case "div":
				return in.A / in.B, nil
			}
			return 0, fmt.Errorf("unknown op %q", in.Op)
		}, agentrt.ReadOnly())
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools.",
		Tools:        []agentrt.Tool{weather, calculator},
		Planner:      srv.provider(nil),
		Permission:   agentrt.AllowAll(),
		Store:        store,
	}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s1", "北京和上海的气温加起来是多少度?"))
	require.NoError(t, err)

	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "Together the temperatures in Beijing and Shanghai add up to 46°C.", done.FinalText)
	assert.Equal(t, 3, done.Turns)
	assert.Equal(t, agentrt.Usage{InputTokens: 142 + 231 + 290, OutputTokens: 52 + 41 + 14}, done.Usage)

	var streamed strings.Builder
	for _, d := range agenttest.Filter[agentrt.TextDelta](events) {
		streamed.WriteString(d.Text)
	}
	assert.Equal(t, "Beijing is 21°C and Shanghai is 25°C. Let me add them."+done.FinalText, streamed.String())

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 3)
	for i, want := range []string{"Beijing: 21°C", "Shanghai: 25°C", "46"} {
		assert.False(t, results[i].Message.IsError, "result %d: %v", i, results[i].Err)
		assert.Equal(t, want, results[i].Message.Content)
	}
	assert.ElementsMatch(t, []string{"Beijing:", "Shanghai:celsius"}, units, "the strict-mode null for unit decodes as absent")

	msgs, err := store.Load(context.Background(), "s1")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	assert.Len(t, msgs, 7) // user, assistant, 2 results, assistant, result, assistant

	// What the server saw, turn by turn.
	require.Equal(t, 3, srv.count())
	first := srv.request(0).Body
	assert.Equal(t, true, first["stream"])
	jsonEq(t, `{"include_usage":true}`, first["stream_options"])
	jsonEq(t, `[{"role":"system","content":"You are a careful assistant. Use the tools."},
		{"role":"user","content":"北京和上海的气温加起来是多少度?"}]`, first["messages"])
	jsonEq(t, `[{"type":"function","function":{"name":"get_weather","description":"Current temperature of a city.","strict":true,
			"parameters":{"properties":{"city":{"type":"string","description":"City name"},
				"unit":{"anyOf":[{"type":"string","enum":["celsius","fahrenheit"]},{"type":"null"}]}},
				"additionalProperties":false,"type":"object","required":["city","unit"]}}},
		{"type":"function","function":{"name":"calculator","description":"Arithmetic on two numbers.","strict":true,
			"parameters":{"properties":{"op":{"type":"string","enum":["add","sub","mul","div"]},"a":{"type":"number"},"b":{"type":"number"}},
				"additionalProperties":false,"type":"object","required":["op","a","b"]}}}]`, first["tools"])

	second := `[{"role":"system","content":"You are a careful assistant. Use the tools."},
		{"role":"user","content":"北京和上海的气温加起来是多少度?"},
		{"role":"assistant","tool_calls":[
			{"id":"call_w1Beijing000000000000","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Beijing\", \"unit\": null}"}},
			{"id":"call_w2Shanghai0000000000","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Shanghai\", \"unit\": \"celsius\"}"}}]},
		{"role":"tool","tool_call_id":"call_w1Beijing000000000000","content":"Beijing: 21°C"},
		{"role":"tool","tool_call_id":"call_w2Shanghai0000000000","content":"Shanghai: 25°C"}]`
	jsonEq(t, second, srv.request(1).Body["messages"])
	third := strings.TrimSuffix(second, "]") + `,
		{"role":"assistant","content":"Beijing is 21°C and Shanghai is 25°C. Let me add them.","tool_calls":[
			{"id":"call_c1Add0000000000000000","type":"function","function":{"name":"calculator","arguments":"{\"op\": \"add\", \"a\": 21, \"b\": 25}"}}]},
		{"role":"tool","tool_call_id":"call_c1Add0000000000000000","content":"46"}]`
	jsonEq(t, third, srv.request(2).Body["messages"])
}
