// Package readmetest keeps the README honest: every Go code block in
// README.md must appear in blocks_test.go, which is compiled (and partly
// run) with the tests.
package readmetest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// normalize drops blank lines and indentation and collapses runs of spaces,
// so that gofmt's alignment does not matter.
func normalize(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func TestREADMEBlocksCompile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("blocks_test.go")
	if err != nil {
		t.Fatal(err)
	}
	compiled := normalize(string(src))
	blocks := goBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d Go blocks in README.md; the pattern is broken", len(blocks))
	}
	for i, b := range blocks {
		if !strings.Contains(compiled, normalize(b[1])) {
			t.Errorf("README.md Go block %d is not in blocks_test.go (so it is not compiled):\n%s", i+1, b[1])
		}
	}
}
