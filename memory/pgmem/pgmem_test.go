package pgmem

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/memorytest"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func newStore(t testing.TB, opts *Options) *Store {
	t.Helper()
	url := pgtest.NewDatabase(t)
	if opts == nil {
		opts = &Options{}
	}
	opts.Migrate = true
	s, err := Open(t.Context(), url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	memorytest.TestStore(t, func(t *testing.T) memory.Store { return newStore(t, nil) })
}

func TestRetrievalQuality(t *testing.T) {
	s := newStore(t, nil)
	n, err := memory.IngestMarkdown(t.Context(), s, "docs", memorytest.Corpus())
	require.NoError(t, err)
	r := memorytest.Recall(t, s, "docs", 3)
	t.Logf("postgres tsvector/GIN ts_rank: recall@3 = %.3f over %d questions, %d sections", r, len(memorytest.Questions), n)
	assert.GreaterOrEqual(t, r, 0.8)
}

func TestLongMessage(t *testing.T) {
	memorytest.TestLongMessage(t, newStore(t, nil))
}

func TestSchemaRequired(t *testing.T) {
	url := pgtest.NewDatabase(t)
	_, err := Open(t.Context(), url, nil)
	require.ErrorIs(t, err, ErrSchema)
	s, err := Open(t.Context(), url, &Options{Migrate: true})
	require.NoError(t, err)
	s.Close()
	s, err = Open(t.Context(), url, &Options{Migrate: true}) // again: nothing to do
	require.NoError(t, err)
	s.Close()
	s, err = Open(t.Context(), url, nil)
	require.NoError(t, err)
	s.Close()
}

// A database of version 1 (before the grams column) is brought to version
// 2 by Open with Migrate: its Chinese items become searchable, the others
// are found as before, and Open without Migrate refuses version 1.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, migrate(ctx, pool, 1))
	for i, text := range []string{"用户最喜欢的水果是芒果。", "The user lives in Porto.", "사용자가 가장 좋아하는 과일은 망고입니다."} {
		_, err = pool.Exec(ctx, `INSERT INTO agentrt_memory (scope, id, kind, text, created) VALUES ('u', $1, 'fact', $2, now())`, fmt.Sprint("f", i), text)
		require.NoError(t, err)
	}
	_, err = Open(ctx, url, nil)
	require.ErrorIs(t, err, ErrSchema)

	s, err := Open(ctx, url, &Options{Migrate: true})
	require.NoError(t, err)
	defer s.Close()
	find := func(q string) []string {
		t.Helper()
		hits, err := memory.Recall(ctx, s, "u", q, 3)
		require.NoError(t, err)
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	assert.Equal(t, []string{"f0"}, find("芒果"))
	assert.Equal(t, []string{"f1"}, find("where does the user live"))
	assert.Equal(t, []string{"f2"}, find("망고"))
	_, err = s.Put(ctx, "u", memory.Item{ID: "f0", Text: "用户最喜欢的水果是荔枝。"})
	require.NoError(t, err)
	assert.Empty(t, find("芒果"))
	assert.Equal(t, []string{"f0"}, find("荔枝"))
	rows, err := pool.Query(ctx, `SELECT version FROM agentrt_memory_schema ORDER BY version`)
	require.NoError(t, err)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, versions)
}

func TestEmbeddings(t *testing.T) {
	memorytest.TestEmbeddings(t, func(t *testing.T, e memory.Embedder) memory.Store {
		return newStore(t, &Options{Embedder: e})
	})
}

func BenchmarkQuery(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			memorytest.BenchmarkQuery(b, newStore(b, nil), n)
		})
	}
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("embeddings/dim=256/docs=%d", n), func(b *testing.B) {
			memorytest.BenchmarkQuery(b, newStore(b, &Options{Embedder: &memorytest.HashEmbedder{Dim: 256}}), n)
		})
	}
}

// recall@3 of the fact questions among 1,000 facts (the benchmark goes to
// 10,000 and 100,000): what full-text search finds, and what it cannot
// (paraphrases, logged).
func TestFactRecall(t *testing.T) {
	s := newStore(t, nil)
	memorytest.LoadFacts(t, s, "u", 1000)
	r := memorytest.FactRecall(t, s, "u", 3)
	t.Logf("recall@3 among 1,000 facts: %v", r)
	assert.GreaterOrEqual(t, r[memorytest.Shared], 0.9)
	// ts_rank weighs no term by its rarity (no IDF): 用户 ("user") in
	// most facts counts as much as 的猫 ("'s cat"), so pgmem ranks some
	// Chinese questions below sqlitemem's BM25 (10 or 11 of 13 here).
	assert.GreaterOrEqual(t, r[memorytest.Chinese], 0.7)
	assert.GreaterOrEqual(t, r[memorytest.JapaneseKorean], 0.8)
}

// BenchmarkRetrieval: see memorytest.BenchmarkRetrievalSizes.
func BenchmarkRetrieval(b *testing.B) {
	memorytest.BenchmarkRetrievalSizes(b, func(b *testing.B, emb memory.Embedder) memory.Store {
		return newStore(b, &Options{Embedder: emb})
	})
}
