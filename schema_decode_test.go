package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// The struct shapes of the schema/decoder agreement tests.

type shapeFlat struct {
	Name  string  `json:"name" jsonschema:"description=Who"`
	Age   int     `json:"age,omitempty" validate:"omitempty,gte=0,lte=150"`
	Score float64 `json:"score"`
	Note  string  `json:"note,omitempty"`
	OK    bool    `json:"ok,omitempty"`
}

type shapeAddress struct {
	City string `json:"city" validate:"required"`
	Zip  string `json:"zip,omitempty" validate:"omitempty,len=5,numeric"`
}

type shapeNested struct {
	Bill shapeAddress  `json:"bill"`
	Ship *shapeAddress `json:"ship,omitempty"`
}

type shapeLine struct {
	SKU string `json:"sku" validate:"required,len=4,alphanum"`
	Qty uint8  `json:"qty"`
}

type shapeSlices struct {
	Tags  []string     `json:"tags" validate:"min=1,max=3,dive,min=2,max=8"`
	Lines []shapeLine  `json:"lines,omitempty" validate:"omitempty,max=4,dive"`
	Grid  [2]int16     `json:"grid,omitempty"`
	IDs   []int        `json:"ids,omitempty" jsonschema:"uniqueItems=true"`
	Ptrs  []*shapeLine `json:"ptrs,omitempty"`
}

type shapeEnums struct {
	Unit  string `json:"unit" jsonschema:"enum=c,enum=f"`
	Level int    `json:"level,omitempty" jsonschema:"enum=1,enum=2,enum=3"`
	Mode  string `json:"mode,omitempty" validate:"omitempty,oneof=fast slow"`
	Kind  string `json:"kind" validate:"eq=point"`
}

