package agentrt

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast check (valid) and the slow one (check) are one code path: they
// must agree on every input.
func TestCheckFastAndSlowAgree(t *testing.T) {
	t.Parallel()
	type line struct {
		SKU string `json:"sku" validate:"len=4"`
	}
	type in struct {
		Name  string            `json:"name" validate:"min=2"`
		Unit  string            `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
		N     int               `json:"n,omitempty" validate:"omitempty,gte=1,lte=9"`
		Lines []line            `json:"lines,omitempty" validate:"omitempty,max=2,dive"`
		Tags  map[string]string `json:"tags,omitempty"`
		Ptr   *line             `json:"ptr,omitempty" jsonschema:"nullable"`
	}
	schema, err := reflectInputSchema(reflect.TypeFor[in]())
	require.NoError(t, err)
	n, err := compileSchema(schema, true)
	require.NoError(t, err)
	inputs := []string{
		`{"name":"ab"}`, `{"name":"a"}`, `{}`, `{"name":"ab","unit":"k"}`, `{"name":"ab","unit":"c","n":9}`,
		`{"name":"ab","n":10}`, `{"name":"ab","n":1.5}`, `{"name":"ab","lines":[{"sku":"abcd"},{"sku":"abc"}]}`,
		`{"name":"ab","lines":[{"sku":"abcd"},{"sku":"abcd"},{"sku":"abcd"}]}`, `{"name":"ab","tags":{"a":"b","c":1}}`,
		`{"name":"ab","ptr":null}`, `{"name":"ab","ptr":{"sku":"ab"}}`, `{"name":"ab","ptr":{}}`, `{"name":"a\u00e9"}`,
		`{"name":"ab","x":1}`, `{"na\u006de":"ab"}`, `{"name":null}`, `{"name":"ab","unit":null}`, ` { "name" : "ab" , "n" : 2 } `,
		`{"name":["a","b"]}`, `{"name":{"a":"b"}}`, `{"name":"ab","lines":[]}`, `{"name":"ab","lines":[null]}`,
	}
	for _, input := range inputs {
		require.True(t, json.Valid([]byte(input)), input)
		errs := n.check([]byte(input))
		assert.Equal(t, len(errs) == 0, n.valid([]byte(input)), "%s: %v", input, errs)
		for _, e := range errs {
			assert.Contains(t, e.msg, `"`+e.path+`"`, "%s: the message names the path", input)
		}
	}
}

func TestCheckValidDoesNotAllocate(t *testing.T) {
	type in struct {
		A    int      `json:"a" validate:"min=0,max=100"`
		Unit string   `json:"unit" jsonschema:"enum=c,enum=f"`
		Code string   `json:"code" jsonschema:"pattern=^[A-Z]+$"`
		Tags []string `json:"tags" validate:"max=3,dive,min=1"`
	}
	schema, err := reflectInputSchema(reflect.TypeFor[in]())
	require.NoError(t, err)
	n, err := compileSchema(schema, true)
	require.NoError(t, err)
	raw := []byte(`{"a":42,"unit":"c","code":"ABC","tags":["x","y"]}`)
	require.True(t, n.valid(raw))
	assert.Zero(t, testing.AllocsPerRun(100, func() { n.valid(raw) }))
}

// FuzzCheck: on any JSON input, the fast check accepts exactly what the
// slow one finds nothing wrong with, and every error names its path.
func FuzzCheck(f *testing.F) {
	type item struct {
		K string `json:"k" jsonschema:"enum=a,enum=b"`
	}
	type in struct {
		S  string          `json:"s" validate:"min=1,max=4"`
		N  float64         `json:"n,omitempty" jsonschema:"minimum=0,exclusiveMaximum=10,multipleOf=0.5"`
		I  uint8           `json:"i,omitempty"`
		L  []item          `json:"l,omitempty" validate:"omitempty,max=2"`
		M  map[string]bool `json:"m,omitempty"`
		P  *string         `json:"p,omitempty" jsonschema:"nullable,pattern=^x+$"`
		Ts string          `json:"ts,omitempty" jsonschema:"format=date-time"`
	}
	schema, err := reflectInputSchema(reflect.TypeFor[in]())
	require.NoError(f, err)
	n, err := compileSchema(schema, true)
	require.NoError(f, err)
	for _, s := range []string{`{"s":"ab"}`, `{"s":"","n":10,"i":300,"l":[{"k":"c"},{},{}],"m":{"a":1},"p":"y","ts":"x"}`,
		`{"s":"\u00e9\u00e9","n":9.5,"p":null,"l":[{"k":"a"}]}`, `[]`, `"x"`, `{"s":"ab","x":{"y":[1,{"z":null}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if !json.Valid([]byte(input)) {
			return
		}
		errs := n.check([]byte(input))
		if (len(errs) == 0) != n.valid([]byte(input)) {
			t.Fatalf("%s: valid=%v, check=%v", input, n.valid([]byte(input)), errs)
		}
		for _, e := range errs {
			if e.path != "" && !strings.Contains(e.msg, strconv.Quote(e.path)) {
				t.Fatalf("%s: %q does not name %q", input, e.msg, e.path)
			}
		}
	})
}
