package sqlitemem

import (
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
