// Package browsertest opens the pages of `agentrt html` in a real
// headless Chromium (Debian's chromium, driven with chromedp). It is a
// module of its own so that chromedp never enters the graph of the root
// module, which holds the command: `go install
// github.com/agentrt/agentrt/cmd/agentrt@latest` needs only the root.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromium finds the browser, or skips the test when CI is unset (with CI
// set a missing browser fails it: .ci/run installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (apt-get install chromium); CI is set, so the browser test cannot be skipped")
	}
	t.Skip("chromium is not installed and CI is unset: skipping the browser test")
	return ""
}

// browser starts a headless chromium with the network off, and records
// every request the page makes.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 860),
		chromedp.ProxyServer("127.0.0.1:9"), // nothing listens: no request can leave
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	var mu sync.Mutex
	var urls []string
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}))
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true}},
	})
	require.NoError(t, err)
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), urls...)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// browserPage is what cmd/agentrt's TestWriteBrowserPages writes to
// manifest.json: a page and what it must show.
type browserPage struct {
	ID       string `json:"id"`
	Page     string `json:"page"`
	Layer    string `json:"layer"`
	Open     string `json:"open"`
	Input    string `json:"input"`
	Result   string `json:"result"`
	Decision string `json:"decision"`
	Turns    int    `json:"turns"`
	Models   int    `json:"models"`
	Tools    int    `json:"tools"`
}

// writePages records the test sessions and renders their pages, by
// running cmd/agentrt's TestWriteBrowserPages (the command's own code, in
// its own package), and returns what each page must show.
func writePages(t *testing.T) []browserPage {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestWriteBrowserPages$", "github.com/agentrt/agentrt/cmd/agentrt")
	cmd.Dir = filepath.Join("..", "..", "..") // the root module, which holds the command
	cmd.Env = append(os.Environ(), "AGENTRT_BROWSER_PAGES="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err, "%s", out)
	var pages []browserPage
	require.NoError(t, json.Unmarshal(data, &pages))
	require.Len(t, pages, 5)
	return pages
}

// TestHTMLInBrowser opens generated pages from disk in a real browser with
// the network off and checks the DOM: the turns and calls, the failing
// layer marked, and a call that expands on click to its input, result and
// decision. It saves a screenshot of the showcase session.
func TestHTMLInBrowser(t *testing.T) {
	ctx, requests := browser(t)
	for _, tc := range writePages(t) {
		t.Run(tc.ID, func(t *testing.T) {
			page, turns, models, tools := tc.Page, tc.Turns, tc.Models, tc.Tools
			require.NotZero(t, turns)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("#verdict"))))
			require.Equal(t, turns, eval[int](t, ctx, `document.querySelectorAll(".turn").length`), "turns")
			require.Equal(t, models, eval[int](t, ctx, `document.querySelectorAll("details.call[data-kind=model]").length`), "model calls")
			require.Equal(t, tools, eval[int](t, ctx, `document.querySelectorAll("details.call[data-kind=tool]").length`), "tool calls")
			require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("[src],[href],link,img,iframe,object,embed").length`), "the page refers to nothing outside itself")
			require.Equal(t, tc.Layer, eval[string](t, ctx, `document.querySelector("#verdict").dataset.layer`), "the failing layer on top")
			badges := eval[string](t, ctx, `Array.from(document.querySelectorAll(".badge.layer")).map(b => b.dataset.layer).join(",")`)
			require.Contains(t, strings.Split(badges, ","), tc.Layer, "a call or model call is marked with the failing layer")

			// Expand the call by clicking it: its input, result and decision
			// become visible.
			sel := fmt.Sprintf(`details.call[data-id=%q]`, tc.Open)
			visible := fmt.Sprintf(`document.querySelector(%q).querySelector("pre.input").checkVisibility()`, sel)
			require.False(t, eval[bool](t, ctx, visible), "collapsed at first")
			require.NoError(t, chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(sel+" > summary")),
				chromedp.WaitVisible(chromedp.CSS(sel+" pre.input")),
			))
			require.True(t, eval[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q).open`, sel)), "open after a click")
			require.True(t, eval[bool](t, ctx, visible), "the input is shown")
			input, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel+" pre.input")))
			require.NoError(t, err)
			result, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel+" pre.result")))
			require.NoError(t, err)
			decision, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel+" .decision")))
			require.NoError(t, err)
			require.Contains(t, input, tc.Input)
			require.Contains(t, result, tc.Result)
			if tc.Decision != "" {
				require.Contains(t, decision, tc.Decision)
			}
			if tc.ID == "showcase" {
				saveScreenshot(t, ctx)
			}
		})
	}
	for _, u := range requests() {
		require.True(t, strings.HasPrefix(u, "file://"), "the page made a request: %s", u)
	}
}

// saveScreenshot saves a PNG of the page to $AGENTRT_ARTIFACTS (or the
// test's temporary directory), and to testdata/screenshot.png when
// AGENTRT_UPDATE_SCREENSHOT is set.
func saveScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[bool](t, ctx, `document.querySelectorAll("details.call").forEach(d => d.open = false); document.querySelector('details.call[data-id="call_3"]').open = true`)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "a PNG")
	dir := os.Getenv("AGENTRT_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "agentrt-html.png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
	if os.Getenv("AGENTRT_UPDATE_SCREENSHOT") != "" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "testdata", "screenshot.png"), png, 0o644))
	}
}
