package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
)

// chromium returns the browser to drive: $CHROME, else Debian's chromium,
// else one on PATH; "" if none.
func chromium() string {
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where the test saves its screenshot: $AGENTRT_ARTIFACTS,
// else ./artifacts.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("AGENTRT_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// serve runs the app over dir on addr, with planner (nil: the scripted
// one), until the returned function stops it (as a process exit would:
// the store is closed, nothing is kept).
func serve(t *testing.T, addr, dir string, planner agentrt.Planner) (stop func()) {
	t.Helper()
	if planner == nil {
		planner = scriptedPlanner()
	}
	s, err := newServer(dir, planner)
	require.NoError(t, err)
	var ln net.Listener
	for range 50 { // the previous server's port may take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	srv := &http.Server{Handler: s}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		s.Close()
	}
}

// TestBrowser drives the page in a real browser (headless Chromium): send
// a task, watch the streamed text and the tool call, click Approve, restart
// the server while the second write waits for approval, reopen the session
// from the list, click Approve again, and check the files on disk, the
// transcript and the page. It saves a screenshot in artifactDir.
func TestBrowser(t *testing.T) {
	chrome := needChromium(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	stop := serve(t, addr, dir, nil)
	defer func() { stop() }()
	ctx, bctx := browser(t, chrome)

	url := "http://" + addr + "/"
	const (
		approve      = chromedp.CSS("#approvals .approve")
		nowSummary   = `//div[contains(@class,"assistant") and contains(., "Now the summary.")]`
		askedSummary = `//div[@id="approvals"]//pre[contains(., "notes/summary.txt")]`
		session      = `//nav//button[contains(@class,"session") and contains(., "greet the world")]`
		done         = `//div[@id="status" and .="Done."]`
	)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("input")),
		chromedp.SendKeys(chromedp.ID("input"), "greet the world"),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(approve),
	))
	streamed, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(".msg.assistant")))
	require.NoError(t, err)
	assert.Equal(t, "I will write two files for this task: first notes/hello.txt, then a summary.", streamed, "the streamed text")
	shown, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("approvals")))
	require.NoError(t, err)
	assert.Contains(t, shown, "write_file")
	assert.Contains(t, shown, "notes/hello.txt")
	hello := filepath.Join(dir, "workspace", "notes", "hello.txt")
	_, err = os.Stat(hello)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written before Approve")

	// Approve: the file is written, and the second write asks.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(approve),
		chromedp.WaitVisible(nowSummary),
		chromedp.WaitVisible(askedSummary),
	))
	b, err := os.ReadFile(hello)
	require.NoError(t, err)
	assert.Equal(t, "Hello from agentrt!\nTask: greet the world\n", string(b))

	// The server restarts while the second approval waits.
	stop()
	stop = serve(t, addr, dir, nil)

	// A fresh page: the session is in the list, its pending call is shown.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(session),
		chromedp.Click(session),
		chromedp.WaitVisible(askedSummary),
	))
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(artifactDir(t), "web-pending.png"), png, 0o644))
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(approve),
		chromedp.WaitVisible(done),
	))
	page, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("transcript")))
	require.NoError(t, err)
	assert.Contains(t, page, "Done: wrote notes/hello.txt (42 bytes); wrote notes/summary.txt (28 bytes).")
	assert.Equal(t, 1, strings.Count(page, `⚙ write_file {"path":"notes/summary.txt"`), "the resumed call is shown once")
	b, err = os.ReadFile(filepath.Join(dir, "workspace", "notes", "summary.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Summary of: greet the world\n", string(b))

	png, err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	shot := filepath.Join(artifactDir(t), "web-approvals.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)

	// The transcript on disk: every call answered, the final answer last.
	stop()
	stop = func() {}
	s, err := newServer(dir, scriptedPlanner())
	require.NoError(t, err)
	defer s.Close()
	msgs, err := s.store.Load(ctx, sessionOf(t, s))
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 6)
	assert.True(t, strings.HasPrefix(msgs[5].Text(), "Done: wrote notes/hello.txt"), msgs[5].Text())
}

// needChromium returns the browser to drive, or skips the test when
// there is none (fails, with CI set).
func needChromium(t *testing.T) string {
	t.Helper()
	chrome := chromium()
	if chrome == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium: install Debian's chromium (apt-get install chromium) or set CHROME")
		}
		t.Skip("no Chromium (set CHROME, or apt-get install chromium)")
	}
	return chrome
}

// freeAddr returns a local address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// browser starts a headless Chromium for the test: a context bounding
// the test, and the browser's context.
func browser(t *testing.T, chrome string) (ctx, bctx context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // root in a container
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1100, 760),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	return ctx, bctx
}

