// Package pgstore is an [agentrt.SessionStore] on PostgreSQL, for services
// that run agents on several replicas: any replica can resume any session,
// two replicas never run one session at once, and operators can query the
// sessions with SQL (the schema is documented in README.md).
//
// A program switches to it with one line:
//
//	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), &pgstore.Options{Migrate: true})
//
// and then sets Agent.Store = store (and calls store.Close at the end).
//
// Every Append and AppendRecord is one transaction, committed before it
// returns: with the default durability the commit is flushed to the
// server's disk (synchronous_commit), so the assistant message that calls
// tools is durable before any of them runs (write-ahead), as with
// [agentrt.JSONLStore]. See [Options.Durability] for the cheaper mode.
//
// The store implements [agentrt.Locker] with a PostgreSQL advisory lock held
// on a connection of its own for the whole run: a second runner, in this
// process or another, gets [agentrt.ErrSessionBusy]; when a runner dies, its
// connection closes and the server releases the lock. Each lock is also a
// lease ([Options.Lease]) with a fencing token that every append of the run
// carries: a run that lost its lock gets [ErrLockLost] instead of writing.
package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/sessioncheck"
	"github.com/agentrt/agentrt/internal/textcut"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Durability says when a commit of the store is flushed to the server's
// disk. Either way, each append is committed (visible to every other
// process) before it returns.
type Durability int

const (
	// SyncEveryAppend flushes every append's commit (synchronous_commit =
	// on, set by the append whatever the server's default). The default.
	SyncEveryAppend Durability = iota
	// SyncEveryTurn commits appends without waiting for the flush
	// (synchronous_commit = off) and flushes them in Sync, which the runtime
	// calls after an assistant message that calls tools and at the end of
	// every turn: the write-ahead guarantee holds, and a server crash (not a
	// client crash) can lose at most the appends since the last Sync.
	SyncEveryTurn
)

// Options configures a [Store]. A nil *Options means the zero value.
type Options struct {
	// Migrate creates the schema, or brings it to [SchemaVersion], when
	// the store opens. Without it, Open fails with [ErrSchema] unless the
	// schema is already there.
	Migrate bool
	// Durability; the default is [SyncEveryAppend].
	Durability Durability
	// Lease bounds how long a session stays locked by a runner that
	// stopped answering (frozen, partitioned away): its lock connection is
	// closed by the server after Lease without a heartbeat (the store sends
	// one every Lease/3), and its appends are refused once Lease has passed
	// since the last one. The default is 30 seconds. Needs PostgreSQL 14 or
	// later (idle_session_timeout).
	Lease time.Duration
}

// defaultLease is the default [Options.Lease].
const defaultLease = 30 * time.Second

// ErrLockLost is returned (wrapped) by an append of a run whose lock is no
// longer its own: another runner has locked the session since, or the
// run's lease expired (see [Options.Lease]). Nothing is written.
var ErrLockLost = errors.New("pgstore: the run's lock on the session was lost")

// Store is an [agentrt.SessionStore] on PostgreSQL. It implements
// [agentrt.Locker], [agentrt.RecordStore] and
// [agentrt.Syncer], and is safe for concurrent use.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool
	lockCfg  *pgx.ConnConfig
	opts     Options

	mu   sync.Mutex
	held map[string]*lease // sessions locked by this store
}

// lease is a lock held by this store: gen is its fencing token, 0 until
// the lock is taken.
type lease struct{ gen int64 }