type shapeNumbers struct {
	Temp  float64 `json:"temp" jsonschema:"minimum=-50,maximum=60"`
	Pct   int     `json:"pct" validate:"gt=0,lt=100"`
	Step  int     `json:"step,omitempty" jsonschema:"multipleOf=5"`
	Small int8    `json:"small,omitempty"`
	Count uint    `json:"count,omitempty"`
	Ratio float64 `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
}

type shapeStrings struct {
	Code  string    `json:"code" jsonschema:"pattern=^[A-Z]{3}-[0-9]{2}$"`
	Email string    `json:"email,omitempty" validate:"omitempty,email"`
	Site  string    `json:"site,omitempty" jsonschema:"format=uri"`
	When  time.Time `json:"when,omitempty"`
	Word  string    `json:"word,omitempty" validate:"omitempty,alpha,max=6"`
	Pre   string    `json:"pre,omitempty" validate:"omitempty,startswith=ab"`
	Day   string    `json:"day,omitempty" jsonschema:"format=date"`
	ID    string    `json:"id,omitempty" validate:"omitempty,uuid"`
	Title string    `json:"title,omitempty" jsonschema:"minLength=2,maxLength=10"`
}

type shapeOptional struct {
	A string `json:"a"`
	B string `json:"b,omitempty"`
	C *int   `json:"c"`
	D *int   `json:"d,omitempty"`
	E string `json:"e,omitempty" jsonschema:"required"`
	F int    `json:"f,omitzero"`
}

type shapeBase struct {
	ID      string `json:"id" validate:"required"`
	Version int    `json:"version,omitempty" validate:"omitempty,min=1"`
}

type shapeEmbedded struct {
	shapeBase
	Body string `json:"body" validate:"max=20"`
}

type shapeMaps struct {
	Labels map[string]string `json:"labels,omitempty" validate:"omitempty,max=2,dive,max=5"`
	Counts map[string]int    `json:"counts,omitempty" validate:"omitempty,min=1,max=3"`
	ByID   map[int]bool      `json:"by_id,omitempty"`
	Any    map[string]any    `json:"any,omitempty"`
}

type shapeNullable struct {
	Name *string `json:"name,omitempty" jsonschema:"nullable" validate:"omitempty,min=2"`
	Any  any     `json:"any"`
}

func shapeTool[In any](name string) agentrt.Tool {
	return agentrt.NewTool(name, "", func(_ context.Context, in In) (In, error) { return in, nil })
}

var shapes = []struct {
	name     string
	tool     agentrt.Tool
	keywords []string // keywords the schema must show: validate tags and jsonschema tags
}{
	{"flat", shapeTool[shapeFlat]("flat"), []string{"required", "minimum", "maximum", "additionalProperties"}},
	{"nested", shapeTool[shapeNested]("nested"), []string{"required", "minLength", "maxLength", "pattern"}},
	{"slices", shapeTool[shapeSlices]("slices"), []string{"minItems", "maxItems", "minLength", "maxLength", "pattern", "uniqueItems", "minimum", "maximum"}},
	{"enums", shapeTool[shapeEnums]("enums"), []string{"enum", "const"}},
	{"numbers", shapeTool[shapeNumbers]("numbers"), []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}},
	{"strings", shapeTool[shapeStrings]("strings"), []string{"pattern", "format", "minLength", "maxLength"}},
	{"optional", shapeTool[shapeOptional]("optional"), []string{"required"}},
	{"embedded", shapeTool[shapeEmbedded]("embedded"), []string{"required", "minLength", "maxLength", "minimum"}},
	{"maps", shapeTool[shapeMaps]("maps"), []string{"minProperties", "maxProperties", "patternProperties", "maxLength"}},
	{"nullable", shapeTool[shapeNullable]("nullable"), []string{"oneOf", "minLength"}},
}

func schemaOf(t *testing.T, tool agentrt.Tool) map[string]any {
	t.Helper()
	var s map[string]any
	require.NoError(t, json.Unmarshal(tool.Spec().InputSchema, &s))
	return s
}

// TestSchemaDecodeEnforcesEveryConstraint checks direction (a): for every
// constraint found in the reflected schema, an input that breaks only it
// (a valid input, changed at one place) fails with an error naming the
// JSON field.
func TestSchemaDecodeEnforcesEveryConstraint(t *testing.T) {
	t.Parallel()
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			schema := schemaOf(t, sh.tool)
			g := &gen{rng: rand.New(rand.NewPCG(1, 2))}
			base := g.value(schema, true).(map[string]any)
			_, err := sh.tool.Decode(mustJSON(t, base))
			require.NoError(t, err, "the base input %s is valid", mustJSON(t, base))
			vs := violations(schema, base)
			seen := map[string]bool{}
			for _, v := range vs {
				seen[v.keyword] = true
				input := mustJSON(t, v.input)
				_, err := sh.tool.Decode(input)
				if assert.Error(t, err, "%s at %q: %s must fail", v.keyword, v.path, input) {
					assert.Contains(t, err.Error(), strconv.Quote(v.path), "%s at %q: %s", v.keyword, v.path, input)
					assert.True(t, strings.HasPrefix(err.Error(), "invalid input: "), err.Error())
					assert.NotContains(t, err.Error(), "json:", "no Go decoder jargon")
				}
			}
			for kw := range keywordsOf(schema) {
				assert.True(t, seen[kw] || checkedAlone[kw] || annotations[kw], "keyword %s is in the schema but not covered by this test", kw)
			}
			for _, kw := range sh.keywords {
				assert.True(t, seen[kw] || kw == "additionalProperties" && seen["unknown"], "the schema shows %s: %s", kw, sh.tool.Spec().InputSchema)
			}
		})
	}
}

// TestSchemaDecodeAcceptsWhatTheSchemaAllows checks direction (b) as a
// property: inputs generated from the schema alone, biased to the bounds
// and to left-out optional fields, decode without error. A decode-time
// rule the schema does not show would fail some of them.
func TestSchemaDecodeAcceptsWhatTheSchemaAllows(t *testing.T) {
	t.Parallel()
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			schema := schemaOf(t, sh.tool)
			g := &gen{rng: rand.New(rand.NewPCG(uint64(len(sh.name)), 7))}
			for range 300 {
				input := mustJSON(t, g.value(schema, false))
				_, err := sh.tool.Decode(input)
				require.NoError(t, err, "schema-valid input %s", input)
			}
		})
	}
}

// TestSchemaShowsValidateRules checks direction (b) rule by rule: each
// validate tag shows in the schema as the keyword it means.
func TestSchemaShowsValidateRules(t *testing.T) {
	t.Parallel()
	type In struct {
		S1  string            `json:"s1" validate:"min=2,max=5"`
		S2  string            `json:"s2" validate:"len=3"`
		S3  string            `json:"s3" validate:"gt=1,lt=4"`
		S4  string            `json:"s4" validate:"oneof=a 'b c'"`
		S5  string            `json:"s5" validate:"email"`
		S6  string            `json:"s6" validate:"url"`
		S7  string            `json:"s7" validate:"alphanum"`
		S8  string            `json:"s8" validate:"endswith=.go"`
		S9  string            `json:"s9" validate:"required"`
		N1  int               `json:"n1" validate:"min=1,max=9"`
		N2  float64           `json:"n2" validate:"gt=0,lt=1"`
		N3  int               `json:"n3" validate:"oneof=2 4"`
		N4  uint16            `json:"n4" validate:"lte=100"`
		L1  []string          `json:"l1" validate:"min=1,max=2,unique,dive,uuid"`
		M1  map[string]int    `json:"m1" validate:"min=1,dive,gte=0"`
		P1  *int              `json:"p1,omitempty" validate:"omitempty,gte=3"`
		Opt string            `json:"opt,omitempty" validate:"oneof=x y"`
		Raw map[string]string `json:"raw,omitempty"`
	}
	props := schemaOf(t, shapeTool[In]("rules"))["properties"].(map[string]any)
	want := map[string]string{
		"s1": `{"type":"string","minLength":2,"maxLength":5}`,
		"s2": `{"type":"string","minLength":3,"maxLength":3}`,
		"s3": `{"type":"string","minLength":2,"maxLength":3}`,
		"s4": `{"type":"string","enum":["a","b c"]}`,
		"s5": `{"type":"string","format":"email"}`,
		"s6": `{"type":"string","format":"uri"}`,
		"s7": `{"type":"string","pattern":"^[a-zA-Z0-9]+$"}`,
		"s8": `{"type":"string","pattern":"\\.go$"}`,
		"s9": `{"type":"string","minLength":1}`,
		"n1": `{"type":"integer","minimum":1,"maximum":9}`,
		"n2": `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`,
		"n3": `{"type":"integer","enum":[2,4]}`,
		"n4": `{"type":"integer","minimum":0,"maximum":100}`,
		"l1": `{"type":"array","minItems":1,"maxItems":2,"uniqueItems":true,"items":{"type":"string","format":"uuid"}}`,
		"m1": `{"type":"object","minProperties":1,"additionalProperties":{"type":"integer","minimum":0}}`,
		"p1": `{"type":"integer","minimum":3}`,
	}
	for name, w := range want {
		assert.JSONEq(t, w, string(mustJSON(t, props[name])), name)
	}
	s := schemaOf(t, shapeTool[In]("rules"))
	assert.Contains(t, s["required"], "opt", `oneof without omitempty refuses "": the field cannot be left out`)
	assert.NotContains(t, s["required"], "p1")
	assert.NotContains(t, s["required"], "raw")
}

// TestDecodeErrorsNameFields pins the wording the model sees.
func TestDecodeErrorsNameFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool        agentrt.Tool
		input, want string
	}{
		{shapes[3].tool, `{"unit":"k","kind":"point"}`, `invalid input: field "unit" must be one of "c", "f"`},
		{shapes[3].tool, `{"unit":"c","kind":"line","level":4}`, `invalid input: field "kind" must be "point"; field "level" must be one of 1, 2, 3`},
		{shapes[3].tool, `{"kind":"point"}`, `invalid input: field "unit" is required`},
		{shapes[4].tool, `{"temp":-51,"pct":0,"step":7,"small":200,"count":-1,"ratio":1}`, `invalid input: field "temp" must be at least -50; field "pct" must be greater than 0; field "step" must be a multiple of 5; field "small" must be at most 127; field "count" must be at least 0; field "ratio" must be less than 1`},
		{shapes[4].tool, `{"temp":"warm","pct":1.5}`, `invalid input: field "temp" must be a number, got string; field "pct" must be an integer, got number 1.5`},
		{shapes[5].tool, `{"code":"AB-12","email":"ann","site":"example.com","day":"May 1"}`, `invalid input: field "code" must match the pattern "^[A-Z]{3}-[0-9]{2}$"; field "email" must be a valid email address; field "site" must be an absolute URI (like https://example.com/x); field "day" must be a date in the form YYYY-MM-DD`},
		{shapes[5].tool, `{"code":"ABC-12","title":"é"}`, `invalid input: field "title" must have at least 2 characters`},
		{shapes[1].tool, `{"bill":{"city":"Rome","zip":"12a45"},"ship":{}}`, `invalid input: field "bill.zip" must match the pattern "^[-+]?[0-9]+(?:\\.[0-9]+)?$"; field "ship.city" is required`},
		{shapes[2].tool, `{"tags":["a","bb","cc","dd"],"lines":[{"sku":"ab1","qty":256}],"ids":[1,2,1],"grid":[1]}`, `invalid input: field "tags[0]" must have at least 2 characters; field "tags" must have at most 3 items; field "lines[0].sku" must have exactly 4 characters; field "lines[0].qty" must be at most 255; field "ids" must not repeat an item (items 0 and 2 are equal); field "grid" must have at least 2 items`},
		{shapes[2].tool, `{"tags":[null],"ptrs":[null]}`, `invalid input: field "tags[0]" must be a string, got null; field "ptrs[0]" must be an object, got null`},
		{shapes[6].tool, `{"a":"x","c":null,"e":""}`, `invalid input: field "c" must be an integer, got null`},
		{shapes[6].tool, `{"a":"x","c":1}`, `invalid input: field "e" is required`},
		{shapes[7].tool, `{"id":"","version":0,"body":"012345678901234567890"}`, `invalid input: field "id" must not be empty; field "version" must be at least 1; field "body" must have at most 20 characters`},
		{shapes[7].tool, `{"body":"x","extra":1}`, `invalid input: field "id" is required; unknown field "extra" (valid fields: "body", "id", "version")`},
		{shapes[8].tool, `{"labels":{"a":"123456","b":"","c":""},"counts":{"x":"many"},"by_id":{"x":true}}`, `invalid input: field "labels.a" must have at most 5 characters; field "labels" must have at most 2 entries; field "counts.x" must be an integer, got string; unknown field "by_id.x" (valid fields: none; names must match "^[0-9]+$")`},
		{shapes[9].tool, `{"name":"a","any":null}`, `invalid input: field "name" must have at least 2 characters`},
		{shapes[9].tool, `{"name":7,"any":1}`, `invalid input: field "name" must be a string or null`},
		{shapes[0].tool, `null`, `input is null; expected a JSON object`},
		{shapes[0].tool, `[{"name":"x"}]`, `input must be a JSON object, got an array`},
	}
	for _, tc := range tests {
		_, err := tc.tool.Decode(json.RawMessage(tc.input))
		if assert.Error(t, err, tc.input) {
			assert.Equal(t, tc.want, err.Error(), tc.input)
		}
	}
}

