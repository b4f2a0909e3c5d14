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
	"strconv"
	"time"
)

// This file holds the JSONL session format, version 1, as documented in
// docs/jsonl-format.md: how a line is written, how a line is read and
// judged, and the errors a reader reports.

// jsonlVersion is the version of the JSONL session format that
// [JSONLStore] writes and reads. A file whose header names another version
// is refused with [ErrJSONLVersion]; additions that old readers can ignore
// (new record kinds, new fields) do not change the version.
const jsonlVersion = 1

// errNoNewline is the Err of a tail jsonl.LineError for a last line that
// does not end in '\n': a write that was cut short.
var errNoNewline = errors.New("the line does not end in a newline: a write was cut short")

// jsonlHeader is the first line of a session file.
type jsonlHeader struct {
	// Version is the format version, jsonlVersion.
	Version int `json:"version"`
	// SessionID is the id the session was created under.
	SessionID string `json:"session_id"`
	// Created is when the session file was created.
	Created time.Time `json:"created"`
	// Metadata is the JSON object given to [JSONLStore.Create], copied by
	// Fork; nil when there is none.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// ForkedFrom names the session this one was forked from, if any.
	ForkedFrom *jsonlForkedFrom `json:"forked_from,omitempty"`
}

// jsonlForkedFrom is the origin of a forked session: the source session
// and how many of its messages were copied.
type jsonlForkedFrom struct {
	SessionID string `json:"session_id"`
	Messages  int    `json:"messages"`
}

// The kinds of the lines that are not records.
const (
	kindHeader  RecordKind = jsonl.KindHeader
	kindMessage RecordKind = jsonl.KindMessage
)

// decodedLine is the union of every line's fields, for decoding.
type decodedLine struct {
	Kind    RecordKind      `json:"kind"`
	Seq     int64           `json:"seq"`
	TS      string          `json:"ts"`
	Message *Message        `json:"message"`
	Data    json.RawMessage `json:"data"`

	// Header fields.
	Version    int              `json:"version"`
	SessionID  string           `json:"session_id"`
	Created    string           `json:"created"`
	Metadata   json.RawMessage  `json:"metadata"`
	ForkedFrom *jsonlForkedFrom `json:"forked_from"`

	msg Message // decoding buffer of Message, to save an allocation per line
}

// lineProblem says how a line fails to be a record.
type lineProblem int

const (
	lineOK lineProblem = iota
	// lineUnparsable: not valid JSON. Dropped when it is the last line.
	lineUnparsable
	// lineInvalid: valid JSON that breaks the format. Always an error.
	lineInvalid
)

// parseLine decodes one complete line (without its newline) into *l and
// judges it. When it returns lineOK for a message line, l.Message is set
// (and reused by the next call: copy it). first says whether it is the file's first line, which must
// be the header.
func parseLine(b []byte, first bool, l *decodedLine) (lineProblem, error) {
	*l = decodedLine{}
	l.Message = &l.msg
	if err := json.Unmarshal(b, l); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return lineUnparsable, fmt.Errorf("not valid JSON: %w", err)
		}
		return lineInvalid, fmt.Errorf("not a record: %w", err)
	}
	switch {
	case first && l.Kind != kindHeader:
		return lineInvalid, fmt.Errorf("the first line is not a header (kind %q)", l.Kind)
	case first && l.Version != jsonlVersion:
		return lineInvalid, fmt.Errorf("%w %d (this reader knows version %d)", ErrJSONLVersion, l.Version, jsonlVersion)
	case first:
		return lineOK, nil
	case l.Kind == "":
		return lineInvalid, errors.New("a record without a kind")
	case l.Kind == kindHeader:
		return lineInvalid, errors.New("a second header")
	case l.Seq < 1:
		return lineInvalid, fmt.Errorf("a %q record without a positive seq", l.Kind)
	case l.Kind == kindMessage && (l.Message == nil || l.Message.Role == ""):
		return lineInvalid, errors.New(`a message record without a message or without its "role"`)
	}
	return lineOK, nil
}

// record converts a decoded line to a jsonl.Line; raw is copied.
func (l *decodedLine) record(line int, off int64, raw []byte) jsonl.Line {
	r := jsonl.Line{
		Line: line, Offset: off, Kind: string(l.Kind), Seq: l.Seq,
		Raw: bytes.Clone(raw),
	}
	switch l.Kind {
	case kindHeader:
		r.Time, _ = time.Parse(time.RFC3339Nano, l.Created)
	case kindMessage:
		var m struct {
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(r.Raw, &m) == nil {
			r.Message = m.Message
		}
	default:
		r.Data = l.Data
	}
	if l.TS != "" {
		r.Time, _ = time.Parse(time.RFC3339Nano, l.TS)
	}
	return r
}

// appendHeaderLine appends a header line, newline included.
func appendHeaderLine(buf []byte, h *jsonlHeader) ([]byte, error) {
	buf = append(buf, `{"kind":"header","version":`...)
	buf = strconv.AppendInt(buf, int64(h.Version), 10)
	buf = append(buf, `,"session_id":`...)
	buf = strconv.AppendQuote(buf, h.SessionID) // ids are valid UTF-8 without control characters
	buf = append(buf, `,"created":"`...)
	buf = h.Created.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, '"')
	if len(h.Metadata) > 0 {
		buf = append(buf, `,"metadata":`...)
		var err error
		if buf, err = appendCompact(buf, h.Metadata); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	if h.ForkedFrom != nil {
		b, err := json.Marshal(h.ForkedFrom)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `,"forked_from":`...)
		buf = append(buf, b...)
	}
	return append(buf, "}\n"...), nil
}

