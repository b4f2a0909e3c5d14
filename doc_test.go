package agentrt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoopWalkThrough checks docs/loop.md, the walk-through of one tool
// turn: every function it names with its file, as "`run.main` (run.go)",
// is declared in that file, and every other function or method it names
// is declared in the package. It has at least 15 numbered steps.
func TestLoopWalkThrough(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/loop.md")
	require.NoError(t, err)
	decls := map[string]string{} // "run.main" or "protect" -> file
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if st, ok := typ.(*ast.StarExpr); ok {
					typ = st.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			decls[name] = f
		}
	}
	steps := regexp.MustCompile(`(?m)^\d+\. `).FindAll(doc, -1)
	assert.GreaterOrEqual(t, len(steps), 15, "numbered steps")

	withFile := regexp.MustCompile("`([A-Za-z.]+)` \\(([a-z_]+\\.go)\\)")
	named := withFile.FindAllSubmatch(doc, -1)
	require.NotEmpty(t, named)
	for _, m := range named {
		name, file := string(m[1]), string(m[2])
		assert.Equal(t, file, decls[name], "%s: declared in %q, the walk-through says %s", name, decls[name], file)
	}
	// Every other `recv.method` or func named.
	external := map[string]bool{"context.WithCancelCause": true, "runtime.Goexit": true, "t.FailNow": true}
	ident := regexp.MustCompile("`([A-Za-z]+\\.[A-Za-z]+|protect|guard|contain)`")
	for _, m := range ident.FindAllSubmatch(doc, -1) {
		name := string(m[1])
		if external[name] {
			continue
		}
		_, ok := decls[name]
		assert.True(t, ok, "the walk-through names %s, which the package does not declare", name)
	}
}
