package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(context.Background(), &out, script()))
	s := out.String()
	assert.Contains(t, s, `error the model sees: tool "book_table": invalid input: field "people" must be an integer, got string`)
	assert.Contains(t, s, `field "seating" must be one of "inside", "terrace"`)
	assert.Contains(t, s, `unknown field "vip"`)
	assert.Contains(t, s, "result: Booked Chez Go for 4 at 19:30 (terrace). Confirmation sent to ann@example.com.")
	assert.Contains(t, s, "answer: Your table at Chez Go is booked for 19:30.")
}
