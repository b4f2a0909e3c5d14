package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/memory/sqlitemem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnswersWithCitations(t *testing.T) {
	root, err := repoRoot()
	require.NoError(t, err)
	mem, err := sqlitemem.Open(":memory:", nil)
	require.NoError(t, err)
	defer mem.Close()
	var out strings.Builder
	require.NoError(t, run(context.Background(), mem, os.DirFS(root), defaultQuestions, &out))
	s := out.String()
	t.Log(s)
	assert.Contains(t, s, "planner: scripted (offline; no model is called)")
	assert.Contains(t, s, "source: docs/jsonl-format.md § The JSONL session format, version 1 › Durability\n")
	assert.Contains(t, s, "source: examples/testing/README.md § testing: how to test your own agent\n")
	assert.Contains(t, s, "source: docs/jsonl-format.md § The JSONL session format, version 1 › Locking\n")
	assert.Contains(t, s, "[1] The user deploys agents on Kubernetes with three replicas.", "the hook showed the fact in the next session")
	assert.Contains(t, s, `memory.recall record {"turn":1,"scope":"example-user","query":"How many replicas do we run?"`)
}

func TestAnswerFrom(t *testing.T) {
	assert.Equal(t, "The documents do not say.", answerFrom("nothing found"))
	got := answerFrom("[1] a.md § Setup\nRun it.\nTwice.\n\n[2] b.md § More\nx\n\n[3] a fact")
	assert.Equal(t, "Run it. Twice.\n   source: a.md § Setup\n   see also: b.md § More; a fact", got)
}
