// Package sqlitemem is a [memory.Store] embedded in the program: SQLite
// (modernc.org/sqlite, pure Go, no cgo, no server) with an FTS5 full-text
// index ranked by BM25. It is the default back end of package memory: one
// file (or memory) per process. For several replicas sharing one memory,
// use pgmem.
//
// # Schema
//
// The schema version is SQLite's user_version (2 for this schema):
//
//	CREATE TABLE memory_items (
//		rowid     INTEGER PRIMARY KEY,
//		scope     TEXT NOT NULL,
//		id        TEXT NOT NULL,
//		kind      TEXT NOT NULL,          -- 'fact' or 'document'
//		source    TEXT NOT NULL DEFAULT '',
//		heading   TEXT NOT NULL DEFAULT '',
//		text      TEXT NOT NULL,
//		created   INTEGER NOT NULL,        -- Unix nanoseconds
//		embedding BLOB,                    -- little-endian float32s, or NULL
//		grams     TEXT NOT NULL DEFAULT '', -- memory.CJKGrams(heading + "\n" + text)
//		UNIQUE (scope, id)
//	);
//	CREATE VIRTUAL TABLE memory_fts USING fts5(heading, text, grams,
//		content='memory_items', content_rowid='rowid', tokenize='porter unicode61');
//
// with triggers keeping memory_fts in step with memory_items. The grams
// column makes Chinese, Japanese and Korean searchable (see
// [memory.CJKGrams]; FTS5's trigram tokenizer would not find words of two
// characters). Open brings a database of version 1 (before grams) to
// version 2 in one transaction: it fills grams for every item and rebuilds
// the full-text index, which reads every item once.
package sqlitemem

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/agentrt/agentrt/memory"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// schemaVersion is the user_version of the schema this package writes.
const schemaVersion = 2

// schema is version 2, created in an empty database.
const schema = `
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
	grams     TEXT NOT NULL DEFAULT '',
	UNIQUE (scope, id)
);
CREATE INDEX memory_items_scope_kind ON memory_items (scope, kind);
` + ftsSchema + `
PRAGMA user_version = 2;
`

// ftsSchema is the full-text index of version 2 and its triggers.
const ftsSchema = `
CREATE VIRTUAL TABLE memory_fts USING fts5(heading, text, grams,
	content='memory_items', content_rowid='rowid', tokenize='porter unicode61');
CREATE TRIGGER memory_items_ai AFTER INSERT ON memory_items BEGIN
	INSERT INTO memory_fts (rowid, heading, text, grams) VALUES (new.rowid, new.heading, new.text, new.grams);
END;
CREATE TRIGGER memory_items_ad AFTER DELETE ON memory_items BEGIN
	INSERT INTO memory_fts (memory_fts, rowid, heading, text, grams) VALUES ('delete', old.rowid, old.heading, old.text, old.grams);
END;
CREATE TRIGGER memory_items_au AFTER UPDATE ON memory_items BEGIN
	INSERT INTO memory_fts (memory_fts, rowid, heading, text, grams) VALUES ('delete', old.rowid, old.heading, old.text, old.grams);
	INSERT INTO memory_fts (rowid, heading, text, grams) VALUES (new.rowid, new.heading, new.text, new.grams);
END;
`

// grams returns what the grams column holds for it.
func grams(it memory.Item) string { return memory.CJKGrams(it.Heading + "\n" + it.Text) }

// Options configures a [Store]. A nil *Options means the zero value.
type Options struct {
	// Embedder, when set, embeds every item stored and every query; Query
	// then fuses BM25 with brute-force cosine similarity (see
	// [memory.Embedder] for its scale).
	Embedder memory.Embedder
}

// Store is a [memory.Store] in a SQLite database. It is safe for
// concurrent use (one connection: SQLite writes one at a time anyway).
type Store struct {
	db   *sql.DB
	opts Options
}

