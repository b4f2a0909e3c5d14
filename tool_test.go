package agentrt_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

type Address struct {
	City string `json:"city" validate:"required"`
	Zip  string `json:"zip,omitempty" validate:"omitempty,len=5"`
}

type OrderIn struct {
	Item     string            `json:"item" jsonschema:"description=What to order" validate:"required,min=2"`
	Size     string            `json:"size" jsonschema:"enum=small,enum=large" validate:"oneof=small large"`
	Quantity int               `json:"quantity,omitempty" validate:"omitempty,gte=1,lte=10"`
	Ship     *Address          `json:"ship,omitempty"`
	Lines    []Address         `json:"lines,omitempty" validate:"dive"`
	Tags     map[string]string `json:"tags,omitempty"`
	Express  bool              `json:"express,omitempty"`
}

func orderTool() agentrt.Tool {
	return agentrt.NewTool("order", "Place an order.", func(_ context.Context, in OrderIn) (OrderIn, error) { return in, nil })
}

func TestNewToolSchema(t *testing.T) {
	t.Parallel()
	spec := orderTool().Spec()
	assert.Equal(t, "order", spec.Name)
	assert.False(t, spec.ReadOnly)
	var s map[string]any
	require.NoError(t, json.Unmarshal(spec.InputSchema, &s))
	assert.Equal(t, "object", s["type"])
	assert.Equal(t, false, s["additionalProperties"])
	assert.NotContains(t, s, "$ref")
	assert.NotContains(t, s, "$defs")
	assert.NotContains(t, s, "$schema")
	assert.ElementsMatch(t, []any{"item", "size"}, s["required"])
	props := s["properties"].(map[string]any)
	assert.Equal(t, "What to order", props["item"].(map[string]any)["description"])
	assert.Equal(t, []any{"small", "large"}, props["size"].(map[string]any)["enum"])
	ship := props["ship"].(map[string]any)
	assert.Equal(t, "object", ship["type"], "nested structs are inlined, not referenced")
	assert.Equal(t, []any{"city"}, ship["required"])
	lines := props["lines"].(map[string]any)
	assert.Equal(t, "array", lines["type"])
	assert.Equal(t, "object", lines["items"].(map[string]any)["type"])
}

func TestNewToolProgrammerErrors(t *testing.T) {
	t.Parallel()
	fn := func(context.Context, AddIn) (int, error) { return 0, nil }
	assert.PanicsWithValue(t, `agentrt: NewTool: invalid tool name "bad name": must match ^[a-zA-Z0-9_-]{1,64}$`, func() { agentrt.NewTool("bad name", "", fn) })
	assert.Panics(t, func() { agentrt.NewTool("", "", fn) })
	assert.Panics(t, func() { agentrt.NewTool("x", "", func(context.Context, int) (int, error) { return 0, nil }) })
	assert.Panics(t, func() { agentrt.NewTool[AddIn, int]("x", "", nil) })
	assert.Panics(t, func() {
		agentrt.NewRawTool("x", "", json.RawMessage(`{"type":"string"}`), func(context.Context, json.RawMessage) (string, error) { return "", nil })
	})
}

func TestNewToolRejectsUnknownValidateTags(t *testing.T) {
	t.Parallel()
	type Typo struct {
		N int `json:"n" validate:"maxx=3"`
	}
	type Inner struct {
		S string `json:"s" validate:"required,lenn=2"`
	}
	type Nested struct {
		Items []Inner `json:"items" validate:"dive"`
	}
	type BadParam struct {
		N int `json:"n" validate:"min=abc"`
	}
	assert.PanicsWithValue(t, `agentrt: NewTool "typo": invalid validate tag in agentrt_test.Typo: Undefined validation function 'maxx' on field 'N'`, func() {
		agentrt.NewTool("typo", "", func(context.Context, Typo) (string, error) { return "", nil })
	})
	assert.PanicsWithValue(t, `agentrt: NewTool "nested": invalid validate tag in agentrt_test.Inner: Undefined validation function 'lenn' on field 'S'`, func() {
		agentrt.NewTool("nested", "", func(context.Context, Nested) (string, error) { return "", nil })
	}, "in a struct reached only through a slice")
	assert.Panics(t, func() {
		agentrt.NewTool("param", "", func(context.Context, BadParam) (string, error) { return "", nil })
	}, "a parameter the rule cannot read")
	assert.NotPanics(t, func() { orderTool() })
}

