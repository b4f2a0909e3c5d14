package timeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/timeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocExample verifies the first example of docs/jsonl-format.md as a
// session file and reads its timeline: the format's own example is a
// session this version writes, trace records included.
func TestDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/jsonl-format.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```jsonl\n")
	require.True(t, ok, "a jsonl block")
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "demo.jsonl"), []byte(example), 0o600))

	findings, err := timeline.Verify(context.Background(), dir, "demo", nil)
	require.NoError(t, err)
	assert.Empty(t, findings)

	s, err := timeline.Load(context.Background(), dir, "demo")
	require.NoError(t, err)
	require.True(t, s.Traced)
	require.Len(t, s.Runs, 1)
	r := s.Runs[0]
	assert.Equal(t, "complete", r.Reason)
	assert.Equal(t, timeline.LayerNone, r.Layer)
	require.Len(t, r.Turns, 2)
	require.Len(t, r.Turns[0].Calls, 2)
	assert.Equal(t, timeline.OutcomeOK, r.Turns[0].Calls[0].Outcome)
	assert.Equal(t, timeline.OutcomeDenied, r.Turns[0].Calls[1].Outcome)
	require.NotNil(t, r.Turns[0].Calls[1].Decision, "the denial is linked to its permission record")
	assert.Equal(t, "policy", r.Turns[0].Calls[1].Decision.Source)
	assert.Equal(t, "gpt-4.1-mini", r.Turns[1].Model.Model)
}
