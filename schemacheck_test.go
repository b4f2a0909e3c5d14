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

type fuzzItem struct {
	K string `json:"k" jsonschema:"enum=a,enum=b"`
}

type fuzzIn struct {
	S  string          `json:"s" validate:"min=1,max=4"`
	N  float64         `json:"n,omitempty" jsonschema:"minimum=0,exclusiveMaximum=10,multipleOf=0.5"`
	I  uint8           `json:"i,omitempty"`
	L  []fuzzItem      `json:"l,omitempty" validate:"omitempty,max=2"`
	M  map[string]bool `json:"m,omitempty"`
	P  *string         `json:"p,omitempty" jsonschema:"nullable,pattern=^x+$"`
	Ts string          `json:"ts,omitempty" jsonschema:"format=date-time"`
}

func fuzzSchema(t testing.TB) *checkedSchema {
	schema, err := reflectInputSchema(reflect.TypeFor[fuzzIn]())
	require.NoError(t, err)
	cs, err := compileSchema(schema)
	require.NoError(t, err)
	return cs
}

// The errors come in the order of the input, whatever the order the
// library found them in.
func TestCheckErrorsInInputOrder(t *testing.T) {
	t.Parallel()
	cs := fuzzSchema(t)
	input := []byte(`{"zz":1,"s":"","n":10,"i":300,"l":[{"k":"c"},{},{}],"m":{"a":1},"p":"y","ts":"x","aa":2}`)
	first := cs.check(input)
	require.Len(t, first, 12)
	assert.Equal(t, "zz", first[0].path)
	assert.Equal(t, "aa", first[len(first)-1].path)
	for range 50 {
		assert.Equal(t, first, cs.check(input))
	}
}

// FuzzCheck: on any JSON input, the check does not panic, finds the same
// errors twice, and every error names its path.
func FuzzCheck(f *testing.F) {
	cs := fuzzSchema(f)
	for _, s := range []string{`{"s":"ab"}`, `{"s":"","n":10,"i":300,"l":[{"k":"c"},{},{}],"m":{"a":1},"p":"y","ts":"x"}`,
		`{"s":"\u00e9\u00e9","n":9.5,"p":null,"l":[{"k":"a"}]}`, `[]`, `"x"`, `{"s":"ab","x":{"y":[1,{"z":null}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if !json.Valid([]byte(input)) {
			return
		}
		errs := cs.check([]byte(input))
		if again := cs.check([]byte(input)); !reflect.DeepEqual(errs, again) {
			t.Fatalf("%s: %v, then %v", input, errs, again)
		}
		for _, e := range errs {
			if e.path != "" && !strings.Contains(e.msg, strconv.Quote(e.path)) {
				t.Fatalf("%s: %q does not name %q", input, e.msg, e.path)
			}
		}
		if _, err := cs.normalize([]byte(input)); err != nil && !strings.HasPrefix(err.Error(), "invalid input: ") && !strings.HasPrefix(err.Error(), "input ") {
			t.Fatalf("%s: %v", input, err)
		}
	})
}
