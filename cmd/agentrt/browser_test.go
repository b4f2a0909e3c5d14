package main

import (
	"bytes"
	"context"
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

	"github.com/agentrt/agentrt/timeline"
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

// writePage renders the session's HTML page into dir.
func writePage(t *testing.T, dir, id string) (string, *timeline.Session) {
	t.Helper()
	s, err := timeline.Load(context.Background(), dir, id)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, renderHTML(&buf, s))
	page := filepath.Join(t.TempDir(), id+".html")
	require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
	return page, s
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

// TestHTMLInBrowser opens generated pages from disk in a real browser with
// the network off and checks the DOM: the turns and calls, the failing
// layer marked, and a call that expands on click to its input, result and
// decision. It saves a screenshot of the showcase session.
func TestHTMLInBrowser(t *testing.T) {
	ctx, requests := browser(t)
	dir, _ := recordAll(t)
	showcaseDir := t.TempDir()
	recordShowcase(t, showcaseDir)

	for _, tc := range []struct {
		dir, id, layer string
		open           string // the tool_use id of the call to expand
		input, result  string
		decision       string
	}{
		{dir: dir, id: "denial", layer: "permission", open: "call_2", input: `"path": "old.go"`, result: "permission denied", decision: "denied by policy"},
		{dir: dir, id: "provider-failure", layer: "provider", open: "call_1", input: `"a": 2`, result: "4"},
		{dir: dir, id: "crash", layer: "crash", open: "call_1", input: `"env": "prod"`, result: "interrupted"},
		{dir: dir, id: "hook-block", layer: "hook", open: "call_1", input: "example.com", result: "no network access", decision: "denied by hook"},
		{dir: showcaseDir, id: "showcase", layer: "tool", open: "call_3", input: `"path": "main_test.go"`, result: "FAIL"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			page, s := writePage(t, tc.dir, tc.id)
			turns, models, tools := countCalls(s)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("#verdict"))))
			require.Equal(t, turns, eval[int](t, ctx, `document.querySelectorAll(".turn").length`), "turns")
			require.Equal(t, models, eval[int](t, ctx, `document.querySelectorAll("details.call[data-kind=model]").length`), "model calls")
			require.Equal(t, tools, eval[int](t, ctx, `document.querySelectorAll("details.call[data-kind=tool]").length`), "tool calls")
			require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("[src],[href],link,img,iframe,object,embed").length`), "the page refers to nothing outside itself")
			require.Equal(t, tc.layer, eval[string](t, ctx, `document.querySelector("#verdict").dataset.layer`), "the failing layer on top")
			badges := eval[string](t, ctx, `Array.from(document.querySelectorAll(".badge.layer")).map(b => b.dataset.layer).join(",")`)
			require.Contains(t, strings.Split(badges, ","), tc.layer, "a call or model call is marked with the failing layer")

			// Expand the call by clicking it: its input, result and decision
			// become visible.
			sel := fmt.Sprintf(`details.call[data-id=%q]`, tc.open)
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
			require.Contains(t, input, tc.input)
			require.Contains(t, result, tc.result)
			if tc.decision != "" {
				require.Contains(t, decision, tc.decision)
			}
			if tc.id == "showcase" {
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
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "screenshot.png"), png, 0o644))
	}
}
