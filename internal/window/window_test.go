package window_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrt/agentrt/internal/window"
)

// Messages are runes: 'u' user, 'a' assistant, 't' tool result; each
// counts one token.
func cut(msgs string, from, budget, max int) int {
	count := func(m []rune) int { return len(m) }
	return window.Cut([]rune(msgs), from, budget, max, count, func(r *rune) bool { return *r == 'a' })
}

func TestCut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msgs              string
		from, budget, max int
		want              int
	}{
		{"uatatat", 1, 0, 0, 1},  // no limit: everything from the first assistant on
		{"uatatat", 1, 4, 0, 3},  // 4 tokens: "tat" would split, so "atat" from 3
		{"uatatat", 1, 2, 0, 5},  // 2 tokens: the last turn
		{"uatatat", 1, 1, 0, 5},  // not even the last turn fits: it is kept anyway
		{"uatatat", 1, 0, 3, 5},  // at most 3 messages: "at" is the longest that starts at an a
		{"uatatat", 1, 10, 4, 3}, // both limits: the tighter wins
		{"uattatt", 1, 3, 0, 4},  // two results of one call stay with it
		{"uuuu", 1, 2, 0, 1},     // no assistant message: from
		{"uatatat", 3, 0, 0, 3},  // never before from
		{"uaaaaaa", 1, 3, 0, 4},  // every index at an assistant is a cut
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, cut(tc.msgs, tc.from, tc.budget, tc.max), "%+v", tc)
	}
}
