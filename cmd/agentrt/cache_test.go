package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/timeline"
)

// The sessions of ../../timeline/testdata/cache, written by hand with the
// request fingerprints of the model_call records: one per cause of a
// cache break, one that only appends, and a file written before the
// fingerprints existed.
var cacheSessions = []struct {
	file   string
	causes []string // the cache breaks, in turn order
}{
	{"cache/hook-system.jsonl", []string{"system prompt changed by hook 1", "system prompt changed by hook 1"}},
	{"cache/tool-list.jsonl", []string{"tool list changed: write_file"}},
	{"cache/compaction.jsonl", []string{"history rewritten at message 1 by compaction"}},
	{"cache/hook-history.jsonl", []string{"history rewritten at message 2 by hook 0"}},
	{"cache/model-change.jsonl", []string{"model changed: claude-sonnet-4-5 → claude-haiku-4-5"}},
	{"cache/stable.jsonl", nil},
	{"old.jsonl", nil},
}

func cacheFile(name string) string {
	return filepath.Join("..", "..", "timeline", "testdata", filepath.FromSlash(name))
}

var breakRE = regexp.MustCompile(`(?m)^    ✂ cache break: (.*)$`)

// TestGoldenCache renders each session with show and html, checks that
// each marks the turns whose prefix broke with the cause, and compares
// them with the golden files (of the page: the part that depends on the
// session, its header and its data).
func TestGoldenCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, sc := range cacheSessions {
		name := strings.TrimSuffix(filepath.Base(sc.file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var show, page, errb strings.Builder
			require.Equal(t, 0, run(ctx, []string{"show", "-color", "never", "-width", "240", cacheFile(sc.file)}, &show, &errb), errb.String())
			require.Equal(t, 0, run(ctx, []string{"html", cacheFile(sc.file)}, &page, &errb), errb.String())
			var causes []string
			for _, m := range breakRE.FindAllStringSubmatch(show.String(), -1) {
				causes = append(causes, m[1])
			}
			require.Equal(t, sc.causes, causes, "show")
			d := pageJSON(t, page.String())
			causes = nil
			for _, r := range d.Runs {
				for _, tu := range r.Turns {
					if tu.Break != "" {
						causes = append(causes, tu.Break)
					}
				}
			}
			require.Equal(t, sc.causes, causes, "html")
			checkGolden(t, "cache/"+name+".show.txt", show.String())
			checkGolden(t, "cache/"+name+".html.txt", pageSessionPart(t, page.String()))
		})
	}
}

// TestRenderersAgreeOnCache compares, for each session, what show, html
// and the timeline package say of every turn's input tokens (uncached,
// cache read, cache write), its cost and its cache break, and what show
// and ls say of the session's cache-read share.
func TestRenderersAgreeOnCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, sc := range cacheSessions {
		name := strings.TrimSuffix(filepath.Base(sc.file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var show, page, ls, errb strings.Builder
			require.Equal(t, 0, run(ctx, []string{"show", "-color", "never", "-width", "0", "-full", cacheFile(sc.file)}, &show, &errb), errb.String())
			require.Equal(t, 0, run(ctx, []string{"html", cacheFile(sc.file)}, &page, &errb), errb.String())
			s, err := timeline.Open(ctx, cacheFile(sc.file))
			require.NoError(t, err)

			var tailed strings.Builder
			require.NoError(t, tail(ctx, cacheFile(sc.file), false, 0, textOptions{full: true}, &tailed))
			require.Equal(t, strings.ReplaceAll(show.String(), "\n\n", "\n"), tailed.String(), "tail prints show's lines")

			want := cacheFigures(s)
			require.Equal(t, want, showCacheFigures(t, show.String()), "show and the timeline package")
			require.Equal(t, want, pageCacheFigures(t, pageJSON(t, page.String())), "html and the timeline package")

			// ls of a directory holding only this session.
			dir := t.TempDir()
			copyFile(t, cacheFile(sc.file), filepath.Join(dir, filepath.Base(sc.file)))
			require.Equal(t, 0, run(ctx, []string{"ls", "-json", dir}, &ls, &errb), errb.String())
			var rows []lsRow
			require.NoError(t, json.Unmarshal([]byte(ls.String()), &rows))
			require.Len(t, rows, 1)
			share, ok := s.CacheReadShare()
			require.True(t, ok)
			require.NotNil(t, rows[0].CacheRead)
			require.InDelta(t, share, *rows[0].CacheRead, 1e-12)
			require.Equal(t, len(sc.causes), rows[0].CacheBreaks)
			head, _, _ := strings.Cut(strings.SplitN(show.String(), "\n", 3)[1], " · no trace")
			if s.Usage.CacheReadTokens+s.Usage.CacheWriteTokens > 0 {
				require.Contains(t, head, "cache read "+percent(share), "show's header")
			}
			var table strings.Builder
			require.Equal(t, 0, run(ctx, []string{"ls", dir}, &table, &errb), errb.String())
			require.Regexp(t, `(?m)^`+name+` .* `+regexp.QuoteMeta(percent(share))+` `, table.String())
		})
	}
}

