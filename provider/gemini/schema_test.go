package gemini

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

type address struct {
	Street string `json:"street" jsonschema:"description=Street and number"`
	City   string `json:"city,omitempty"`
}

type lineItem struct {
	SKU      string   `json:"sku"`
	Quantity int      `json:"quantity" jsonschema:"minimum=1,maximum=99"`
	Tags     []string `json:"tags,omitempty"`
}

type orderIn struct {
	Customer string            `json:"customer" jsonschema:"description=Customer name"`
	Priority string            `json:"priority" jsonschema:"enum=low,enum=normal,enum=high"`
	Level    int               `json:"level,omitempty" jsonschema:"enum=1,enum=2,enum=3"`
	Ship     address           `json:"ship"`
	Bill     *address          `json:"bill,omitempty" jsonschema:"description=Billing address if different"`
	Items    []lineItem        `json:"items" validate:"required,min=1"`
	Discount *float64          `json:"discount,omitempty"`
	Notes    map[string]string `json:"notes,omitempty"`
	Counts   map[string]int    `json:"counts"`
	Due      string            `json:"due" jsonschema:"format=date-time"`
	Email    string            `json:"email,omitempty" jsonschema:"format=email"`
	Gift     bool              `json:"gift"`
}

func orderTool() agentrt.Tool {
	return agentrt.NewTool("place_order", "Place an order.",
		func(_ context.Context, in orderIn) (orderIn, error) { return in, nil })
}

// Nested structs, slices of structs, enums, optional pointers and maps,
// reflected by agentrt.NewTool, come out as Gemini's OpenAPI subset.
func TestToolParametersFromGoTypes(t *testing.T) {
	t.Parallel()
	s, err := ToolParameters(orderTool().Spec().InputSchema)
	require.NoError(t, err)
	addr := `{"type":"OBJECT","required":["street"],"properties":{
		"street":{"type":"STRING","description":"Street and number"},
		"city":{"type":"STRING"}}}`
	jsonEq(t, `{
		"type":"OBJECT",
		"required":["customer","priority","ship","items","counts","due","gift"],
		"properties":{
			"customer":{"type":"STRING","description":"Customer name"},
			"priority":{"type":"STRING","enum":["low","normal","high"]},
			"level":{"type":"INTEGER","description":"One of: 1, 2, 3."},
			"ship":`+addr+`,
			"bill":{"type":"OBJECT","required":["street"],"description":"Billing address if different","properties":{
				"street":{"type":"STRING","description":"Street and number"},
				"city":{"type":"STRING"}}},
			"items":{"type":"ARRAY","minItems":1,"items":{"type":"OBJECT","required":["sku","quantity"],"properties":{
				"sku":{"type":"STRING"},
				"quantity":{"type":"INTEGER","minimum":1,"maximum":99},
				"tags":{"type":"ARRAY","items":{"type":"STRING"}}}}},
			"discount":{"type":"NUMBER"},
			"notes":{"type":"STRING","description":"A JSON object encoded as a string, mapping string keys to string values, such as \"{\\\"key\\\": ...}\"."},
			"counts":{"type":"STRING","description":"A JSON object encoded as a string, mapping string keys to integer values, such as \"{\\\"key\\\": ...}\"."},
			"due":{"type":"STRING","format":"date-time"},
			"email":{"type":"STRING","description":"Format: email."},
			"gift":{"type":"BOOLEAN"}}}`, s)
	assertNoJSONSchemaOnly(t, s)
}

// assertNoJSONSchemaOnly fails on keywords Gemini refuses, anywhere.
func assertNoJSONSchemaOnly(t *testing.T, s *genai.Schema) {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				assert.NotContains(t, []string{"additionalProperties", "$ref", "$defs", "oneOf", "allOf", "const", "$schema"}, k)
				walk(sub)
			}
		case []any:
			for _, sub := range x {
				walk(sub)
			}
		}
	}
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	walk(v)
}

// A map sent as a JSON string, as the transformed schema asks, is turned
// back into the map by the tool's lenient decoding.
func TestMapAsStringRoundTrip(t *testing.T) {
	t.Parallel()
	tool := orderTool()
	in, err := tool.Decode(json.RawMessage(`{
		"customer":"Ada","priority":"high","ship":{"street":"1 Main St"},
		"items":[{"sku":"X1","quantity":2}],
		"notes":"{\"door\":\"blue\"}","counts":"{\"X1\":2}",
		"due":"2026-01-02T15:04:05Z","gift":false}`))
	require.NoError(t, err)
	order := in.(orderIn)
	assert.Equal(t, map[string]string{"door": "blue"}, order.Notes)
	assert.Equal(t, map[string]int{"X1": 2}, order.Counts)
}