// Open connects to the database at connString (a URL or a key=value
// string, as pgx takes) and returns a store on it. Close it when done.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// New returns a store on an existing pool, which the caller keeps and
// closes. Locks use connections of their own, made with the pool's
// connection settings.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	s := &Store{pool: pool, lockCfg: pool.Config().ConnConfig.Copy()}
	if opts != nil {
		s.opts = *opts
	}
	switch s.opts.Durability {
	case SyncEveryAppend, SyncEveryTurn:
	default:
		return nil, fmt.Errorf("pgstore: unknown durability %d", s.opts.Durability)
	}
	switch {
	case s.opts.Lease == 0:
		s.opts.Lease = defaultLease
	case s.opts.Lease < 3*time.Millisecond:
		return nil, fmt.Errorf("pgstore: lease %v is too short", s.opts.Lease)
	}
	if s.lockCfg.RuntimeParams == nil {
		s.lockCfg.RuntimeParams = map[string]string{}
	}
	s.lockCfg.RuntimeParams["synchronous_commit"] = "on"
	s.lockCfg.RuntimeParams["idle_session_timeout"] = strconv.FormatInt(s.opts.Lease.Milliseconds(), 10)
	if s.opts.Migrate {
		if err := Migrate(ctx, pool); err != nil {
			return nil, err
		}
	}
	v, err := version(ctx, pool)
	if err != nil {
		return nil, err
	}
	if v != SchemaVersion {
		return nil, fmt.Errorf("%w: the database is at version %d, want %d (open with Options.Migrate)", ErrSchema, v, SchemaVersion)
	}
	return s, nil
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool if Open made it. Locks still held are released
// by their own connections when unlocked.
func (s *Store) Close() error {
	if s.ownsPool {
		s.pool.Close()
	}
	return nil
}

func wrap(op, id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgstore: %s session %q: %w", op, id, err)
}

// commitMode is the synchronous_commit of the store's appends. It is set
// in each statement (set_config), not left to the server's default, so
// that SyncEveryAppend flushes even on a server set to
// synchronous_commit = off.
func (s *Store) commitMode() string {
	if s.opts.Durability == SyncEveryTurn {
		return "off"
	}
	return "on"
}

// appendSQL adds one entry at the end of a session, creating the session,
// in one statement: the upsert locks the session's row, so concurrent
// appends to one session take turns and get consecutive seqs.
//
// When this store holds the session's lock, $8 is its fencing token: the
// append writes nothing unless the lease still has it and has not
// expired. FOR SHARE makes a Lock that takes the session over wait for
// the append, or the append see the new token.
const appendSQL = `WITH c AS (SELECT set_config('synchronous_commit', $7, true)),
f AS (
	SELECT FROM c WHERE $8::bigint IS NULL OR EXISTS (
		SELECT FROM agentrt_leases
		WHERE session_id = $1 AND gen = $8 AND expires > clock_timestamp() FOR SHARE)
),
s AS (
	INSERT INTO agentrt_sessions AS s (id, messages, next_seq, title)
	SELECT $1, $3::int, 1, $5 FROM f
	ON CONFLICT (id) DO UPDATE SET
		next_seq = s.next_seq + 1,
		messages = s.messages + $3::int,
		title    = COALESCE(s.title, EXCLUDED.title),
		updated  = greatest(clock_timestamp(), s.updated)
	RETURNING s.next_seq - 1 AS seq
)
INSERT INTO agentrt_entries (session_id, seq, kind, role, body, raw)
SELECT $1, seq, $2, $4, $6, $9 FROM s`

// Append adds msg at the end of the session in one transaction.
func (s *Store) Append(ctx context.Context, sessionID string, msg agentrt.Message) error {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return err
	}
	body, err := marshal(msg)
	if err != nil {
		return wrap("append to", sessionID, err)
	}
	if len(body) > sessioncheck.MaxMessageSize {
		return fmt.Errorf("pgstore: append to session %q: %w: a message of %d bytes (the most a store takes is %d)",
			sessionID, agentrt.ErrLineTooLong, len(body), sessioncheck.MaxMessageSize)
	}
	var title *string
	if msg.Role == agentrt.RoleUser {
		t := textcut.Title(msg.Content)
		title = &t
	}
	return wrap("append to", sessionID, s.append(ctx, sessionID, kindMessage, 1, string(msg.Role), title, body))
}

// append runs appendSQL, fenced by the session's lock if this store
// holds it.
func (s *Store) append(ctx context.Context, id, kind string, messages int, role any, title *string, body []byte) error {
	var gen *int64
	s.mu.Lock()
	if l := s.held[id]; l != nil && l.gen != 0 {
		g := l.gen
		gen = &g
	}
	s.mu.Unlock()
	text, raw := textBody(body)
	tag, err := s.pool.Exec(ctx, appendSQL, id, kind, messages, role, title, text, s.commitMode(), gen, raw)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrLockLost
	}
	return err
}