func TestNewToolRejectsOutputsJSONCannotEncode(t *testing.T) {
	t.Parallel()
	type WithFunc struct {
		Name string
		F    func()
	}
	type Deep struct {
		Items []map[string]*WithFunc
	}
	type Hidden struct {
		F    func() `json:"-"`
		f    chan int
		Name string
	}
	tests := []struct {
		name string
		make func()
		want string // "" when NewTool accepts it
	}{
		{"chan", func() { newToolOut[chan int]() }, "chan int is chan int"},
		{"func", func() { newToolOut[func() int]() }, "func() int is func() int"},
		{"complex", func() { newToolOut[complex128]() }, "complex128 is complex128"},
		{"struct with a func", func() { newToolOut[WithFunc]() }, "agentrt_test.WithFunc.F is func()"},
		{"deep", func() { newToolOut[*Deep]() }, "*agentrt_test.Deep.Items.F is func()"},
		{"map key", func() { newToolOut[map[[2]int]string]() }, "map[[2]int]string is a map with keys of type [2]int"},
		{"hidden fields", func() { _ = Hidden{f: nil}; newToolOut[Hidden]() }, ""},
		{"json.Marshaler", func() { newToolOut[json.RawMessage]() }, ""},
		{"interface", func() { newToolOut[any]() }, ""},
		{"blocks", func() { newToolOut[[]agentrt.Block]() }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				assert.NotPanics(t, tc.make)
				return
			}
			assert.PanicsWithValue(t, `agentrt: NewTool "out": output type cannot be encoded as JSON: `+tc.want, tc.make)
		})
	}
}

func newToolOut[Out any]() agentrt.Tool {
	var zero Out
	return agentrt.NewTool("out", "", func(context.Context, AddIn) (Out, error) { return zero, nil })
}

func TestToolDecodeErrors(t *testing.T) {
	t.Parallel()
	tool := orderTool()
	tests := []struct {
		input, want string
	}{
		{`{"item":"x","size":"small"}`, `invalid input: field "item" must have at least 2 characters`},
		{`{"item":"tea","size":"huge"}`, `invalid input: field "size" must be one of "small", "large"`},
		{`{"item":"tea","size":"small","quantity":11}`, `invalid input: field "quantity" must be at most 10`},
		{`{"item":"tea","size":"small","ship":{"zip":"1"}}`, `invalid input: field "ship.city" is required; field "ship.zip" must have exactly 5 characters`},
		{`{"item":"tea","size":"small","lines":[{"city":"Rome"},{}]}`, `invalid input: field "lines[1].city" is required`},
		{`{"item":"tea","size":"small","ship":{"city":"Rome","planet":"Mars"}}`, `invalid input: unknown field "ship.planet" (valid fields: "city", "zip")`},
		{`{"item":"tea","size":"small","quantity":"many"}`, `invalid input: field "quantity" must be an integer, got string`},
		{`{"item":"tea","size":"small","express":"yes please"}`, `invalid input: field "express" must be a boolean, got string`},
		{`{"item":"tea","size":"small"} {}`, `input is not valid JSON: unexpected data after the top-level value`},
		{`"just text"`, `input must be a JSON object, got a string`},
		{`42`, `input must be a JSON object, got a number`},
	}
	for _, tc := range tests {
		_, err := tool.Decode(json.RawMessage(tc.input))
		if assert.Error(t, err, tc.input) {
			assert.Equal(t, tc.want, err.Error(), tc.input)
		}
	}
	in, err := tool.Decode(json.RawMessage(`{"item":"tea","size":"small","quantity":"3","express":"true","ship":"{\"city\":\"Rome\"}"}`))
	require.NoError(t, err)
	assert.Equal(t, OrderIn{Item: "tea", Size: "small", Quantity: 3, Express: true, Ship: &Address{City: "Rome"}}, in)
	in, err = tool.Decode(nil) // no input at all is the empty object
	assert.Nil(t, in)
	assert.EqualError(t, err, `invalid input: field "item" is required; field "size" is required`)
}

