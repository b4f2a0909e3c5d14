package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/timeline"
)

// browserPage is one page the browser test (module cmd/agentrt/browsertest,
// which holds chromedp so that this module does not) opens, with what it
// must find there.
type browserPage struct {
	ID     string `json:"id"`
	Page   string `json:"page"`   // the HTML file
	Layer  string `json:"layer"`  // the failing layer marked on top
	Open   string `json:"open"`   // the tool_use id of the call to expand
	Input  string `json:"input"`  // text in the expanded call's input
	Result string `json:"result"` // and in its result
	// Decision is text in its permission decision ("" for no check).
	Decision string `json:"decision,omitempty"`
	// Turns, Models and Tools count what the timeline holds.
	Turns  int `json:"turns"`
	Models int `json:"models"`
	Tools  int `json:"tools"`
	// Long marks the long session, whose page draws its turns as the
	// person scrolls; Size is its size in bytes.
	Long bool `json:"long,omitempty"`
	Size int  `json:"size"`
	// Breaks are the causes of the cache breaks the turns are marked
	// with, in order.
	Breaks []string `json:"breaks,omitempty"`
}

// TestWriteBrowserPages records the sessions of the browser test, renders
// their pages with `agentrt html` and writes them, with a manifest.json of
// what each must show, into $AGENTRT_BROWSER_PAGES. The browser test runs
// it; without that variable it does nothing.
func TestWriteBrowserPages(t *testing.T) {
	out := os.Getenv("AGENTRT_BROWSER_PAGES")
	if out == "" {
		t.Skip("AGENTRT_BROWSER_PAGES is unset: run by cmd/agentrt/browsertest")
	}
	dir, _ := recordAll(t)
	showcaseDir := t.TempDir()
	recordShowcase(t, showcaseDir)
	longDir := t.TempDir()
	recordLong(t, longDir)
	hostileDir := recordHostile(t)
	pages := []struct {
		dir string
		browserPage
	}{
		{dir, browserPage{ID: "denial", Layer: "permission", Open: "call_2", Input: `"path": "old.go"`, Result: "permission denied", Decision: "denied by policy"}},
		{dir, browserPage{ID: "provider-failure", Layer: "provider", Open: "call_1", Input: `"a": 2`, Result: "4"}},
		{dir, browserPage{ID: "crash", Layer: "crash", Open: "call_1", Input: `"env": "prod"`, Result: "interrupted",
			Breaks: []string{"tool list changed: deploy"}}}, // the second run has no tools
		{dir, browserPage{ID: "hook-block", Layer: "hook", Open: "call_1", Input: "example.com", Result: "no network access", Decision: "denied by hook"}},
		{showcaseDir, browserPage{ID: "showcase", Layer: "tool", Open: "call_3", Input: `"path": "main_test.go"`, Result: "FAIL"}},
		{longDir, browserPage{ID: "long", Open: "call_1", Input: `"path": "file0.go"`, Result: "<script>", Long: true}},
		// Control characters and bidi controls are shown escaped.
		{hostileDir, browserPage{ID: hostileID, Open: "call_1", Input: `\u202e` + chinese, Result: `\x1b[2J\x1b[H\x1b]52;c;`}},
		// Turns whose request broke the cached prefix are marked.
		{filepath.Dir(cacheFile("cache/hook-system.jsonl")), browserPage{ID: "hook-system", Open: "call_2", Input: `"path": "go.mod"`, Result: "module demo",
			Breaks: []string{"system prompt changed by hook 1", "system prompt changed by hook 1"}}},
		{hostileDir, browserPage{ID: brokenID, Layer: "provider", Open: "call_1", Input: chinese, Result: `检查失败\x1b[31m red \x1b[0m\u009b2J\u202e`}},
	}
	var manifest []browserPage
	for i, p := range pages {
		s, err := timeline.Load(context.Background(), p.dir, p.ID)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, renderHTML(&buf, s))
		page := filepath.Join(out, fmt.Sprintf("page%d.html", i))
		require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
		bp := p.browserPage
		bp.Page, bp.Size = page, buf.Len()
		bp.Turns, bp.Models, bp.Tools = countCalls(s)
		manifest = append(manifest, bp)
	}
	data, err := json.MarshalIndent(manifest, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "manifest.json"), data, 0o644))
}

func countCalls(s *timeline.Session) (turns, models, tools int) {
	for _, r := range s.Runs {
		for _, tu := range r.Turns {
			turns++
			if tu.Model != nil {
				models++
			}
			tools += len(tu.Calls)
		}
	}
	return
}

// Long sessions: longRuns runs of longTurns turns each, every tool result
// about longResult bytes of text that looks like HTML and script.
const (
	longRuns   = 4
	longTurns  = 500
	longResult = 2500
)

// recordLong records the long session "long": 2,000 turns and 5 MB of
// tool results, by the runtime.
func recordLong(t *testing.T, dir string) {
	t.Helper()
	store, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	line := "<script>alert(1)</script><img src=x onerror=alert(2)> lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
	read := agentrt.NewTool("read_file", "Read a file.", func(_ context.Context, in pathIn) (string, error) {
		return in.Path + ":\n" + strings.Repeat(line, longResult/len(line)), nil
	}, agentrt.ReadOnly())
	n := 0
	for r := range longRuns {
		var steps []agenttest.Step
		for range longTurns - 1 {
			steps = append(steps, agenttest.CallTool("read_file", fmt.Sprintf(`{"path":"file%d.go"}`, n)))
			n++
		}
		steps = append(steps, agenttest.Reply(fmt.Sprintf("Read %d files.", n)))
		ag := &agentrt.Agent{Tools: []agentrt.Tool{read}, Planner: agenttest.Script(steps...), Store: store, MaxTurns: longTurns}
		runAgent(t, ag, "long", fmt.Sprintf("Read the next %d files (part %d).", longTurns-1, r+1))
	}
}

// TestLongSessionPage renders the long session: its turns are numbered
// on across runs, the page holds 5 MB of content as data, not as HTML, and
// no "</script" of the content closes the data's script element.
func TestLongSessionPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recordLong(t, dir)
	s, err := timeline.Load(context.Background(), dir, "long")
	require.NoError(t, err)
	require.Len(t, s.Runs, longRuns)
	n := 0
	for _, r := range s.Runs {
		require.True(t, r.Completed(), r.Status())
		for _, tu := range r.Turns {
			n++
			require.Equal(t, n, tu.N, "turn numbers count on across runs")
		}
	}
	require.Equal(t, longRuns*longTurns, n)
	var buf bytes.Buffer
	require.NoError(t, renderHTML(&buf, s))
	page := buf.String()
	require.Greater(t, len(page), 5<<20, "5 MB of content")
	require.Equal(t, 2, strings.Count(page, "<script"), "the data and the page's own script, nothing from the content")
	require.Equal(t, 2, strings.Count(page, "</script"))
	require.Zero(t, strings.Count(page, "<img"), "content is data, never markup")
	require.Less(t, strings.Count(page, "<div"), 50, "the turns are not HTML")
}
