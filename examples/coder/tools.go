package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agentrt/agentrt"
)

// Limits of the file tools, so that one call cannot flood the model's
// context or stall the program.
const (
	maxReadBytes   = 256 << 10 // read_file returns at most this much
	maxListEntries = 1000      // list_dir lists at most this many entries
	maxGrepMatches = 200       // grep reports at most this many lines
	maxGrepFile    = 1 << 20   // grep skips files larger than this
)

// workspace is the directory the agent may work in. Every file access of
// the tools goes through an [os.Root] opened on it, so that a path cannot
// name a file outside it: "..", absolute paths and symbolic links that
// lead out are refused by the open itself, at the moment of use, not by a
// check made earlier.
//
// A workspace is safe for concurrent use; the caller closes it.
type workspace struct {
	root *os.Root
	dir  string // absolute path of the root directory, for messages
}

// openWorkspace opens dir as the root of the file tools.
func openWorkspace(dir string) (*workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open root directory: %w", err)
	}
	return &workspace{root: root, dir: abs}, nil
}

// Close closes the root directory.
func (w *workspace) Close() error { return w.root.Close() }

// name turns a path given by the model into a name relative to the root.
// An absolute path is accepted when it lies inside the root directory (a
// model often repeats the directory it was told about); anything else that
// is not a local path is refused here with an error the model can act on.
// The os.Root calls that follow refuse symbolic links that lead out.
func (w *workspace) name(p string) (string, error) {
	if p == "" {
		p = "."
	}
	orig := p
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(w.dir, filepath.Clean(p))
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return "", fmt.Errorf("path %q is outside the root directory %s: use a path relative to the root", orig, w.dir)
		}
		p = rel
	}
	p = filepath.Clean(p)
	if p != "." && !filepath.IsLocal(p) {
		return "", fmt.Errorf("path %q escapes the root directory %s: use a path inside it, relative to the root", orig, w.dir)
	}
	return p, nil
}

// explain rewrites the error of an os.Root call in words the model can
// act on. os.Root reports every escape (through "..", an absolute path or
// a symbolic link) as "path escapes from parent".
func (w *workspace) explain(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("path %q leads outside the root directory %s (through \"..\" or a symbolic link): refused", p, w.dir)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist in the root directory", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied by the file system", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%q: %v", p, pe.Err)
	}
	return err
}

// readFile returns the content of a file inside the root, and whether it
// exists. Only a missing file is not an error.
func (w *workspace) readFile(p string) (content []byte, exists bool, err error) {
	n, err := w.name(p)
	if err != nil {
		return nil, false, err
	}
	b, err := w.root.ReadFile(n)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, w.explain(p, err)
	}
	return b, true, nil
}

// ReadFileIn is the input of read_file.
type ReadFileIn struct {
	Path string `json:"path" jsonschema:"description=File path relative to the root directory" validate:"required"`
}

// ListDirIn is the input of list_dir.
type ListDirIn struct {
	Path string `json:"path,omitempty" jsonschema:"description=Directory path relative to the root directory; empty means the root"`
}

// GrepIn is the input of grep.
type GrepIn struct {
	Pattern string `json:"pattern" jsonschema:"description=Regular expression (Go RE2 syntax) searched line by line" validate:"required"`
	Path    string `json:"path,omitempty" jsonschema:"description=File or directory to search, relative to the root; empty means the root"`
}

// WriteFileIn is the input of write_file.
type WriteFileIn struct {
	Path    string `json:"path" jsonschema:"description=File path relative to the root directory; parent directories are created" validate:"required"`
	Content string `json:"content" jsonschema:"description=The whole new content of the file"`
}

// EditFileIn is the input of edit_file.
type EditFileIn struct {
	Path      string `json:"path" jsonschema:"description=File path relative to the root directory" validate:"required"`
	OldString string `json:"old_string" jsonschema:"description=Exact text to replace; it must occur exactly once in the file" validate:"required"`
	NewString string `json:"new_string" jsonschema:"description=Text that replaces old_string"`
}

