package agentrt

import (
	"encoding/json"
	"reflect"
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