// TestDecodeRequiredMeansPresent: required is about the key; a zero value
// is a value. validate:"required" keeps go-playground's meaning (non-zero),
// which the schema shows only as required: the one rule it cannot show.
func TestDecodeRequiredMeansPresent(t *testing.T) {
	t.Parallel()
	type Plain struct {
		A int  `json:"a"`
		B bool `json:"b"`
	}
	plain := shapeTool[Plain]("plain")
	in, err := plain.Decode(json.RawMessage(`{"a":0,"b":false}`))
	require.NoError(t, err)
	assert.Equal(t, Plain{}, in)
	_, err = plain.Decode(json.RawMessage(`{"b":true}`))
	assert.EqualError(t, err, `invalid input: field "a" is required`)

	type NonZero struct {
		A int  `json:"a" validate:"required"`
		B bool `json:"b" validate:"required"`
	}
	nonZero := shapeTool[NonZero]("nonzero")
	assert.Equal(t, schemaOf(t, plain), schemaOf(t, nonZero), "validate:\"required\" on a number or bool shows as required only")
	_, err = nonZero.Decode(json.RawMessage(`{"a":0,"b":false}`))
	assert.EqualError(t, err, `invalid input: field "a" is required and must not be 0; field "b" is required and must be true`)
	_, err = nonZero.Decode(json.RawMessage(`{"b":true}`))
	assert.EqualError(t, err, `invalid input: field "a" is required`, "one error per field")
}

