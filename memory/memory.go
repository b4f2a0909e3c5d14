// Package memory gives agents long-term memory and knowledge retrieval:
// facts remembered across sessions, and documents (a user's Markdown, a
// knowledge base) searched by relevance.
//
// A [Store] keeps [Item]s in scopes. A scope is a namespace (a user, a
// tenant, a project) that the program chooses and passes explicitly to
// every call: nothing is ever returned from another scope, and the model
// never chooses the scope (the tools and the hook are bound to one).
//
// Two back ends implement Store, each in its own package:
//
//   - sqlitemem: embedded, no server and no cgo (modernc.org/sqlite), with
//     SQLite's FTS5 full-text index ranked by BM25. The default.
//   - pgmem: PostgreSQL full-text search (a tsvector column with a GIN
//     index), for many replicas sharing one memory.
//
// Both can also keep embeddings from an [Embedder] (openaiembed is one, on
// the OpenAI embeddings API) and rank by a fusion of full-text and vector
// similarity; the vector search is brute force (see [Embedder] for where
// that stops scaling).
//
// For the model: [Tools] returns the remember, recall and search tools of
// one scope, and [Hook] adds the most relevant items to every planner
// request and records what it added in the session ([RecordKind]).
package memory

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Kind says what an [Item] is.
type Kind string

// The kinds of items.
const (
	// KindFact is something remembered: "the user prefers metric units".
	KindFact Kind = "fact"
	// KindDocument is a piece of a document: a section of a Markdown file.
	KindDocument Kind = "document"
)

// Item is a fact or a piece of a document.
type Item struct {
	// ID identifies the item in its scope. Put replaces an item with the
	// same ID; an empty ID is given a new unique one.
	ID   string
	Kind Kind
	// Text is what is searched and shown.
	Text string
	// Source says where the item comes from: a file path for a document,
	// the session that learned a fact. Heading is the section of the
	// document (for citations: Source and Heading).
	Source  string
	Heading string
	// Created is set by Put when zero.
	Created time.Time
}

// Query asks a [Store] for the items most relevant to Text.
type Query struct {
	Text string
	// Kinds limits the search to these kinds; empty means every kind.
	Kinds []Kind
	// Limit is the number of hits wanted; 0 means 5.
	Limit int
}

// Hit is an item found by a query, with its score (higher is more
// relevant; comparable only within one query's results).
type Hit struct {
	Item
	Score float64
}

// Store keeps items in scopes. Every method takes the scope explicitly and
// never reads or writes another scope's items. Implementations must be safe
// for concurrent use.
type Store interface {
	// Put adds items to the scope, replacing those with the same IDs, and
	// returns their IDs (new ones for items without).
	Put(ctx context.Context, scope string, items ...Item) ([]string, error)
	// Query returns the scope's items most relevant to q, best first. A
	// query that matches nothing returns no hits and no error.
	Query(ctx context.Context, scope string, q Query) ([]Hit, error)
	// Delete removes items of the scope by ID; missing IDs are ignored.
	Delete(ctx context.Context, scope string, ids ...string) error
}

// ErrInvalidScope is returned (wrapped) for a scope that is empty, longer
// than [MaxScopeLen] bytes or not valid UTF-8.
var ErrInvalidScope = errors.New("memory: invalid scope")

// MaxScopeLen is the longest scope accepted.
const MaxScopeLen = 256

// DefaultLimit is the number of hits of a query whose Limit is 0.
const DefaultLimit = 5

// ValidateScope reports whether scope is a valid scope.
func ValidateScope(scope string) error {
	switch {
	case scope == "":
		return fmt.Errorf("%w: empty", ErrInvalidScope)
	case len(scope) > MaxScopeLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidScope, MaxScopeLen)
	case !utf8.ValidString(scope):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidScope)
	}
	return nil
}

// Remember keeps a fact in scope and returns its ID.
func Remember(ctx context.Context, s Store, scope, text, source string) (string, error) {
	ids, err := s.Put(ctx, scope, Item{Kind: KindFact, Text: text, Source: source})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// Recall returns the facts of scope most relevant to query.
func Recall(ctx context.Context, s Store, scope, query string, limit int) ([]Hit, error) {
	return s.Query(ctx, scope, Query{Text: query, Kinds: []Kind{KindFact}, Limit: limit})
}

// Search returns the documents of scope most relevant to query.
func Search(ctx context.Context, s Store, scope, query string, limit int) ([]Hit, error) {
	return s.Query(ctx, scope, Query{Text: query, Kinds: []Kind{KindDocument}, Limit: limit})
}

// Citation returns "source § heading", or the part that is set.
func (it Item) Citation() string {
	switch {
	case it.Heading == "":
		return it.Source
	case it.Source == "":
		return it.Heading
	}
	return it.Source + " § " + it.Heading
}
