package pgstore

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/require"
)

// readmeQueries returns the operator queries of README.md.
func readmeQueries(t *testing.T) []string {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "Queries an operator might run:\n\n```sql\n")
	require.True(t, ok, "README.md has the operator queries")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	var qs []string
	for _, q := range strings.Split(block, ";\n") {
		if strings.TrimSpace(q) != "" {
			qs = append(qs, q)
		}
	}
	return qs
}

// Every operator query of README.md runs on sessions holding every kind
// of hostile text (NUL escapes and lone surrogates, which jsonb refuses,
// bytes that are not UTF-8), in messages and records; and Fork copies
// them.
func TestReadmeQueriesOnHostileSessions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, nil)
	const id = "trip-42" // the session the README's queries name
	for _, m := range agenttest.HostileMessages() {
		require.NoError(t, s.Append(ctx, id, m))
	}
	for _, rec := range []agentrt.Record{
		{Kind: agentrt.RecordPermission, Data: json.RawMessage(`{"tool_use_id":"c1","tool":"t\u0000","allow":false,"reason":"no \ud800"}`)},
		{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{"turn":1,"usage":{"input_tokens":3,"output_tokens":4}}`)},
		{Kind: "note", Data: json.RawMessage("{\"bin\":\"\xff\"}")},
	} {
		require.NoError(t, s.AppendRecord(ctx, id, rec))
	}
	queries := readmeQueries(t)
	require.Len(t, queries, 6)
	for _, q := range queries {
		rows, err := s.Pool().Query(ctx, q)
		require.NoError(t, err, q)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err(), q)
		t.Logf("%d rows: %s", n, strings.SplitN(q, "\n", 2)[0])
	}
	// With body::jsonb, as the README had it, the queries that read a body
	// fail on this session.
	failed := 0
	for _, q := range queries {
		q = strings.ReplaceAll(strings.ReplaceAll(q, "agentrt_json(e.body)", "e.body::jsonb"), "agentrt_json(body)", "body::jsonb")
		rows, err := s.Pool().Query(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
		}
		if err != nil {
			failed++
		}
	}
	t.Logf("with body::jsonb, %d of %d queries fail", failed, len(queries))
	require.Equal(t, 3, failed)

	require.NoError(t, s.Fork(ctx, id, "copy", len(agenttest.HostileMessages())))
	src, err := s.Load(ctx, id)
	require.NoError(t, err)
	dst, err := s.Load(ctx, "copy")
	require.NoError(t, err)
	require.Equal(t, src, dst)
	recs, err := s.LoadRecords(ctx, "copy")
	require.NoError(t, err)
	require.Equal(t, "{\"bin\":\"\xff\"}", string(recs[2].Data), "record bytes kept")
}
