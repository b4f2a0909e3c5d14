package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt/internal/sessioncheck"
	"github.com/agentrt/agentrt/internal/textcut"
)

// SessionStore keeps sessions: the ordered messages of each conversation.
//
// The runtime appends every message as it is produced (the assistant
// message carrying tool_uses before any of its tools runs, then each result
// as it completes) and loads a session once at the start of a run. That is
// all a store must do, so one on Postgres, Redis or S3 takes an afternoon;
// agenttest.TestStore checks an implementation against this contract:
//
//   - Append adds one message at the end of the session, creating the
//     session if needed. It returns only once the message would be seen by
//     a later Load. It returns [ErrInvalidSessionID] (wrapped) for an id the
//     store cannot hold.
//   - Load returns the session's messages in append order, or an empty
//     slice and no error for a session that does not exist. The caller must
//     not modify the returned messages; the store must not modify them
//     later either (it may return its own backing array, capped).
//   - List returns every session's summary, most recently updated first.
//   - Delete removes a session; deleting a missing session is not an error.
//
// All methods must be safe for concurrent use. Two runs on one session are
// kept apart by the runtime through [Locker] when the store implements it.
//
// Optional abilities, found by type assertion: [Locker], [RecordStore]
// and [Syncer].
type SessionStore interface {
	Append(ctx context.Context, sessionID string, msg Message) error
	Load(ctx context.Context, sessionID string) ([]Message, error)
	List(ctx context.Context) ([]SessionInfo, error)
	Delete(ctx context.Context, sessionID string) error
}

// SessionInfo summarizes a stored session.
type SessionInfo struct {
	ID       string
	Created  time.Time
	Updated  time.Time
	Messages int
	// Title is the Content of the first user message, on one line (each
	// run of white space is one space), cut to 60 characters with "…" as
	// the 60th when it is longer; "" when there is none.
	Title string
}

// Locker is implemented by stores that can keep two runs off one session.
// Lock returns [ErrSessionBusy] (wrapped) at once if the session is held;
// it does not wait. The runtime holds the lock for the whole run.
type Locker interface {
	Lock(ctx context.Context, sessionID string) (unlock func(), err error)
}

