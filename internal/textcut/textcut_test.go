package textcut

import "testing"

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s       string
		n       int
		prefix  string
		ellipsi string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 3, "hel", "hel…"},
		{"héllo", 2, "h", "h…"}, // é is 2 bytes: not split
		{"héllo", 3, "hé", "hé…"},
		{"", 0, "", ""},
	} {
		if got := Prefix(tc.s, tc.n); got != tc.prefix {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.prefix)
		}
		if got := Ellipsis(tc.s, tc.n); got != tc.ellipsi {
			t.Errorf("Ellipsis(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.ellipsi)
		}
	}
}

func TestTitle(t *testing.T) {
	long := ""
	for range 70 {
		long += "é"
	}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  What is\n2+40?\t ", "What is 2+40?"},
		{long[:60*2], long[:60*2]}, // 60 characters: kept
		{long, long[:59*2] + "…"},  // 70: cut to 59 and "…", by character
	} {
		if got := Title(tc.in); got != tc.want {
			t.Errorf("Title(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
