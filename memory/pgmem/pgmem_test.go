package pgmem

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/memorytest"
	"github.com/agentrt/agentrt/pgstore/pgtest"
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