// Record is a session entry that is not a message: a permission decision,
// usage, a compaction summary. Kind names it; Data is its JSON body.
// A record whose Kind a reader does not know is kept and ignored. A store
// may keep Data as given, so it must not be modified after AppendRecord.
type Record struct {
	Kind RecordKind      `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// RecordKind names the kind of a [Record]: the "kind" field of its line in
// the JSONL format (docs/jsonl-format.md documents each body). A store
// keeps kinds it does not know as they are.
type RecordKind string

// The kinds of the records the runtime writes.
const (
	// RecordPermission is a permission decision: {"tool_use_id", "tool",
	// "allow", "reason", "source", "input" (when rewritten)}. Every
	// decision is recorded except a policy allowing a read-only tool.
	RecordPermission RecordKind = "permission"
	// RecordUsage is the usage of one planner call: {"turn", "usage"}.
	RecordUsage RecordKind = "usage"
	// RecordPending lists the calls of a run that stopped with
	// StopPending: {"turn", "calls": [{"tool_use_id", "tool", "input"
	// (decoded), "pending" or "decision"}]}.
	RecordPending RecordKind = "pending"
	// RecordCompaction is a [Compaction] made by the Compressor.
	RecordCompaction RecordKind = "compaction"
	// RecordSubAgent links a parent session to the child session of an
	// agent tool call: {"tool_use_id", "agent", "session_id"}.
	RecordSubAgent RecordKind = "subagent"
	// RecordTurn is the trace of one turn (how long the planner and tool
	// calls took, how each ended), written when the turn is over (before
	// the next planner call; a store that syncs gets the model call apart,
	// before any tool runs, in a record of the same turn without
	// tool_calls): {"turn", "model_call": {"start", "duration_ms",
	// "provider", "model", "ttft_ms", "retries", "messages", "tokens",
	// "compaction_up_to", "usage", "finish", "error", "layer", "trace_id",
	// "span_id"}, "tool_calls": [{"tool_use_id", "tool", "start",
	// "duration_ms", "outcome", "trace_id", "span_id"}]}. The timeline
	// package reads the trace records.
	RecordTurn RecordKind = "turn"
	// RecordRun is the end of a run and which layer ended it: {"start",
	// "end", "duration_ms", "reason", "layer", "turns", "usage", "error",
	// "trace_id", "span_id", "last_turn"}; last_turn is the trace of the
	// turn the run ended in, as in a RecordTurn record.
	RecordRun RecordKind = "run"
)

// RecordStore is implemented by stores that keep records other than
// messages, and return them. The runtime appends a permission record for
// every decision, usage and trace records, and the compactions its
// Compressor makes; it loads a session's records at the start of a run to
// find its pending calls, remembered decisions and last compaction. A
// store without this ability keeps none of them.
//
// LoadRecords returns the session's records in the order they were
// appended (an empty slice for a session without records). The caller
// must not modify them.
type RecordStore interface {
	AppendRecord(ctx context.Context, sessionID string, rec Record) error
	LoadRecords(ctx context.Context, sessionID string) ([]Record, error)
}

// Syncer is implemented by stores that buffer writes. The runtime calls
// Sync right after appending an assistant message that calls tools (before
// any of them runs: write-ahead), at the end of every turn, and when the
// run stops, before Done. The run's trace record is written after that last
// Sync: like every trace record it is best effort, and a store that must
// keep it syncs when the session is unlocked (JSONLStore does).
type Syncer interface {
	Sync(ctx context.Context, sessionID string) error
}

// maxSessionIDLen is the longest session id accepted by [ValidateSessionID].
const maxSessionIDLen = 128

// ValidateSessionID reports whether id is safe as a session id, and in
// particular as a file name: 1 to 128 bytes of valid UTF-8, no path
// separator, no NUL or other control character, not "." or "..", and not
// starting with a dot. The stores of this module use it, and custom stores
// should (agenttest.TestStore checks it), so that sessions can move
// between stores.
func ValidateSessionID(id string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidSessionID, id, why) }
	switch {
	case id == "":
		return bad("empty")
	case len(id) > maxSessionIDLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxSessionIDLen))
	case !utf8.ValidString(id):
		return bad("not valid UTF-8")
	case strings.HasPrefix(id, "."):
		return bad(`starts with "."`)
	case strings.ContainsAny(id, `/\:`):
		return bad("contains a path separator")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return bad("contains a control character")
		}
	}
	return nil
}

// checkInvariant returns an error wrapping [ErrBrokenSession] for msgs
// that break the runtime's first invariant (sessioncheck.Check says
// how), for the stores' Verify methods.
func checkInvariant(msgs []Message) error {
	ms := make([]sessioncheck.Msg, len(msgs))
	for i, m := range msgs {
		ms[i] = sessioncheck.Msg{Role: string(m.Role), ToolUseID: m.ToolUseID}
		for _, b := range m.Blocks {
			if b.Type == BlockToolUse {
				ms[i].Uses = append(ms[i].Uses, b.ID)
			}
		}
	}
	if err := sessioncheck.Check(ms); err != nil {
		return fmt.Errorf("%w: %w", ErrBrokenSession, err)
	}
	return nil
}

// MemoryStore is a [SessionStore] in memory: the default store of an Agent
// and the store of tests. It implements [Locker] and [RecordStore].
// It keeps each message as the stores that write JSON do: text that is
// not valid UTF-8 with each bad byte replaced by U+FFFD, tool inputs byte
// for byte; and it refuses one whose JSON is longer than 64 MiB less
// 1 KiB with [ErrLineTooLong].
// The zero value is ready to use; a MemoryStore must not be copied after
// first use. It is safe for concurrent use.
type MemoryStore struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	locks    map[string]uint64 // session → token of the run holding it
	lockSeq  uint64
	// epoch is the store's first use: sessions keep their times as the
	// monotonic clock's time since, one clock read where time.Now makes
	// two.
	epoch time.Time
}

type memSession struct {
	msgs    []Message
	records []Record
	created time.Duration // since the store's epoch
	updated time.Duration
}

// create returns the session named id, created if there is none; it
// checks the id only then, since a session that exists has a valid one.
func (s *MemoryStore) create(id string) (*memSession, error) {
	if ss := s.sessions[id]; ss != nil {
		return ss, nil
	}
	if err := ValidateSessionID(id); err != nil {
		return nil, err
	}
	if s.sessions == nil {
		s.sessions = map[string]*memSession{}
	}
	now := s.now()
	// Room for a first run's messages and records.
	ss := &memSession{msgs: make([]Message, 0, 8), records: make([]Record, 0, 4), created: now, updated: now}
	s.sessions[id] = ss
	return ss, nil
}

// now returns the time since the store's epoch; s.mu is held.
func (s *MemoryStore) now() time.Duration {
	if s.epoch.IsZero() {
		s.epoch = time.Now()
	}
	return time.Since(s.epoch)
}

// Append adds msg at the end of the session.
func (s *MemoryStore) Append(_ context.Context, sessionID string, msg Message) error {
	if err := checkSize(msg); err != nil {
		return fmt.Errorf("agentrt: MemoryStore.Append to session %q: %w", sessionID, err)
	}
	if !validText(msg) {
		// As every store keeps it: what its JSON carries.
		msg = jsonForm(msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, err := s.create(sessionID)
	if err != nil {
		return err
	}
	ss.msgs = append(ss.msgs, msg)
	ss.updated = s.now()
	return nil
}

// Load returns the session's messages. The slice shares memory with the
// store (capped, so appending to it copies); do not modify its messages.
func (s *MemoryStore) Load(_ context.Context, sessionID string) ([]Message, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[sessionID]
	if ss == nil {
		return []Message{}, nil
	}
	return ss.msgs[:len(ss.msgs):len(ss.msgs)], nil
}

// List returns a summary of every session, most recently updated first.
func (s *MemoryStore) List(context.Context) ([]SessionInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	infos := make([]SessionInfo, 0, len(s.sessions))
	for id, ss := range s.sessions {
		infos = append(infos, SessionInfo{
			ID: id, Created: s.epoch.Add(ss.created), Updated: s.epoch.Add(ss.updated),
			Messages: len(ss.msgs), Title: title(ss.msgs),
		})
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos, nil
}

// Delete removes the session.
func (s *MemoryStore) Delete(_ context.Context, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionID)
	return nil
}

// Verify checks the session's messages with the invariant; a missing
// session is good.
func (s *MemoryStore) Verify(ctx context.Context, sessionID string) error {
	msgs, err := s.Load(ctx, sessionID)
	if err != nil {
		return err
	}
	if err := checkInvariant(msgs); err != nil {
		return fmt.Errorf("agentrt: session %q: %w", sessionID, err)
	}
	return nil
}

// Lock marks the session as held by a run; see [Locker].
func (s *MemoryStore) Lock(_ context.Context, sessionID string) (func(), error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks[sessionID] != 0 {
		return nil, fmt.Errorf("%w: %q", ErrSessionBusy, sessionID)
	}
	if s.locks == nil {
		s.locks = map[string]uint64{}
	}
	s.lockSeq++
	token := s.lockSeq
	s.locks[sessionID] = token
	return func() {
		s.mu.Lock()
		if s.locks[sessionID] == token { // unlock may be called twice
			delete(s.locks, sessionID)
		}
		s.mu.Unlock()
	}, nil
}

// AppendRecord keeps a non-message record; see [RecordStore].
func (s *MemoryStore) AppendRecord(_ context.Context, sessionID string, rec Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, err := s.create(sessionID)
	if err != nil {
		return err
	}
	ss.records = append(ss.records, rec)
	return nil
}

// LoadRecords returns the session's non-message records; see [RecordStore].
func (s *MemoryStore) LoadRecords(_ context.Context, sessionID string) ([]Record, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[sessionID]; ss != nil {
		return slices.Clone(ss.records), nil
	}
	return []Record{}, nil
}

// validText reports whether every text of msg (not its tool inputs, which
// are JSON kept byte for byte) is valid UTF-8.
func validText(msg Message) bool {
	if !utf8.ValidString(msg.Content) || !utf8.ValidString(msg.ToolUseID) {
		return false
	}
	for _, b := range msg.Blocks {
		for _, t := range [...]string{string(b.Type), b.Text, b.ID, b.Name, b.MediaType, b.URL, b.Provider} {
			if !utf8.ValidString(t) {
				return false
			}
		}
	}
	return utf8.ValidString(string(msg.Role))
}

// jsonForm is msg as its JSON carries it: each byte of text that is not
// UTF-8 replaced by U+FFFD, as encoding/json writes it, tool inputs as
// they are.
func jsonForm(msg Message) Message {
	body, err := json.Marshal(msg)
	if err != nil {
		return msg
	}
	var m Message
	if json.Unmarshal(body, &m) != nil {
		return msg
	}
	return m
}

// checkSize refuses a message whose JSON is longer than
// sessioncheck.MaxMessageSize.
// It encodes only a message that might be (JSON takes at most 6 bytes per
// byte of text, 4/3 per byte of data).
func checkSize(msg Message) error {
	size := 6*(len(msg.Content)+len(msg.ToolUseID)) + 256
	for _, b := range msg.Blocks {
		size += 6*(len(b.Text)+len(b.ID)+len(b.Name)+len(b.MediaType)+len(b.URL)+len(b.Input)) + 2*(len(b.Data)+len(b.Signature)) + 256
	}
	if size <= sessioncheck.MaxMessageSize {
		return nil
	}
	body, err := encodeMessage(msg)
	if err != nil {
		return err
	}
	if len(body) > sessioncheck.MaxMessageSize {
		return fmt.Errorf("%w: a message of %d bytes (the most a store takes is %d)", ErrLineTooLong, len(body), sessioncheck.MaxMessageSize)
	}
	return nil
}

// title returns a session's title ([SessionInfo.Title]).
func title(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == RoleUser {
			return textcut.Title(m.Content)
		}
	}
	return ""
}
