package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Schemas reflected from Go types by agentrt.NewTool, as the adapter sends
// them: tool input schemas unchanged (the Messages API takes JSON Schema
// as it is), structured-output schemas through the SDK's transformation.

type schemaAddress struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

type schemaStop struct {
	Name    string `json:"name"`
	Minutes int    `json:"minutes" jsonschema:"minimum=1"`
}

type tripInput struct {
	Traveler string            `json:"traveler" jsonschema:"description=Who travels"`
	Mode     string            `json:"mode" jsonschema:"enum=car,enum=train,enum=plane"`
	Home     schemaAddress     `json:"home"`             // nested struct
	Stops    []schemaStop      `json:"stops"`            // slice of structs
	Budget   *float64          `json:"budget,omitempty"` // optional pointer
	Via      *schemaAddress    `json:"via,omitempty"`    // optional nested struct
	Tags     map[string]string `json:"tags,omitempty"`   // map
	Nights   int               `json:"nights" validate:"required,min=1"`
}

func tripSpec(t *testing.T) agentrt.ToolSpec {
	t.Helper()
	return agentrt.NewTool("plan_trip", "Plan a trip.", func(context.Context, tripInput) (string, error) { return "ok", nil }).Spec()
}

func TestToolSchemaSentAsIs(t *testing.T) {
	t.Parallel()
	spec := tripSpec(t)
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Plan a trip.")},
		Tools:    []agentrt.ToolSpec{spec},
	})
	require.NoError(t, err)

	tools := r.only().json(t)["tools"].([]any)
	require.Len(t, tools, 1)
	tool := tools[0].(map[string]any)
	assert.Equal(t, "plan_trip", tool["name"])
	assert.Equal(t, "Plan a trip.", tool["description"])
	assert.JSONEq(t, string(spec.InputSchema), jsonOf(t, tool["input_schema"]))

	// What the API receives for each kind of field.
	schema := tool["input_schema"].(map[string]any)
	props := schema["properties"].(map[string]any)
	assert.Equal(t, "object", schema["type"])
	assert.ElementsMatch(t, []any{"traveler", "mode", "home", "stops", "nights"}, schema["required"], "optional pointers and omitempty fields are not required")
	assert.Equal(t, []any{"car", "train", "plane"}, props["mode"].(map[string]any)["enum"])
	assert.Equal(t, "object", props["home"].(map[string]any)["type"])
	assert.ElementsMatch(t, []any{"street", "city"}, props["home"].(map[string]any)["required"])
	items := props["stops"].(map[string]any)["items"].(map[string]any)
	assert.Equal(t, "object", items["type"])
	assert.EqualValues(t, 1, items["properties"].(map[string]any)["minutes"].(map[string]any)["minimum"], "kept: tool schemas are not restricted")
	assert.Equal(t, "number", props["budget"].(map[string]any)["type"])
	assert.JSONEq(t, `{"type":"object","additionalProperties":{"type":"string"}}`, jsonOf(t, props["tags"]))
}

func TestInputSchema(t *testing.T) {
	t.Parallel()
	spec := tripSpec(t)
	got, err := inputSchema(append(json.RawMessage("  \n"), spec.InputSchema...))
	require.NoError(t, err)
	assert.JSONEq(t, string(spec.InputSchema), string(got))

	got, err = inputSchema(json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {}\n}"))
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","properties":{}}`, string(got), "compacted")

	for _, empty := range []json.RawMessage{nil, json.RawMessage(" "), json.RawMessage("null")} {
		got, err = inputSchema(empty)
		require.NoError(t, err)
		assert.JSONEq(t, `{"type":"object","properties":{}}`, string(got))
	}
	for _, bad := range []string{`{"properties":{}}`, `{"type":"array"}`, `{"type":["object","null"]}`, `[]`, `{`} {
		_, err := inputSchema(json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
}

func TestOutputSchema(t *testing.T) {
	t.Parallel()
	spec := tripSpec(t)
	got, err := outputSchema(spec.InputSchema)
	require.NoError(t, err)

	// Every object with properties is closed, as structured output needs.
	var walk func(path string, s map[string]any)
	objects := 0
	walk = func(path string, s map[string]any) {
		if props, ok := s["properties"].(map[string]any); ok {
			objects++
			assert.Equal(t, false, s["additionalProperties"], "%s: additionalProperties", path)
			for name, p := range props {
				walk(path+"."+name, p.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", got)
	assert.Equal(t, 4, objects, "top level, home, stops[], via")

	props := got["properties"].(map[string]any)
	assert.Equal(t, []any{"car", "train", "plane"}, props["mode"].(map[string]any)["enum"], "enums kept")
	assert.JSONEq(t, `{"type":"object","additionalProperties":{"type":"string"}}`, jsonOf(t, props["tags"]), "maps kept")
	assert.Equal(t, "number", props["budget"].(map[string]any)["type"])
	assert.ElementsMatch(t, []any{"traveler", "mode", "home", "stops", "nights"}, got["required"])
	minutes := props["stops"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["minutes"].(map[string]any)
	assert.NotContains(t, minutes, "minimum", "unsupported keyword removed")
	assert.Equal(t, "{minimum: 1}", minutes["description"], "and kept as a hint in the description")
	assert.Equal(t, "Who travels", props["traveler"].(map[string]any)["description"])

	_, err = outputSchema(json.RawMessage(`null`))
	assert.Error(t, err)
	_, err = outputSchema(json.RawMessage(`"x"`))
	assert.Error(t, err)
}
