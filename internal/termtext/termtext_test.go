package termtext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		keep []rune
		want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "ASCII", in: "hello, world ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./", want: "hello, world ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"},
		{name: "Chinese", in: "你好，世界。", want: "你好，世界。"},
		{name: "mixed", in: "read 文件 main.go → 好", want: "read 文件 main.go → 好"},
		{name: "emoji", in: "ok 👍 🇫🇷", want: "ok 👍 🇫🇷"},
		{name: "emoji joined by zero width joiners", in: "👨\u200d👩\u200d👧", want: `👨\u200d👩\u200d👧`},
		{name: "combining marks and variation selector", in: "e\u0301 a\u20dd \u2764\ufe0f", want: "e\u0301 a\u20dd \u2764\ufe0f"},

		// C0 controls.
		{name: "clear screen", in: "a\x1b[2Jb", want: `a\x1b[2Jb`},
		{name: "erase line and carriage return", in: "\x1b[2K\rok", want: `\x1b[2K\rok`},
		{name: "OSC 52 clipboard", in: "\x1b]52;c;ZWNobyBoaQ==\x07", want: `\x1b]52;c;ZWNobyBoaQ==\a`},
		{name: "OSC 8 hyperlink", in: "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", want: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`},
		{name: "short escapes", in: "\a\b\f\n\r\v", want: `\a\b\f\n\r\v`},
		{name: "other C0", in: "\x00\x01\x0e\x1a\x1f", want: `\x00\x01\x0e\x1a\x1f`},
		{name: "newline kept", in: "one\ntwo\r\n", keep: []rune{'\n'}, want: "one\ntwo\\r\n"},
		{name: "tab kept", in: "a\tb", keep: []rune{'\t'}, want: "a\tb"},
		{name: "keep ignores what is not C0", in: "\x7f\u009b\u202e", keep: []rune{0x7f, 0x9b, 0x202e}, want: `\x7f\u009b\u202e`},

		// Tabs are expanded to the next tab stop of their line.
		{name: "tab at the start", in: "\tx", want: "        x"},
		{name: "tab after text", in: "ab\tc", want: "ab      c"},
		{name: "tab at a tab stop", in: "abcdefgh\ti", want: "abcdefgh        i"},
		{name: "tab after wide characters", in: "文件\tx", want: "文件    x"},
		{name: "tab after an escape", in: "\x1b\tx", want: `\x1b` + "    x"},
		{name: "tab counted from the kept newline", in: "abc\n\tx", keep: []rune{'\n'}, want: "abc\n        x"},
		{name: "tab after an escaped newline", in: "abc\n\tx", want: `abc\n` + "   x"},

		// DEL and C1.
		{name: "DEL", in: "a\x7fb", want: `a\x7fb`},
		{name: "C1 CSI", in: "\u009b2J", want: `\u009b2J`},
		{name: "C1 range", in: "\u0080\u0085\u008d\u009d\u009f", want: `\u0080\u0085\u008d\u009d\u009f`},
		{name: "after C1", in: "\u00a0\u00a1", want: "\u00a0\u00a1"},

		// Bidi controls and separators.
		{name: "right-to-left override", in: "invoice\u202efdp.exe", want: `invoice\u202efdp.exe`},
		{name: "embeddings and overrides", in: "\u202a\u202b\u202c\u202d\u202e", want: `\u202a\u202b\u202c\u202d\u202e`},
		{name: "isolates", in: "\u2066\u2067\u2068\u2069", want: `\u2066\u2067\u2068\u2069`},
		{name: "marks", in: "\u200e\u200f\u061c", want: `\u200e\u200f\u061c`},
		{name: "line and paragraph separators", in: "a\u2028b\u2029c", want: `a\u2028b\u2029c`},
		{name: "Chinese around a bidi control", in: "文件\u202e名", want: `文件\u202e名`},

		// Format characters (Cf) and tags.
		{name: "zero width", in: "x\u200by\u200cz\u2060w\ufeff", want: `x\u200by\u200cz\u2060w\ufeff`},
		{name: "soft hyphen", in: "a\u00adb", want: `a\u00adb`},
		{name: "Arabic number signs", in: "\u0600\u0605\u06dd", want: `\u0600\u0605\u06dd`},
		{name: "interlinear annotation", in: "\ufff9a\ufffab\ufffb", want: `\ufff9a\ufffab\ufffb`},
		{name: "tag characters", in: "hi\U000e0049\U000e0047\U000e007f", want: `hi\U000e0049\U000e0047\U000e007f`},
		{name: "unassigned tags", in: "\U000e0000\U000e0002\U000e001f", want: `\U000e0000\U000e0002\U000e001f`},
		{name: "after the tags", in: "\U000e0080\U000e0100", want: "\U000e0080\U000e0100"},
		{name: "tab after a tag escape", in: "\U000e0041\tx", want: `\U000e0041` + "      x"},

		// Invalid UTF-8.
		{name: "invalid byte", in: "a\xffb", want: `a\xffb`},
		{name: "cut character", in: "文"[:2] + "x", want: `\xe6\x96x`},
		{name: "surrogate", in: "\xed\xa0\x80", want: `\xed\xa0\x80`},
		{name: "overlong", in: "\xc0\xaf", want: `\xc0\xaf`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Safe(tc.in, tc.keep...)
			assert.Equal(t, tc.want, got)
			assert.True(t, utf8.ValidString(got))
			assert.Equal(t, got, Safe(got, tc.keep...), "Safe of its own result changes nothing")
		})
	}
}

func TestWidth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want int
	}{
		{name: "empty", in: "", want: 0},
		{name: "ASCII", in: "hello", want: 5},
		{name: "Chinese", in: "你好世界", want: 8},
		{name: "fullwidth punctuation and letters", in: "，。Ａ", want: 6},
		{name: "halfwidth katakana", in: "ｶﾀｶﾅ", want: 4},
		{name: "Hangul syllables", in: "한국어", want: 6},
		{name: "Hangul jamo", in: "\u1100\u1161\u11a8", want: 2},
		{name: "mixed", in: "a文b件", want: 6},
		{name: "emoji", in: "👍😀", want: 4},
		{name: "flag", in: "🇫🇷", want: 2},
		{name: "ambiguous", in: "…·«»■", want: 5},
		{name: "combining acute", in: "e\u0301", want: 1},
		{name: "enclosing circle", in: "a\u20dd", want: 1},
		{name: "variation selector", in: "\u2764\ufe0f", want: 1},
		{name: "ideographic variation selector", in: "葛\U000e0100", want: 2},
		{name: "zero width space and joiner", in: "a\u200bb\u200dc\ufeff", want: 3},
		{name: "soft hyphen", in: "a\u00adb", want: 3},
		{name: "controls count nothing", in: "\x1b\x00\x7f\u009b", want: 0},
		{name: "bidi controls count nothing", in: "\u202e\u2066", want: 0},
		{name: "invalid bytes", in: "\xff\xfe", want: 2},
		{name: "escaped", in: Safe("\x1b[2J文"), want: 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, Width(tc.in))
		})
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "fits", in: "hello", n: 5, want: "hello"},
		{name: "fits with room", in: "hello", n: 10, want: "hello"},
		{name: "ASCII", in: "hello", n: 4, want: "hel…"},
		{name: "one column", in: "hello", n: 1, want: "…"},
		{name: "zero", in: "hello", n: 0, want: ""},
		{name: "negative", in: "hello", n: -3, want: ""},
		{name: "empty", in: "", n: 0, want: ""},
		{name: "Chinese fits", in: "你好世界", n: 8, want: "你好世界"},
		{name: "Chinese even", in: "你好世界", n: 5, want: "你好…"},
		{name: "Chinese: half a character is left out", in: "你好世界", n: 6, want: "你好…"},
		{name: "Chinese two columns", in: "你好世界", n: 2, want: "…"},
		{name: "mixed", in: "ab你好cd", n: 6, want: "ab你…"},
		{name: "combining marks stay with their letter", in: "e\u0301e\u0301e\u0301", n: 2, want: "e\u0301…"},
		{name: "zero width only", in: "\u0301\u0301", n: 0, want: "\u0301\u0301"},
		{name: "emoji", in: "👍👍👍", n: 4, want: "👍…"},
		{name: "joiner dropped", in: "👨\u200d👩\u200d👧", n: 4, want: "👨…"},
		{name: "invalid bytes", in: "\xff\xff\xff", n: 2, want: "\xff…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Cut(tc.in, tc.n)
			assert.Equal(t, tc.want, got)
			assert.LessOrEqual(t, Width(got), max(tc.n, 0))
		})
	}
}

// TestCutEveryWidth cuts mixed strings at every width from 0 to one more
// than theirs.
func TestCutEveryWidth(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"read 文件 main.go: 你好，世界 ok",
		"a\u0301b文👍c\u200bd한e",
		"你好世界你好世界",
		Safe("tool \x1b[2J结果\u202e end"),
	} {
		w := Width(s)
		for n := 0; n <= w+1; n++ {
			got := Cut(s, n)
			require.LessOrEqual(t, Width(got), n, "Cut(%q, %d) = %q", s, n, got)
			if n >= w {
				require.Equal(t, s, got, "Cut(%q, %d) leaves it whole", s, n)
				continue
			}
			if n == 0 {
				require.Empty(t, got)
				continue
			}
			prefix, ok := strings.CutSuffix(got, Ellipsis)
			require.True(t, ok, "Cut(%q, %d) = %q ends with the ellipsis", s, n, got)
			require.True(t, strings.HasPrefix(s, prefix), "Cut(%q, %d) = %q: a prefix of s", s, n, got)
			require.GreaterOrEqual(t, Width(got), n-1, "Cut(%q, %d) = %q leaves at most one column unused (half a wide character)", s, n, got)
		}
	}
}

func TestRuneWidth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    rune
		want int
	}{
		{'a', 1}, {' ', 1}, {'~', 1}, {'\t', 0}, {0x1b, 0}, {0x7f, 0}, {0x85, 0}, {0x9f, 0}, {0xa0, 1},
		{'文', 2}, {'，', 2}, {'Ａ', 2}, {'ｶ', 1}, {'한', 2}, {'😀', 2}, {'→', 1}, {'…', 1},
		{0x0301, 0}, {0x20dd, 0}, {0xfe0f, 0}, {0x200b, 0}, {0x200d, 0}, {0x202e, 0}, {0xfeff, 0}, {0xad, 1},
		{utf8.RuneError, 1},
	} {
		assert.Equal(t, tc.want, RuneWidth(tc.r), "RuneWidth(%U)", tc.r)
	}
}

// hidden reports whether r is a character Safe must never return: C1,
// DEL, a format character (bidi controls, zero width characters), a line
// or paragraph separator or a tag. (The C0 controls are checked apart.)
func hidden(r rune) bool {
	return r >= 0x7f && r <= 0x9f || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp) || r >= 0xe0000 && r <= 0xe007f
}

// FuzzSafe checks that what Safe returns is valid UTF-8 with no control
// character a terminal would interpret (but the newline kept), no format
// character, separator or tag, and unchanged by Safe again; and that Cut
// never exceeds its width.
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "hello", "你好\n世界", "\x1b[2J\x1b]52;c;aGk=\x07", "\u009b\u202e\u2066\x7f", "\xff\xfe\t\r\n", "e\u0301👨\u200d👩", "\u00ad\u0600\u200b\ufeff\U000e0041\U000e007f\u2028"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		for _, keep := range [][]rune{nil, {'\n'}} {
			out := Safe(s, keep...)
			if !utf8.ValidString(out) {
				t.Fatalf("Safe(%q) = %q: not valid UTF-8", s, out)
			}
			for i := 0; i < len(out); i++ {
				if c := out[i]; c < 0x20 && !(c == '\n' && keep != nil) || c == 0x7f {
					t.Fatalf("Safe(%q, %q) = %q: byte %#x at %d", s, keep, out, c, i)
				}
			}
			for _, r := range out {
				if hidden(r) {
					t.Fatalf("Safe(%q, %q) = %q: %U", s, keep, out, r)
				}
			}
			if again := Safe(out, keep...); again != out {
				t.Fatalf("Safe(Safe(%q)) = %q, not %q", s, again, out)
			}
			n := n % 200
			got := Cut(out, n)
			if w := Width(got); w > max(n, 0) {
				t.Fatalf("Cut(%q, %d) = %q: %d columns", out, n, got, w)
			}
			if got != out && !strings.HasPrefix(out, strings.TrimSuffix(got, Ellipsis)) {
				t.Fatalf("Cut(%q, %d) = %q: not a prefix", out, n, got)
			}
		}
	})
}
