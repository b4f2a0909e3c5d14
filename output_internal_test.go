package agentrt

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The schema and the decoding that RunTyped uses, and that package
// temporal reaches through internal/durable: the answer's JSON may come
// with prose or a code fence around it, and T's validate tags apply.
func TestOutputSchemaAndParse(t *testing.T) {
	t.Parallel()
	type weather struct {
		City  string  `json:"city" validate:"required"`
		TempC float64 `json:"temp_c"`
	}
	schema, err := outputSchema(reflect.TypeFor[weather]())
	require.NoError(t, err)
	assert.Contains(t, string(schema), `"temp_c"`)

	var w weather
	require.NoError(t, parseOutput("Here it is:\n```json\n{\"city\": \"Paris\", \"temp_c\": 18.5}\n```", &w))
	assert.Equal(t, weather{City: "Paris", TempC: 18.5}, w)

	var w2 weather
	err = parseOutput(`{"temp_c": 3}`, &w2)
	require.Error(t, err, "validate:required applies")
	assert.Contains(t, strings.ToLower(err.Error()), "city")

	var w3 weather
	require.Error(t, parseOutput(`{"city": "Oslo", "wind": 3}`, &w3), "decoding is strict: no unknown field")

	var p *weather // a pointer output type decodes and validates too
	require.NoError(t, parseOutput(`{"city": "Rome"}`, &p))
	assert.Equal(t, "Rome", p.City)
	var p2 *weather
	require.Error(t, parseOutput(`{"temp_c": 1}`, &p2))

	var list []int // not a struct: the JSON value itself
	require.NoError(t, parseOutput("[1, 2]", &list))
	assert.Equal(t, []int{1, 2}, list)
	_, err = outputSchema(reflect.TypeFor[[]int]())
	require.NoError(t, err)
}
