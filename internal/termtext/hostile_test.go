package termtext_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
)

// TestSafeHostile renders every hostile string with Safe, as one line and
// with newlines kept.
func TestSafeHostile(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Hostile() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			termtexttest.Check(t, c, termtext.Safe(c.In))
			termtexttest.Check(t, c, termtext.Safe(c.In, '\n', '\t'), '\n', '\t')
		})
	}
}

// TestEscaped: the characters Safe escapes, by category.
func TestEscaped(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0, '\n', 0x1b, 0x7f, 0x85, 0x9f, 0xad, 0x600, 0x61c, 0x180e, 0x200b, 0x200d, 0x202e, 0x2028, 0x2029, 0x2066, 0xfeff, 0xfffb, 0x110bd, 0x1d173, 0xe0000, 0xe0001, 0xe0041, 0xe007f} {
		assert.True(t, termtext.Escaped(r), "Escaped(%U)", r)
	}
	for _, r := range []rune{' ', 'a', '~', 0xa0, 0xa1, 0x301, 0x5d0, 0x627, 0x2027, 0x202f, 0x2070, 0x4e2d, 0xfe0f, 0xfffc, 0xfffd, 0x1f468, 0xe0080, 0xe0100} {
		assert.False(t, termtext.Escaped(r), "Escaped(%U)", r)
	}
}
