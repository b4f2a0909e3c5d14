package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/termtext"
)

// What a model or a tool writes reaches a person's terminal through show,
// tail, ls and verify. These sessions hold text that would clear the
// screen (CSI 2J), write the clipboard (OSC 52), make a hyperlink (OSC 8),
// start a CSI with a C1 control (U+009B), reorder the line with bidi
// controls, and Chinese text, two columns a character.

const (
	// hostileID is the id of a session that succeeds; its title and
	// session id hold Chinese text and bidi controls too.
	hostileID = "会话\u202ehostile"
	// brokenID is the id of a session whose tool and model fail with
	// hostile errors.
	brokenID = "broken"

	chinese = "请读取这个文件并告诉我里面写了什么内容谢谢你的帮助我们需要尽快完成这个任务"
)

type noteIn struct {
	Text string `json:"text" validate:"required"`
}

// hostileResult is what the note tool returns.
const hostileResult = "\x1b[2J\x1b[H" + // clear the screen, cursor home
	"\x1b]52;c;cm0gLXJmIH4=\x07" + // write the clipboard
	"\x1b]8;;https://evil.example/\x07点击这里\x1b]8;;\x07 " + // a hyperlink
	"\u009b31m红色\x7f " + // C1 CSI, DEL
	"\u202eexe.txt\u202c \u2066隔离\u2069 \u200f\u061c " + // bidi controls
	chinese + "\n" +
	"第二行\tafter a tab\r\x1b[2Kfake line"

// hostileReply is the assistant's answer.
const hostileReply = "完成了。\x1b[1A\x1b[2K\r" + chinese + " \u009b2J \u202dabc\u202c " + chinese

func recordHostile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{Now: fixedClock()})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	note := agentrt.NewTool("write_note", "Write a note.", func(_ context.Context, in noteIn) (string, error) {
		return hostileResult + " " + in.Text, nil
	}, agentrt.ReadOnly())
	p := agenttest.Script(
		// A tool input can hold C1 and bidi controls as they are (JSON
		// allows them in strings) and escapes that decode to ESC.
		agenttest.CallTool("write_note", `{"text":"`+chinese+` \u001b[2J \u009b2J `+"\u009b1m \u202e"+chinese+`"}`),
		agenttest.Reply(hostileReply),
	)
	runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{note}, Planner: p, Store: store}, hostileID,
		"\x1b]0;pwned\x07"+chinese+"\u202e"+chinese)

	check := agentrt.NewTool("check", "Check.", func(_ context.Context, in noteIn) (string, error) {
		return "", errors.New("检查失败\x1b[31m red \x1b[0m\u009b2J\u202e" + chinese)
	}, agentrt.ReadOnly())
	failure := &agentrt.ProviderError{Provider: "scripted", StatusCode: 500, Kind: agentrt.ErrOverloaded, Message: "\x1b[2J服务器错误\u202e" + chinese}
	p = agenttest.Script(
		agenttest.CallTool("check", `{"text":"`+chinese+`"}`),
		agenttest.Fail(failure), agenttest.Fail(failure),
	)
	runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{check}, Planner: p, Store: store,
		Retry: agentrt.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}, brokenID, chinese)
	return dir
}

// stripStyles removes the printer's own colour codes, and only them.
func stripStyles(s string) string {
	for _, st := range []string{sReset, sBold, sDim, sRed, sGreen, sYellow, sBlue, sCyan} {
		s = strings.ReplaceAll(s, st, "")
	}
	return s
}

// requireTerminalSafe checks that out, with the printer's colour codes
// removed when color is on, sends nothing to the terminal that it would
// interpret: no ESC, no other control character but the newline, no DEL,
// no C1 control, no bidi control, no invalid UTF-8.
func requireTerminalSafe(t *testing.T, out string, color bool) string {
	t.Helper()
	if color {
		require.Contains(t, out, "\x1b[", "colour is on")
		out = stripStyles(out)
	}
	require.NotContains(t, out, "\x1b", "no escape byte but the printer's own colour codes")
	requireNoControls(t, out, "\n", "the terminal")
	return out
}

// requireNoControls checks that s is valid UTF-8 with no control
// character but those in keep: no other C0 control, no DEL, no C1
// control, no bidi control. where names what s reaches.
func requireNoControls(t *testing.T, s, keep, where string) {
	t.Helper()
	require.True(t, utf8.ValidString(s), "valid UTF-8")
	for i, r := range s {
		switch {
		case r < 0x20 && !strings.ContainsRune(keep, r), r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			require.Failf(t, "a control character reaches "+where, "%U at byte %d of:\n%s", r, i, s)
		}
	}
}

