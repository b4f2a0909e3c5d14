package main

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/internal/termtext"
)

// visible returns s with every character that a terminal would interpret
// or not show replaced by a visible escape, newlines and tabs kept: the
// rule of every renderer of agentrt (termtext.Safe). ESC shows as \x1b, a
// carriage return as \r, a bidi override as \u202e, a zero-width space
// as \u200b, a tag character as \U000e0041, a byte of invalid UTF-8 as
// \xff. Text from the model or from a file goes through it before it
// reaches the terminal, so that what the person approves is what they
// see.
func visible(s string) string { return termtext.Safe(s, '\n', '\t') }

// oneLine is visible for a one-line field (a path, a tool name, a title):
// a newline shows as \n too, so the field cannot pass for more than one
// line.
func oneLine(s string) string { return termtext.Safe(s) }

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