// textBody returns body as the text column can hold it, and the exact
// bytes (for the raw column) when they differ: a tool input may hold
// bytes that are not UTF-8, or a NUL, which text cannot; they become
// U+FFFD in the text.
func textBody(body []byte) (string, []byte) {
	if utf8.Valid(body) && bytes.IndexByte(body, 0) < 0 {
		return string(body), nil
	}
	return textcut.ValidText(string(body)), body
}

// marshal encodes v without escaping <, > and & (tool inputs are kept
// byte for byte modulo whitespace).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// kindMessage is the kind of message entries; records have their own.
const kindMessage = "message"

// AppendRecord adds a non-message record at the end of the session; see
// [agentrt.RecordStore]. Its kind must not be empty or "message".
func (s *Store) AppendRecord(ctx context.Context, sessionID string, rec agentrt.Record) error {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return err
	}
	if rec.Kind == "" || rec.Kind == kindMessage {
		return fmt.Errorf("pgstore: record kind %q is reserved", rec.Kind)
	}
	data := rec.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if !json.Valid(data) {
		return fmt.Errorf("pgstore: record %q of session %q: data is not valid JSON", rec.Kind, sessionID)
	}
	err := s.append(ctx, sessionID, string(rec.Kind), 0, nil, nil, data)
	return wrap("append a record to", sessionID, err)
}

// Sync makes the session's appends durable; see [agentrt.Syncer]. Under
// SyncEveryAppend they already are. Under SyncEveryTurn it rewrites the
// session's row unchanged with synchronous_commit on: a commit that writes
// WAL, so the server flushes the log up to it, every earlier commit
// included. (A transaction that writes nothing flushes nothing.)
func (s *Store) Sync(ctx context.Context, sessionID string) error {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return err
	}
	if s.opts.Durability == SyncEveryAppend {
		return nil
	}
	_, err := s.pool.Exec(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'on', true))
		UPDATE agentrt_sessions SET updated = updated FROM c WHERE id = $1`, sessionID)
	return wrap("sync", sessionID, err)
}

// Load returns the session's messages in order; a missing session loads as
// an empty slice.
func (s *Store) Load(ctx context.Context, sessionID string) ([]agentrt.Message, error) {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx,
		`SELECT seq, coalesce(raw, convert_to(body, 'UTF8')) FROM agentrt_entries WHERE session_id = $1 AND kind = 'message' ORDER BY seq`, sessionID)
	if err != nil {
		return nil, wrap("load", sessionID, err)
	}
	msgs := []agentrt.Message{}
	var (
		seq  int64
		body []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &body}, func() error {
		var m agentrt.Message
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("entry %d: %w", seq, err)
		}
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		return nil, wrap("load", sessionID, err)
	}
	return msgs, nil
}

// LoadRecords returns the session's non-message records in order; see
// [agentrt.RecordStore].
func (s *Store) LoadRecords(ctx context.Context, sessionID string) ([]agentrt.Record, error) {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx,
		`SELECT kind, coalesce(raw, convert_to(body, 'UTF8')) FROM agentrt_entries WHERE session_id = $1 AND kind <> 'message' ORDER BY seq`, sessionID)
	if err != nil {
		return nil, wrap("load records of", sessionID, err)
	}
	recs := []agentrt.Record{}
	var (
		kind string
		body []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &body}, func() error {
		recs = append(recs, agentrt.Record{Kind: agentrt.RecordKind(kind), Data: json.RawMessage(body)})
		return nil
	})
	if err != nil {
		return nil, wrap("load records of", sessionID, err)
	}
	return recs, nil
}

// List returns every session's summary, most recently updated first.
func (s *Store) List(ctx context.Context) ([]agentrt.SessionInfo, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT id, created, updated, messages, coalesce(title, '') FROM agentrt_sessions ORDER BY updated DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	infos, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentrt.SessionInfo, error) {
		var i agentrt.SessionInfo
		err := row.Scan(&i.ID, &i.Created, &i.Updated, &i.Messages, &i.Title)
		return i, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	if infos == nil {
		infos = []agentrt.SessionInfo{}
	}
	return infos, nil
}

// Delete removes the session and its entries; deleting a missing session
// is not an error. It returns [agentrt.ErrSessionBusy] (wrapped) if a run
// holds the session.
func (s *Store) Delete(ctx context.Context, sessionID string) error {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var free bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(`+lockKey+`)`, sessionID).Scan(&free); err != nil {
			return err
		}
		if !free {
			return fmt.Errorf("%w: %q", agentrt.ErrSessionBusy, sessionID)
		}
		_, err := tx.Exec(ctx, `DELETE FROM agentrt_sessions WHERE id = $1`, sessionID)
		if err == nil {
			_, err = tx.Exec(ctx, `DELETE FROM agentrt_leases WHERE session_id = $1`, sessionID)
		}
		return err
	})
	return wrap("delete", sessionID, err)
}

