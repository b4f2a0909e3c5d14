package agentrt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// Fork creates the session dst as a copy of the first upTo messages of the
// session src: the way to rewind a conversation and try another path while
// keeping the original. upTo is exclusive, like a slice bound: Fork(ctx,
// "a", "b", 3) makes b hold messages 0, 1 and 2 of a, and upTo equal to the
// number of messages copies the whole session.
//
// Every line of src before its message number upTo is copied byte for
// byte, records of other kinds (permission, usage, kinds this version does
// not know) included, with their seq; so the records that follow the last
// copied message, up to the next message, come along. The header is new:
// dst's id and creation time, src's metadata, and "forked_from" naming src
// and upTo. A fork can end with an assistant message whose tool_uses have
// no results; the runtime repairs that when the session is next run, as
// after a crash.
//
// dst is written in full under a temporary name and then linked into
// place, so a crash leaves no half fork. Fork returns an error wrapping
// [ErrSessionExists] if dst exists, [ErrSessionBusy] if dst is locked,
// [fs.ErrNotExist] if src does not exist, and an error if upTo is negative
// or greater than the number of messages of src. src may be appended to
// meanwhile; Fork copies what it finds when it starts.
func (s *JSONLStore) Fork(ctx context.Context, src, dst string, upTo int) error {
	if err := ValidateSessionID(src); err != nil {
		return err
	}
	if err := ValidateSessionID(dst); err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("%w: cannot fork %q onto itself", ErrSessionExists, src)
	}
	if upTo < 0 {
		return fmt.Errorf("agentrt: Fork %q: negative message index %d", src, upTo)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, size, err := s.openRead(src)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("agentrt: Fork: session %q does not exist: %w", src, fs.ErrNotExist)
	}
	if err != nil {
		return wrapf(err, "Fork: reading session %q", src)
	}
	defer f.Close()

	return s.withExclusive(dst, func(*jsonlSession) error {
		return s.createFile(dst, func(w io.Writer) error {
			return s.copyPrefix(ctx, w, io.NewSectionReader(f, 0, size), src, dst, upTo)
		})
	})
}

var errForkDone = errors.New("fork done")

// copyPrefix writes dst's header and the lines of src before its message
// number upTo.
func (s *JSONLStore) copyPrefix(ctx context.Context, out io.Writer, r io.Reader, src, dst string, upTo int) error {
	w := bufio.NewWriterSize(out, 64<<10)
	msgs := 0
	wroteHeader := false
	var buf []byte
	header := func(l *decodedLine) error {
		h := &jsonlHeader{
			Version: jsonlVersion, SessionID: dst, Created: s.opts.Now(),
			ForkedFrom: &jsonlForkedFrom{SessionID: src, Messages: upTo},
		}
		if l != nil {
			h.Metadata = l.Metadata
		}
		var err error
		if buf, err = appendHeaderLine(buf[:0], h); err != nil {
			return err
		}
		wroteHeader = true
		_, err = w.Write(buf)
		return err
	}
	tail, err := scanLines(ctx, r, s.path(src), s.opts.MaxLineSize, func(num int, _ int64, raw []byte, l *decodedLine) error {
		if num == 1 {
			return header(l)
		}
		if l.Kind == kindMessage {
			if msgs == upTo {
				return errForkDone
			}
			msgs++
		}
		buf = append(append(buf[:0], raw...), '\n')
		_, err := w.Write(buf)
		return err
	})
	switch {
	case err == errForkDone:
	case err != nil:
		return err
	case msgs < upTo:
		return fmt.Errorf("agentrt: Fork: session %q has %d messages, fewer than %d", src, msgs, upTo)
	default:
		if tail != nil {
			s.warn(tail)
		}
	}
	if !wroteHeader {
		// src was empty, or held only a damaged header: a fresh header.
		if err := header(nil); err != nil {
			return err
		}
	}
	return w.Flush()
}
