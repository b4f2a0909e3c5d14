package main

import (
	"context"
	"path/filepath"
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
	// The file it names at the end, to look at with agentrt show, exists.
	_, after, ok := strings.Cut(s, "files: ")
	require.True(t, ok, "no files: line")
	file, _, _ := strings.Cut(after, " ")
	assert.Equal(t, filepath.Join(dir, "trip-42.jsonl"), file)
	assert.FileExists(t, file)
	assert.Contains(t, after, "go run ./cmd/agentrt show "+file)
}
