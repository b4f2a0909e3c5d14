// Package termtext prepares text that a model or a tool produced for a
// person to read: [Safe] shows every character that a terminal would
// interpret or that would not show (escape sequences, other control
// characters, bidi controls, zero-width and other format characters, tag
// characters, invalid UTF-8) as a visible escape in Go's notation, so that
// nothing is hidden and nothing is interpreted; [Width] and [Cut] measure and cut
// text in terminal columns, where an East Asian wide character takes two
// columns and a combining mark none.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// TabWidth is the distance between tab stops, in columns, that [Safe]
// expands a tab to.
const TabWidth = 8

// Ellipsis is what [Cut] puts in the last column of a string it cuts.
const Ellipsis = "…"

// Safe returns s made safe to print on a terminal. These are replaced by
// a visible escape in Go's notation:
//
//   - the C0 control characters (U+0000 to U+001F) except those in keep
//     and the tab: \a \b \f \n \r \v, and \x1b for ESC and the like;
//   - DEL: \x7f;
//   - the C1 control characters (U+0080 to U+009F), which some terminals
//     take as the start of an escape sequence (U+009B is CSI): \u009b;
//   - the format characters (Unicode category Cf), which do not show but
//     change what is shown or hide text: the bidi controls (U+061C,
//     U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), zero-width
//     characters (U+200B to U+200D, U+2060, U+FEFF), the soft hyphen
//     U+00AD, U+0600 to U+0605 and the like: \u202e, \u200b;
//   - the line and paragraph separators U+2028 and U+2029: \u2028;
//   - the tag characters U+E0000 to U+E007F, which can spell a hidden
//     text: \U000e0041;
//   - each byte that is not part of valid UTF-8: \xff.
//
// A zero width joiner is escaped too, so an emoji sequence joined by it
// shows its parts: 👨\u200d👩.
//
// A tab not in keep is expanded to spaces, up to the next multiple of
// [TabWidth] columns from the start of its line. keep lists the C0 control
// characters left as they are: '\n' for text printed on several lines,
// '\t' to leave tabs to the terminal; other runes in keep are ignored (DEL,
// C1 and format characters are always escaped), and keeping any C0 control
// other than '\n' and '\t' defeats the purpose.
//
// A backslash in s is left as it is, so the escapes are for a person to
// read, not for a program to decode. The result is valid UTF-8; s is
// returned as is when it needs no change.
func Safe(s string, keep ...rune) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x20 && kept(rune(c), keep) {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c >= utf8.RuneSelf && !(r == utf8.RuneError && size == 1) && !Escaped(r) {
			i += size
			continue
		}
		break
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	col := Width(s[strings.LastIndexByte(s[:i], '\n')+1 : i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(hexEscape(s[i]))
			col += 4
		case r < 0x20 && kept(r, keep):
			b.WriteByte(byte(r))
			if r == '\n' {
				col = 0
			}
		case r == '\t':
			n := TabWidth - col%TabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case Escaped(r):
			e := escape(r)
			b.WriteString(e)
			col += len(e)
		default:
			b.WriteString(s[i : i+size])
			col += RuneWidth(r)
		}
		i += size
	}
	return b.String()
}

func kept(r rune, keep []rune) bool {
	for _, k := range keep {
		if k == r && r < 0x20 {
			return true
		}
	}
	return false
}

// Escaped reports whether [Safe] replaces r, a valid rune, by an escape
// (every C0 control: Safe keeps those in its keep and expands a tab).
func Escaped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags, those not yet assigned too
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

const hexDigits = "0123456789abcdef"

func hexEscape(c byte) string {
	return `\x` + string(hexDigits[c>>4]) + string(hexDigits[c&0xf])
}

// escape returns r, which Escaped reports true for, in Go's notation.
func escape(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	}
	if r < utf8.RuneSelf {
		return hexEscape(byte(r))
	}
	n, u := 4, byte('u')
	if r > 0xffff {
		n, u = 8, 'U'
	}
	b := make([]byte, 2+n)
	b[0], b[1] = '\\', u
	for i := len(b) - 1; i >= 2; i-- {
		b[i] = hexDigits[r&0xf]
		r >>= 4
	}
	return string(b)
}

// RuneWidth returns the number of terminal columns r takes: 2 for an East
// Asian wide or fullwidth character (Chinese, Japanese and Korean text,
// most emoji), 0 for a nonspacing or enclosing mark (unicode.Mn and
// unicode.Me: combining accents, variation selectors), a format character
// (unicode.Cf, such as U+200B ZERO WIDTH SPACE, except U+00AD SOFT HYPHEN,
// which terminals show), a Hangul vowel or final consonant that joins the
// syllable before it, and a control character (which [Safe] escapes
// first), and 1 for everything else, the invalid rune utf8.RuneError too.
// An East Asian ambiguous character counts 1, as in terminals outside East
// Asian locales.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20:
		return 0
	case r < 0x7f:
		return 1
	case r < 0xa0:
		return 0
	case r == 0xad: // soft hyphen: Cf, but terminals show it
		return 1
	case r >= 0x1160 && r <= 0x11ff: // Hangul jungseong and jongseong
		return 0
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef: // variation selectors
		return 0
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Width returns the number of terminal columns s takes on one line: the
// sum of the [RuneWidth] of its characters, each byte that is not valid
// UTF-8 counting 1 (a terminal shows it as U+FFFD). Control characters
// count 0, so the width of text that is not [Safe] is not what a terminal
// shows.
func Width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c < 0x7f {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += RuneWidth(r)
		i += size
	}
	return n
}

// Cut returns s when its [Width] is at most n columns, and otherwise its
// longest prefix of at most n-1 columns followed by [Ellipsis] (""
// when n <= 0). It never splits a character: a wide character that does
// not fit whole is left out, and so are the zero-width characters after
// it (combining marks), so the result may be a column narrower than n.
// A zero width joiner left at the end of the prefix is dropped, so that
// it does not join the ellipsis to the character before it.
func Cut(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	w, end := 0, 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		rw := RuneWidth(r)
		if w+rw > n-1 {
			break
		}
		w += rw
		end += size
	}
	prefix := s[:end]
	for strings.HasSuffix(prefix, "\u200d") {
		prefix = prefix[:len(prefix)-len("\u200d")]
	}
	return prefix + Ellipsis
}