// requireWidth checks that every line of out but the first skip lines
// takes at most n terminal columns.
func requireWidth(t *testing.T, out string, n, skip int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if i >= skip {
			require.LessOrEqual(t, termtext.Width(l), n, "line %d is %d columns: %q", i+1, termtext.Width(l), l)
		}
	}
}

func TestShowHostileText(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	ctx := context.Background()
	for _, color := range []string{"never", "always"} {
		t.Run("color "+color, func(t *testing.T) {
			var out, errb strings.Builder
			require.Equal(t, 0, run(ctx, []string{"show", "-color", color, "-width", "40", filepath.Join(dir, hostileID)}, &out, &errb), errb.String())
			got := requireTerminalSafe(t, out.String(), color == "always")
			requireWidth(t, got, 40, 0)
			require.True(t, strings.HasPrefix(got, "COMPLETED: run 1 completed\n"), got)
			require.Contains(t, got, `session 会话\u202ehostile`)
			require.Regexp(t, `(?m)^    « 完成了。\\x1b\[1A\\x1b\[2K 请读取这个…$`, got, "the reply on one line, escaped and cut by columns")
			require.Regexp(t, `(?m)^    ✓ write_note call_1 ok`, got)

			// The broken session: errors too. Its headline is never cut.
			out.Reset()
			require.Equal(t, 0, run(ctx, []string{"show", "-color", color, "-width", "40", filepath.Join(dir, brokenID)}, &out, &errb), errb.String())
			got = requireTerminalSafe(t, out.String(), color == "always")
			requireWidth(t, got, 40, 1)
			head, _, _ := strings.Cut(got, "\n")
			require.Contains(t, head, `FAILED at the provider layer`)
			require.Contains(t, head, `\x1b[2J服务器错误\u202e`+chinese)
		})
	}
}

func TestShowHostileTextFull(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	ctx := context.Background()
	for _, color := range []string{"never", "always"} {
		var out, errb strings.Builder
		require.Equal(t, 0, run(ctx, []string{"show", "-color", color, "-full", filepath.Join(dir, hostileID)}, &out, &errb), errb.String())
		got := requireTerminalSafe(t, out.String(), color == "always")
		for _, want := range []string{
			// The result, whole, line by line, escaped.
			`\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\a\x1b]8;;https://evil.example/\a点击这里\x1b]8;;\a \u009b31m红色\x7f \u202eexe.txt\u202c \u2066隔离\u2069 \u200f\u061c ` + chinese + "\n",
			"\n" + strings.Repeat(" ", 6+len("result: ")) + `第二行  after a tab\r\x1b[2Kfake line`,
			// The input: escapes in the JSON stay as they are, the
			// characters themselves are shown escaped.
			`input:  {"text":"` + chinese + ` \u001b[2J \u009b2J \u009b1m \u202e` + chinese + `"}`,
			// The reply.
			`« 完成了。\x1b[1A\x1b[2K\r` + chinese + ` \u009b2J \u202dabc\u202c ` + chinese + "\n",
		} {
			require.Contains(t, got, want)
		}
		out.Reset()
		require.Equal(t, 0, run(ctx, []string{"show", "-color", color, "-full", filepath.Join(dir, brokenID)}, &out, &errb), errb.String())
		got = requireTerminalSafe(t, out.String(), color == "always")
		require.Contains(t, got, `result: tool "check": 检查失败\x1b[31m red \x1b[0m\u009b2J\u202e`+chinese)
	}
}

func TestTailHostileText(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	for _, color := range []bool{false, true} {
		for _, id := range []string{hostileID, brokenID} {
			var out strings.Builder
			require.NoError(t, tail(context.Background(), filepath.Join(dir, id), false, time.Millisecond, textOptions{width: 40, color: color}, &out))
			got := requireTerminalSafe(t, out.String(), color)
			requireWidth(t, got, 40, 1)
			require.Regexp(t, `(?m)^    [✓✗] (write_note|check) call_1 `, got)
		}
	}
}

