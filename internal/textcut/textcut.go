// Package textcut cuts text to a byte budget without splitting a UTF-8
// character, for the runtime's and the JSON planner's messages.
package textcut

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

// Ellipsis returns s, or its Prefix of n bytes followed by "…" when s is
// longer than n bytes.
func Ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "…"
}
