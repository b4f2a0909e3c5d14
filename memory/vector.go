package memory

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// Embedder turns texts into vectors (embeddings), as the embedding APIs of
// the model providers do. A back end given one embeds every item it stores
// and every query, and ranks by a fusion of full-text relevance and cosine
// similarity ([Fuse]).
//
// The vector search is brute force: each query reads every vector of the
// scope and compares it with the query's. That is exact and needs no index,
// and it is fast for the memory of one user or a small knowledge base: a
// few thousand items of 1,536 dimensions take a few milliseconds. It grows
// linearly: at 100,000 items per scope a query reads about 600 MB of
// vectors; beyond some 10,000 items per scope use an approximate index
// (pgvector's HNSW, for one) instead.
type Embedder interface {
	// Embed returns one vector per text, all of the same dimension.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EncodeVector returns v as little-endian float32s, the form back ends
// store.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector is the inverse of EncodeVector.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errors.New("memory: vector of odd length")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Cosine returns the cosine similarity of a and b, 0 if either is zero or
// their dimensions differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Fuse merges ranked lists of hits (best first) by reciprocal rank fusion:
// an item's score is the sum over lists of 1/(60+rank). It returns the best
// limit items.
func Fuse(limit int, lists ...[]Hit) []Hit {
	const k = 60
	byID := map[string]*Hit{}
	var order []string
	for _, list := range lists {
		for rank, h := range list {
			f := byID[h.ID]
			if f == nil {
				h := h
				h.Score = 0
				f = &h
				byID[h.ID] = f
				order = append(order, h.ID)
			}
			f.Score += 1 / float64(k+rank+1)
		}
	}
	out := make([]Hit, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// TopCosine ranks candidates by cosine similarity with q and returns the
// best limit, with Score the similarity. vecs[i] is the vector of
// items[i].
func TopCosine(q []float32, items []Item, vecs [][]float32, limit int) []Hit {
	hits := make([]Hit, len(items))
	for i := range items {
		hits[i] = Hit{Item: items[i], Score: Cosine(q, vecs[i])}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}
