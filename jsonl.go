package agentrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentrt/agentrt/internal/sessioncheck"
	"github.com/agentrt/agentrt/jsonl"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Durability says when a [JSONLStore] forces what it wrote to stable
// storage (fsync). Every mode survives the process being killed: an
// appended line is in the operating system's page cache as soon as Append
// returns. The modes differ in what a power loss or a kernel crash can
// take away.
type Durability int

const (
	// SyncEveryTurn, the default, fsyncs when the runtime calls Sync: right
	// after appending an assistant message that carries tool_uses (before
	// any of its tools runs) and at the end of every turn. A power loss
	// can lose the messages of the turn in progress (the user message, the
	// tool results appended since the last Sync), never a tool call whose
	// tool may have started, and never what an earlier turn wrote.
	SyncEveryTurn Durability = iota
	// SyncEveryAppend fsyncs each line before Append returns, and Sync does
	// nothing more. A power loss loses at most the line being written.
	// Each append costs a disk flush (around a millisecond on an SSD, far
	// more on a disk or a network file system).
	SyncEveryAppend
	// SyncNever leaves flushing to the operating system (on Linux, within
	// about 30 seconds). A power loss can lose the last seconds of every
	// session, and the loss may include a tool call whose tool already ran.
	SyncNever
)

func (d Durability) String() string {
	switch d {
	case SyncEveryTurn:
		return "every-turn"
	case SyncEveryAppend:
		return "every-append"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// defaultMaxLineSize is the default [JSONLOptions.MaxLineSize]: 64 MiB.
const defaultMaxLineSize = 64 << 20

// JSONLOptions configures a [JSONLStore]. The zero value (or a nil
// *JSONLOptions) gives the defaults.
type JSONLOptions struct {
	// Durability says when appended lines are fsynced; the default is
	// SyncEveryTurn.
	Durability Durability

	// OnWarning, when set, receives what the store tolerated rather than
	// failed on: a [*jsonl.LineError] with Tail set for the damaged last
	// line a crash left (each time a read skips it, and once when an
	// append removes it), one without Tail for a damaged session that List
	// could only count roughly, and errors that have no caller to go to (a
	// failed fsync when a lock is released). It may be called from several
	// goroutines at once and must not call the store.
	OnWarning func(error)

	// MaxLineSize is the longest line, in bytes, the store writes or
	// reads; 0 means 64 MiB, and a negative value is refused. A message
	// whose line would be longer is refused by Append with
	// [ErrLineTooLong]. Reading a session holds at most one line of this
	// size in memory.
	MaxLineSize int

	// Now, when set, replaces time.Now for the timestamps the store writes.
	// Tests and examples use it to get reproducible files.
	Now func() time.Time
}

// JSONLStore is a [SessionStore] that keeps each session in one
// append-only file of JSON lines, <dir>/<session-id>.jsonl, in the public
// format of docs/jsonl-format.md: a header, then one line per message or
// record, each written with one write; earlier lines are never rewritten.
// It also implements [Locker], [RecordStore] and [Syncer] (see
// [Durability]).
//
// A crash-truncated last line is skipped, reported to
// [JSONLOptions.OnWarning] as a [*jsonl.LineError] with Tail set and
// removed by the next append; damage anywhere else fails Load with a
// [*jsonl.LineError]
// ("Reading, and what a crash leaves" in the format document). Lock keeps a
// session to one run, in this process and across processes ("Locking");
// Append does not take it. All file access goes through an [os.Root] on dir,
// so no session id, link or ".." reaches a file outside it.
//
// A JSONLStore is safe for concurrent use: sessions are written in
// parallel, writes to one session are serialized. Close releases its files
// and locks; later calls return an error.
type JSONLStore struct {
	dir  string
	root *os.Root
	opts JSONLOptions

	mu       sync.Mutex
	closed   bool
	sessions map[string]*jsonlSession

	list listCache

	// fsync forces a session file to stable storage: (*os.File).Sync;
	// the durability tests count its calls.
	fsync func(*os.File) error
}

// jsonlSession is the in-process state of one session. It lives in
// JSONLStore.sessions while anyone holds a reference (refs, under the
// store's mu), while the session is locked, or while it has unsynced
// writes; the other fields are guarded by mu.
type jsonlSession struct {
	id   string
	refs int

	mu      sync.Mutex
	f       *os.File // open for appending while the session is locked
	nextSeq int64    // seq of the next record, when f is open
	dirty   bool     // written since the last fsync
	holder  *struct{}
	lock    *os.File // the cross-process lock file, while locked
}

var _ interface {
	SessionStore
	Locker
	RecordStore
	Syncer
} = (*JSONLStore)(nil)

// errLockHeld is returned by lockFile when another holder has the lock.
var errLockHeld = errors.New("locked by another process or another JSONLStore on the same directory")

// errClosed is returned after Close.
var errClosed = fmt.Errorf("agentrt: JSONL store is closed: %w", os.ErrClosed)

// NewJSONLStore returns a store keeping its sessions in dir, which it
// creates with mode 0700 if it does not exist (an existing directory keeps
// its mode). A nil opts means the defaults.
func NewJSONLStore(dir string, opts *JSONLOptions) (*JSONLStore, error) {
	if dir == "" {
		return nil, errors.New("agentrt: NewJSONLStore: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, wrapf(err, "NewJSONLStore")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, wrapf(err, "NewJSONLStore")
	}
	s := &JSONLStore{dir: dir, root: root, sessions: map[string]*jsonlSession{}, fsync: (*os.File).Sync}
	if opts != nil {
		s.opts = *opts
	}
	switch s.opts.Durability {
	case SyncEveryTurn, SyncEveryAppend, SyncNever:
	default:
		root.Close()
		return nil, fmt.Errorf("agentrt: NewJSONLStore: unknown durability %v", s.opts.Durability)
	}
	if s.opts.MaxLineSize < 0 {
		root.Close()
		return nil, fmt.Errorf("agentrt: NewJSONLStore: negative MaxLineSize %d", s.opts.MaxLineSize)
	}
	if s.opts.MaxLineSize == 0 {
		s.opts.MaxLineSize = defaultMaxLineSize
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	return s, nil
}

// Dir returns the directory the store keeps its sessions in.
func (s *JSONLStore) Dir() string { return s.dir }

// Close syncs what needs syncing (unless the durability is SyncNever),
// closes the open session files, releases every lock held through the
// store, and closes the directory. The unlock functions of those locks
// become no-ops; every later call returns an error (errors.Is
// os.ErrClosed). Close is idempotent.
func (s *JSONLStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, e := range s.sessions {
		e.mu.Lock()
		errs = append(errs, s.flushLocked(e))
		if e.f != nil {
			errs = append(errs, e.f.Close())
			e.f = nil
		}
		if e.holder != nil {
			e.holder = nil
			if e.lock != nil {
				unlockFile(s.root, e.id+".lock", e.lock)
				e.lock = nil
			}
		}
		e.mu.Unlock()
	}
	errs = append(errs, s.root.Close())
	return errors.Join(errs...)
}

func fileName(id string) string { return id + ".jsonl" }

func (s *JSONLStore) path(id string) string { return filepath.Join(s.dir, fileName(id)) }

func (s *JSONLStore) warn(err error) {
	if s.opts.OnWarning != nil {
		s.opts.OnWarning(err)
	}
}

// acquire returns the session's state with a reference taken; release
// gives it back.
func (s *JSONLStore) acquire(id string) (*jsonlSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	e := s.sessions[id]
	if e == nil {
		e = &jsonlSession{id: id}
		s.sessions[id] = e
	}
	e.refs++
	return e, nil
}

func (s *JSONLStore) release(e *jsonlSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.refs--
	// With no reference left nobody else can touch e: its fields were last
	// written before a release, which took s.mu.
	if e.refs == 0 && !e.dirty && e.f == nil && e.holder == nil && s.sessions[e.id] == e {
		delete(s.sessions, e.id)
	}
}

// Append writes msg as one line at the end of the session file, creating
// the file (with its header) if needed. The message must have a Role.
func (s *JSONLStore) Append(ctx context.Context, sessionID string, msg Message) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	if msg.Role == "" {
		return errors.New("agentrt: JSONLStore.Append: message without a role")
	}
	body, err := encodeMessage(msg)
	if err != nil {
		return wrapf(err, "JSONLStore.Append")
	}
	// Every store refuses a message this long (see MemoryStore), unless
	// MaxLineSize was raised.
	if len(body) > sessioncheck.MaxMessageSize && s.opts.MaxLineSize <= defaultMaxLineSize {
		return fmt.Errorf("agentrt: %s: %w: a message of %d bytes (the most a store takes is %d)", s.path(sessionID), ErrLineTooLong, len(body), sessioncheck.MaxMessageSize)
	}
	return s.appendLine(ctx, sessionID, kindMessage, body)
}

// AppendRecord writes rec as one line of kind rec.Kind; see
// [RecordStore]. The kind must not be empty, "header" or "message";
// rec.Data must be valid JSON (nil is written as null).
func (s *JSONLStore) AppendRecord(ctx context.Context, sessionID string, rec Record) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	switch rec.Kind {
	case "", kindHeader, kindMessage:
		return fmt.Errorf("agentrt: JSONLStore.AppendRecord: invalid record kind %q", rec.Kind)
	}
	body := []byte("null")
	if len(rec.Data) > 0 {
		var err error
		if body, err = appendCompact(nil, rec.Data); err != nil {
			return wrapf(err, "JSONLStore.AppendRecord: %s data", rec.Kind)
		}
	}
	return s.appendLine(ctx, sessionID, rec.Kind, body)
}

func (s *JSONLStore) appendLine(ctx context.Context, id string, kind RecordKind, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := s.acquire(id)
	if err != nil {
		return err
	}
	defer s.release(e)
	e.mu.Lock()
	defer e.mu.Unlock()

	f := e.f
	if f == nil {
		if f, e.nextSeq, err = s.openAppend(id); err != nil {
			return err
		}
		if e.holder != nil {
			e.f = f // keep it open for the rest of the run
		} else {
			defer f.Close()
		}
	}
	line := appendRecordLine(make([]byte, 0, len(body)+96), kind, e.nextSeq, s.opts.Now(), body)
	if len(line)-1 > s.opts.MaxLineSize {
		return fmt.Errorf("agentrt: %s: %w: %d bytes", s.path(id), ErrLineTooLong, len(line)-1)
	}
	if _, err := f.Write(line); err != nil {
		// Part of the line may be in the file: reopen (and so repair the
		// tail) before the next write.
		if e.f != nil {
			e.f.Close()
			e.f = nil
		}
		return wrapf(err, "appending to %s", s.path(id))
	}
	e.nextSeq++
	switch s.opts.Durability {
	case SyncEveryAppend:
		if err := s.fsync(f); err != nil {
			return wrapf(err, "syncing %s", s.path(id))
		}
	case SyncEveryTurn:
		e.dirty = true
	}
	return nil
}

// Sync forces the session's appended lines to stable storage under
// SyncEveryTurn; under SyncEveryAppend they already are, and under
// SyncNever it does nothing. See [Syncer]. Syncing a session that does not
// exist is not an error.
func (s *JSONLStore) Sync(ctx context.Context, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := s.acquire(sessionID)
	if err != nil {
		return err
	}
	defer s.release(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	return s.flushLocked(e)
}

// flushLocked fsyncs e's file if it has unsynced writes; e.mu is held.
func (s *JSONLStore) flushLocked(e *jsonlSession) error {
	if !e.dirty {
		return nil
	}
	f := e.f
	if f == nil {
		var err error
		f, err = s.root.OpenFile(fileName(e.id), os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			e.dirty = false
			return nil
		}
		if err != nil {
			return wrapf(err, "syncing %s", s.path(e.id))
		}
		defer f.Close()
	}
	if err := s.fsync(f); err != nil {
		return wrapf(err, "syncing %s", s.path(e.id))
	}
	e.dirty = false
	return nil
}

// openAppend opens the session file for appending, creating it with its
// header if it does not exist or is empty, and removing a damaged last line
// if there is one. It returns the file and the seq of the next record.
func (s *JSONLStore) openAppend(id string) (*os.File, int64, error) {
	name := fileName(id)
	f, err := s.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, wrapf(err, "opening %s", s.path(id))
	}
	next, err := s.prepareAppend(f, id)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, next, nil
}

func (s *JSONLStore) prepareAppend(f *os.File, id string) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("agentrt: %s is not a regular file", s.path(id))
	}
	size := fi.Size()
	cut, next, err := s.inspectTail(f, id, size)
	if err != nil {
		return 0, err
	}
	if cut < size {
		// Count the lines before the cut, for the warning (rare: after a crash).
		line, err := countLines(f, cut)
		if err != nil {
			return 0, err
		}
		tail := &jsonl.LineError{File: s.path(id), Line: line + 1, Offset: cut, Tail: true, Repaired: true}
		tail.Err = s.tailCause(f, cut, size)
		if err := f.Truncate(cut); err != nil {
			return 0, wrapf(err, "removing the damaged tail of %s", s.path(id))
		}
		s.warn(tail)
		size = cut
	}
	if size > 0 {
		return next, nil
	}
	hdr, err := appendHeaderLine(nil, &jsonlHeader{Version: jsonlVersion, SessionID: id, Created: s.opts.Now()})
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(hdr); err != nil {
		return 0, wrapf(err, "writing the header of %s", s.path(id))
	}
	if s.opts.Durability != SyncNever {
		// Make the new file itself durable: its data and its directory entry.
		if err := s.fsync(f); err != nil {
			return 0, err
		}
		if err := s.syncDir(); err != nil {
			return 0, err
		}
	}
	return 1, nil
}