func TestDecodeLeniency(t *testing.T) {
	t.Parallel()
	tool := shapes[4].tool // numbers
	in, err := tool.Decode(json.RawMessage(`{"temp":"12.5","pct":"3.0","step":null}`))
	require.NoError(t, err, "numbers as strings, 3.0 for an integer, null for an optional field")
	assert.Equal(t, shapeNumbers{Temp: 12.5, Pct: 3}, in)
	in, err = shapes[3].tool.Decode(json.RawMessage(`"{\"unit\":\"c\",\"kind\":\"point\"}"`))
	require.NoError(t, err, "an object sent as a JSON string")
	assert.Equal(t, shapeEnums{Unit: "c", Kind: "point"}, in)
	in, err = shapes[5].tool.Decode(json.RawMessage(`{"code":"ABC-12","word":"\u00e9t\u00e9"}`))
	require.Error(t, err, "alpha is ASCII letters, as in go-playground")
	assert.Nil(t, in)
	assert.Contains(t, err.Error(), `field "word" must match the pattern`)
}

func TestNewToolRefusesWhatItCannotEnforce(t *testing.T) {
	t.Parallel()
	type Ref struct {
		X any `json:"x" jsonschema:"oneof_ref=#/$defs/A;#/$defs/B"`
	}
	assert.PanicsWithValue(t, `agentrt: NewTool "ref": invalid input schema: keyword "$ref" is not checked by the decoder`, func() { shapeTool[Ref]("ref") })
	type BadPattern struct {
		X string `json:"x" jsonschema:"pattern=(?=x)"`
	}
	assert.Panics(t, func() { shapeTool[BadPattern]("bad") })
	type Hex struct {
		X string `json:"x" jsonschema:"format=color"`
		Y string `json:"y" validate:"hexcolor"`
	}
	props := schemaOf(t, shapeTool[Hex]("hex"))["properties"].(map[string]any)
	assert.NotContains(t, props["x"], "format", "a format the decoder does not check is not shown")
	assert.Equal(t, map[string]any{"type": "string"}, props["y"], "a rule without a JSON Schema form is not shown")
	_, err := shapeTool[Hex]("hex").Decode(json.RawMessage(`{"x":"red","y":"red"}`))
	assert.EqualError(t, err, `invalid input: field "y" failed the "hexcolor" rule`, "but it is checked")
}

