package memorytest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LongMessage returns a message of at least size bytes as a user pastes
// one: lines of a service log, each with three UUIDs, and the question at
// the end. 200 KB of it hold over 20,000 distinct terms
// (pgmem failed on such a query with "stack depth limit exceeded" before
// queries were bounded). It is deterministic.
func LongMessage(size int, question string) string {
	r := rand.New(rand.NewPCG(5, 6))
	levels := []string{"INFO", "WARN", "DEBUG", "ERROR"}
	verbs := []string{"processed", "retrying", "flushed", "queued", "cancelled"}
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()>>16, r.Uint32()>>16, r.Uint32()>>16, r.Uint64()>>16)
	}
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, "%s job %s %s parent=%s trace=%s\n",
			levels[r.IntN(len(levels))], uuid(), verbs[r.IntN(len(verbs))], uuid(), uuid())
	}
	b.WriteString("\n")
	b.WriteString(question)
	return b.String()
}

// TestLongMessage checks that a 200 KB user message (a pasted log and a
// question) neither fails nor slows down the memory of s, through
// [memory.Hook] and the recall and search tools ([memory.Tools]): the run
// succeeds, the hook searched for at most [memory.MaxQueryTerms] terms
// (its record says which), and the fact the question is about reached the
// model, through the hook and through the tool.
func TestLongMessage(t *testing.T, s memory.Store) {
	t.Helper()
	ctx := t.Context()
	put(t, s, "ops",
		memory.Item{ID: "crash", Text: "The reconciliation controller crashes when the namespace quota is exhausted."},
		memory.Item{ID: "other", Text: "The billing exporter runs every night at two."},
		memory.Item{ID: "runbook", Kind: memory.KindDocument, Source: "runbook.md", Heading: "Controller crashes",
			Text: "Controller crashes\n\nRaise the namespace quota, then restart the reconciliation controller."},
	)
	paste := LongMessage(200<<10, "Why does the reconciliation controller crash?")
	input, err := json.Marshal(map[string]string{"query": paste})
	require.NoError(t, err)

	store := &agentrt.MemoryStore{}
	var shown string
	planner := agenttest.Script(
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			shown = req.Messages[len(req.Messages)-1].Content // the hook's message
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("r1", "recall", input), agentrt.ToolUseBlock("s1", "search", input))}, nil
		}),
		agenttest.Reply("The quota is exhausted."),
	)
	ag := &agentrt.Agent{
		Planner:    planner,
		Tools:      memory.Tools(s, "ops"),
		Permission: agentrt.AllowAll(),
		Store:      store,
		Hooks:      []agentrt.Hooks{memory.Hook(s, "ops", &memory.HookOptions{Records: store})},
	}
	events, err := agenttest.Collect(ag.Run(ctx, "paste", paste))
	require.NoError(t, err)
	planner.AssertDone(t)
	assert.Contains(t, shown, "The reconciliation controller crashes when the namespace quota is exhausted.")

	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 2)
	for _, r := range results {
		assert.False(t, r.Message.IsError, "%s: %s", r.Tool, r.Message.Content)
	}
	assert.Contains(t, results[0].Message.Content, "The reconciliation controller crashes")
	assert.Contains(t, results[1].Message.Content, "[1] runbook.md § Controller crashes")

	recs, err := store.LoadRecords(ctx, "paste")
	require.NoError(t, err)
	var recalls []memory.RecallRecord
	for _, rec := range recs {
		if rec.Kind == memory.RecordKind {
			var rr memory.RecallRecord
			require.NoError(t, json.Unmarshal(rec.Data, &rr))
			recalls = append(recalls, rr)
		}
	}
	require.NotEmpty(t, recalls)
	for _, rr := range recalls {
		assert.LessOrEqual(t, len(rr.Terms), memory.MaxQueryTerms)
		assert.Contains(t, rr.Terms, "reconciliation")
		var hits []string
		for _, h := range rr.Hits {
			hits = append(hits, h.ID)
		}
		assert.Contains(t, hits, "crash")
	}
	msgs, err := store.Load(ctx, "paste")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
}