// tailCause says why the bytes [cut, size) are dropped.
func (s *JSONLStore) tailCause(f *os.File, cut, size int64) error {
	if size-cut > int64(s.opts.MaxLineSize) {
		return errNoNewline
	}
	b := make([]byte, size-cut)
	if _, err := f.ReadAt(b, cut); err != nil {
		return errNoNewline
	}
	if b[len(b)-1] != '\n' {
		return errNoNewline
	}
	var l decodedLine
	_, err := parseLine(b[:len(b)-1], cut == 0, &l)
	return err
}

// inspectTail applies the read rules to the end of a file of the given
// size, reading only its last lines. It returns the length the file must
// be cut to (size when nothing is wrong) and the seq of the next record.
// A bad line that reading would not drop is a *jsonl.LineError.
func (s *JSONLStore) inspectTail(f *os.File, id string, size int64) (cut, next int64, err error) {
	if size == 0 {
		return 0, 1, nil
	}
	nl, err := lastNewline(f, size)
	if err != nil {
		return 0, 0, err
	}
	cut = size
	if nl < size-1 {
		// The last line does not end in '\n': it goes, whatever it holds.
		cut = nl + 1
	}
	for {
		if cut == 0 {
			return 0, 1, nil
		}
		// The last complete line is [start, cut-1).
		prev, err := lastNewline(f, cut-1)
		if err != nil {
			return 0, 0, err
		}
		start := prev + 1
		var l decodedLine
		problem, perr := s.readLineAt(f, start, cut-1, &l)
		switch {
		case problem == lineOK:
			if l.Kind == kindHeader {
				return cut, 1, nil
			}
			return cut, l.Seq + 1, nil
		case problem == lineUnparsable && cut == size:
			cut = start // an unparsable last line goes too; the one before must be good
			continue
		}
		line, cerr := countLines(f, start)
		if cerr != nil {
			return 0, 0, cerr
		}
		return 0, 0, &jsonl.LineError{File: s.path(id), Line: line + 1, Offset: start, Err: perr}
	}
}

