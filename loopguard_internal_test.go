package agentrt

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLoopGuardInputs shows which inputs the loop guard takes as the same:
// white space between JSON tokens does not count, white space inside a
// string and the order of keys do.
func TestLoopGuardInputs(t *testing.T) {
	t.Parallel()
	hash := func(s string) uint64 { return fnvCompactJSON(fnvOffset, []byte(s)) }
	assert.Equal(t, hash(`{"a":1,"b":[1,2]}`), hash("{ \"a\": 1,\n\t\"b\": [1, 2] }\r\n"), "white space between tokens")
	assert.NotEqual(t, hash(`{"a":"x y"}`), hash(`{"a":"xy"}`), "white space inside a string")
	assert.NotEqual(t, hash(`{"a":"\" b"}`), hash(`{"a":"\"b"}`), "after an escaped quote, still inside the string")
	assert.NotEqual(t, hash(`{"a":1,"b":2}`), hash(`{"b":2,"a":1}`), "the order of keys")
}