// tools returns the five file tools on w: read_file, list_dir and grep are
// read-only; write_file and edit_file are write tools, which the
// permission policy guards.
func (w *workspace) tools() []agentrt.Tool {
	return []agentrt.Tool{
		agentrt.NewTool("read_file", "Read a text file inside the root directory.", w.readTool, agentrt.ReadOnly()),
		agentrt.NewTool("list_dir", "List a directory inside the root directory: one entry per line, directories end with /, symbolic links with @.", w.listTool, agentrt.ReadOnly()),
		agentrt.NewTool("grep", "Search files under a path for lines matching a regular expression; prints path:line: text.", w.grepTool, agentrt.ReadOnly()),
		agentrt.NewTool("write_file", "Create or overwrite a file inside the root directory with the given content.", w.writeTool),
		agentrt.NewTool("edit_file", "Replace one exact, unique occurrence of old_string with new_string in a file inside the root directory.", w.editTool),
		w.readImageTool(),
	}
}

func (w *workspace) readTool(_ context.Context, in ReadFileIn) (string, error) {
	n, err := w.name(in.Path)
	if err != nil {
		return "", err
	}
	f, err := w.root.Open(n)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%q is a directory: use list_dir", in.Path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return "", fmt.Errorf("%q is a binary file", in.Path)
	}
	if len(b) > maxReadBytes {
		return string(b[:maxReadBytes]) + fmt.Sprintf("\n[truncated: only the first %d bytes are shown]", maxReadBytes), nil
	}
	return string(b), nil
}

func (w *workspace) listTool(_ context.Context, in ListDirIn) (string, error) {
	n, err := w.name(in.Path)
	if err != nil {
		return "", err
	}
	f, err := w.root.Open(n)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var sb strings.Builder
	for i, e := range ents {
		if i == maxListEntries {
			fmt.Fprintf(&sb, "[%d more entries not shown]\n", len(ents)-i)
			break
		}
		sb.WriteString(e.Name())
		switch {
		case e.IsDir():
			sb.WriteByte('/')
		case e.Type()&fs.ModeSymlink != 0:
			sb.WriteByte('@')
		}
		sb.WriteByte('\n')
	}
	if len(ents) == 0 {
		return "(empty directory)", nil
	}
	return sb.String(), nil
}

func (w *workspace) grepTool(ctx context.Context, in GrepIn) (string, error) {
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return "", fmt.Errorf("invalid pattern: %v", err)
	}
	n, err := w.name(in.Path)
	if err != nil {
		return "", err
	}
	fsys := w.root.FS()
	start := filepath.ToSlash(n)
	if _, err := fs.Stat(fsys, start); err != nil {
		return "", w.explain(in.Path, err)
	}
	var sb strings.Builder
	matches := 0
	err = fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err != nil {
			return nil // unreadable: skip
		}
		if d.IsDir() {
			if p != start && (d.Name() == ".git" || d.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if matches >= maxGrepMatches {
			return fs.SkipAll
		}
		grepFile(fsys, p, re, &sb, &matches)
		return nil
	})
	if err != nil {
		return "", err
	}
	if matches == 0 {
		return "no matches", nil
	}
	if matches >= maxGrepMatches {
		fmt.Fprintf(&sb, "[stopped after %d matches]\n", maxGrepMatches)
	}
	return sb.String(), nil
}

// grepFile appends the matching lines of one file. Files that cannot be
// opened (a symbolic link leading outside the root), large files and
// binary files are skipped.
func grepFile(fsys fs.FS, p string, re *regexp.Regexp, sb *strings.Builder, matches *int) {
	f, err := fsys.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxGrepFile {
		return
	}
	b, err := io.ReadAll(f)
	if err != nil || bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxGrepFile)
	for line := 1; sc.Scan(); line++ {
		if re.Match(sc.Bytes()) {
			fmt.Fprintf(sb, "%s:%d: %s\n", path.Clean(p), line, sc.Text())
			if *matches++; *matches >= maxGrepMatches {
				return
			}
		}
	}
}

func (w *workspace) writeTool(_ context.Context, in WriteFileIn) (string, error) {
	n, err := w.name(in.Path)
	if err != nil {
		return "", err
	}
	if n == "." {
		return "", fmt.Errorf("path %q is the root directory, not a file", in.Path)
	}
	if dir := filepath.Dir(n); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return "", w.explain(in.Path, err)
		}
	}
	// The open is confined: a symbolic link planted at n (even after the
	// user approved the change) that leads outside is refused here.
	f, err := w.root.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	if _, err := io.WriteString(f, in.Content); err != nil {
		f.Close()
		return "", w.explain(in.Path, err)
	}
	if err := f.Close(); err != nil {
		return "", w.explain(in.Path, err)
	}
	return fmt.Sprintf("wrote %s (%d bytes, %d lines)", filepath.ToSlash(n), len(in.Content), countLines(in.Content)), nil
}

