package pgmem

import (
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/memorytest"
	"github.com/agentrt/agentrt/pgstore"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sessions and memory in one Postgres database, as replicas would share
// them: the run keeps both invariants, and the memory the hook showed the
// model is in the session's records, readable by another store instance.
func TestAgentOnPostgres(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	mem, err := Open(ctx, url, &Options{Migrate: true})
	require.NoError(t, err)
	defer mem.Close()
	store, err := pgstore.Open(ctx, url, &pgstore.Options{Migrate: true})
	require.NoError(t, err)
	defer store.Close()
	_, err = memory.IngestMarkdown(ctx, mem, "team", memorytest.Corpus())
	require.NoError(t, err)

	planner := agenttest.Script(
		agenttest.CallTool("search", `{"query":"fsync power loss durability"}`),
		agenttest.CallTool("remember", `{"text":"The team keeps sessions in Postgres."}`),
		agenttest.Reply("Under SyncEveryTurn a power loss can lose the current turn (docs/jsonl-format.md § Durability)."),
	)
	ag := &agentrt.Agent{
		Planner:    planner,
		Tools:      memory.Tools(mem, "team"),
		Permission: agentrt.AllowAll(),
		Store:      store,
		Hooks:      []agentrt.Hooks{memory.Hook(mem, "team", &memory.HookOptions{Records: store})},
	}
	events, err := agenttest.Collect(ag.Run(ctx, "q-1", "What can a power loss lose with the JSONL store?"))
	require.NoError(t, err)
	planner.AssertDone(t)
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 2)
	assert.Contains(t, results[0].Message.Content, "[1] docs/jsonl-format.md § The JSONL session format, version 1 › Durability\n")

	other, err := pgstore.Open(ctx, url, nil) // another replica
	require.NoError(t, err)
	defer other.Close()
	msgs, err := other.Load(ctx, "q-1")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.NoError(t, other.Verify(ctx, "q-1"))
	recs, err := other.LoadRecords(ctx, "q-1")
	require.NoError(t, err)
	var recalls []memory.RecallRecord
	for _, r := range recs {
		if r.Kind == memory.RecordKind {
			var rr memory.RecallRecord
			require.NoError(t, json.Unmarshal(r.Data, &rr))
			recalls = append(recalls, rr)
		}
	}
	require.Len(t, recalls, 3, "one per planner call")
	assert.Equal(t, "docs/jsonl-format.md#durability", recalls[0].Hits[0].ID)
	for _, r := range recalls {
		assert.Equal(t, "What can a power loss lose with the JSONL store?", r.Query)
		assert.Equal(t, "team", r.Scope)
	}
	assert.Equal(t, []int{1, 2, 3}, []int{recalls[0].Turn, recalls[1].Turn, recalls[2].Turn})
	hits, err := memory.Recall(ctx, mem, "team", "where are sessions kept", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "The team keeps sessions in Postgres.", hits[0].Text)
}
