package memorytest

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/memory"
)

// vocabulary returns the distinct terms of the corpus, in order of first
// appearance.
func vocabulary() []string {
	var words []string
	seen := map[string]bool{}
	fs.WalkDir(Corpus(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Corpus(), p)
		if err != nil {
			return err
		}
		for _, w := range memory.Terms(string(b)) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		return nil
	})
	return words
}

// SyntheticDocs returns n documents of about 120 words each, drawn with a
// Zipf distribution from the corpus's vocabulary (deterministic), for
// benchmarks at sizes the real corpus does not reach.
func SyntheticDocs(n int) []memory.Item {
	words := vocabulary()
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	items := make([]memory.Item, n)
	for i := range items {
		var b strings.Builder
		for j := range 120 {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[z.Uint64()])
		}
		items[i] = memory.Item{ID: fmt.Sprintf("doc-%d", i), Kind: memory.KindDocument, Text: b.String(),
			Source: fmt.Sprintf("synthetic/%d.md", i/10), Heading: words[z.Uint64()] + " " + words[z.Uint64()]}
	}
	return items
}

// BenchmarkQuery measures queries of three words against a store holding n synthetic documents in one
// scope, and as many in another scope, which the queries must skip.
func BenchmarkQuery(b *testing.B, s memory.Store, n int) {
	docs := SyntheticDocs(n)
	for start := 0; start < n; start += 1000 {
		end := min(start+1000, n)
		if _, err := s.Put(b.Context(), "bench", docs[start:end]...); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Put(b.Context(), "other", docs[start:end]...); err != nil {
			b.Fatal(err)
		}
	}
	words := vocabulary()
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	// Specific queries: three words drawn uniformly from the vocabulary,
	// like a question about one thing. Common ones: drawn like the
	// documents' words, so that nearly every document matches one of them
	// and all of those are ranked (the worst case of an OR query).
	for _, mode := range []string{"specific", "common"} {
		queries := make([]string, 64)
		for i := range queries {
			var w [3]string
			for j := range w {
				if mode == "specific" {
					w[j] = words[r.IntN(len(words))]
				} else {
					w[j] = words[z.Uint64()]
				}
			}
			queries[i] = strings.Join(w[:], " ")
		}
		b.Run("query="+mode, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := s.Query(b.Context(), "bench", memory.Query{Text: queries[i%len(queries)], Limit: 5}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
