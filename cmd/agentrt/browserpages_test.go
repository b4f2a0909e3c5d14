package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
	pages := []struct {
		dir string
		browserPage
	}{
		{dir, browserPage{ID: "denial", Layer: "permission", Open: "call_2", Input: `"path": "old.go"`, Result: "permission denied", Decision: "denied by policy"}},
		{dir, browserPage{ID: "provider-failure", Layer: "provider", Open: "call_1", Input: `"a": 2`, Result: "4"}},
		{dir, browserPage{ID: "crash", Layer: "crash", Open: "call_1", Input: `"env": "prod"`, Result: "interrupted"}},
		{dir, browserPage{ID: "hook-block", Layer: "hook", Open: "call_1", Input: "example.com", Result: "no network access", Decision: "denied by hook"}},
		{showcaseDir, browserPage{ID: "showcase", Layer: "tool", Open: "call_3", Input: `"path": "main_test.go"`, Result: "FAIL"}},
	}
	var manifest []browserPage
	for _, p := range pages {
		s, err := timeline.Load(context.Background(), p.dir, p.ID)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, renderHTML(&buf, s))
		page := filepath.Join(out, p.ID+".html")
		require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
		bp := p.browserPage
		bp.Page = page
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