func TestToolExecuteOutput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tool := orderTool()
	in, err := tool.Decode(json.RawMessage(`{"item":"tea","size":"small"}`))
	require.NoError(t, err)
	out, err := tool.Execute(ctx, in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"item":"tea","size":"small"}`, out, "non-string output is JSON")
	str := agentrt.NewTool("s", "", func(context.Context, struct{}) (string, error) { return `plain "text"`, nil })
	out, err = str.Execute(ctx, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, `plain "text"`, out, "string output goes as is")
}

func TestNewRawTool(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"],"additionalProperties":false}`)
	tool := agentrt.NewRawTool("search", "Search.", schema, func(_ context.Context, in json.RawMessage) (string, error) {
		return string(in), nil
	}, agentrt.ReadOnly())
	assert.True(t, tool.Spec().ReadOnly)
	assert.JSONEq(t, string(schema), string(tool.Spec().InputSchema))
	in, err := tool.Decode(json.RawMessage(`{"q":"go","n":"3"}`))
	require.NoError(t, err)
	out, err := tool.Execute(context.Background(), in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"q":"go","n":3}`, out)
	_, err = tool.Decode(json.RawMessage(`{"n":3,"x":1}`))
	assert.EqualError(t, err, `invalid input: field "q" is required; unknown field "x" (valid fields: "n", "q")`)
}

func TestMessageHelpers(t *testing.T) {
	t.Parallel()
	m := agentrt.NewAssistantMessage(agentrt.TextBlock("Let me "), agentrt.TextBlock("add."),
		agentrt.ToolUseBlock("c1", "add", json.RawMessage(`{"a":2,"b":40}`)))
	assert.Equal(t, "Let me add.", m.Text())
	assert.Len(t, m.ToolUses(), 1)
	assert.True(t, m.HasToolUse())
	assert.Equal(t, `assistant: Let me  add. [tool_use c1 add {"a":2,"b":40}]`, m.String())
	assert.Equal(t, "tool c2 (error): nope", agentrt.NewToolMessage("c2", "nope", true).String())
	assert.Equal(t, "user: hi", agentrt.NewUserMessage("hi").String())
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"assistant","blocks":[{"type":"text","text":"Let me "},{"type":"text","text":"add."},{"type":"tool_use","id":"c1","name":"add","input":{"a":2,"b":40}}]}`, string(b))
	b, err = json.Marshal(agentrt.NewToolMessage("c2", "nope", true))
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"tool","tool_use_id":"c2","content":"nope","is_error":true}`, string(b))
	var back agentrt.Message
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, agentrt.NewToolMessage("c2", "nope", true), back)
}

func TestNewToolAnyField(t *testing.T) {
	t.Parallel()
	type In struct {
		Name  string         `json:"name"`
		Value any            `json:"value"`
		Extra map[string]any `json:"extra,omitempty"`
	}
	tool := agentrt.NewTool("set", "Set a value.", func(_ context.Context, in In) (In, error) { return in, nil })
	in, err := tool.Decode(json.RawMessage(`{"name":"x","value":[1,"two",true],"extra":{"k":{"deep":1}}}`))
	require.NoError(t, err)
	out, err := tool.Execute(context.Background(), in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"x","value":[1,"two",true],"extra":{"k":{"deep":1}}}`, out)
	_, err = tool.Decode(json.RawMessage(`{"name":"x","value":1,"nope":2}`))
	assert.EqualError(t, err, `invalid input: unknown field "nope" (valid fields: "extra", "name", "value")`)
}
