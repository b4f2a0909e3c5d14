// Package readmetest keeps the README honest: every Go code block in
// README.md and docs/*.md must appear in a function of blocks_test.go, which is compiled
// with the tests and run (TestREADMEBlocksRun), and every exported
// identifier of the library packages has a doc comment.
package readmetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
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

// blockFuncs returns the normalized source of each function of file, by name.
func blockFuncs(t *testing.T, file string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]string{}
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
			body := src[fset.Position(fn.Body.Lbrace).Offset:fset.Position(fn.Body.Rbrace).Offset]
			funcs[fn.Name.Name] = normalize(string(body))
		}
	}
	return funcs
}

// TestREADMEBlocksCompile checks that each Go block of README.md and of
// the pages of docs/ is in a function of blocks_test.go (so it compiles)
// that readmeRuns runs.
func TestREADMEBlocksCompile(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	funcs := blockFuncs(t, "blocks_test.go")
	// A page may also quote code that its own package compiles and runs
	// in CI: an Example, or an example's test.
	elsewhere := map[string]string{}
	for _, file := range []string{"../../cassette/example_test.go", "../../examples/evals/evals_test.go"} {
		for name, body := range blockFuncs(t, file) {
			elsewhere[file+": "+name] = body
		}
	}
	total := 0
	for _, page := range append([]string{"../../README.md"}, pages...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(page, "../../")
		blocks := goBlock.FindAllStringSubmatch(string(text), -1)
		total += len(blocks)
		for i, b := range blocks {
			block := normalize(b[1])
			var in []string
			for fn, body := range funcs {
				if strings.Contains(body, block) {
					in = append(in, fn)
				}
			}
			if len(in) == 0 && name != "README.md" {
				for fn, body := range elsewhere {
					if strings.Contains(body, block) {
						in = append(in, fn)
					}
				}
				if len(in) > 0 {
					continue
				}
			}
			switch {
			case len(in) == 0:
				t.Errorf("%s Go block %d is not in a function of blocks_test.go (so it is neither compiled nor run):\n%s", name, i+1, b[1])
			case !runs(in):
				t.Errorf("%s Go block %d is in %v, which readmeRuns does not run", name, i+1, in)
			}
		}
	}
	if total < 10 {
		t.Fatalf("found %d Go blocks in README.md and docs/; the pattern is broken", total)
	}
}

func runs(names []string) bool {
	for _, n := range names {
		if _, ok := readmeRuns[n]; ok {
			return true
		}
	}
	return false
}
