package memory

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
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

// CosineEncoded is [Cosine] of q and an encoded vector (see
// [EncodeVector]), without decoding it into memory: what a brute-force
// scan calls for every stored vector.
func CosineEncoded(q []float32, b []byte) float64 {
	if len(b) != 4*len(q) {
		return 0
	}
	var dot, na, nb float64
	for i, x := range q {
		y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		dot += float64(x) * y
		na += float64(x) * float64(x)
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// TopK keeps the k best hits pushed to it (by Score): a brute-force scan
// pushes every candidate and keeps O(k) memory.
type TopK struct {
	k    int
	hits []Hit // a min-heap on Score
}

// NewTopK returns a TopK keeping the k best hits.
func NewTopK(k int) *TopK { return &TopK{k: k} }

// Push offers a hit.
func (t *TopK) Push(h Hit) {
	if t.k <= 0 {
		return
	}
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		for i := len(t.hits) - 1; i > 0; {
			p := (i - 1) / 2
			if t.hits[p].Score <= t.hits[i].Score {
				break
			}
			t.hits[p], t.hits[i] = t.hits[i], t.hits[p]
			i = p
		}
		return
	}
	if h.Score <= t.hits[0].Score {
		return
	}
	t.hits[0] = h
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.hits) && t.hits[l].Score < t.hits[m].Score {
			m = l
		}
		if r < len(t.hits) && t.hits[r].Score < t.hits[m].Score {
			m = r
		}
		if m == i {
			break
		}
		t.hits[m], t.hits[i] = t.hits[i], t.hits[m]
		i = m
	}
}

// Hits returns the kept hits, best first (ties by ID).
func (t *TopK) Hits() []Hit {
	out := slices.Clone(t.hits)
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// SearchFunc is a back end's search of one scope: the best limit hits for q.
type SearchFunc func(ctx context.Context, scope string, q Query, limit int) ([]Hit, error)

// HybridQuery answers a Query as the back ends of this module do: the
// lexical search alone, or, with an Embedder, four times the limit from
// each of the lexical and the vector searches, fused by rank ([Fuse]). It
// checks the scope and applies DefaultLimit.
func HybridQuery(ctx context.Context, scope string, q Query, e Embedder, lexical, vector SearchFunc) ([]Hit, error) {
	if err := ValidateScope(scope); err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if e == nil {
		return lexical(ctx, scope, q, limit)
	}
	fetch := 4 * limit
	lex, err := lexical(ctx, scope, q, fetch)
	if err != nil {
		return nil, err
	}
	vec, err := vector(ctx, scope, q, fetch)
	if err != nil {
		return nil, err
	}
	return Fuse(limit, lex, vec), nil
}

// MaxEmbedQuery is the most bytes of a query's text that [EmbedQuery]
// embeds: the start of a long paste, within the input limit of the
// embedding APIs (8,192 tokens for OpenAI's), rather than an error.
const MaxEmbedQuery = 8000

// EmbedQuery embeds a query's text with e: its first [MaxEmbedQuery]
// bytes (cut at a character boundary).
func EmbedQuery(ctx context.Context, e Embedder, text string) ([]float32, error) {
	if len(text) > MaxEmbedQuery {
		cut := MaxEmbedQuery
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed the query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed the query: the embedder returned %d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}
