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
	Long     bool   `json:"long"`
	Size     int    `json:"size"`
	// Breaks are the causes of the cache breaks the turns are marked
	// with, in order.
	Breaks []string `json:"breaks"`
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
	require.Len(t, pages, 9)
	return pages
}

// TestHTMLInBrowser opens generated pages from disk in a real browser with
// the network off and checks the DOM: the turns and calls, the failing
// layer marked, and a call that expands on click to its input, result and
// decision. It saves a screenshot of the showcase session.
func TestHTMLInBrowser(t *testing.T) {
	ctx, requests := browser(t)
	for _, tc := range writePages(t) {
		if tc.Long {
			t.Run(tc.ID, func(t *testing.T) { longPage(t, ctx, tc) })
			continue
		}
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
			breaks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".turn[data-cache-break] .turn-head .break")).filter(b => b.checkVisibility()).map(b => b.textContent)`)
			want := []string{}
			for _, c := range tc.Breaks {
				want = append(want, "\u2702 cache break: "+c)
			}
			require.Equal(t, want, breaks, "the turns whose prefix broke are marked, with the cause")

			// Expand the call by clicking it: its input, result and decision
			// become visible.
			sel := fmt.Sprintf(`details.call[data-id=%q]`, tc.Open)
			visible := fmt.Sprintf(`(p => p != null && p.checkVisibility())(document.querySelector(%q).querySelector("pre.input"))`, sel)
			require.False(t, eval[bool](t, ctx, visible), "collapsed at first")
			require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("details.call .body").length`), "details are built when opened")
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

			// Every call open: no control character or bidi control reaches
			// the text a person reads, and nothing the content holds became
			// markup.
			eval[bool](t, ctx, `document.getElementById("expand").click(), true`)
			require.Equal(t, eval[int](t, ctx, `document.querySelectorAll("details.call").length`), eval[int](t, ctx, `document.querySelectorAll("details.call[open] > .body").length`))
			require.False(t, eval[bool](t, ctx, `/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(document.body.innerText)`), "a control character in the page's text")
			require.Equal(t, 2, eval[int](t, ctx, `document.scripts.length`))
			require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("[src],[href],link,img,iframe,object,embed").length`))
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

// The targets for the page of a long session (2,000 turns, 5 MB).
const (
	maxFirstRender = time.Second
	maxNodes       = 5000
	maxExpandAll   = time.Second
)

// longPage opens the page of a session of 2,000 turns and 5 MB and
// measures it: the time to its first render, its DOM nodes before the
// person opens anything, and "Expand all". It logs the figures.
func longPage(t *testing.T, ctx context.Context, tc browserPage) {
	require.GreaterOrEqual(t, tc.Turns, 2000)
	require.Greater(t, tc.Size, 5<<20)
	start := time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+tc.Page), chromedp.WaitReady(chromedp.CSS(".turn"))))
	wall := time.Since(start)
	ms := func(expr string) time.Duration {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](expr, chromedp.EvalAwaitPromise))
		require.NoError(t, err, expr)
		return time.Duration(v * float64(time.Millisecond))
	}
	drawn := ms(`performance.getEntriesByName("agentrt-drawn")[0].startTime`)
	paint := ms(`(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: 0}).startTime`)
	load := ms(`performance.getEntriesByType("navigation")[0].loadEventEnd`)
	nodes := eval[int](t, ctx, countNodes)
	turns := eval[int](t, ctx, `document.querySelectorAll(".turn").length`)
	t.Logf("long page: %d turns, %.1f MB; first render (turns drawn) %v, first contentful paint %v, load event %v, navigation to drawn (wall) %v; %d DOM nodes, %d turns drawn",
		tc.Turns, float64(tc.Size)/(1<<20), drawn.Round(time.Millisecond), paint.Round(time.Millisecond), load.Round(time.Millisecond), wall.Round(time.Millisecond), nodes, turns)
	require.Less(t, drawn, maxFirstRender, "first render")
	require.NotZero(t, paint, "a first contentful paint")
	require.Less(t, paint, maxFirstRender, "first contentful paint")
	require.Less(t, nodes, maxNodes, "DOM nodes before anything is opened")
	require.Less(t, turns, tc.Turns, "not every turn is drawn at first")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("details.call .body").length`), "no details built before one is opened")

	// A call opens on a click and shows its result as text.
	sel := fmt.Sprintf(`details.call[data-id=%q]`, tc.Open)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel+" > summary")), chromedp.WaitVisible(chromedp.CSS(sel+" pre.result"))))
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel+" pre.result")))
	require.NoError(t, err)
	require.Contains(t, result, tc.Result)

	// Scrolling to the end draws the next turns.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, document.body.scrollHeight), true`))
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll(".turn").length > %d`, turns)))
	require.NoError(t, err)

	// Expand all: every call drawn opens with its details.
	expand := ms(timed(`document.getElementById("expand").click()`))
	opened := eval[int](t, ctx, `document.querySelectorAll("details.call[open] > .body").length`)
	drawnCalls := eval[int](t, ctx, `document.querySelectorAll("details.call").length`)
	nodes = eval[int](t, ctx, countNodes)
	t.Logf("long page: Expand all %v (%d calls opened, %d DOM nodes after)", expand.Round(time.Millisecond), opened, nodes)
	require.Equal(t, drawnCalls, opened)
	require.Less(t, expand, maxExpandAll, "Expand all")

	// Turns drawn after Expand all come open; drawing the rest, chunk by
	// chunk, is measured and logged, as a person scrolling to the end.
	more := ms(timed(`document.querySelector("button.more").click()`))
	require.Equal(t, eval[int](t, ctx, `document.querySelectorAll("details.call").length`), eval[int](t, ctx, `document.querySelectorAll("details.call[open] > .body").length`))
	all := ms(timed(`while (document.querySelector("button.more")) document.querySelector("button.more").click()`))
	nodes = eval[int](t, ctx, countNodes)
	t.Logf("long page: next 40 turns, expanded: %v; every turn drawn and expanded: %v, %d DOM nodes", more.Round(time.Millisecond), all.Round(time.Millisecond), nodes)
	require.Equal(t, tc.Turns, eval[int](t, ctx, `document.querySelectorAll(".turn").length`))
	require.Equal(t, 2, eval[int](t, ctx, `document.scripts.length`), "no script element came from the content")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("img,iframe,object,embed,[src],[href]").length`), "no element came from the content")
}

// countNodes counts every node of the document, text nodes too.
const countNodes = `(() => { let n = 1; const w = document.createTreeWalker(document, NodeFilter.SHOW_ALL); while (w.nextNode()) n++; return n; })()`

// timed returns an expression that runs stmt and returns, in
// milliseconds, the time until the page has laid out and painted after it.
func timed(stmt string) string {
	return `(async () => { const t = performance.now(); ` + stmt + `; document.body.offsetHeight;
		await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0))); return performance.now() - t; })()`
}