// Open opens (creating it and its schema if needed) the SQLite database at
// path; ":memory:" is a new database in memory.
func Open(path string, opts *Options) (*Store, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	if path == ":memory:" {
		dsn = ":memory:"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: %w", err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if opts != nil {
		s.opts = *opts
	}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate() error {
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("sqlitemem: %w", err)
	}
	if v == schemaVersion {
		return nil
	}
	if v > schemaVersion {
		return fmt.Errorf("sqlitemem: the database's schema is version %d, this package knows up to %d", v, schemaVersion)
	}
	tx, err := s.db.Begin()
	if err != nil {
		return fmt.Errorf("sqlitemem: %w", err)
	}
	defer tx.Rollback()
	if v == 0 {
		if _, err := tx.Exec(schema); err != nil {
			return fmt.Errorf("sqlitemem: create schema: %w", err)
		}
	} else if err := migrate1to2(tx); err != nil {
		return fmt.Errorf("sqlitemem: migrate from version 1 to 2: %w", err)
	}
	return tx.Commit()
}

// migrate1to2 adds the grams column, fills it, and rebuilds the full-text
// index with it. The old index and its triggers go first: an external
// content index must never be told to delete what it did not index.
func migrate1to2(tx *sql.Tx) error {
	if _, err := tx.Exec(`DROP TRIGGER memory_items_ai; DROP TRIGGER memory_items_ad; DROP TRIGGER memory_items_au;
		DROP TABLE memory_fts;
		ALTER TABLE memory_items ADD COLUMN grams TEXT NOT NULL DEFAULT '';`); err != nil {
		return err
	}
	type row struct {
		rowid int64
		grams string
	}
	var todo []row
	rows, err := tx.Query(`SELECT rowid, heading, text FROM memory_items`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r row
		var it memory.Item
		if err := rows.Scan(&r.rowid, &it.Heading, &it.Text); err != nil {
			rows.Close()
			return err
		}
		if r.grams = grams(it); r.grams != "" {
			todo = append(todo, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range todo {
		if _, err := tx.Exec(`UPDATE memory_items SET grams = ? WHERE rowid = ?`, r.grams, r.rowid); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ftsSchema + `
		INSERT INTO memory_fts (memory_fts) VALUES ('rebuild');
		PRAGMA user_version = 2;`)
	return err
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Put adds or replaces items in scope; see [memory.Store].
func (s *Store) Put(ctx context.Context, scope string, items ...memory.Item) ([]string, error) {
	items, ids, err := memory.Prepare(scope, items)
	if err != nil {
		return nil, err
	}
	vecs := make([][]byte, len(items))
	if s.opts.Embedder != nil && len(items) > 0 {
		texts := make([]string, len(items))
		for i, it := range items {
			texts[i] = it.Text
		}
		vs, err := s.opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("sqlitemem: embed: %w", err)
		}
		if len(vs) != len(items) {
			return nil, fmt.Errorf("sqlitemem: embed: %d vectors for %d texts", len(vs), len(items))
		}
		for i, v := range vs {
			vecs[i] = memory.EncodeVector(v)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO memory_items (scope, id, kind, source, heading, text, created, embedding, grams)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (scope, id) DO UPDATE SET kind = excluded.kind, source = excluded.source,
			heading = excluded.heading, text = excluded.text, created = excluded.created, embedding = excluded.embedding,
			grams = excluded.grams`)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: %w", err)
	}
	defer stmt.Close()
	for i, it := range items {
		if _, err := stmt.ExecContext(ctx, scope, it.ID, string(it.Kind), it.Source, it.Heading, it.Text, it.Created.UnixNano(), vecs[i], grams(it)); err != nil {
			return nil, fmt.Errorf("sqlitemem: put %q: %w", it.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlitemem: %w", err)
	}
	return ids, nil
}

// Delete removes items of scope; see [memory.Store].
func (s *Store) Delete(ctx context.Context, scope string, ids ...string) error {
	if err := memory.ValidateScope(scope); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM memory_items WHERE scope = ? AND id = ?`, scope, id); err != nil {
			return fmt.Errorf("sqlitemem: delete %q: %w", id, err)
		}
	}
	return nil
}

// kindFilter returns the SQL condition on kind and its arguments.
func kindFilter(kinds []memory.Kind) (string, []any) {
	if len(kinds) == 0 {
		return "", nil
	}
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = string(k)
	}
	return " AND i.kind IN (" + strings.TrimSuffix(strings.Repeat("?,", len(kinds)), ",") + ")", args
}

// Query returns the scope's items most relevant to q: BM25 over the FTS5
// index (any query term may match; headings weigh double), fused with
// cosine similarity when the store has an Embedder.
func (s *Store) Query(ctx context.Context, scope string, q memory.Query) ([]memory.Hit, error) {
	return memory.HybridQuery(ctx, scope, q, s.opts.Embedder, s.lexical, s.vector)
}

func (s *Store) lexical(ctx context.Context, scope string, q memory.Query, limit int) ([]memory.Hit, error) {
	terms := memory.QueryTerms(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	match := `"` + strings.Join(terms, `" OR "`) + `"`
	cond, kargs := kindFilter(q.Kinds)
	args := append([]any{match, scope}, kargs...)
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT i.id, i.kind, i.source, i.heading, i.text, i.created, -bm25(memory_fts, 2.0, 1.0, 1.0)
		FROM memory_fts JOIN memory_items i ON i.rowid = memory_fts.rowid
		WHERE memory_fts MATCH ? AND i.scope = ?`+cond+`
		ORDER BY bm25(memory_fts, 2.0, 1.0, 1.0) LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: query: %w", err)
	}
	defer rows.Close()
	var hits []memory.Hit
	for rows.Next() {
		var h memory.Hit
		var created int64
		if err := rows.Scan(&h.ID, &h.Kind, &h.Source, &h.Heading, &h.Text, &created, &h.Score); err != nil {
			return nil, fmt.Errorf("sqlitemem: query: %w", err)
		}
		h.Created = time.Unix(0, created)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitemem: query: %w", err)
	}
	return hits, nil
}

// vector ranks every embedded item of the scope by cosine similarity with
// the query's embedding: brute force over the scope's vectors (read
// without their texts), then the texts of the best.
func (s *Store) vector(ctx context.Context, scope string, q memory.Query, limit int) ([]memory.Hit, error) {
	qv, err := memory.EmbedQuery(ctx, s.opts.Embedder, q.Text)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: %w", err)
	}
	cond, kargs := kindFilter(q.Kinds)
	rows, err := s.db.QueryContext(ctx, `SELECT i.rowid, i.embedding
		FROM memory_items i WHERE i.scope = ? AND i.embedding IS NOT NULL`+cond, append([]any{scope}, kargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlitemem: query: %w", err)
	}
	top := memory.NewTopK(limit)
	for rows.Next() {
		var rowid int64
		var blob []byte
		if err := rows.Scan(&rowid, &blob); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlitemem: query: %w", err)
		}
		top.Push(memory.Hit{Item: memory.Item{ID: fmt.Sprint(rowid)}, Score: memory.CosineEncoded(qv, blob)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitemem: query: %w", err)
	}
	hits := top.Hits()
	for i := range hits {
		var created int64
		h := &hits[i]
		if err := s.db.QueryRowContext(ctx, `SELECT id, kind, source, heading, text, created FROM memory_items WHERE rowid = ?`, h.ID).
			Scan(&h.ID, &h.Kind, &h.Source, &h.Heading, &h.Text, &created); err != nil {
			return nil, fmt.Errorf("sqlitemem: query: %w", err)
		}
		h.Created = time.Unix(0, created)
	}
	return hits, nil
}