// lockKey is the advisory lock key of a session: a 64-bit hash of its id,
// namespaced so as not to meet the keys of other applications by chance.
const lockKey = `hashtextextended('agentrt.session:' || $1, 0)`

// Lock keeps other runs, in this process or any other, off the session
// until unlock is called; see [agentrt.Locker]. It takes a session-level
// advisory lock on a connection of its own, held until unlock: if the
// process dies, the connection closes and the server releases the lock.
// It returns [agentrt.ErrSessionBusy] (wrapped) at once if the session is
// held. Two session ids whose 64-bit hashes collide would exclude each
// other (harmless, and unlikely).
//
// The lock is a lease: it gives the session a new fencing token, which
// every append of this store to the session carries until unlock, and
// keeps it alive with a heartbeat every Lease/3. An append is refused with
// [ErrLockLost] once another Lock has taken the session, or once Lease has
// passed without a heartbeat (the lock's connection is gone, or the
// process was frozen).
func (s *Store) Lock(ctx context.Context, sessionID string) (func(), error) {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.held[sessionID] != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %q (held by this store)", agentrt.ErrSessionBusy, sessionID)
	}
	if s.held == nil {
		s.held = map[string]*lease{}
	}
	l := &lease{}
	s.held[sessionID] = l
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		if s.held[sessionID] == l {
			delete(s.held, sessionID)
		}
		s.mu.Unlock()
	}

	conn, err := pgx.ConnectConfig(ctx, s.lockCfg)
	if err != nil {
		release()
		return nil, wrap("lock", sessionID, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, sessionID).Scan(&ok); err != nil {
		conn.Close(context.Background())
		release()
		return nil, wrap("lock", sessionID, err)
	}
	if !ok {
		conn.Close(context.Background())
		release()
		return nil, fmt.Errorf("%w: %q (held through another connection: another store or process)", agentrt.ErrSessionBusy, sessionID)
	}
	ms := s.opts.Lease.Milliseconds()
	var gen int64
	if err := conn.QueryRow(ctx, `INSERT INTO agentrt_leases (session_id, gen, expires)
		VALUES ($1, nextval('agentrt_lease_gen'), clock_timestamp() + $2 * interval '1 millisecond')
		ON CONFLICT (session_id) DO UPDATE SET gen = EXCLUDED.gen, expires = EXCLUDED.expires
		RETURNING gen`, sessionID, ms).Scan(&gen); err != nil {
		conn.Close(context.Background())
		release()
		return nil, wrap("lock", sessionID, err)
	}
	s.mu.Lock()
	l.gen = gen
	s.mu.Unlock()

	// The heartbeat extends the lease, and keeps the connection from
	// idle_session_timeout, until unlock or its first failure.
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(s.opts.Lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.Lease)
			_, err := conn.Exec(ctx, `UPDATE agentrt_leases SET expires = clock_timestamp() + $3 * interval '1 millisecond'
				WHERE session_id = $1 AND gen = $2`, sessionID, gen, ms)
			cancel()
			if err != nil {
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// Closing the connection releases the lock; ending the lease
			// and unlocking first makes it explicit (and fast) while the
			// server is reachable.
			conn.Exec(ctx, `DELETE FROM agentrt_leases WHERE session_id = $1 AND gen = $2`, sessionID, gen)
			conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, sessionID)
			conn.Close(ctx)
			release()
		})
	}, nil
}

