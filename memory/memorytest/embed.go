package memorytest

import (
	"context"
	"hash/fnv"
	"math"
	"testing"

	"github.com/agentrt/agentrt/memory"
)

// HashEmbedder is a deterministic [memory.Embedder] for tests: a bag of
// words hashed into Dim dimensions, with Synonyms mapping a word to the
// word whose dimension it shares (so that "car" can land on "automobile",
// which full-text search would not find).
type HashEmbedder struct {
	Dim      int
	Synonyms map[string]string
	Calls    int // texts embedded so far (not safe for concurrent use)
}

// Embed returns one normalized vector per text.
func (e *HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		e.Calls++
		v := make([]float32, e.Dim)
		for _, w := range memory.Terms(t) {
			if s, ok := e.Synonyms[w]; ok {
				w = s
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(e.Dim)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// TestEmbeddings checks a store made with an embedder: items are found by
// meaning (here, a synonym) where their words do not match, exact matches
// still rank first, and scopes still do not leak.
func TestEmbeddings(t *testing.T, newStore func(t *testing.T, e memory.Embedder) memory.Store) {
	t.Helper()
	e := &HashEmbedder{Dim: 256, Synonyms: map[string]string{"car": "automobile", "vehicle": "automobile"}}
	s := newStore(t, e)
	put(t, s, "u",
		memory.Item{ID: "auto", Text: "The automobile is parked in the garage."},
		memory.Item{ID: "bike", Text: "The bicycle is locked in the shed."},
		memory.Item{ID: "keys", Text: "The keys hang by the door."},
	)
	put(t, s, "other", memory.Item{ID: "auto-other", Text: "Another automobile, elsewhere."})
	if e.Calls != 4 {
		t.Errorf("the embedder embedded %d texts for 4 items", e.Calls)
	}
	hits := query(t, s, "u", memory.Query{Text: "where is my car", Limit: 2})
	if len(hits) == 0 || hits[0].ID != "auto" {
		t.Errorf("car → automobile by vector: got %q", ids(hits))
	}
	for _, h := range hits {
		if h.ID == "auto-other" {
			t.Errorf("vector search leaked another scope's item")
		}
	}
	hits = query(t, s, "u", memory.Query{Text: "bicycle shed", Limit: 1})
	if len(hits) != 1 || hits[0].ID != "bike" {
		t.Errorf("exact words: got %q", ids(hits))
	}
}