// readLineAt reads and judges the line [start, end) of f.
func (s *JSONLStore) readLineAt(f *os.File, start, end int64, l *decodedLine) (lineProblem, error) {
	if end-start > int64(s.opts.MaxLineSize) {
		return lineInvalid, fmt.Errorf("%w (%d bytes)", ErrLineTooLong, s.opts.MaxLineSize)
	}
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil {
		return lineInvalid, err
	}
	return parseLine(b, start == 0, l)
}

// lastNewline returns the offset of the last '\n' before end, or -1.
func lastNewline(f *os.File, end int64) (int64, error) {
	var buf [16 << 10]byte
	for end > 0 {
		n := min(end, int64(len(buf)))
		b := buf[:n]
		if _, err := f.ReadAt(b, end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return end - n + int64(i), nil
		}
		end -= n
	}
	return -1, nil
}

// countLines counts the newlines in the first n bytes of f.
func countLines(f *os.File, n int64) (int, error) {
	count := 0
	buf := make([]byte, 64<<10)
	r := io.NewSectionReader(f, 0, n)
	for {
		k, err := r.Read(buf)
		count += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func (s *JSONLStore) syncDir() error {
	d, err := s.root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return wrapf(err, "syncing %s", s.dir)
	}
	return nil
}

// openRead opens the session file for reading and returns it with the size
// to read: the size once any write in progress in this process is done, so
// that a reader never sees half a line written by this store.
func (s *JSONLStore) openRead(id string) (*os.File, int64, error) {
	e, err := s.acquire(id)
	if err != nil {
		return nil, 0, err
	}
	defer s.release(e)
	f, err := s.root.Open(fileName(id))
	if err != nil {
		return nil, 0, err
	}
	e.mu.Lock()
	fi, err := f.Stat()
	e.mu.Unlock()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("agentrt: %s is not a regular file", s.path(id))
	}
	return f, fi.Size(), nil
}