// Fork creates the session dst as a copy of the first upTo messages of src,
// as [agentrt.JSONLStore.Fork] does: every entry of src before its message
// number upTo is copied (records included), in one transaction, and dst
// remembers where it came from (forked_from, forked_at). It returns an
// error wrapping [agentrt.ErrSessionExists] if dst exists,
// [agentrt.ErrSessionBusy] if dst is locked, [fs.ErrNotExist] if src does
// not exist, and an error if upTo is negative or greater than the number
// of messages of src.
func (s *Store) Fork(ctx context.Context, src, dst string, upTo int) error {
	if err := agentrt.ValidateSessionID(src); err != nil {
		return err
	}
	if err := agentrt.ValidateSessionID(dst); err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("%w: cannot fork %q onto itself", agentrt.ErrSessionExists, src)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var free bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(`+lockKey+`)`, dst).Scan(&free); err != nil {
			return err
		}
		if !free {
			return fmt.Errorf("%w: %q", agentrt.ErrSessionBusy, dst)
		}
		var n int
		err := tx.QueryRow(ctx, `SELECT messages FROM agentrt_sessions WHERE id = $1 FOR SHARE`, src).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("fork %q: %w", src, fs.ErrNotExist)
		}
		if err != nil {
			return err
		}
		if upTo < 0 || upTo > n {
			return fmt.Errorf("fork %q at %d: it has %d messages", src, upTo, n)
		}
		// The seq of message number upTo, or past the end.
		var end int64 = 1<<63 - 1
		if upTo < n {
			if err := tx.QueryRow(ctx, `SELECT seq FROM agentrt_entries WHERE session_id = $1 AND kind = 'message'
				ORDER BY seq OFFSET $2 LIMIT 1`, src, upTo).Scan(&end); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `INSERT INTO agentrt_sessions (id, messages, next_seq, title, forked_from, forked_at)
			SELECT $2, $3::int, coalesce((SELECT max(seq) + 1 FROM agentrt_entries WHERE session_id = $1 AND seq < $4), 0),
				-- the title comes from the first user message, if copied
				(SELECT title FROM agentrt_sessions WHERE id = $1 AND EXISTS (
					SELECT FROM agentrt_entries WHERE session_id = $1 AND seq < $4 AND role = 'user')),
				$1, $3::int
			ON CONFLICT (id) DO NOTHING`, src, dst, upTo, end)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %q", agentrt.ErrSessionExists, dst)
		}
		_, err = tx.Exec(ctx, `INSERT INTO agentrt_entries (session_id, seq, kind, role, body, raw, created)
			SELECT $2, seq, kind, role, body, raw, created FROM agentrt_entries WHERE session_id = $1 AND seq < $3`, src, dst, end)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// Verify checks the session: every message entry decodes as a message,
// the session's message count and next seq agree with its entries, and
// the messages keep the runtime's first invariant (an error wrapping
// [agentrt.ErrBrokenSession]: a second result for one call, an orphaned
// result, a result out of place). It returns nil for a good
// or missing session.
func (s *Store) Verify(ctx context.Context, sessionID string) error {
	if err := agentrt.ValidateSessionID(sessionID); err != nil {
		return err
	}
	var count, maxSeq int64
	var messages int
	var nextSeq int64
	err := s.pool.QueryRow(ctx, `SELECT s.messages, s.next_seq,
			(SELECT count(*) FROM agentrt_entries WHERE session_id = s.id AND kind = 'message'),
			(SELECT coalesce(max(seq), -1) FROM agentrt_entries WHERE session_id = s.id)
		FROM agentrt_sessions s WHERE s.id = $1`, sessionID).Scan(&messages, &nextSeq, &count, &maxSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return wrap("verify", sessionID, err)
	}
	if int64(messages) != count {
		return fmt.Errorf("pgstore: session %q: counts %d messages, has %d", sessionID, messages, count)
	}
	if maxSeq >= nextSeq {
		return fmt.Errorf("pgstore: session %q: next seq %d, but an entry has seq %d", sessionID, nextSeq, maxSeq)
	}
	msgs, err := s.Load(ctx, sessionID)
	if err != nil {
		return err
	}
	ms := make([]sessioncheck.Msg, len(msgs))
	for i, m := range msgs {
		ms[i] = sessioncheck.Msg{Role: string(m.Role), ToolUseID: m.ToolUseID}
		for _, u := range m.ToolUses() {
			ms[i].Uses = append(ms[i].Uses, u.ID)
		}
	}
	if err := sessioncheck.Check(ms); err != nil {
		return fmt.Errorf("pgstore: session %q: %w: %w", sessionID, agentrt.ErrBrokenSession, err)
	}
	return nil
}
