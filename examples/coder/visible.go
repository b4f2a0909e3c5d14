package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// visible returns s with every character that a terminal would interpret
// instead of showing replaced by a visible escape: C0 controls other than
// newline and tab (ESC shows as \x1b, a carriage return as \r), DEL, C1
// controls, and the invisible format characters that can reorder or hide
// text (bidi overrides such as U+202E show as \u202e, zero-width characters
// too). Bytes that are not valid UTF-8 show as \xNN. Text from the model or
// from a file goes through it before it reaches the terminal, so that what
// the person approves is what they see.
func visible(s string) string {
	if !needsEscape(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&sb, `\x%02x`, s[i])
			i++
			continue
		}
		sb.WriteString(escapeRune(r))
		i += size
	}
	return sb.String()
}

// needsEscape reports whether visible would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// escapeRune returns r, or its visible escape if a terminal would not
// show it as itself.
func escapeRune(r rune) string {
	switch {
	case r == '\n' || r == '\t':
		return string(r)
	case r == '\r':
		return `\r`
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r)
	case hidden(r):
		return fmt.Sprintf(`\u%04x`, r)
	}
	return string(r)
}

// hidden reports whether r is a C1 control or an invisible format
// character that can hide or reorder the text around it.
func hidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls, CSI (U+009B) among them
		return true
	case r == 0x061c, r == 0x180e: // Arabic letter mark, Mongolian vowel separator
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space, joiners, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line and paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0xfeff: // zero-width no-break space (BOM)
		return true
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotation
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters
		return true
	}
	return false
}

// streamVisible makes streamed text visible piece by piece: a character
// split between two pieces is held back until its end arrives, so that it
// is not shown as two invalid bytes. It is not safe for concurrent use.
type streamVisible struct {
	held []byte
}

// next returns the visible form of the text received so far that ends
// with a complete character.
func (v *streamVisible) next(piece string) string {
	b := append(v.held, piece...)
	// Keep back an incomplete UTF-8 sequence at the end (at most 3 bytes).
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	v.held = append(v.held[:0:0], b[cut:]...)
	return visible(string(b[:cut]))
}

// flush returns what is held back, made visible.
func (v *streamVisible) flush() string {
	s := visible(string(v.held))
	v.held = nil
	return s
}