// appendRecordLine appends one record line, newline included: body is the
// compact JSON of the message (kind "message") or of the data.
func appendRecordLine(buf []byte, kind RecordKind, seq int64, ts time.Time, body []byte) []byte {
	buf = append(buf, `{"kind":`...)
	buf = strconv.AppendQuote(buf, string(kind))
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, `,"ts":"`...)
	buf = ts.UTC().AppendFormat(buf, time.RFC3339Nano)
	if kind == kindMessage {
		buf = append(buf, `","message":`...)
	} else {
		buf = append(buf, `","data":`...)
	}
	buf = append(buf, body...)
	return append(buf, "}\n"...)
}

// encodeMessage returns the compact JSON of msg, on one line, without
// escaping <, > and & (the file is read by people and jq, not browsers).
func encodeMessage(msg Message) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendCompact appends the compact form of the JSON value raw.
func appendCompact(buf, raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return append(buf, b.Bytes()...), nil
}

// lineReader reads the lines of a session file with a bounded buffer: a
// fixed bufio buffer, plus one line buffer that grows to the longest line
// that does not fit in it, and never beyond max.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	max  int
	// num and off are the number and starting offset of the line last
	// returned by next.
	num  int
	off  int64
	next int64 // offset of the line after it
}

const lineReaderBufSize = 64 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, lineReaderBufSize), max: max}
}

// readLine returns the next line without its newline, and whether it ended
// in one. The line is valid until the next call. It returns io.EOF when no
// byte is left. A line longer than max is read through and returned as
// (nil, terminated, ErrLineTooLong).
func (r *lineReader) readLine() (line []byte, terminated bool, err error) {
	r.num++
	r.off = r.next
	r.long = r.long[:0]
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.next += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if !tooLong {
				r.long = append(r.long, chunk...)
				tooLong = len(r.long) > r.max
			}
			continue
		}
		if !tooLong && len(r.long) > 0 {
			r.long = append(r.long, chunk...)
			chunk = r.long
		}
		switch {
		case err == nil:
			line = chunk[:len(chunk)-1]
			if tooLong || len(line) > r.max {
				return nil, true, ErrLineTooLong
			}
			return line, true, nil
		case err == io.EOF && (len(chunk) > 0 || tooLong):
			if tooLong || len(chunk) > r.max {
				return nil, false, ErrLineTooLong
			}
			return chunk, false, nil
		case err == io.EOF:
			r.num--
			return nil, false, io.EOF
		default:
			return nil, false, err
		}
	}
}

// scanLines reads a session file from r (named file in errors) and calls fn
// for each complete, valid line in order. It applies the crash rules: a last
// line without a newline, or a last line that is not valid JSON, is not
// passed to fn and is returned as the tail; any other bad line is a
// *jsonl.LineError. The *decodedLine passed to fn is reused: fn must copy
// what it keeps (raw included).
func scanLines(ctx context.Context, r io.Reader, file string, max int, fn func(num int, off int64, raw []byte, l *decodedLine) error) (*jsonl.LineError, error) {
	lr := newLineReader(r, max)
	var pending *jsonl.LineError // an unparsable line, which is fine only if it is the last
	var l decodedLine
	for {
		raw, terminated, err := lr.readLine()
		if err == io.EOF {
			return pending, nil
		}
		if pending != nil {
			return nil, &jsonl.LineError{File: file, Line: pending.Line, Offset: pending.Offset, Err: pending.Err}
		}
		if !terminated && (err == nil || err == ErrLineTooLong) {
			return &jsonl.LineError{File: file, Line: lr.num, Offset: lr.off, Tail: true, Err: errNoNewline}, nil
		}
		if err != nil {
			if err == ErrLineTooLong {
				return nil, &jsonl.LineError{File: file, Line: lr.num, Offset: lr.off, Err: fmt.Errorf("%w (%d bytes)", ErrLineTooLong, max)}
			}
			return nil, fmt.Errorf("agentrt: reading %s: %w", file, err)
		}
		if lr.num%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		switch problem, perr := parseLine(raw, lr.num == 1, &l); problem {
		case lineUnparsable:
			pending = &jsonl.LineError{File: file, Line: lr.num, Offset: lr.off, Tail: true, Err: perr}
		case lineInvalid:
			return nil, &jsonl.LineError{File: file, Line: lr.num, Offset: lr.off, Err: perr}
		default:
			if err := fn(lr.num, lr.off, raw, &l); err != nil {
				return nil, err
			}
		}
	}
}
