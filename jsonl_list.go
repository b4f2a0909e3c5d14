package agentrt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentrt/agentrt/jsonl"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// listCache remembers what List learned about each session file, so that
// the next List reads only the lines appended since. Session files only
// grow (but for the removal of a damaged tail), so a file that is the same
// file, no shorter, and still holds the same bytes just before the point
// scanned so far, only needs its new lines read.
type listCache struct {
	mu    sync.Mutex
	files map[string]*listEntry
	br    *bufio.Reader // reused from file to file
}

type listEntry struct {
	fi       os.FileInfo // identity of the file scanned
	scanned  int64       // bytes read so far: the end of the last complete line
	tail     []byte      // the last bytes before scanned, to notice a rewrite
	messages int
	title    string
	titled   bool // a user message was seen; title is final
	created  time.Time
	updated  time.Time // ts of the last record, zero if unknown
	corrupt  bool      // a line could not be read (reported once)
	lines    int       // complete lines scanned
}

func (c *listCache) forget(id string) {
	c.mu.Lock()
	delete(c.files, id)
	c.mu.Unlock()
}

// List returns every session in the directory, most recently updated
// first (ties by id). Created comes from the header; Updated is the time
// of the last record (the header's time if there is none, the file's
// modification time if it can read neither); Messages counts the complete
// message lines; Title is the first user message, shortened as by [Title].
//
// List does not decode whole files: it recognizes message lines by their
// first bytes (`{"kind":"message",`, as this store writes them; other
// lines are decoded to find their kind), decodes only the header and the
// lines up to the first user message, and remembers where it stopped, so
// that the next List reads only what was appended since. A session file
// it cannot make sense of is listed with what could be counted and
// reported to OnWarning.
func (s *JSONLStore) List(ctx context.Context) ([]SessionInfo, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	d, err := s.root.Open(".")
	if err != nil {
		return nil, wrapf(err, "listing %s", s.dir)
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, wrapf(err, "listing %s", s.dir)
	}
	infos := make([]SessionInfo, 0, len(ents))
	for _, de := range ents {
		id, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !de.Type().IsRegular() || ValidateSessionID(id) != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info, err := s.info(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos, nil
}

// info brings the cached summary of one session up to date.
func (s *JSONLStore) info(id string) (SessionInfo, error) {
	f, size, err := s.openRead(id)
	if err != nil {
		return SessionInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return SessionInfo{}, err
	}
	s.list.mu.Lock()
	defer s.list.mu.Unlock()
	if s.list.files == nil {
		s.list.files = map[string]*listEntry{}
	}
	e := s.list.files[id]
	if e == nil || !e.still(f, fi, size) {
		e = &listEntry{}
		s.list.files[id] = e
	}
	e.fi = fi
	if err := s.scanInfo(f, id, size, e); err != nil {
		delete(s.list.files, id)
		return SessionInfo{}, err
	}
	info := SessionInfo{ID: id, Created: e.created, Updated: e.updated, Messages: e.messages, Title: e.title}
	if info.Updated.IsZero() {
		info.Updated = info.Created // no record yet
	}
	if info.Updated.IsZero() {
		info.Updated = fi.ModTime() // no time it can read
	}
	if info.Created.IsZero() {
		info.Created = info.Updated
	}
	return info, nil
}

// still reports whether the cached scan is a prefix of the file f.
func (e *listEntry) still(f *os.File, fi os.FileInfo, size int64) bool {
	if e.scanned == 0 || e.fi == nil || !os.SameFile(e.fi, fi) || size < e.scanned {
		return false
	}
	b := make([]byte, len(e.tail))
	_, err := f.ReadAt(b, e.scanned-int64(len(b)))
	return err == nil && bytes.Equal(b, e.tail)
}

var messagePrefix = []byte(`{"kind":"message",`)

// scanInfo reads the complete lines of f from e.scanned to size; the
// caller holds s.list.mu. A line that does not fit in the read buffer is
// judged by its first bytes, and read whole only if it must be decoded.
func (s *JSONLStore) scanInfo(f *os.File, id string, size int64, e *listEntry) error {
	if size == e.scanned {
		return nil // nothing new
	}
	r := io.NewSectionReader(f, e.scanned, size-e.scanned)
	if s.list.br == nil {
		s.list.br = bufio.NewReaderSize(r, lineReaderBufSize)
	} else {
		s.list.br.Reset(r)
	}
	br := s.list.br
	defer br.Reset(nil) // do not keep the file
	off := e.scanned
	var head [160]byte // the first bytes of the current line
	var lastHead []byte
	var l decodedLine
	for {
		start := off
		full, hn, n, err := readLineHead(br, head[:])
		if err != nil {
			break // io.EOF: nothing more, or an incomplete last line left for later
		}
		off += n
		e.lines++
		lastHead = head[:hn]
		read := func() []byte { // the whole line, without its newline
			if full != nil {
				return full[:len(full)-1]
			}
			if n-1 > int64(s.opts.MaxLineSize) {
				return nil
			}
			b := make([]byte, n-1)
			if _, err := f.ReadAt(b, start); err != nil {
				return nil
			}
			return b
		}
		s.noteLine(id, start, head[:hn], read, e, &l)
	}
	return e.endScan(f, off, lastHead)
}

// readLineHead reads one line from br and copies its first bytes into
// head (hn of them). It returns the whole line, newline included, if it
// fits in br's buffer (else nil), and its length n.
func readLineHead(br *bufio.Reader, head []byte) (full []byte, hn int, n int64, err error) {
	chunk, err := br.ReadSlice('\n')
	n = int64(len(chunk))
	hn = copy(head, chunk)
	full = chunk
	for err == bufio.ErrBufferFull {
		full = nil
		chunk, err = br.ReadSlice('\n')
		n += int64(len(chunk))
	}
	return full, hn, n, err
}

// endScan records a scan of f that ended at off: the time of the last
// line (whose first bytes are lastHead, nil for none) and the last bytes
// read, to tell later that the file was only appended to.
func (e *listEntry) endScan(f *os.File, off int64, lastHead []byte) error {
	if lastHead != nil {
		if t, ok := lineTime(lastHead); ok {
			e.updated = t
		}
	}
	if off > e.scanned {
		e.scanned = off
		k := min(off, 64)
		e.tail = make([]byte, k)
		if _, err := f.ReadAt(e.tail, off-k); err != nil {
			return err
		}
	}
	return nil
}

// noteLine counts the complete line that starts at offset start with the
// bytes head; read returns the whole line (nil if it cannot).
func (s *JSONLStore) noteLine(id string, start int64, head []byte, read func() []byte, e *listEntry, l *decodedLine) {
	if start == 0 {
		if p, _ := parseLine(read(), true, l); p == lineOK {
			e.created, _ = time.Parse(time.RFC3339Nano, l.Created)
		}
		return
	}
	var isMsg bool
	switch {
	case bytes.HasPrefix(head, messagePrefix):
		isMsg = true
	case bytes.HasPrefix(head, []byte(`{"kind":"`)):
		// Another kind, as this store writes it.
	default:
		// Not written by this store: decode its kind.
		var k struct {
			Kind RecordKind `json:"kind"`
		}
		if err := json.Unmarshal(read(), &k); err != nil && !e.corrupt {
			e.corrupt = true
			s.warn(&jsonl.LineError{File: s.path(id), Line: e.lines, Offset: start, Err: fmt.Errorf("List cannot read this line: %w", err)})
		}
		isMsg = k.Kind == kindMessage
	}
	if !isMsg {
		return
	}
	e.messages++
	if !e.titled {
		if p, _ := parseLine(read(), false, l); p == lineOK && l.Message.Role == RoleUser {
			e.title, e.titled = title([]Message{*l.Message}), true
		}
	}
}

// lineTime finds the "ts" of a record line in its first bytes, where this
// store writes it.
func lineTime(b []byte) (time.Time, bool) {
	_, after, ok := bytes.Cut(b, []byte(`"ts":"`))
	if !ok {
		return time.Time{}, false
	}
	ts, _, ok := bytes.Cut(after, []byte{'"'})
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	return t, err == nil
}