func TestRawToolChecksTheWholeSchema(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{
		"q":{"type":"string","minLength":1},
		"filter":{"type":"object","properties":{"lang":{"enum":["go","rust"]},"stars":{"type":"integer","minimum":0,"exclusiveMinimum":true}},"required":["lang"]},
		"ids":{"type":"array","items":{"type":"string","format":"uuid"},"maxItems":2},
		"mode":{"anyOf":[{"const":"fast"},{"type":"integer"}]},
		"x":{"$ref":"#/$defs/x"}
	},"required":["q"]}`)
	tool := agentrt.NewRawTool("search", "", schema, func(_ context.Context, in json.RawMessage) (string, error) { return string(in), nil })
	_, err := tool.Decode(json.RawMessage(`{"q":"","filter":{"stars":0},"ids":["x"],"mode":"slow","x":{"anything":1},"extra":true}`))
	assert.EqualError(t, err, `invalid input: field "q" must not be empty; field "filter.lang" is required; field "filter.stars" must be greater than 0; field "ids[0]" must be a UUID (like 123e4567-e89b-12d3-a456-426614174000); field "mode" must be "fast" or an integer`)
	in, err := tool.Decode(json.RawMessage(`{"q":"go","filter":{"lang":"go","stars":"3"},"mode":2,"x":null}`))
	require.NoError(t, err, "$ref is shown, not enforced; extra fields are allowed without additionalProperties:false")
	assert.JSONEq(t, `{"q":"go","filter":{"lang":"go","stars":3},"mode":2,"x":null}`, string(in.(json.RawMessage)))
}

// annotations constrain nothing; checkedAlone are keywords checked
// through others (properties through required and the walk into each
// property, items through the walk into each item).
var (
	annotations  = map[string]bool{"description": true, "title": true}
	checkedAlone = map[string]bool{"properties": true, "items": true, "additionalProperties": true}
)

func keywordsOf(s any) map[string]bool {
	out := map[string]bool{}
	var walk func(s any)
	walk = func(s any) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		for k, v := range m {
			out[k] = true
			switch k {
			case "properties", "patternProperties":
				for _, p := range v.(map[string]any) {
					walk(p)
				}
			case "items", "additionalProperties":
				walk(v)
			case "oneOf", "anyOf", "allOf":
				for _, p := range v.([]any) {
					walk(p)
				}
			}
		}
	}
	walk(s)
	return out
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// gen generates values that satisfy a JSON Schema (the subset NewTool
// reflects), preferring the bounds.
type gen struct {
	rng *rand.Rand
}

// value returns a value valid for s; with all, every optional property is
// present (the base of the violations), else each one is by chance.
func (g *gen) value(schema any, all bool) any {
	s, ok := schema.(map[string]any)
	if !ok { // true: anything
		return map[string]any{"free": []any{1, "two"}}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok {
		return e[g.rng.IntN(len(e))]
	}
	if alts, ok := s["oneOf"].([]any); ok {
		alt := alts[0].(map[string]any)
		if !all {
			alt = alts[g.rng.IntN(len(alts))].(map[string]any)
		}
		return g.value(alt, all)
	}
	if _, ok := s["type"]; !ok && len(s) == 0 {
		return []any{"free", 1.5}
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		req, _ := s["required"].([]any)
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			if all || slices.Contains(req, any(name)) || g.rng.IntN(2) == 0 {
				out[name] = g.value(p, all)
			}
		}
		n := g.count(s, "minProperties", "maxProperties", all)
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for i := range n {
				out[fmt.Sprintf("k%d", i)] = g.value(ap, all)
			}
		}
		if pp, ok := s["patternProperties"].(map[string]any); ok {
			for pat, p := range pp {
				for range n {
					out[g.matching(pat)] = g.value(p, all)
				}
			}
		}
		return out
	case "array":
		n := g.count(s, "minItems", "maxItems", all)
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for len(out) < n {
			v := g.value(items, all)
			if s["uniqueItems"] == true && slices.ContainsFunc(out, func(w any) bool { return fmt.Sprint(w) == fmt.Sprint(v) }) {
				continue
			}
			out = append(out, v)
		}
		return out
	case "string":
		return g.str(s)
	case "integer", "number":
		return g.number(s)
	case "boolean":
		return g.rng.IntN(2) == 0
	case "null":
		return nil
	}
	return map[string]any{"free": []any{1, "two"}} // no schema: anything
}

// count picks a size between the bounds, at most 3 when unbounded; with
// all, the smallest above 0.
func (g *gen) count(s map[string]any, minKey, maxKey string, all bool) int {
	lo, hi := 0, 3
	if v, ok := s[minKey].(float64); ok {
		lo = int(v)
		hi = max(hi, lo)
	}
	if v, ok := s[maxKey].(float64); ok {
		hi = int(v)
	}
	if all {
		return min(max(lo, 1), hi)
	}
	return []int{lo, hi, lo + g.rng.IntN(hi-lo+1)}[g.rng.IntN(3)]
}

var formatSamples = map[string][]string{
	"date-time": {"2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5+02:00"},
	"date":      {"2024-05-01"},
	"email":     {"ann@example.com"},
	"uri":       {"https://example.com/x?y=1"},
	"uuid":      {"123e4567-e89b-12d3-a456-426614174000"},
}

func (g *gen) str(s map[string]any) string {
	if f, ok := s["format"].(string); ok {
		return formatSamples[f][g.rng.IntN(len(formatSamples[f]))]
	}
	lo, hi := 0, 8
	if v, ok := s["minLength"].(float64); ok {
		lo = int(v)
		hi = max(hi, lo)
	}
	if v, ok := s["maxLength"].(float64); ok {
		hi = int(v)
	}
	if p, ok := s["pattern"].(string); ok {
		for range 1000 {
			if m := g.matching(p); len([]rune(m)) >= lo && len([]rune(m)) <= hi {
				return m
			}
		}
		panic(fmt.Sprintf("cannot generate a string of %d to %d characters matching %q", lo, hi, p))
	}
	n := []int{lo, hi, lo + g.rng.IntN(hi-lo+1)}[g.rng.IntN(3)]
	alphabet := []rune(`abcXYZé"<\ `)
	r := make([]rune, n)
	for i := range r {
		r[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(r)
}

func (g *gen) number(s map[string]any) any {
	lo, hi := -1000.0, 1000.0
	if v, ok := s["minimum"].(float64); ok {
		lo = v
	}
	if v, ok := s["maximum"].(float64); ok {
		hi = v
	}
	integer := s["type"] == "integer"
	step := 1.0
	if !integer {
		step = 0.25
	}
	if v, ok := s["exclusiveMinimum"].(float64); ok {
		lo = v + step
	}
	if v, ok := s["exclusiveMaximum"].(float64); ok {
		hi = v - step
	}
	if m, ok := s["multipleOf"].(float64); ok {
		lo, hi = math.Ceil(lo/m)*m, math.Floor(hi/m)*m
		n := []float64{lo, hi, lo + float64(g.rng.IntN(int((hi-lo)/m)+1))*m}[g.rng.IntN(3)]
		return n
	}
	x := []float64{lo, hi, 0, lo + g.rng.Float64()*(hi-lo)}[g.rng.IntN(4)]
	x = math.Max(lo, math.Min(hi, x))
	if integer {
		return int64(math.Round(x))
	}
	return math.Round(x/step) * step
}

// matching returns a string that matches the regular expression pat, by a
// random way through it.
func (g *gen) matching(pat string) string {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			i := 2 * g.rng.IntN(len(r.Rune)/2)
			b.WriteRune(r.Rune[i] + rune(g.rng.IntN(int(min(r.Rune[i+1]-r.Rune[i], 25))+1)))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture:
			walk(r.Sub[0])
		case syntax.OpConcat:
			for _, s := range r.Sub {
				walk(s)
			}
		case syntax.OpAlternate:
			walk(r.Sub[g.rng.IntN(len(r.Sub))])
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
			bounds := map[syntax.Op][2]int{syntax.OpStar: {0, 6}, syntax.OpPlus: {1, 6}, syntax.OpQuest: {0, 1}}[r.Op]
			for range bounds[0] + g.rng.IntN(bounds[1]-bounds[0]+1) {
				walk(r.Sub[0])
			}
		case syntax.OpRepeat:
			hi := r.Max
			if hi < 0 {
				hi = r.Min + 3
			}
			for range r.Min + g.rng.IntN(hi-r.Min+1) {
				walk(r.Sub[0])
			}
		}
	}
	walk(re)
	if !regexp.MustCompile(pat).MatchString(b.String()) {
		panic(fmt.Sprintf("generated %q does not match %q", b.String(), pat))
	}
	return b.String()
}

