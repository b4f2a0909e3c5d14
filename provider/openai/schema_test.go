package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

type address struct {
	Street string  `json:"street" jsonschema:"description=Street and number"`
	Zip    *string `json:"zip,omitempty"`
}

type stop struct {
	Place address `json:"place"`
	Hours int     `json:"hours"`
}

type tripInput struct {
	Traveler string    `json:"traveler"`
	Mode     string    `json:"mode" jsonschema:"enum=car,enum=train"`
	Class    string    `json:"class,omitempty" jsonschema:"enum=first,enum=second"`
	Home     address   `json:"home"`
	Stops    []stop    `json:"stops"`
	Return   *address  `json:"return,omitempty" jsonschema:"description=Where to end if not at home"`
	Budget   *float64  `json:"budget,omitempty" jsonschema:"default=100"`
	Notes    []string  `json:"notes,omitempty"`
	When     string    `json:"when,omitempty" jsonschema:"format=date"`
	Contact  string    `json:"contact,omitempty" jsonschema:"format=uri"`
	Backup   []address `json:"backup,omitempty"`
}

type mapInput struct {
	Name string            `json:"name"`
	Tags map[string]string `json:"tags"`
}

type lengthInput struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

func specOf[In any](t *testing.T) json.RawMessage {
	t.Helper()
	tool := agentrt.NewTool("t", "test", func(context.Context, In) (string, error) { return "", nil })
	return tool.Spec().InputSchema
}

func TestStrictSchemaFromGoTypes(t *testing.T) {
	t.Parallel()
	got, err := strictSchema(specOf[tripInput](t))
	require.NoError(t, err)

	addr := `{"properties":{"street":{"type":"string","description":"Street and number"},
		"zip":{"type":["string","null"]}},"additionalProperties":false,"type":"object","required":["street","zip"]}`
	want := `{"properties":{
		"traveler":{"type":"string"},
		"mode":{"type":"string","enum":["car","train"]},
		"class":{"anyOf":[{"type":"string","enum":["first","second"]},{"type":"null"}]},
		"home":` + addr + `,
		"stops":{"items":{"properties":{"place":` + addr + `,"hours":{"type":"integer"}},
			"additionalProperties":false,"type":"object","required":["place","hours"]},"type":"array"},
		"return":{"description":"Where to end if not at home","anyOf":[
			{"properties":{"street":{"type":"string","description":"Street and number"},"zip":{"type":["string","null"]}},
			"additionalProperties":false,"type":"object","required":["street","zip"]},
			{"type":"null"}]},
		"budget":{"type":["number","null"]},
		"notes":{"anyOf":[{"items":{"type":"string"},"type":"array"},{"type":"null"}]},
		"when":{"type":["string","null"],"format":"date"},
		"contact":{"type":["string","null"]},
		"backup":{"anyOf":[{"items":` + addr + `,"type":"array"},{"type":"null"}]}
		},
		"additionalProperties":false,"type":"object",
		"required":["traveler","mode","class","home","stops","return","budget","notes","when","contact","backup"]}`
	assert.JSONEq(t, want, string(got))
}

func TestStrictSchemaKeepsPropertyOrder(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"object","properties":{"y":{"type":"integer"},"b":{"type":"integer"}},"required":["y","b"]},"mid":{"type":"boolean"}},"required":["zeta","alpha","mid"]}`
	got, err := strictSchema(json.RawMessage(in))
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"object","properties":{"y":{"type":"integer"},"b":{"type":"integer"}},"required":["y","b"],"additionalProperties":false},"mid":{"type":"boolean"}},"required":["zeta","alpha","mid"],"additionalProperties":false}`, string(got))
}

