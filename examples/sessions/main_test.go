package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResumeByID(t *testing.T) {
	var out strings.Builder
	dir := t.TempDir()
	require.NoError(t, run(context.Background(), dir, "trip-42", &out))
	s := out.String()
	assert.Contains(t, s, `(run 1) I see 1 messages; the first is "Plan a weekend in Lisbon."`)
	assert.Contains(t, s, `(run 2) I see 3 messages; the first is "Plan a weekend in Lisbon."`, "the second run resumed the session")
	assert.Contains(t, s, `session trip-42      4 messages  "Plan a weekend in Lisbon."`)
	assert.Contains(t, s, `session trip-42-alt  2 messages`)
}
