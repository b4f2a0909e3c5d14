// Package textcut cuts text to a byte budget without splitting a UTF-8
// character, for the runtime's and the JSON planner's messages.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 character.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Title returns text on one line (runs of white space become one space),
// cut to 60 characters with "…" as the 60th when it is longer: the title
// of a session whose first user message is text (agentrt.SessionInfo).
// Each NUL and each byte that is not valid UTF-8 becomes U+FFFD, so that
// every store can keep the title as text.
func Title(text string) string {
	t := strings.Join(strings.Fields(ValidText(text)), " ")
	if utf8.RuneCountInString(t) > 60 {
		r := []rune(t)
		t = string(r[:59]) + "…"
	}
	return t
}

// Ellipsis returns s, or its Prefix of n bytes followed by "…" when s is
// longer than n bytes.
func Ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "…"
}

// ValidText returns s with each NUL and each byte that is not part of
// valid UTF-8 replaced by U+FFFD (as encoding/json replaces such bytes);
// s itself when there is none.
func ValidText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte is one utf8.RuneError
		if r == 0 {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}