// scan reads the session file and calls fn for each good line; a damaged
// tail is returned (not reported). A missing file reads as no lines.
func (s *JSONLStore) scan(ctx context.Context, id string, fn func(num int, off int64, raw []byte, l *decodedLine) error) (*jsonl.LineError, error) {
	f, size, err := s.openRead(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapf(err, "reading session %q", id)
	}
	defer f.Close()
	return scanLines(ctx, io.NewSectionReader(f, 0, size), s.path(id), s.opts.MaxLineSize, fn)
}

// Load reads the session's messages in order. A session that does not
// exist loads as an empty slice. Records of other kinds are skipped, those
// of kinds this version does not know included. A damaged last line is
// skipped and reported to OnWarning; any other damage is a
// [*jsonl.LineError]. Load streams the file: it holds one line at a time
// besides the messages it returns, which belong to the caller.
func (s *JSONLStore) Load(ctx context.Context, sessionID string) ([]Message, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs := []Message{}
	tail, err := s.scan(ctx, sessionID, func(_ int, _ int64, _ []byte, l *decodedLine) error {
		if l.Kind == kindMessage {
			msgs = append(msgs, *l.Message)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tail != nil {
		s.warn(tail)
	}
	return msgs, nil
}

// Verify reads the whole session file and reports its state: nil if every
// line is good (or the session does not exist); an error wrapping
// [ErrBrokenSession] if its messages break the runtime's first invariant
// (a second result for one call, an orphaned result, a result out of
// place); else a [*jsonl.LineError] with Tail set if only its
// last line is damaged (what a crash leaves; Load succeeds), one without
// Tail if Load would fail. It does not call OnWarning.
func (s *JSONLStore) Verify(ctx context.Context, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	var msgs []Message
	tail, err := s.scan(ctx, sessionID, func(_ int, _ int64, _ []byte, l *decodedLine) error {
		if l.Kind == kindMessage {
			msgs = append(msgs, *l.Message)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := checkInvariant(msgs); err != nil {
		return fmt.Errorf("agentrt: %s: %w", s.path(sessionID), err)
	}
	if tail != nil {
		return tail
	}
	return nil
}

// Lines returns an iterator over every line of the session file, in
// order: the header, the messages, and every other record, kinds this
// version does not know included, each with its raw JSON (package jsonl
// names them). It is meant for audits and tools: package timeline reads
// sessions with it. A missing session yields nothing. A damaged last line
// is skipped and reported to OnWarning, as by Load; any other damage, or a
// failure to read, is yielded as the error, once and last, after the
// records before it.
func (s *JSONLStore) Lines(ctx context.Context, sessionID string) iter.Seq2[jsonl.Line, error] {
	return func(yield func(jsonl.Line, error) bool) {
		if err := ValidateSessionID(sessionID); err != nil {
			yield(jsonl.Line{}, err)
			return
		}
		errStop := errors.New("stop")
		tail, err := s.scan(ctx, sessionID, func(num int, off int64, raw []byte, l *decodedLine) error {
			if !yield(l.record(num, off, raw), nil) {
				return errStop
			}
			return nil
		})
		switch {
		case err == errStop:
		case err != nil:
			yield(jsonl.Line{}, err)
		case tail != nil:
			s.warn(tail)
		}
	}
}

// LoadRecords returns the session's records other than the header and
// messages (permission, usage, compaction, and kinds this version does not
// know), in order; see [RecordStore].
func (s *JSONLStore) LoadRecords(ctx context.Context, sessionID string) ([]Record, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	var recs []Record
	tail, err := s.scan(ctx, sessionID, func(_ int, _ int64, _ []byte, l *decodedLine) error {
		if l.Kind != kindHeader && l.Kind != kindMessage {
			recs = append(recs, Record{Kind: l.Kind, Data: l.Data})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tail != nil {
		s.warn(tail)
	}
	return recs, nil
}

// Lock keeps other runs off the session until unlock is called; see
// [Locker]. It returns an error wrapping [ErrSessionBusy] at once if the
// session is locked in this process or, through its lock file, by another
// process. While the session is locked the store keeps its file open;
// unlock syncs it (unless the durability is SyncNever), closes it and
// releases the locks. unlock may be called more than once.
//
// The lock is a file lock of one machine: the kernel holds it for the
// process and drops it only when the process dies, so a holder cannot
// lose it while it lives, and a frozen holder keeps the session until it
// resumes or dies (there is no lease and no fencing token, unlike
// pgstore's lock). It does not keep apart processes on two machines
// sharing a directory over a network file system.
func (s *JSONLStore) Lock(ctx context.Context, sessionID string) (unlock func(), err error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := s.acquire(sessionID)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.holder != nil {
		e.mu.Unlock()
		s.release(e)
		return nil, fmt.Errorf("%w: %q is locked in this process", ErrSessionBusy, sessionID)
	}
	lf, err := lockFile(s.root, sessionID+".lock")
	if err != nil {
		e.mu.Unlock()
		s.release(e)
		if err == errLockHeld {
			return nil, fmt.Errorf("%w: %q is locked by %s (%s)", ErrSessionBusy, sessionID, s.lockHolder(sessionID), filepath.Join(s.dir, sessionID+".lock"))
		}
		return nil, wrapf(err, "locking session %q", sessionID)
	}
	h := new(struct{})
	e.holder, e.lock = h, lf
	e.mu.Unlock()

	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			if e.holder == h { // not already released by Close
				if err := s.flushLocked(e); err != nil {
					s.warn(err)
				}
				if e.f != nil {
					e.f.Close()
					e.f = nil
				}
				if e.lock != nil {
					unlockFile(s.root, sessionID+".lock", e.lock)
				}
				e.holder, e.lock = nil, nil
			}
			e.mu.Unlock()
			s.release(e)
		})
	}, nil
}

// Delete removes the session's file. Deleting a session that does not
// exist is not an error; deleting one that is locked (in this process or
// another) returns an error wrapping [ErrSessionBusy].
func (s *JSONLStore) Delete(ctx context.Context, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.withExclusive(sessionID, func(e *jsonlSession) error {
		if err := s.root.Remove(fileName(sessionID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return wrapf(err, "deleting session %q", sessionID)
		}
		e.dirty = false
		s.list.forget(sessionID)
		return nil
	})
}

// withExclusive runs fn with the session unlocked by anyone else and kept
// so (in this process and across processes) until fn returns.
func (s *JSONLStore) withExclusive(id string, fn func(e *jsonlSession) error) error {
	e, err := s.acquire(id)
	if err != nil {
		return err
	}
	defer s.release(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.holder != nil {
		return fmt.Errorf("%w: %q is locked in this process", ErrSessionBusy, id)
	}
	lf, err := lockFile(s.root, id+".lock")
	if err == errLockHeld {
		return fmt.Errorf("%w: %q is locked by %s (%s)", ErrSessionBusy, id, s.lockHolder(id), filepath.Join(s.dir, id+".lock"))
	}
	if err != nil {
		return wrapf(err, "locking session %q", id)
	}
	if lf != nil {
		defer unlockFile(s.root, id+".lock", lf)
	}
	return fn(e)
}

// Create creates an empty session whose header carries metadata, a JSON
// object of the caller's choosing (nil for none), kept by Fork and shown
// by Records. It returns an error wrapping [ErrSessionExists] if the
// session exists. A session need not be created: the first Append creates
// it, without metadata.
func (s *JSONLStore) Create(ctx context.Context, sessionID string, metadata json.RawMessage) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(metadata) > 0 {
		if t := bytes.TrimLeft(metadata, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return errors.New("agentrt: JSONLStore.Create: metadata is not a JSON object")
		}
	}
	hdr, err := appendHeaderLine(nil, &jsonlHeader{Version: jsonlVersion, SessionID: sessionID, Created: s.opts.Now(), Metadata: metadata})
	if err != nil {
		return wrapf(err, "JSONLStore.Create")
	}
	return s.withExclusive(sessionID, func(*jsonlSession) error {
		return s.createFile(sessionID, func(w io.Writer) error {
			_, err := w.Write(hdr)
			return err
		})
	})
}

// createFile creates the session file atomically: it is written in full
// under a temporary name, synced, then linked under its name, which fails
// if that exists. A crash leaves either no session or the whole file (and
// perhaps the temporary file, ".<id>.tmp", which ids cannot collide with).
func (s *JSONLStore) createFile(id string, write func(io.Writer) error) error {
	name, tmp := fileName(id), "."+id+".tmp"
	if _, err := s.root.Lstat(name); err == nil {
		return fmt.Errorf("%w: %q", ErrSessionExists, id)
	}
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return wrapf(err, "creating session %q", id)
	}
	defer s.root.Remove(tmp)
	err = write(f)
	if err == nil && s.opts.Durability != SyncNever {
		err = s.fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrapf(err, "creating session %q", id)
	}
	if err := s.root.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %q", ErrSessionExists, id)
		}
		// No hard links here (some file systems): rename, which we may
		// do as we hold the session's lock and it did not exist.
		if err := s.root.Rename(tmp, name); err != nil {
			return wrapf(err, "creating session %q", id)
		}
	}
	if s.opts.Durability != SyncNever {
		return s.syncDir()
	}
	return nil
}
