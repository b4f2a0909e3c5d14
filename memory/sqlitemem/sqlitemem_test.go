package sqlitemem

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/memorytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newStore(t testing.TB, opts *Options) *Store {
	t.Helper()
	s, err := Open(":memory:", opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	memorytest.TestStore(t, func(t *testing.T) memory.Store { return newStore(t, nil) })
}

func TestRetrievalQuality(t *testing.T) {
	t.Parallel()
	s := newStore(t, nil)
	n, err := memory.IngestMarkdown(t.Context(), s, "docs", memorytest.Corpus())
	require.NoError(t, err)
	r := memorytest.Recall(t, s, "docs", 3)
	t.Logf("sqlite FTS5 BM25: recall@3 = %.3f over %d questions, %d sections", r, len(memorytest.Questions), n)
	assert.GreaterOrEqual(t, r, 0.8)
}

func TestLongMessage(t *testing.T) {
	t.Parallel()
	memorytest.TestLongMessage(t, newStore(t, nil))
}

func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path, nil)
	require.NoError(t, err)
	_, err = memory.Remember(t.Context(), s, "u", "The user lives in Porto.", "")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = Open(path, nil)
	require.NoError(t, err)
	defer s.Close()
	hits, err := memory.Recall(t.Context(), s, "u", "where does the user live", 3)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "The user lives in Porto.", hits[0].Text)
}

// schemaV1 is the schema of version 1, before the grams column.
const schemaV1 = `
CREATE TABLE memory_items (
	rowid     INTEGER PRIMARY KEY,
	scope     TEXT NOT NULL,
	id        TEXT NOT NULL,
	kind      TEXT NOT NULL,
	source    TEXT NOT NULL DEFAULT '',
	heading   TEXT NOT NULL DEFAULT '',
	text      TEXT NOT NULL,
	created   INTEGER NOT NULL,
	embedding BLOB,
	UNIQUE (scope, id)
);
CREATE INDEX memory_items_scope_kind ON memory_items (scope, kind);
CREATE VIRTUAL TABLE memory_fts USING fts5(heading, text,
	content='memory_items', content_rowid='rowid', tokenize='porter unicode61');
CREATE TRIGGER memory_items_ai AFTER INSERT ON memory_items BEGIN
	INSERT INTO memory_fts (rowid, heading, text) VALUES (new.rowid, new.heading, new.text);
END;
CREATE TRIGGER memory_items_ad AFTER DELETE ON memory_items BEGIN
	INSERT INTO memory_fts (memory_fts, rowid, heading, text) VALUES ('delete', old.rowid, old.heading, old.text);
END;
CREATE TRIGGER memory_items_au AFTER UPDATE ON memory_items BEGIN
	INSERT INTO memory_fts (memory_fts, rowid, heading, text) VALUES ('delete', old.rowid, old.heading, old.text);
	INSERT INTO memory_fts (rowid, heading, text) VALUES (new.rowid, new.heading, new.text);
END;
PRAGMA user_version = 1;
`

// A database of version 1 (before the grams column) is brought to version
// 2 by Open: its Chinese items become searchable, the others are found as
// before, and the full-text index stays in step through later replaces and
// deletes.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(schemaV1)
	require.NoError(t, err)
	for i, text := range []string{"用户最喜欢的水果是芒果。", "The user lives in Porto.", "ユーザーは東京に住んでいます。"} {
		_, err = db.Exec(`INSERT INTO memory_items (scope, id, kind, text, created) VALUES ('u', ?, 'fact', ?, 0)`, fmt.Sprint("f", i), text)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s, err := Open(path, nil)
	require.NoError(t, err)
	defer s.Close()
	var v int
	require.NoError(t, s.db.QueryRow(`PRAGMA user_version`).Scan(&v))
	assert.Equal(t, 2, v)
	find := func(q string) []string {
		t.Helper()
		hits, err := memory.Recall(t.Context(), s, "u", q, 3)
		require.NoError(t, err)
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	assert.Equal(t, []string{"f0"}, find("芒果"))
	assert.Equal(t, []string{"f1"}, find("where does the user live"))
	assert.Equal(t, []string{"f2"}, find("東京"))
	_, err = s.Put(t.Context(), "u", memory.Item{ID: "f0", Text: "用户最喜欢的水果是荔枝。"})
	require.NoError(t, err)
	require.NoError(t, s.Delete(t.Context(), "u", "f2"))
	assert.Empty(t, find("芒果"))
	assert.Equal(t, []string{"f0"}, find("荔枝"))
	assert.Empty(t, find("東京"))
	_, err = s.db.Exec(`INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 1)`)
	require.NoError(t, err, "the full-text index matches the items")
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	s := newStore(t, nil)
	memorytest.LoadFacts(t, s, "u", 1000)
	r := memorytest.FactRecall(t, s, "u", 3)
	t.Logf("recall@3 among 1,000 facts: %v", r)
	assert.GreaterOrEqual(t, r[memorytest.Shared], 0.9)
	assert.GreaterOrEqual(t, r[memorytest.Chinese], 0.8)
	assert.GreaterOrEqual(t, r[memorytest.JapaneseKorean], 0.8)
}

// BenchmarkRetrieval: see memorytest.BenchmarkRetrievalSizes.
func BenchmarkRetrieval(b *testing.B) {
	memorytest.BenchmarkRetrievalSizes(b, func(b *testing.B, emb memory.Embedder) memory.Store {
		return newStore(b, &Options{Embedder: emb})
	})
}
