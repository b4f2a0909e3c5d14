// Package pgmem is a [memory.Store] on PostgreSQL full-text search: a
// tsvector column (English configuration: stemming and stop words) with a
// GIN index, ranked by ts_rank, headings weighing more than text. Use it
// when several replicas share one memory; the embedded default is
// sqlitemem.
//
// The schema (version 2, in the table agentrt_memory_schema) is created on
// request (Options.Migrate) and documented in README.md:
//
//	CREATE TABLE agentrt_memory (
//		scope     text NOT NULL,
//		id        text NOT NULL,
//		kind      text NOT NULL,          -- 'fact' or 'document'
//		source    text NOT NULL DEFAULT '',
//		heading   text NOT NULL DEFAULT '',
//		text      text NOT NULL,
//		created   timestamptz NOT NULL,
//		embedding bytea,                   -- little-endian float32s, or NULL
//		grams     text NOT NULL DEFAULT '', -- memory.CJKGrams(heading || E'\n' || text)
//		tsv       tsvector GENERATED ALWAYS AS (
//			setweight(to_tsvector('english', heading), 'A') ||
//			setweight(to_tsvector('english', text), 'B') ||
//			setweight(to_tsvector('english', grams), 'B')) STORED,
//		PRIMARY KEY (scope, id)
//	);
//	CREATE INDEX agentrt_memory_tsv ON agentrt_memory USING GIN (tsv);
//
// The grams column makes Chinese, Japanese and Korean searchable (see
// [memory.CJKGrams]; pg_trgm would not find words of two characters).
// Migrating a database of version 1 (before grams) to 2 fills grams for the
// items with such text and rewrites the table (the tsv column changes), in
// one transaction that locks the table: run it when the memory can pause.
package pgmem

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the schema this package reads and writes.
const SchemaVersion = 2

// ErrSchema is returned (wrapped) by [Open] and [New] when the schema is
// missing or at another version and Options.Migrate is not set.
var ErrSchema = errors.New("pgmem: schema missing or at another version")

// migrations[i] brings the schema from version i to i+1.
var migrations = []func(ctx context.Context, tx pgx.Tx) error{
	execSQL(`CREATE TABLE agentrt_memory (
	scope     text NOT NULL,
	id        text NOT NULL,
	kind      text NOT NULL,
	source    text NOT NULL DEFAULT '',
	heading   text NOT NULL DEFAULT '',
	text      text NOT NULL,
	created   timestamptz NOT NULL,
	embedding bytea,
	tsv       tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('english', heading), 'A') ||
		setweight(to_tsvector('english', text), 'B')) STORED,
	PRIMARY KEY (scope, id)
);
CREATE INDEX agentrt_memory_tsv ON agentrt_memory USING GIN (tsv);
CREATE INDEX agentrt_memory_scope_kind ON agentrt_memory (scope, kind);`),
	migrate1to2,
}

func execSQL(sql string) func(ctx context.Context, tx pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql)
		return err
	}
}

// grams returns what the grams column holds for it.
func grams(it memory.Item) string { return memory.CJKGrams(it.Heading + "\n" + it.Text) }

// migrate1to2 adds the grams column, fills it for the items with
// characters at or above U+1100 (where Hangul starts: those that may have
// grams), and makes tsv index it.
func migrate1to2(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `ALTER TABLE agentrt_memory DROP COLUMN tsv,
		ADD COLUMN grams text NOT NULL DEFAULT ''`); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT scope, id, heading, text FROM agentrt_memory
		WHERE heading || text ~ '[^\u0001-\u10ff]'`)
	if err != nil {
		return err
	}
	var batch pgx.Batch
	var scope, id string
	var it memory.Item
	_, err = pgx.ForEachRow(rows, []any{&scope, &id, &it.Heading, &it.Text}, func() error {
		if g := grams(it); g != "" {
			batch.Queue(`UPDATE agentrt_memory SET grams = $3 WHERE scope = $1 AND id = $2`, scope, id, g)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `ALTER TABLE agentrt_memory ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
	setweight(to_tsvector('english', heading), 'A') ||
	setweight(to_tsvector('english', text), 'B') ||
	setweight(to_tsvector('english', grams), 'B')) STORED;
