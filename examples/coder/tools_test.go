package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// sandbox is a root directory with two files, next to an "outside"
// directory holding a secret that no tool may read or change.
type sandbox struct {
	root    string // the tools' root
	outside string // a directory next to it
	secret  string // outside/secret.txt
	ws      *workspace
	tools   map[string]agentrt.Tool
}

const secretText = "SECRET: do not leak\n"

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	base := t.TempDir()
	s := &sandbox{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	require.NoError(t, os.MkdirAll(filepath.Join(s.root, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(s.outside, 0o755))
	s.secret = filepath.Join(s.outside, "secret.txt")
	require.NoError(t, os.WriteFile(s.secret, []byte(secretText), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "README.md"), []byte("# Demo\n\nhello world\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "sub", "a.go"), []byte("package sub\n\nfunc Hello() string { return \"hello\" }\n"), 0o644))
	// Symbolic links inside the root that lead out of it.
	require.NoError(t, os.Symlink(s.secret, filepath.Join(s.root, "abs-link")))
	require.NoError(t, os.Symlink(filepath.Join("..", "outside", "secret.txt"), filepath.Join(s.root, "rel-link")))
	require.NoError(t, os.Symlink(s.outside, filepath.Join(s.root, "dir-link")))
	// One that stays inside.
	require.NoError(t, os.Symlink("README.md", filepath.Join(s.root, "inside-link")))
	ws, err := openWorkspace(s.root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	s.ws = ws
	s.tools = map[string]agentrt.Tool{}
	for _, tool := range ws.tools() {
		s.tools[tool.Spec().Name] = tool
	}
	return s
}

// call decodes input as the runtime would and executes the tool.
func (s *sandbox) call(t *testing.T, name string, input any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	require.NoError(t, err)
	tool := s.tools[name]
	require.NotNil(t, tool, name)
	in, err := tool.Decode(raw)
	require.NoError(t, err, "decode %s", raw)
	return tool.Execute(context.Background(), in)
}

func (s *sandbox) assertSecretIntact(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(s.secret)
	require.NoError(t, err)
	assert.Equal(t, secretText, string(b), "the file outside the root was changed")
}

func TestToolSpecs(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	readOnly := map[string]bool{"read_file": true, "list_dir": true, "grep": true, "write_file": false, "edit_file": false, "read_image": true}
	require.Len(t, s.tools, len(readOnly))
	for name, ro := range readOnly {
		assert.Equal(t, ro, s.tools[name].Spec().ReadOnly, name)
	}
}

// TestConfinement calls every tool with paths that lead outside the root:
// "..", an absolute path, and symbolic links (absolute and relative, to a
// file and to a directory). Each is refused with an error that says so,
// and the file outside is neither shown nor changed.
func TestConfinement(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	escapes := []struct {
		name string
		path string
	}{
		{"dotdot", "../outside/secret.txt"},
		{"dotdot inside path", "sub/../../outside/secret.txt"},
		{"absolute outside", s.secret},
		{"absolute system file", "/etc/passwd"},
		{"absolute symlink", "abs-link"},
		{"relative symlink", "rel-link"},
		{"through a directory symlink", "dir-link/secret.txt"},
	}
	inputs := map[string]func(p string) any{
		"read_file":  func(p string) any { return ReadFileIn{Path: p} },
		"list_dir":   func(p string) any { return ListDirIn{Path: p} },
		"grep":       func(p string) any { return GrepIn{Pattern: "SECRET", Path: p} },
		"write_file": func(p string) any { return WriteFileIn{Path: p, Content: "pwned\n"} },
		"edit_file":  func(p string) any { return EditFileIn{Path: p, OldString: "SECRET", NewString: "pwned"} },
	}
	for tool, input := range inputs {
		for _, tc := range escapes {
			t.Run(tool+"/"+tc.name, func(t *testing.T) {
				out, err := s.call(t, tool, input(tc.path))
				require.Error(t, err, "got %q", out)
				assert.Regexp(t, `outside the root|escapes the root|leads outside the root`, err.Error())
				assert.NotContains(t, out+err.Error(), "SECRET")
				s.assertSecretIntact(t)
			})
		}
	}
	// /etc/passwd must not have become a file of the root either.
	_, err := os.Stat(filepath.Join(s.root, "etc"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestConfinementAllowsInsidePaths(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	out, err := s.call(t, "read_file", ReadFileIn{Path: filepath.Join(s.root, "README.md")})
	require.NoError(t, err, "an absolute path inside the root is accepted")
	assert.Equal(t, "# Demo\n\nhello world\n", out)

	out, err = s.call(t, "read_file", ReadFileIn{Path: "inside-link"})
	require.NoError(t, err, "a relative link inside the root is followed")
	assert.Contains(t, out, "hello world")

	out, err = s.call(t, "read_file", ReadFileIn{Path: "sub/../README.md"})
	require.NoError(t, err)
	assert.Contains(t, out, "hello world")

	out, err = s.call(t, "list_dir", ListDirIn{})
	require.NoError(t, err)
	assert.Equal(t, "README.md\nabs-link@\ndir-link@\ninside-link@\nrel-link@\nsub/\n", out)

	// grep walks the root but does not follow links out of it.
	out, err = s.call(t, "grep", GrepIn{Pattern: "(?i)hello|SECRET"})
	require.NoError(t, err)
	assert.Contains(t, out, "README.md:3: hello world")
	assert.Contains(t, out, "sub/a.go:3: func Hello()")
	assert.NotContains(t, out, "SECRET")
	s.assertSecretIntact(t)
}

func TestReadFileErrors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, err := s.call(t, "read_file", ReadFileIn{Path: "missing.txt"})
	assert.EqualError(t, err, `"missing.txt" does not exist in the root directory`)
	_, err = s.call(t, "read_file", ReadFileIn{Path: "sub"})
	assert.ErrorContains(t, err, "is a directory")
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "bin"), []byte{1, 0, 2}, 0o644))
	_, err = s.call(t, "read_file", ReadFileIn{Path: "bin"})
	assert.ErrorContains(t, err, "binary")
	_, err = s.call(t, "grep", GrepIn{Pattern: "("})
	assert.ErrorContains(t, err, "invalid pattern")
}

func TestWriteAndEdit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	out, err := s.call(t, "write_file", WriteFileIn{Path: "new/dir/x.txt", Content: "one\ntwo\n"})
	require.NoError(t, err)
	assert.Equal(t, "wrote new/dir/x.txt (8 bytes, 2 lines)", out)
	b, err := os.ReadFile(filepath.Join(s.root, "new", "dir", "x.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(b))

	out, err = s.call(t, "edit_file", EditFileIn{Path: "new/dir/x.txt", OldString: "two\n", NewString: "2\n3\n"})
	require.NoError(t, err)
	assert.Equal(t, "edited new/dir/x.txt: replaced 1 lines with 2 lines", out)
	b, err = os.ReadFile(filepath.Join(s.root, "new", "dir", "x.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\n2\n3\n", string(b))

	_, err = s.call(t, "edit_file", EditFileIn{Path: "README.md", OldString: "absent", NewString: "x"})
	assert.ErrorContains(t, err, "not found")
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "dup.txt"), []byte("a\na\n"), 0o644))
	_, err = s.call(t, "edit_file", EditFileIn{Path: "dup.txt", OldString: "a", NewString: "b"})
	assert.ErrorContains(t, err, "occurs 2 times")
	_, err = s.call(t, "edit_file", EditFileIn{Path: "nope.txt", OldString: "a", NewString: "b"})
	assert.ErrorContains(t, err, "does not exist")
	_, err = s.call(t, "write_file", WriteFileIn{Path: ".", Content: "x"})
	assert.ErrorContains(t, err, "root directory, not a file")
}

// TestSymlinkSwapBetweenCheckAndUse replaces the file a write tool will
// change with a symbolic link to a file outside the root after the
// permission check (which previewed the real file) and before the tool
// runs. The write is refused at the open, and the outside file is intact.
func TestSymlinkSwapBetweenCheckAndUse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, input string
	}{
		{"write_file", `{"path":"notes.txt","content":"pwned\n"}`},
		{"edit_file", `{"path":"notes.txt","old_string":"SECRET","new_string":"pwned"}`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			notes := filepath.Join(s.root, "notes.txt")
			require.NoError(t, os.WriteFile(notes, []byte("SECRET in the root\n"), 0o644))

			asked := 0
			ask := func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
				asked++
				// The check: the preview sees the regular file in the root.
				name, before, after, _, err := s.ws.preview(req)
				require.NoError(t, err)
				assert.Equal(t, "notes.txt", name)
				assert.Equal(t, "SECRET in the root\n", before)
				assert.NotEqual(t, before, after)
				// The swap, after the check and before the use.
				require.NoError(t, os.Remove(notes))
				require.NoError(t, os.Symlink(s.secret, notes))
				return agentrt.Decision{Allow: true}, nil
			}
			ag := &agentrt.Agent{
				Tools:      s.ws.tools(),
				Planner:    agenttest.Script(agenttest.CallTool(tc.tool, tc.input), agenttest.Reply("done")),
				Permission: agentrt.AskOnWrite(ask),
			}
			events, err := agenttest.Collect(ag.Run(context.Background(), "s", "change notes.txt"))
			require.NoError(t, err)
			require.Equal(t, 1, asked)
			results := agenttest.Filter[agentrt.ToolResult](events)
			require.Len(t, results, 1)
			assert.True(t, results[0].Message.IsError, "the write must fail: %s", results[0].Message.Content)
			assert.Contains(t, results[0].Message.Content, "leads outside the root")
			s.assertSecretIntact(t)
		})
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	req := func(tool string, in any) *agentrt.ToolCall {
		return &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: tool}, Input: in}
	}
	name, before, after, created, err := s.ws.preview(req("write_file", WriteFileIn{Path: "n.txt", Content: "x\n"}))
	require.NoError(t, err)
	assert.Equal(t, []any{"n.txt", "", "x\n", true}, []any{name, before, after, created})

	_, before, after, created, err = s.ws.preview(req("edit_file", EditFileIn{Path: "README.md", OldString: "hello", NewString: "bye"}))
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, "# Demo\n\nhello world\n", before)
	assert.Equal(t, "# Demo\n\nbye world\n", after)

	_, _, _, _, err = s.ws.preview(req("write_file", WriteFileIn{Path: "abs-link", Content: "x"}))
	assert.ErrorContains(t, err, "leads outside the root", "the preview does not show an outside file")
	_, _, _, _, err = s.ws.preview(req("edit_file", EditFileIn{Path: "README.md", OldString: "absent", NewString: "x"}))
	assert.ErrorContains(t, err, "not found")
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	long := func(n int, change map[int]string) string {
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			if c, ok := change[i]; ok {
				sb.WriteString(c + "\n")
				continue
			}
			fmt.Fprintf(&sb, "line %d\n", i)
		}
		return sb.String()
	}
	tests := []struct {
		name          string
		before, after string
		created       bool
		want          string
	}{
		{name: "equal", before: "a\n", after: "a\n", want: ""},
		{
			name: "new file", after: "a\nb\n", created: true,
			want: "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "one line changed", before: "a\nb\nc\n", after: "a\nB\nc\n",
			want: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		},
		{
			name: "line added at the end without newline", before: "a\n", after: "a\nb",
			want: "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n",
		},
		{
			name: "all removed", before: "a\nb\n", after: "",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n",
		},
		{
			name: "two hunks", before: long(20, nil), after: long(20, map[int]string{2: "two", 18: "eighteen"}),
			want: "--- a/f\n+++ b/f\n" +
				"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n" +
				"@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+eighteen\n line 19\n line 20\n",
		},
		{
			name: "close changes share a hunk", before: long(12, nil), after: long(12, map[int]string{3: "three", 9: "nine"}),
			want: "--- a/f\n+++ b/f\n" +
				"@@ -1,12 +1,12 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n line 7\n line 8\n-line 9\n+nine\n line 10\n line 11\n line 12\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, unifiedDiff("f", tc.before, tc.after, tc.created))
		})
	}
}

func Example_unifiedDiff() {
	before := "package greet\nconst Hello = \"hi\"\nconst Bye = \"bye\"\n"
	after := "package greet\nconst Hello = \"hello\"\nconst Bye = \"bye\"\n"
	fmt.Print(unifiedDiff("greet.go", before, after, false))
	// Output:
	// --- a/greet.go
	// +++ b/greet.go
	// @@ -1,3 +1,3 @@
	//  package greet
	// -const Hello = "hi"
	// +const Hello = "hello"
	//  const Bye = "bye"
}