// Hand-written schemas (NewRawTool, MCP servers) with what Gemini refuses.
func TestToolParametersTransform(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"$ref and $defs are inlined",
			`{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x","z"]}},
			  "properties":{"a":{"$ref":"#/$defs/pt","description":"start"},"b":{"$ref":"#/definitions/n"}},
			  "definitions":{"n":{"type":"integer"}}}`,
			`{"type":"OBJECT","properties":{
				"a":{"type":"OBJECT","description":"start","required":["x"],"properties":{"x":{"type":"NUMBER"}}},
				"b":{"type":"INTEGER"}}}`},
		{"nullable type arrays and anyOf with null",
			`{"type":"object","properties":{
				"a":{"type":["string","null"]},
				"b":{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"count"},
				"c":{"oneOf":[{"type":"null"},{"type":"object","properties":{"k":{"type":"boolean"}}}]}}}`,
			`{"type":"OBJECT","properties":{
				"a":{"type":"STRING","nullable":true},
				"b":{"type":"INTEGER","nullable":true,"description":"count"},
				"c":{"type":"OBJECT","nullable":true,"properties":{"k":{"type":"BOOLEAN"}}}}}`},
		{"unions of constants become enums, other unions anyOf",
			`{"type":"object","properties":{
				"unit":{"oneOf":[{"const":"c"},{"const":"f"}]},
				"v":{"anyOf":[{"type":"string"},{"type":"number","minimum":0}]},
				"w":{"type":["string","integer"]}}}`,
			`{"type":"OBJECT","properties":{
				"unit":{"type":"STRING","enum":["c","f"]},
				"v":{"anyOf":[{"type":"STRING"},{"type":"NUMBER","minimum":0}]},
				"w":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}}}`},
		{"allOf is merged",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
			           {"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
			`{"type":"OBJECT","required":["a","b"],"properties":{"a":{"type":"STRING"},"b":{"type":"BOOLEAN"}}}`},
		{"const, non-string enums, formats and bounds",
			`{"type":"object","properties":{
				"kind":{"const":"point"},
				"n":{"type":"number","enum":[0.5,1.5],"exclusiveMinimum":0,"format":"double"},
				"u":{"type":"string","format":"uri","minLength":3,"maxLength":9,"pattern":"^h"},
				"arr":{"type":"array","minItems":1,"maxItems":3},
				"any":{},
				"open":{"type":"object","additionalProperties":true,"description":"Free-form."}},
			  "additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"}`,
			`{"type":"OBJECT","properties":{
				"kind":{"type":"STRING","enum":["point"]},
				"n":{"type":"NUMBER","format":"double","description":"One of: 0.5, 1.5. exclusiveMinimum: 0."},
				"u":{"type":"STRING","description":"Format: uri.","minLength":3,"maxLength":9,"pattern":"^h"},
				"arr":{"type":"ARRAY","minItems":1,"maxItems":3,"items":{"type":"STRING","description":"Any JSON value, encoded as a string."}},
				"any":{"type":"STRING","description":"Any JSON value, encoded as a string."},
				"open":{"type":"STRING","description":"Free-form. A JSON object encoded as a string, such as \"{\\\"key\\\": ...}\"."}}}`},
		{"a recursive $ref stops",
			`{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},
			  "$defs":{"node":{"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#/$defs/node"}}}}}`,
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := ToolParameters(json.RawMessage(tc.in))
			require.NoError(t, err)
			if tc.want != "" {
				jsonEq(t, tc.want, s)
			}
			assertNoJSONSchemaOnly(t, s)
		})
	}
}

func TestToolParametersEdges(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{"type":"object"}`, `{"type":"object","properties":{}}`, `{"type":"object","properties":{},"additionalProperties":false}`} {
		s, err := ToolParameters(json.RawMessage(in))
		require.NoError(t, err, in)
		assert.Nil(t, s, "no parameters for %q", in)
	}
	for _, in := range []string{`nope`, `[1]`, `{"type":"string"}`, `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, `{"type":"object","properties":{"a":{"$ref":"http://x/y"}}}`} {
		_, err := ToolParameters(json.RawMessage(in))
		assert.Error(t, err, in)
	}
}

func TestParseJSONPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]any{
		"$":                       nil,
		"$.location":              {"location"},
		"$.recipe.steps[10]":      {"recipe", "steps", 10},
		"$.a[0][1].b":             {"a", 0, 1, "b"},
		`$['odd.key']["x]y"]`:     {"odd.key", "x]y"},
		`$['it\'s']`:              {"it's"},
		"$.recipe.ingredients[0]": {"recipe", "ingredients", 0},
	} {
		got, err := parseJSONPath(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"location", "$.", "$[x]", "$[-1]", "$[1", "$['a'", "$a"} {
		_, err := parseJSONPath(in)
		assert.Error(t, err, in)
	}
}

