package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SchemaVersion is the version of the schema this package reads and writes.
const SchemaVersion = 2

// ErrSchema is returned (wrapped) by [Open] when the database's schema is
// missing or at another version and Options.Migrate is not set.
var ErrSchema = errors.New("pgstore: schema missing or at another version")

// migrations[i] brings the schema from version i to version i+1.
var migrations = []string{
	// 0 → 1
	`CREATE TABLE agentrt_sessions (
	id          text PRIMARY KEY,
	created     timestamptz NOT NULL DEFAULT clock_timestamp(),
	updated     timestamptz NOT NULL DEFAULT clock_timestamp(),
	messages    integer NOT NULL DEFAULT 0,
	next_seq    bigint NOT NULL DEFAULT 0,
	title       text,
	forked_from text,
	forked_at   integer
);
CREATE INDEX agentrt_sessions_updated ON agentrt_sessions (updated DESC, id);
CREATE TABLE agentrt_entries (
	session_id text NOT NULL REFERENCES agentrt_sessions (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	kind       text NOT NULL,
	role       text,
	body       text NOT NULL,
	created    timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (session_id, seq)
);
CREATE INDEX agentrt_entries_kind ON agentrt_entries (kind, created);`,
	// 1 → 2: leases, the fencing tokens of Lock; the exact bytes of a
	// body that text cannot hold; agentrt_json for operators.
	`CREATE SEQUENCE agentrt_lease_gen;
CREATE TABLE agentrt_leases (
	session_id text PRIMARY KEY,
	gen        bigint NOT NULL,
	expires    timestamptz NOT NULL
);
ALTER TABLE agentrt_entries ADD COLUMN raw bytea;
CREATE FUNCTION agentrt_json(body text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	RETURN body::jsonb;
EXCEPTION WHEN untranslatable_character OR invalid_text_representation THEN
	-- jsonb holds no \u0000 and no lone surrogate: show them as U+FFFD.
	RETURN regexp_replace(body, '\\u(0000|[dD][89abAB][0-9a-fA-F]{2}|[dD][c-fC-F][0-9a-fA-F]{2})', '\\ufffd', 'g')::jsonb;
END
$$;`,
}

// Migrate creates the schema, or brings it to [SchemaVersion], in one
// transaction. Several processes may call it at once: they take turns on
// an advisory transaction lock. It fails if the database holds a newer
// version than this package knows.
func Migrate(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on; SELECT pg_advisory_xact_lock(hashtextextended('agentrt_schema', 0))`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agentrt_schema (
	version integer NOT NULL,
	applied timestamptz NOT NULL DEFAULT clock_timestamp()
)`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	v, err := version(ctx, tx)
	if err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: the database is at version %d, this package knows up to %d", ErrSchema, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return fmt.Errorf("pgstore: migrate to version %d: %w", i+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agentrt_schema (version) VALUES ($1)`, i+1); err != nil {
			return fmt.Errorf("pgstore: migrate: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	return nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version returns the schema version of the database: 0 if it has none.
func version(ctx context.Context, q querier) (int, error) {
	var v *int
	err := q.QueryRow(ctx, `SELECT max(version) FROM agentrt_schema`).Scan(&v)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pgstore: read schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}