CREATE INDEX agentrt_memory_tsv ON agentrt_memory USING GIN (tsv);`)
	return err
}

// Options configures a [Store]. A nil *Options means the zero value.
type Options struct {
	// Migrate creates the schema, or brings it to [SchemaVersion].
	Migrate bool
	// Embedder, when set, embeds every item stored and every query; Query
	// then fuses full-text rank with brute-force cosine similarity (see
	// [memory.Embedder] for its scale).
	Embedder memory.Embedder
}

// Store is a [memory.Store] on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool
	opts     Options
}

// Open connects to the database at connString and returns a store on it.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	pool, err := pgxpool.New(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("pgmem: %w", err)
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// New returns a store on an existing pool, which the caller keeps.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	s := &Store{pool: pool}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Migrate {
		if err := migrate(ctx, pool, len(migrations)); err != nil {
			return nil, err
		}
	}
	var v *int
	err := pool.QueryRow(ctx, `SELECT max(version) FROM agentrt_memory_schema`).Scan(&v)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
		return nil, fmt.Errorf("%w: no schema (open with Options.Migrate)", ErrSchema)
	}
	if err != nil {
		return nil, fmt.Errorf("pgmem: %w", err)
	}
	if v == nil || *v != SchemaVersion {
		return nil, fmt.Errorf("%w: want version %d", ErrSchema, SchemaVersion)
	}
	return s, nil
}

// migrate brings the schema to version to.
func migrate(ctx context.Context, pool *pgxpool.Pool, to int) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('agentrt_memory_schema', 0))`); err != nil {
			return fmt.Errorf("pgmem: migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agentrt_memory_schema (
	version integer NOT NULL,
	applied timestamptz NOT NULL DEFAULT clock_timestamp()
)`); err != nil {
			return fmt.Errorf("pgmem: migrate: %w", err)
		}
		var v int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM agentrt_memory_schema`).Scan(&v); err != nil {
			return fmt.Errorf("pgmem: migrate: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("%w: the database is at version %d, this package knows up to %d", ErrSchema, v, len(migrations))
		}
		for i := v; i < to; i++ {
			if err := migrations[i](ctx, tx); err != nil {
				return fmt.Errorf("pgmem: migrate to version %d: %w", i+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO agentrt_memory_schema (version) VALUES ($1)`, i+1); err != nil {
				return fmt.Errorf("pgmem: migrate: %w", err)
			}
		}
		return nil
	})
}

// Close closes the pool if Open made it.
func (s *Store) Close() error {
	if s.ownsPool {
		s.pool.Close()
	}
	return nil
}

// Put adds or replaces items in scope, in one transaction; see
// [memory.Store].
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
			return nil, fmt.Errorf("pgmem: embed: %w", err)
		}
		if len(vs) != len(items) {
			return nil, fmt.Errorf("pgmem: embed: %d vectors for %d texts", len(vs), len(items))
		}
		for i, v := range vs {
			vecs[i] = memory.EncodeVector(v)
		}
	}
	var batch pgx.Batch
	for i, it := range items {
		batch.Queue(`INSERT INTO agentrt_memory (scope, id, kind, source, heading, text, created, embedding, grams)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (scope, id) DO UPDATE SET kind = EXCLUDED.kind, source = EXCLUDED.source,
				heading = EXCLUDED.heading, text = EXCLUDED.text, created = EXCLUDED.created, embedding = EXCLUDED.embedding,
				grams = EXCLUDED.grams`,
			scope, it.ID, string(it.Kind), it.Source, it.Heading, it.Text, it.Created, vecs[i], grams(it))
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, &batch).Close()
	})
	if err != nil {
		return nil, fmt.Errorf("pgmem: put: %w", err)
	}
	return ids, nil
}

// Delete removes items of scope; see [memory.Store].
func (s *Store) Delete(ctx context.Context, scope string, ids ...string) error {
	if err := memory.ValidateScope(scope); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM agentrt_memory WHERE scope = $1 AND id = ANY($2)`, scope, ids); err != nil {
		return fmt.Errorf("pgmem: delete: %w", err)
	}
	return nil
}

func kinds(ks []memory.Kind) []string {
	if len(ks) == 0 {
		return nil
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// Query returns the scope's items most relevant to q: full-text search
// (any query term may match; ts_rank orders them), fused with cosine
// similarity when the store has an Embedder.
func (s *Store) Query(ctx context.Context, scope string, q memory.Query) ([]memory.Hit, error) {
	return memory.HybridQuery(ctx, scope, q, s.opts.Embedder, s.lexical, s.vector)
}

func scanHits(rows pgx.Rows) ([]memory.Hit, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Hit, error) {
		var h memory.Hit
		err := row.Scan(&h.ID, &h.Kind, &h.Source, &h.Heading, &h.Text, &h.Created, &h.Score)
		return h, err
	})
}

func (s *Store) lexical(ctx context.Context, scope string, q memory.Query, limit int) ([]memory.Hit, error) {
	terms := memory.QueryTerms(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, kind, source, heading, text, created, ts_rank(tsv, q, 1)::float8 AS score
		FROM agentrt_memory, websearch_to_tsquery('english', $2) q
		WHERE scope = $1 AND ($3::text[] IS NULL OR kind = ANY($3)) AND tsv @@ q
		ORDER BY score DESC, id LIMIT $4`, scope, strings.Join(terms, " or "), kinds(q.Kinds), limit)
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	hits, err := scanHits(rows)
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	return hits, nil
}

// vector ranks every embedded item of the scope by cosine similarity with
// the query's embedding, in this process: brute force over the scope's
// vectors (read without their texts), then the texts of the best.
func (s *Store) vector(ctx context.Context, scope string, q memory.Query, limit int) ([]memory.Hit, error) {
	qv, err := memory.EmbedQuery(ctx, s.opts.Embedder, q.Text)
	if err != nil {
		return nil, fmt.Errorf("pgmem: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, embedding FROM agentrt_memory
		WHERE scope = $1 AND ($2::text[] IS NULL OR kind = ANY($2)) AND embedding IS NOT NULL`,
		scope, kinds(q.Kinds))
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	top := memory.NewTopK(limit)
	var (
		id   string
		blob []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &blob}, func() error {
		top.Push(memory.Hit{Item: memory.Item{ID: id}, Score: memory.CosineEncoded(qv, blob)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	hits := top.Hits()
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	rows, err = s.pool.Query(ctx, `SELECT id, kind, source, heading, text, created, 0::float8
		FROM agentrt_memory WHERE scope = $1 AND id = ANY($2)`, scope, ids)
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	full, err := scanHits(rows)
	if err != nil {
		return nil, fmt.Errorf("pgmem: query: %w", err)
	}
	byID := make(map[string]memory.Hit, len(full))
	for _, h := range full {
		byID[h.ID] = h
	}
	out := hits[:0]
	for _, h := range hits {
		if f, ok := byID[h.ID]; ok { // deleted meanwhile otherwise
			f.Score = h.Score
			out = append(out, f)
		}
	}
	return out, nil
}