// TestLsHostileTitle lists a session whose id and title hold Chinese
// text and controls: the columns line up in terminal columns, the title is
// cut to 50 columns, and nothing is sent to the terminal as is.
func TestLsHostileTitle(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	var out, errb strings.Builder
	require.Equal(t, 0, run(context.Background(), []string{"ls", dir}, &out, &errb), errb.String())
	got := requireTerminalSafe(t, out.String(), false)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	require.Len(t, lines, 3, got)
	require.True(t, strings.HasPrefix(lines[1], `会话\u202ehostile  `) || strings.HasPrefix(lines[2], `会话\u202ehostile  `), got)

	// Where each column starts, in terminal columns.
	gap := regexp.MustCompile(`  +`)
	starts := func(l string) []int {
		var cols []int
		for _, m := range gap.FindAllStringIndex(l, -1) {
			cols = append(cols, termtext.Width(l[:m[1]]))
		}
		return cols
	}
	head := starts(lines[0])
	require.Len(t, head, 10, lines[0])
	for _, l := range lines[1:] {
		require.Equal(t, head, starts(l)[:10], "the columns line up:\n%s", got)
		title := l[gap.FindAllStringIndex(l, -1)[9][1]:]
		require.LessOrEqual(t, termtext.Width(title), 50, "title %q", title)
		require.True(t, strings.HasSuffix(title, "…"), "title %q is cut", title)
		require.True(t, strings.HasPrefix(title, `\x1b]0;pwned\a请读取`) || strings.HasPrefix(title, `请读取`), "title %q", title)
	}
}

// TestVerifyHostileName verifies a damaged session whose file name holds
// a C1 and a bidi control: the finding names the file, escaped.
func TestVerifyHostileName(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	data, err := os.ReadFile(filepath.Join(dir, hostileID+".jsonl"))
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "坏\u009b2J\u202e.jsonl")
	require.NoError(t, os.WriteFile(name, append(data, "{\"kind\":\"mess\x1b[2J\n"...), 0o600))
	var out, errb strings.Builder
	require.Equal(t, 1, run(context.Background(), []string{"verify", name}, &out, &errb), errb.String())
	got := requireTerminalSafe(t, out.String(), false)
	require.Contains(t, got, `坏\u009b2J\u202e.jsonl:`)
	require.Contains(t, got, ": tail: ")

	// An error names the session as given.
	out.Reset()
	require.Equal(t, 2, run(context.Background(), []string{"show", filepath.Join(dir, "nope\x1b[2J\u202e")}, &out, &errb))
	require.Empty(t, out.String())
	requireTerminalSafe(t, errb.String(), false)
	require.Contains(t, errb.String(), `nope\x1b[2J\u202e`)
}

// TestHTMLHostileText renders the hostile sessions as a page: a bidi
// override would reorder what a person reads in the browser too, so the
// page holds no control character but newlines and tabs, and shows each
// one escaped instead.
func TestHTMLHostileText(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	for _, id := range []string{hostileID, brokenID} {
		var out, errb strings.Builder
		require.Equal(t, 0, run(context.Background(), []string{"html", filepath.Join(dir, id)}, &out, &errb), errb.String())
		page := out.String()
		requireNoControls(t, page, "\n\t", "the page of "+id)
		if id == hostileID {
			require.Contains(t, page, `会话\u202ehostile`)
			require.Contains(t, page, `\x1b[2J`)
			require.Contains(t, page, chinese)
		}
	}
}

// TestTailCommand runs `agentrt tail` and `agentrt tail -f` through the
// command's entry point: without -f it prints the timeline and exits 0;
// with -f it prints the same, keeps following, and exits 0 when
// interrupted.
func TestTailCommand(t *testing.T) {
	t.Parallel()
	dir := recordHostile(t)
	path := filepath.Join(dir, hostileID)
	var once, errb strings.Builder
	require.Equal(t, 0, run(context.Background(), []string{"tail", "-width", "60", "-color", "never", path}, &once, &errb), errb.String())
	require.Contains(t, once.String(), "■ end:")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		var errf strings.Builder
		c := run(ctx, []string{"tail", "-f", "-interval", "1ms", "-width", "60", "-color", "never", path}, pw, &errf)
		pw.Close()
		code <- c
	}()
	var followed strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		followed.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "■ end:") {
			cancel() // interrupted once the run's end is shown
			go io.Copy(io.Discard, pr)
			break
		}
	}
	require.Equal(t, 0, <-code)
	assert.Equal(t, once.String(), followed.String(), "-f prints the same timeline first")
}