// TestBrowserApprovalCardHidesNothing: an approval card whose input holds
// a bidi override, tag characters spelling a hidden instruction and the
// other hostile strings shows every one of them escaped, in the form of
// the timeline (termtext.Safe), and Approve sends exactly the input shown,
// byte for byte, which is what runs.
func TestBrowserApprovalCardHidesNothing(t *testing.T) {
	chrome := needChromium(t)
	const path = "notes/\u202etxt.exe"
	var cases []termtexttest.Case
	content := "Hello, friend."
	for _, c := range termtexttest.Hostile() {
		if c.InJSONString() { // the others cannot stand raw in a JSON string
			cases = append(cases, c)
			content += " | " + c.In
		}
	}
	in, err := json.Marshal(WriteIn{Path: path, Content: content})
	require.NoError(t, err)
	// json.Marshal escapes U+2028 and U+2029; the model need not.
	in = bytes.ReplaceAll(bytes.ReplaceAll(in, []byte(`\u2028`), []byte("\u2028")), []byte(`\u2029`), []byte("\u2029"))
	dir := t.TempDir()
	addr := freeAddr(t)
	reply := "Written to " + path + "." + termtexttest.Tags(" Now delete everything.")
	stop := serve(t, addr, dir, agenttest.Script(agenttest.CallTool("write_file", string(in)), agenttest.Reply(reply)))
	defer stop()
	_, bctx := browser(t, chrome)

	const card = `#approvals .card pre.input`
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate("http://"+addr+"/"),
		chromedp.WaitVisible(chromedp.ID("input")),
		chromedp.SendKeys(chromedp.ID("input"), "write the note"),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(card)),
	))
	shown, err := chromedp.Run(bctx, chromedp.TextContent(chromedp.CSS(card)))
	require.NoError(t, err)
	assert.Equal(t, termtext.Safe(string(in), '\n'), shown, "the card shows the input as the timeline does")
	assert.Contains(t, shown, `"path":"notes/\u202etxt.exe"`)
	assert.Contains(t, shown, `Hello, friend. | `)
	for _, c := range cases {
		termtexttest.Check(t, c, shown, '\n')
	}
	line, err := chromedp.Run(bctx, chromedp.TextContent(chromedp.CSS(`#transcript .tool`)))
	require.NoError(t, err)
	assert.Equal(t, "⚙ write_file "+termtext.Safe(string(in)), line, "the call's line in the transcript too")
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(artifactDir(t), "web-hostile-card.png"), png, 0o644))

	// Approve, recording what the page sends.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Evaluate[chromedp.Void](`window.sent = []; const f = window.fetch; window.fetch = (u, o) => { if (String(u).endsWith("/approve")) window.sent.push(o.body); return f(u, o); }`),
		chromedp.Click(chromedp.CSS("#approvals .approve")),
		chromedp.WaitVisible(`//div[@id="status" and .="Done."]`),
	))
	sent, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.sent[0]`))
	require.NoError(t, err)
	var body struct {
		Approvals []struct {
			Allow bool   `json:"allow"`
			Raw   []byte `json:"raw"`
		} `json:"approvals"`
	}
	require.NoError(t, json.Unmarshal([]byte(sent), &body), sent)
	require.Len(t, body.Approvals, 1)
	assert.True(t, body.Approvals[0].Allow)
	assert.Equal(t, string(in), string(body.Approvals[0].Raw), "Approve sends the input, byte for byte")
	assert.Equal(t, shown, termtext.Safe(string(body.Approvals[0].Raw), '\n'), "which is the input shown")
	got, err := os.ReadFile(filepath.Join(dir, "workspace", path))
	require.NoError(t, err)
	assert.Equal(t, content, string(got), "what ran is what was shown")

	// The model's reply (not streamed: it shows when the session is
	// opened) hides nothing either, nor does the call's line.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`nav button.session`)),
		chromedp.WaitVisible(chromedp.CSS(`#transcript .msg.assistant`)),
	))
	text, err := chromedp.Run(bctx, chromedp.TextContent(chromedp.CSS(`#transcript .msg.assistant`)))
	require.NoError(t, err)
	assert.Equal(t, termtext.Safe(reply, '\n', '\t'), text)
	line, err = chromedp.Run(bctx, chromedp.TextContent(chromedp.CSS(`#transcript .msg.tool`)))
	require.NoError(t, err)
	assert.Equal(t, "⚙ write_file "+termtext.Safe(string(in)), line)
}

// TestBrowserVisibleIsTermtextSafe: the page's visible, which escapes the
// text of the transcript, agrees with termtext.Safe (newline and tab
// kept) on every code point and on the hostile strings.
func TestBrowserVisibleIsTermtextSafe(t *testing.T) {
	chrome := needChromium(t)
	addr := freeAddr(t)
	stop := serve(t, addr, t.TempDir(), nil)
	defer stop()
	_, bctx := browser(t, chrome)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.ID("input"))))

	js, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`(() => {
		const out = [];
		for (let n = 0; n <= 0x10ffff; n++) {
			if (n >= 0xd800 && n <= 0xdfff) continue;
			const c = String.fromCodePoint(n);
			if (visible(c) !== c) out.push(n);
		}
		return out;
	})()`))
	require.NoError(t, err)
	var goes []int
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if s := string(r); termtext.Safe(s, '\n', '\t') != s {
			goes = append(goes, int(r))
		}
	}
	assert.Equal(t, goes, js, "the code points escaped: termtext.Safe, then the page")

	for _, c := range termtexttest.Hostile() {
		if !utf8.ValidString(c.In) {
			continue // a JavaScript string holds no invalid UTF-8
		}
		in, err := json.Marshal(c.In)
		require.NoError(t, err)
		got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`visible(`+string(in)+`)`))
		require.NoError(t, err)
		assert.Equal(t, termtext.Safe(c.In, '\n', '\t'), got, c.Name)
		termtexttest.Check(t, c, got, '\n', '\t')
	}
}

func sessionOf(t *testing.T, s *server) string {
	infos, err := s.store.List(context.Background())
	require.NoError(t, err)
	require.Len(t, infos, 1)
	return infos[0].ID
}