func TestStrictSchemaRewrites(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{{
		name: "empty input",
		in:   `{"type":"object","properties":{},"additionalProperties":false}`,
		want: `{"type":"object","properties":{},"additionalProperties":false,"required":[]}`,
	}, {
		name: "closed object without properties",
		in:   `{"type":"object","additionalProperties":false}`,
		want: `{"type":"object","additionalProperties":false,"properties":{},"required":[]}`,
	}, {
		name: "annotations dropped",
		in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","type":"object","title":"T",
			"properties":{"n":{"type":"integer","default":3,"examples":[1,2],"minimum":0,"maximum":9}},"required":["n"]}`,
		want: `{"type":"object","title":"T","properties":{"n":{"type":"integer","minimum":0,"maximum":9}},"required":["n"],"additionalProperties":false}`,
	}, {
		name: "oneOf becomes anyOf",
		in:   `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"object","properties":{"n":{"type":"integer"}}}]}},"required":["v"]}`,
		want: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"object","properties":{"n":{"type":["integer","null"]}},"required":["n"],"additionalProperties":false}]}},"required":["v"],"additionalProperties":false}`,
	}, {
		name: "optional anyOf gains null",
		in:   `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
		want: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}},"required":["v"],"additionalProperties":false}`,
	}, {
		name: "already nullable",
		in:   `{"type":"object","properties":{"v":{"type":["string","null"]}}}`,
		want: `{"type":"object","properties":{"v":{"type":["string","null"]}},"required":["v"],"additionalProperties":false}`,
	}, {
		name: "definitions and references",
		in: `{"type":"object","properties":{"node":{"$ref":"#/$defs/node"}},"required":["node"],
			"$defs":{"node":{"type":"object","properties":{"value":{"type":"string"},"next":{"$ref":"#/$defs/node"}},"required":["value"]}}}`,
		want: `{"type":"object","properties":{"node":{"$ref":"#/$defs/node"}},"required":["node"],
			"$defs":{"node":{"type":"object","properties":{"value":{"type":"string"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["value","next"],"additionalProperties":false}},
			"additionalProperties":false}`,
	}, {
		name: "optional const",
		in:   `{"type":"object","properties":{"kind":{"const":"a"}}}`,
		want: `{"type":"object","properties":{"kind":{"anyOf":[{"const":"a"},{"type":"null"}]}},"required":["kind"],"additionalProperties":false}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := strictSchema(json.RawMessage(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestStrictSchemaRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema json.RawMessage
		reason string
	}{
		{"map of strings", specOf[mapInput](t), "#/properties/tags: an object with additionalProperties (a map) cannot be strict"},
		{"minLength", specOf[lengthInput](t), `#/properties/name: keyword "minLength" is not supported in strict mode`},
		{"free-form object", json.RawMessage(`{"type":"object","properties":{"any":{"type":"object"}}}`), "#/properties/any: an object without properties (any object) cannot be strict"},
		{"open top level", json.RawMessage(`{"type":"object"}`), "#: an object without properties"},
		{"any value", json.RawMessage(`{"type":"object","properties":{"v":{}}}`), "#/properties/v: a schema without a type"},
		{"boolean schema", json.RawMessage(`{"type":"object","properties":{"v":true}}`), "#/properties/v: schema true is not an object"},
		{"allOf", json.RawMessage(`{"type":"object","properties":{"v":{"allOf":[{"type":"string"}]}}}`), `keyword "allOf"`},
		{"uniqueItems", json.RawMessage(`{"type":"object","properties":{"v":{"type":"array","items":{"type":"string"},"uniqueItems":true}}}`), `keyword "uniqueItems"`},
		{"tuple", json.RawMessage(`{"type":"object","properties":{"v":{"type":"array","items":[{"type":"string"}]}}}`), "#/properties/v/items: schema"},
		{"undeclared required", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`), `required property "b" is not declared`},
		{"not an object at the top", json.RawMessage(`{"type":"array","items":{"type":"string"}}`), "top level is not"},
		{"anyOf at the top", json.RawMessage(`{"anyOf":[{"type":"object","properties":{}}]}`), "anyOf at the top level"},
		{"invalid JSON", json.RawMessage(`{"type":`), "invalid JSON schema"},
		{"trailing data", json.RawMessage(`{"type":"object"} {}`), "data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := strictSchema(tt.schema)
			require.Error(t, err, "strict form: %s", got)
			assert.Contains(t, err.Error(), tt.reason)
		})
	}
}

// TestStrictSchemaDoesNotModifyInput: the tool's schema is shared; the
// transform works on a copy.
func TestStrictSchemaDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	in := specOf[tripInput](t)
	before := string(in)
	_, err := strictSchema(in)
	require.NoError(t, err)
	assert.Equal(t, before, string(in))
}

// TestStrictInputDecodes: what strict mode makes the model send (null for
// an optional field) decodes into the tool's Go type as if it were absent.
func TestStrictInputDecodes(t *testing.T) {
	t.Parallel()
	tool := agentrt.NewTool("trip", "Plan a trip.", func(_ context.Context, in tripInput) (string, error) {
		if in.Class != "" || in.Return != nil || in.Budget != nil || in.Notes != nil || in.Backup != nil || in.Home.Zip != nil {
			return "", assert.AnError
		}
		return in.Traveler + " by " + in.Mode, nil
	})
	v, err := tool.Decode(json.RawMessage(`{"traveler":"Ann","mode":"train","class":null,
		"home":{"street":"Main St 1","zip":null},"stops":[{"place":{"street":"B","zip":"123"},"hours":2}],
		"return":null,"budget":null,"notes":null,"when":null,"contact":null,"backup":null}`))
	require.NoError(t, err)
	out, err := tool.Execute(context.Background(), v)
	require.NoError(t, err)
	assert.Equal(t, "Ann by train", out)
}
