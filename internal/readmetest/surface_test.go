package readmetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// maxRootDocLines caps what `go doc -short` prints for the root package:
// the API a newcomer meets (issue 13 asked for at most 90).
const maxRootDocLines = 90

func TestRootSurfaceSize(t *testing.T) {
	out, err := exec.Command("go", "doc", "-short", "github.com/agentrt/agentrt").CombinedOutput()
	if err != nil {
		t.Fatalf("go doc: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > maxRootDocLines {
		t.Errorf("go doc -short prints %d lines for the root package, want at most %d:\n%s", len(lines), maxRootDocLines, out)
	}
}

// TestRootNamesUsedAsUsersWould checks that every exported top-level name
// of the root package is used, as agentrt.Name, by code written the way a
// user writes it: an example program, or a test or Example in a package
// other than agentrt itself (agentrt_test and the module's other packages
// import it as users do). A name nothing uses that way is either dead or
// exists only for the package's own internals. A type whose constants
// are used counts as used.
func TestRootNamesUsedAsUsersWould(t *testing.T) {
	root := "../.."
	names := map[string]bool{}
	// typeOf maps a typed constant to its type: using RoleUser uses Role.
	typeOf := map[string]string{}
	entries, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range entries {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			constType := "" // of an iota group's later lines
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = false
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = false
						}
					case *ast.ValueSpec:
						typ, _ := s.Type.(*ast.Ident)
						if typ != nil {
							constType = typ.Name
						}
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = false
								if d.Tok == token.CONST && constType != "" {
									typeOf[n.Name] = constType
								}
							}
						}
					}
				}
			}
		}
	}
	if len(names) < 50 {
		t.Fatalf("found only %d exported names in the root package: the parse is wrong", len(names))
	}
	use := regexp.MustCompile(`\bagentrt\.([A-Z]\w*)`)
	pkgClause := regexp.MustCompile(`(?m)^package (\w+)`)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", "corpus":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		inExamples := strings.HasPrefix(rel, "examples"+string(filepath.Separator)) || strings.Contains(rel, string(filepath.Separator)+"examples"+string(filepath.Separator))
		if !inExamples && !strings.HasSuffix(path, "_test.go") {
			return nil // library code is not a user
		}
		src, err := readFile(path)
		if err != nil {
			return err
		}
		if m := pkgClause.FindStringSubmatch(src); m == nil || m[1] == "agentrt" {
			return nil // the package's own internal tests
		}
		for _, m := range use.FindAllStringSubmatch(src, -1) {
			if _, ok := names[m[1]]; ok {
				names[m[1]] = true
				if typ, ok := typeOf[m[1]]; ok {
					names[typ] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var unused []string
	for n, used := range names {
		if !used {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	for _, n := range unused {
		t.Errorf("agentrt.%s is used by no example and no test written as a user would", n)
	}
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
