package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/timeline"
)

// The session of testdata/multirun, written by hand in both forms of the
// run record: old (a completed run's "layer":"success", a pending stop's
// detail under "error") and new (no layer, "detail"). Run 1 asks for two
// deletions one after the other and stops pending; a person approves the
// first 1.7 s later (run 2, which stops pending on the second), then
// denies the second (run 3, which completes).
var multirunForms = []string{"old", "new"}

// TestRenderersAgree renders the multi-run session with show, html and
// ls, in both record forms, and compares their figures: the verdict, the
// session's work and waiting, each run's turns, duration, waiting and
// stop, and the turn numbers. All must be the same, and match the golden
// file.
func TestRenderersAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, form := range multirunForms {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "multirun", form)
			var show, page, ls, errb strings.Builder
			require.Equal(t, 0, run(ctx, []string{"show", "-color", "never", "-width", "200", filepath.Join(dir, "multi")}, &show, &errb), errb.String())
			require.Equal(t, 0, run(ctx, []string{"html", filepath.Join(dir, "multi")}, &page, &errb), errb.String())
			require.Equal(t, 0, run(ctx, []string{"ls", "-json", dir}, &ls, &errb), errb.String())
			checkGolden(t, "multirun.show.txt", show.String())
			var tailed strings.Builder
			require.NoError(t, tail(ctx, filepath.Join(dir, "multi"), false, 0, textOptions{width: 200}, &tailed))
			require.Equal(t, strings.ReplaceAll(show.String(), "\n\n", "\n"), tailed.String(), "tail prints show's lines")

			fromShow := showFigures(t, show.String())
			fromPage := pageFigures(t, page.String())
			require.Equal(t, fromShow, fromPage, "show and html")
			checkGolden(t, "multirun.figures.txt", fromShow)

			s, err := timeline.Open(ctx, filepath.Join(dir, "multi"))
			require.NoError(t, err)
			require.Equal(t, fromShow, timelineFigures(s), "show and the timeline package")

			var rows []lsRow
			require.NoError(t, json.Unmarshal([]byte(ls.String()), &rows))
			require.Len(t, rows, 1)
			r := rows[0]
			work, waited := s.Work()
			require.Equal(t, []any{3, 3, ms(work), ms(waited), "completed", "-"}, []any{r.Runs, r.Turns, r.Work, r.Waited, r.Stop, r.Layer}, "ls")
			require.Contains(t, fromShow, fmt.Sprintf("session: 3 runs · 3 turns · %s of work, %s waiting for a person", dur(work), dur(waited)))
			var table, errt strings.Builder
			require.Equal(t, 0, run(ctx, []string{"ls", dir}, &table, &errt), errt.String())
			require.Regexp(t, `(?m)^multi .* 3 +3 +`+dur(work)+` +`+dur(waited)+` +450/50 +0\.0% +completed +- `, table.String())
		})
	}
}

// The figures are lines: "verdict: …", "session: …", then for each run
// "run N: its line" and "run N turns: the numbers, resumed turns in
// brackets".
func showFigures(t *testing.T, out string) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", lines[0])
	m := regexp.MustCompile(`^session \S+ +created [^·]+ · (.*) · tokens`).FindStringSubmatch(lines[1])
	require.NotNil(t, m, lines[1])
	fmt.Fprintf(&b, "session: %s\n", spaces(m[1]))
	runRE := regexp.MustCompile(`^run (\d+) · \d\d:\d\d:\d\d · (.*)$`)
	turnRE := regexp.MustCompile(`^  turn (\d+) `)
	resumedRE := regexp.MustCompile(`^  ↻ resumed .* of turn (\d+) `)
	var turns []string
	flush := func() {
		if turns != nil {
			fmt.Fprintf(&b, "turns: %s\n", strings.Join(turns, " "))
		}
		turns = []string{}
	}
	for _, l := range lines[2:] {
		if m := runRE.FindStringSubmatch(l); m != nil {
			flush()
			fmt.Fprintf(&b, "run %s: %s\n", m[1], spaces(m[2]))
		} else if m := resumedRE.FindStringSubmatch(l); m != nil {
			turns = append(turns, "("+m[1]+")")
		} else if m := turnRE.FindStringSubmatch(l); m != nil {
			turns = append(turns, m[1])
		}
	}
	flush()
	return b.String()
}

func pageFigures(t *testing.T, page string) string {
	t.Helper()
	var b strings.Builder
	verdict := regexp.MustCompile(`<div id="verdict"[^>]*><span[^>]*>[^<]*</span><span>([^<]*)</span>`).FindStringSubmatch(page)
	require.NotNil(t, verdict)
	fmt.Fprintf(&b, "verdict: %s\n", html.UnescapeString(verdict[1]))
	meta := regexp.MustCompile(`<div class="meta"[^>]*>(.*)</div>`).FindStringSubmatch(page)
	require.NotNil(t, meta)
	text := html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(meta[1], ""))
	m := regexp.MustCompile(`created [^·]+ · (.*) · tokens`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	fmt.Fprintf(&b, "session: %s\n", m[1])
	data := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, data)
	var d pageData
	require.NoError(t, json.Unmarshal([]byte(data[1]), &d))
	resumedRE := regexp.MustCompile(`\(turn (\d+), resumed\)$`)
	for _, r := range d.Runs {
		fmt.Fprintf(&b, "run %d: %s\n", r.Index, r.Meta)
		turns := []string{}
		for _, c := range r.Resumed {
			m := resumedRE.FindStringSubmatch(c.Name)
			require.NotNil(t, m, c.Name)
			turns = append(turns, "("+m[1]+")")
		}
		for _, tu := range r.Turns {
			turns = append(turns, fmt.Sprint(tu.N))
		}
		fmt.Fprintf(&b, "turns: %s\n", strings.Join(turns, " "))
	}
	return b.String()
}

func timelineFigures(s *timeline.Session) string {
	var b strings.Builder
	_, verdict := s.Verdict()
	fmt.Fprintf(&b, "verdict: %s\n", verdict)
	fmt.Fprintf(&b, "session: %s · %s · %s\n", plural(len(s.Runs), "run"), plural(s.Turns(), "turn"), workText(s, dur))
	for _, r := range s.Runs {
		line := plural(len(r.Turns), "turn") + " · " + dur(r.Duration())
		if r.Waited > 0 {
			line += " · waited " + dur(r.Waited) + " for a person"
		}
		fmt.Fprintf(&b, "run %d: %s · %s · tokens in %d out %d\n", r.Index, line, r.Status(), r.Usage.InputTokens, r.Usage.OutputTokens)
		turns := []string{}
		for _, c := range r.Resumed {
			turns = append(turns, fmt.Sprintf("(%d)", turnOf(s, c)))
		}
		for _, tu := range r.Turns {
			turns = append(turns, fmt.Sprint(tu.N))
		}
		fmt.Fprintf(&b, "turns: %s\n", strings.Join(turns, " "))
	}
	return b.String()
}

// spaces folds runs of spaces (a padded duration) into one.
func spaces(s string) string { return strings.Join(strings.Fields(s), " ") }
