// Package jsonl names the parts of agentrt's JSONL session format (one
// append-only file per session, documented in docs/jsonl-format.md) that a
// reader of the files meets: the lines, as [agentrt.JSONLStore.Lines]
// yields them, and the error of a damaged line, as the store reports it.
//
// The store itself, and the records and messages the lines carry, are in
// package agentrt; this package imports nothing of it, so that the store
// can use it.
package jsonl

import (
	"encoding/json"
	"fmt"
	"time"
)

// The kinds of the lines that are not records: every file starts with one
// header line, and every message is a message line. Every other line is a
// record, whose kind is an agentrt.RecordKind.
const (
	KindHeader  = "header"
	KindMessage = "message"
)

// Line is one line of a session file: the header, a message, or any other
// record, including kinds the reader does not know.
type Line struct {
	// Line is the 1-based line number; Offset the byte offset of the line.
	Line   int
	Offset int64
	// Kind is KindHeader, KindMessage, or the kind of another record
	// ("permission", "usage", ..., or one the reader does not know).
	Kind string
	// Seq numbers the records after the header from 1; 0 for the header.
	Seq int64
	// Time is the record's "ts" (the header's "created"); zero if absent
	// or not a valid RFC 3339 time.
	Time time.Time
	// Message is the message of a message line, as JSON (an
	// agentrt.Message decodes it).
	Message json.RawMessage
	// Data is the "data" field of any other record.
	Data json.RawMessage
	// Raw is the whole line as stored, without its newline. The header's
	// fields (version, session_id, created, metadata, forked_from) are read
	// from it.
	Raw json.RawMessage
}

// LineError is a damaged line of a session file.
//
// With Tail set, it is the damage a crash can leave at the end of the file:
// a last line that does not end in '\n', or that is not valid JSON. Such a
// line is not part of the session: the store's Load drops it and succeeds
// (it would be wrong to fail a run over what a crash normally leaves), the
// error goes to agentrt.JSONLOptions.OnWarning, and the next append removes
// the line before writing.
//
// Without Tail, it is any other damage: a line that is not valid JSON with
// more lines after it, a record that breaks the format (no kind, no seq, a
// message line without a message, a missing header), a line longer than
// the limit, or a header of an unknown version. A store never skips such a
// line: Load fails with it.
type LineError struct {
	// File is the path of the session file.
	File string
	// Line is the 1-based number of the line.
	Line int
	// Offset is the byte offset at which the line starts (for a tail, the
	// length of the file once the line is removed).
	Offset int64
	// Tail marks the damaged last line a crash leaves.
	Tail bool
	// Repaired, for a tail, is true when the store removed the line from
	// the file (just before appending to it), false when it only skipped
	// it while reading.
	Repaired bool
	// Err says what is wrong with the line.
	Err error
}

func (e *LineError) Error() string {
	if !e.Tail {
		return fmt.Sprintf("agentrt: %s: line %d (byte %d): %v", e.File, e.Line, e.Offset, e.Err)
	}
	what := "ignored"
	if e.Repaired {
		what = "removed"
	}
	return fmt.Sprintf("agentrt: %s: line %d (byte %d): incomplete last line %s: %v", e.File, e.Line, e.Offset, what, e.Err)
}

// Unwrap returns Err.
func (e *LineError) Unwrap() error { return e.Err }