// violation is one input that breaks one constraint of the schema, at path.
type violation struct {
	keyword string
	path    string
	input   any
}

// violations walks schema s along the valid input root and returns, for
// each constraint found, a copy of the input with that one constraint
// broken.
func violations(s map[string]any, root any) []violation {
	var out []violation
	var walk func(s map[string]any, at []any)
	walk = func(s map[string]any, at []any) {
		cur := getAt(root, at)
		path := jsonPath(at)
		addAt := func(kw string, bad any) {
			out = append(out, violation{kw, path, setAt(root, at, bad)})
		}
		if alts, ok := s["oneOf"].([]any); ok {
			addAt("oneOf", []any{"neither"})
			for _, a := range alts {
				if a.(map[string]any)["type"] != "null" {
					walk(a.(map[string]any), at)
					break
				}
			}
			return
		}
		if c, ok := s["const"]; ok {
			addAt("const", fmt.Sprint(c, "-not"))
		}
		if _, ok := s["enum"]; ok {
			addAt("enum", "not-in-the-enum")
			if s["type"] == "integer" {
				addAt("enum", 99)
			}
		}
		switch s["type"] {
		case "object":
			if len(at) > 0 { // the input itself: see TestToolDecodeErrors
				addAt("type", []any{})
			}
			obj := cur.(map[string]any)
			req, _ := s["required"].([]any)
			for _, r := range req {
				out = append(out, violation{"required", jsonPath(append(slices.Clip(at), r)), setAt(root, at, without(obj, r.(string)))})
			}
			if s["additionalProperties"] == false && s["patternProperties"] == nil {
				with := clone(obj).(map[string]any)
				with["zz_unknown"] = 1
				out = append(out, violation{"unknown", jsonPath(append(slices.Clip(at), "zz_unknown")), setAt(root, at, with)})
			}
			if pp, ok := s["patternProperties"].(map[string]any); ok {
				with := clone(obj).(map[string]any)
				with["not matching"] = 1
				out = append(out, violation{"patternProperties", jsonPath(append(slices.Clip(at), "not matching")), setAt(root, at, with)})
				for range pp {
					with := clone(obj).(map[string]any)
					with["0"] = []any{"wrong type"}
					out = append(out, violation{"patternProperties", jsonPath(append(slices.Clip(at), "0")), setAt(root, at, with)})
				}
			}
			if n, ok := s["minProperties"].(float64); ok && n > 0 {
				addAt("minProperties", map[string]any{})
			}
			if n, ok := s["maxProperties"].(float64); ok {
				with := clone(obj).(map[string]any)
				ap, _ := s["additionalProperties"].(map[string]any)
				for i := 0; len(with) <= int(n); i++ {
					with[fmt.Sprintf("extra%d", i)] = (&gen{rng: rand.New(rand.NewPCG(3, 4))}).value(ap, true)
				}
				addAt("maxProperties", with)
			}
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				if p, ok := p.(map[string]any); ok && obj[name] != nil {
					walk(p, append(slices.Clip(at), name))
				}
			}
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				for k := range obj {
					walk(ap, append(slices.Clip(at), k))
				}
			}
		case "array":
			addAt("type", map[string]any{})
			arr := cur.([]any)
			if n, ok := s["minItems"].(float64); ok && n > 0 {
				addAt("minItems", slices.Clone(arr[:int(n)-1]))
			}
			if n, ok := s["maxItems"].(float64); ok && len(arr) > 0 {
				longer := slices.Clone(arr)
				for len(longer) <= int(n) {
					longer = append(longer, arr[0])
				}
				addAt("maxItems", longer)
			}
			if s["uniqueItems"] == true && len(arr) > 0 {
				addAt("uniqueItems", append(slices.Clone(arr), arr[0]))
			}
			if items, ok := s["items"].(map[string]any); ok {
				for i := range arr {
					walk(items, append(slices.Clip(at), i))
				}
			}
		case "string":
			addAt("type", 42)
			str := cur.(string)
			if n, ok := s["minLength"].(float64); ok && n > 0 {
				addAt("minLength", strings.Repeat("x", int(n)-1))
			}
			if n, ok := s["maxLength"].(float64); ok {
				addAt("maxLength", str+strings.Repeat("x", int(n)+1-len([]rune(str))))
			}
			if p, ok := s["pattern"].(string); ok {
				re := regexp.MustCompile(p)
				for _, bad := range []string{"", "!", "0", "a", "A", "??-??"} {
					if !re.MatchString(bad) {
						addAt("pattern", bad)
						break
					}
				}
			}
			if _, ok := s["format"]; ok {
				addAt("format", "not valid in any format")
			}
		case "integer", "number":
			addAt("type", []any{1})
			if s["type"] == "integer" {
				addAt("type", 1.5)
			}
			if m, ok := s["minimum"].(float64); ok {
				addAt("minimum", m-1)
			}
			if m, ok := s["maximum"].(float64); ok {
				addAt("maximum", m+1)
			}
			if m, ok := s["exclusiveMinimum"].(float64); ok {
				addAt("exclusiveMinimum", m)
			}
			if m, ok := s["exclusiveMaximum"].(float64); ok {
				addAt("exclusiveMaximum", m)
			}
			if m, ok := s["multipleOf"].(float64); ok {
				addAt("multipleOf", m+1)
			}
		case "boolean":
			addAt("type", "maybe")
		}
	}
	walk(s, nil)
	return out
}

