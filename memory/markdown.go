package memory

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode"
)

// MaxChunk is the size in bytes above which [SplitMarkdown] cuts a section
// into several items, at paragraph boundaries.
const MaxChunk = 2000

// SplitMarkdown cuts a Markdown document into document items, one per
// section (a heading and the text up to the next heading; a long section
// gives several items). source names the document (its path); each item's
// Heading is the section's heading path ("Sessions › Forks"), and its ID
// is source#anchor, the anchor made from the heading as GitHub does
// (with -1, -2... for repeats and -part2... for the parts of a long
// section). Lines inside fenced code blocks are never headings.
func SplitMarkdown(source, content string) []Item {
	type section struct {
		path []string
		body strings.Builder
	}
	var (
		items   []Item
		stack   []string // heading path by level
		cur     = &section{}
		inFence bool
		fence   string
		anchors = map[string]int{}
	)
	flush := func() {
		text := strings.TrimSpace(cur.body.String())
		heading := strings.Join(cur.path, " › ")
		if text == "" && heading == "" {
			return
		}
		anchor := "top"
		if len(cur.path) > 0 {
			anchor = Anchor(cur.path[len(cur.path)-1])
		}
		if n := anchors[anchor]; n > 0 {
			anchors[anchor] = n + 1
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			anchors[anchor] = 1
		}
		for i, part := range chunks(text) {
			id := source + "#" + anchor
			if i > 0 {
				id += fmt.Sprintf("-part%d", i+1)
			}
			body := part
			if heading != "" {
				body = heading + "\n\n" + part
			}
			items = append(items, Item{ID: id, Kind: KindDocument, Text: body, Source: source, Heading: heading})
		}
	}
	for line := range strings.Lines(content) {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			switch {
			case !inFence:
				inFence, fence = true, trimmed[:3]
			case strings.HasPrefix(trimmed, fence):
				inFence = false
			}
		}
		if !inFence {
			if level, title := headingOf(line); level > 0 {
				flush()
				if level-1 < len(stack) {
					stack = stack[:level-1]
				}
				for len(stack) < level-1 {
					stack = append(stack, "")
				}
				stack = append(stack, title)
				cur = &section{}
				for _, h := range stack {
					if h != "" {
						cur.path = append(cur.path, h)
					}
				}
				continue
			}
		}
		cur.body.WriteString(line)
	}
	flush()
	return items
}

// headingOf returns the level and title of an ATX heading line ("## Title"),
// or 0.
func headingOf(line string) (int, string) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level >= len(line) || (line[level] != ' ' && line[level] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[level:]), "#"))
	return level, title
}

// Anchor returns GitHub's anchor of a heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// chunks cuts text at blank lines into parts of at most about MaxChunk bytes.
func chunks(text string) []string {
	if len(text) <= MaxChunk {
		return []string{text}
	}
	var parts []string
	var cur strings.Builder
	for _, para := range strings.SplitAfter(text, "\n\n") {
		if cur.Len() > 0 && cur.Len()+len(para) > MaxChunk {
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
		cur.WriteString(para)
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		parts = append(parts, s)
	}
	return parts
}

// IngestMarkdown puts every Markdown file (*.md) under fsys into scope as
// document items ([SplitMarkdown]), its path in fsys being the source. It
// returns the number of items stored.
func IngestMarkdown(ctx context.Context, s Store, scope string, fsys fs.FS) (int, error) {
	var items []Item
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".md" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		items = append(items, SplitMarkdown(p, string(b))...)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if _, err := s.Put(ctx, scope, items...); err != nil {
		return 0, err
	}
	return len(items), nil
}