func TestPartialArgsValues(t *testing.T) {
	t.Parallel()
	a := newAssembler(testModel)
	yes := genai.Ptr(true)
	chunks := []*genai.FunctionCall{
		{Name: "f", WillContinue: yes},
		{PartialArgs: []*genai.PartialArg{{JsonPath: "$.n", NumberValue: genai.Ptr(2.5)}}, WillContinue: yes},
		{PartialArgs: []*genai.PartialArg{{JsonPath: "$.b", BoolValue: genai.Ptr(false)}, {JsonPath: "$.z", NULLValue: "NULL_VALUE"}}, WillContinue: yes},
		{PartialArgs: []*genai.PartialArg{{JsonPath: "$.s[1]", StringValue: "he", WillContinue: yes}}, WillContinue: yes},
		{PartialArgs: []*genai.PartialArg{{JsonPath: "$.s[1]", StringValue: "llo"}}, WillContinue: yes},
		{PartialArgs: []*genai.PartialArg{{JsonPath: "$.e", StringValue: ""}}, WillContinue: yes},
		{},
	}
	for _, fc := range chunks {
		require.NoError(t, a.addCall(fc, nil))
	}
	a.finish = genai.FinishReasonStop
	resp, err := a.done(true)
	require.NoError(t, err)
	uses := resp.Message.ToolUses()
	require.Len(t, uses, 1)
	assert.JSONEq(t, `{"n":2.5,"b":false,"z":null,"s":[null,"hello"],"e":""}`, string(uses[0].Input))

	bad := newAssembler(testModel)
	assert.ErrorIs(t, bad.addCall(&genai.FunctionCall{PartialArgs: []*genai.PartialArg{{JsonPath: "$.x", StringValue: "y"}}}, nil), agentrt.ErrBadResponse,
		"arguments without a call")
	bad = newAssembler(testModel)
	require.NoError(t, bad.addCall(&genai.FunctionCall{Name: "f", WillContinue: yes}, nil))
	require.NoError(t, bad.addCall(&genai.FunctionCall{PartialArgs: []*genai.PartialArg{{JsonPath: "$.x", StringValue: "y", WillContinue: yes}}, WillContinue: yes}, nil))
	assert.ErrorIs(t, bad.addCall(&genai.FunctionCall{}, nil), agentrt.ErrBadResponse, "the call ended while a string was streaming")
}

func TestFinishReasons(t *testing.T) {
	t.Parallel()
	for in, want := range map[genai.FinishReason]agentrt.FinishReason{
		genai.FinishReasonStop:                  agentrt.FinishStop,
		genai.FinishReasonMaxTokens:             agentrt.FinishLength,
		genai.FinishReasonSafety:                agentrt.FinishContentFilter,
		genai.FinishReasonRecitation:            agentrt.FinishContentFilter,
		genai.FinishReasonBlocklist:             agentrt.FinishContentFilter,
		genai.FinishReasonProhibitedContent:     agentrt.FinishContentFilter,
		genai.FinishReasonSPII:                  agentrt.FinishContentFilter,
		genai.FinishReasonMalformedFunctionCall: agentrt.FinishOther,
		genai.FinishReasonUnexpectedToolCall:    agentrt.FinishOther,
		genai.FinishReasonOther:                 agentrt.FinishOther,
		genai.FinishReasonLanguage:              agentrt.FinishOther,
	} {
		assert.Equal(t, want, finishReason(in, false), in)
	}
	assert.Equal(t, agentrt.FinishToolUse, finishReason(genai.FinishReasonStop, true))
	assert.Equal(t, agentrt.FinishLength, finishReason(genai.FinishReasonMaxTokens, true))
}

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		``:     `{}`,
		`null`: `{}`,
		` {"a": 12345678901234567890, "b": [1, {"c": null}]} `: `{"a":12345678901234567890,"b":[1,{"c":null}]}`,
		// The runtime keeps an input that was not valid JSON as a JSON string.
		`"{\"location\": \"Par"`: `{"input":"{\"location\": \"Par"}`,
		// Another provider's input that is not an object; not JSON at all.
		`[1]`:   `{"input":[1]}`,
		` 42 `:  `{"input":42}`,
		`true`:  `{"input":true}`,
		`{"a":`: `{"input":"{\"a\":"}`,
		`{} {}`: `{"input":"{} {}"}`,
	} {
		jsonEq(t, want, decodeArgs(json.RawMessage(in)), in)
	}
}