func jsonPath(at []any) string {
	var b strings.Builder
	for _, seg := range at {
		switch x := seg.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x)
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		}
	}
	return b.String()
}

func getAt(v any, at []any) any {
	for _, seg := range at {
		switch x := seg.(type) {
		case string:
			v = v.(map[string]any)[x]
		case int:
			v = v.([]any)[x]
		}
	}
	return v
}

// setAt returns a deep copy of root with the value at path replaced.
func setAt(root any, at []any, val any) any {
	if len(at) == 0 {
		return val
	}
	c := clone(root)
	parent := getAt(c, at[:len(at)-1])
	switch x := at[len(at)-1].(type) {
	case string:
		parent.(map[string]any)[x] = val
	case int:
		parent.([]any)[x] = val
	}
	return c
}

func without(obj map[string]any, key string) map[string]any {
	c := clone(obj).(map[string]any)
	delete(c, key)
	return c
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = clone(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = clone(e)
		}
		return c
	}
	return v
}

// BenchmarkToolDecode is the decode of a valid input on the fast path, for
// a tool without and one with schema rules.
func BenchmarkToolDecode(b *testing.B) {
	for _, bc := range []struct {
		name  string
		tool  agentrt.Tool
		input string
	}{
		{"add", agentrt.NewTool("add", "", func(_ context.Context, in AddIn) (int, error) { return in.A + in.B, nil }), `{"a":2,"b":40}`},
		{"order", orderTool(), `{"item":"tea","size":"small","quantity":3,"ship":{"city":"Rome","zip":"00100"},"lines":[{"city":"Oslo"}],"tags":{"a":"b"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			raw := json.RawMessage(bc.input)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.tool.Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