// applyEdit replaces the single occurrence of old in content with new.
func applyEdit(p, content, old, new string) (string, error) {
	if old == "" {
		return "", errors.New("old_string is empty: give the exact text to replace")
	}
	switch c := strings.Count(content, old); c {
	case 0:
		return "", fmt.Errorf("old_string not found in %q: it must match the file exactly, including spaces and indentation (read the file again)", p)
	case 1:
		return strings.Replace(content, old, new, 1), nil
	default:
		return "", fmt.Errorf("old_string occurs %d times in %q: include more surrounding lines so that it occurs exactly once", c, p)
	}
}

func (w *workspace) editTool(_ context.Context, in EditFileIn) (string, error) {
	n, err := w.name(in.Path)
	if err != nil {
		return "", err
	}
	b, err := w.root.ReadFile(n)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	updated, err := applyEdit(in.Path, string(b), in.OldString, in.NewString)
	if err != nil {
		return "", err
	}
	f, err := w.root.OpenFile(n, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return "", w.explain(in.Path, err)
	}
	if _, err := io.WriteString(f, updated); err != nil {
		f.Close()
		return "", w.explain(in.Path, err)
	}
	if err := f.Close(); err != nil {
		return "", w.explain(in.Path, err)
	}
	return fmt.Sprintf("edited %s: replaced %d lines with %d lines", filepath.ToSlash(n), countLines(in.OldString), countLines(in.NewString)), nil
}

// countLines counts lines the way an editor shows them: a last line
// without a newline counts.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// check returns the error the write tool call req would fail with for its
// path, if it would, without changing anything: a path outside the root
// (through "..", an absolute path or a symbolic link, found by the same
// os.Root calls the tool makes), the root itself, a directory, or for
// edit_file a file without the exact text to replace. Nil means the call
// may succeed (the files can still change before it runs: the tool
// checks again).
func (w *workspace) check(req *agentrt.ToolCall) error {
	switch in := req.Input.(type) {
	case WriteFileIn:
		n, err := w.name(in.Path)
		if err != nil {
			return err
		}
		if n == "." {
			return fmt.Errorf("path %q is the root directory, not a file", in.Path)
		}
		// The file, or its closest existing parent, must be reachable
		// inside the root; the file must not be a directory, the
		// parent must be one.
		for p := n; ; p = filepath.Dir(p) {
			fi, err := w.root.Stat(p)
			switch {
			case err == nil && p == n && fi.IsDir():
				return fmt.Errorf("%q is a directory, not a file", in.Path)
			case err == nil && p != n && !fi.IsDir():
				return fmt.Errorf("%q: %s is not a directory", in.Path, filepath.ToSlash(p))
			case err == nil:
				return nil
			case !errors.Is(err, fs.ErrNotExist):
				return w.explain(in.Path, err)
			case p == ".":
				return nil
			}
		}
	case EditFileIn:
		_, _, _, _, err := w.preview(req)
		return err
	}
	return nil
}

// preview returns the file's content before and after the write tool call
// req would make, and whether the file would be created, for the
// permission prompt. It reads through the root, so it shows nothing from
// outside it.
func (w *workspace) preview(req *agentrt.ToolCall) (name, before, after string, created bool, err error) {
	switch in := req.Input.(type) {
	case WriteFileIn:
		b, ok, err := w.readFile(in.Path)
		if err != nil {
			return in.Path, "", "", false, err
		}
		return in.Path, string(b), in.Content, !ok, nil
	case EditFileIn:
		b, ok, err := w.readFile(in.Path)
		if err == nil && !ok {
			err = fmt.Errorf("%q does not exist in the root directory", in.Path)
		}
		if err != nil {
			return in.Path, "", "", false, err
		}
		after, err := applyEdit(in.Path, string(b), in.OldString, in.NewString)
		if err != nil {
			return in.Path, "", "", false, err
		}
		return in.Path, string(b), after, false, nil
	}
	return req.Tool.Name, "", "", false, fmt.Errorf("no preview for tool %q", req.Tool.Name)
}
