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