// cacheFigures are lines, one per turn: "turn N: in I = U + R + W out O
// cost C break CAUSE".
func cacheFigures(s *timeline.Session) string {
	var b strings.Builder
	for _, r := range s.Runs {
		for _, t := range r.Turns {
			u := t.Model.Usage
			fmt.Fprintf(&b, "turn %d: in %d = %d + %d + %d out %d", t.N, u.InputTokens, t.Model.Uncached(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens)
			if t.Model.Cost != nil {
				fmt.Fprintf(&b, " cost %s", costText(*t.Model.Cost))
			}
			if t.CacheBreak != nil {
				fmt.Fprintf(&b, " break %s", t.CacheBreak.Cause)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var (
	showTurnRE = regexp.MustCompile(`^  turn (\d+) · .* · in (\d+)(?: \(uncached (\d+), cache read (\d+), write (\d+)\))? out (\d+)(?: .* · cost ([\d.]+))?`)
	pageTokRE  = regexp.MustCompile(`^in (\d+)(?: \(uncached (\d+) · cache read (\d+) · cache write (\d+)\))? · out (\d+)`)
)

func showCacheFigures(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if m := showTurnRE.FindStringSubmatch(l); m != nil {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "turn %s: %s", m[1], tokenFigures(m[2], m[3], m[4], m[5], m[6]))
			if m[7] != "" {
				fmt.Fprintf(&b, " cost %s", m[7])
			}
		} else if m := breakRE.FindStringSubmatch(l); m != nil {
			fmt.Fprintf(&b, " break %s", m[1])
		}
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

func pageCacheFigures(t *testing.T, d pageData) string {
	t.Helper()
	var b strings.Builder
	for _, r := range d.Runs {
		for _, tu := range r.Turns {
			m := pageTokRE.FindStringSubmatch(tu.Tokens)
			require.NotNil(t, m, tu.Tokens)
			fmt.Fprintf(&b, "turn %d: %s", tu.N, tokenFigures(m[1], m[2], m[3], m[4], m[5]))
			if c, ok := strings.CutPrefix(tu.Cost, "cost "); ok {
				fmt.Fprintf(&b, " cost %s", c)
			}
			if tu.Break != "" {
				fmt.Fprintf(&b, " break %s", tu.Break)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// tokenFigures writes "in I = U + R + W out O"; without the split, the
// input is all uncached.
func tokenFigures(in, uncached, read, write, out string) string {
	if uncached == "" {
		uncached, read, write = in, "0", "0"
	}
	return fmt.Sprintf("in %s = %s + %s + %s out %s", in, uncached, read, write, out)
}

func pageJSON(t *testing.T, page string) pageData {
	t.Helper()
	data := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, data)
	var d pageData
	require.NoError(t, json.Unmarshal([]byte(data[1]), &d))
	return d
}

// pageSessionPart is what of a page depends on the session: the header
// and verdict, and the data, indented.
func pageSessionPart(t *testing.T, page string) string {
	t.Helper()
	head := regexp.MustCompile(`(?s)<header class="top">.*?<main id="main">`).FindString(page)
	require.NotEmpty(t, head)
	data := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, data)
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, []byte(data[1]), "", "  "))
	return head + "\n" + b.String() + "\n"
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// A line cut to the width ends in an ellipsis whenever something is left
// out, also when a part fills the line exactly.
func TestLineCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		width int
		parts []string
		want  string
	}{
		{"fits", 20, []string{"", "in 160", "", " out 9"}, "in 160 out 9"},
		{"a part fills the line", 6, []string{"", "in 160", "", " out 9"}, "in 16…"},
		{"cut in the second part", 9, []string{"", "in 160", "", " out 9"}, "in 160 o…"},
		{"one column left", 7, []string{"", "in 160", "", " out 9"}, "in 160…"},
		{"only empty parts after", 6, []string{"", "in 160", "", ""}, "in 160"},
		{"no width", 0, []string{"", "in 160", "", " out 9"}, "in 160 out 9"},
	} {
		var b strings.Builder
		p := &printer{w: &b, o: textOptions{width: tc.width}}
		p.line(0, tc.parts...)
		require.Equal(t, tc.want+"\n", b.String(), tc.name)
	}
}

func TestCostText(t *testing.T) {
	t.Parallel()
	for c, want := range map[float64]string{0.0049: "0.0049", 0.00004: "0.00004", 12.5: "12.5", 0: "0", 0.0006 + 0.0022 + 0.0009: "0.0037", 3: "3"} {
		require.Equal(t, want, costText(c), "%v", c)
	}
}
