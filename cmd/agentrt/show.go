package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/timeline"
	"golang.org/x/term"
)

var errUsage = errors.New("usage")

// textOptions says how a timeline is printed.
type textOptions struct {
	full  bool // whole messages, no cutting
	run   int  // only this run (0: all)
	turn  int  // only this turn of the session (0: all)
	width int  // cut lines to this many columns (0: no cut)
	color bool
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agentrt "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// parse parses fs, allowing flags after the arguments too.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func (o *textOptions) flags(fs *flag.FlagSet, color *string) {
	fs.BoolVar(&o.full, "full", false, "show whole messages, inputs and results")
	fs.IntVar(&o.run, "run", 0, "show only run R")
	fs.IntVar(&o.turn, "turn", 0, "show only turn N (turns are numbered on across the session's runs)")
	fs.IntVar(&o.width, "width", 0, "cut lines to N columns (default: the terminal's width)")
	fs.StringVar(color, "color", "auto", "colours: auto (on a terminal), always or never")
}

// settle fills in the width and colour from the terminal w.
func (o *textOptions) settle(w io.Writer, color string) error {
	tty := false
	fd := -1
	if f, ok := w.(*os.File); ok {
		fd = int(f.Fd())
		tty = term.IsTerminal(fd)
	}
	switch color {
	case "auto":
		o.color = tty && os.Getenv("NO_COLOR") == ""
	case "always":
		o.color = true
	case "never":
		o.color = false
	default:
		return fmt.Errorf("-color %q: want auto, always or never", color)
	}
	if o.width == 0 && !o.full {
		o.width = 100
		if tty {
			if cols, _, err := term.GetSize(fd); err == nil && cols > 20 {
				o.width = cols
			}
		} else if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 20 {
			o.width = c
		}
	}
	if o.full {
		o.width = 0
	}
	return nil
}

func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("show", stderr)
	var o textOptions
	var color string
	o.flags(fs, &color)
	asJSON := fs.Bool("json", false, "print the timeline as JSON")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	s, err := timeline.Open(ctx, rest[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, filterRuns(s, o.run, o.turn))
	}
	if err := o.settle(stdout, color); err != nil {
		return err
	}
	return renderText(stdout, s, o)
}

// writeJSON writes v as indented JSON. Bytes that are not UTF-8 (a tool
// input in a damaged session file is written as it is) become U+FFFD:
// outside strings JSON is ASCII, so the output stays valid JSON.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD")))
	return err
}

// filterRuns returns s with only run r and turn n (0: all).
func filterRuns(s *timeline.Session, r, n int) *timeline.Session {
	if r == 0 && n == 0 {
		return s
	}
	c := *s
	c.Runs = nil
	for _, run := range s.Runs {
		if r != 0 && run.Index != r {
			continue
		}
		if n != 0 {
			rc := *run
			rc.Turns = nil
			for _, t := range run.Turns {
				if t.N == n {
					rc.Turns = append(rc.Turns, t)
				}
			}
			run = &rc
		}
		c.Runs = append(c.Runs, run)
	}
	return &c
}

// ANSI styles.
const (
	sReset  = "\x1b[0m"
	sBold   = "\x1b[1m"
	sDim    = "\x1b[2m"
	sRed    = "\x1b[31m"
	sGreen  = "\x1b[32m"
	sYellow = "\x1b[33m"
	sBlue   = "\x1b[34m"
	sCyan   = "\x1b[36m"
)

// printer writes lines cut to a width, with optional colour.
type printer struct {
	w   io.Writer
	o   textOptions
	err error
}

func (p *printer) style(st, s string) string {
	if !p.o.color || st == "" {
		return s
	}
	return st + s + sReset
}

// line prints one line, cut to the width in terminal columns: parts
// alternate style and text. The text comes from the session (what a model
// or a tool wrote), so it is made safe first: control characters, escape
// sequences and bidi controls are shown escaped, never sent to the
// terminal; only the printer's own styles are.
func (p *printer) line(indent int, parts ...string) {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent))
	left := p.o.width - indent
	for i := 0; i+1 < len(parts); i += 2 {
		st, text := parts[i], termtext.Safe(parts[i+1])
		if p.o.width > 0 {
			if left <= 0 {
				break
			}
			if more(parts[i+2:]) {
				// A part that fills the line exactly ends in an ellipsis
				// too: the parts after it are left out.
				text = termtext.Cut(text+" …", left)
				text = strings.TrimSuffix(text, " …")
			} else {
				text = termtext.Cut(text, left)
			}
			left -= termtext.Width(text)
		}
		b.WriteString(p.style(st, text))
	}
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, strings.TrimRight(b.String(), " "))
	}
}

// more reports whether parts (style, text pairs) hold any text.
func more(parts []string) bool {
	for i := 1; i < len(parts); i += 2 {
		if parts[i] != "" {
			return true
		}
	}
	return false
}

// block prints text: on one line cut to the width, or whole with -full,
// line by line.
func (p *printer) block(indent int, st, label, text string) {
	if !p.o.full {
		p.line(indent, sDim, label, st, oneLine(text))
		return
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	p.line(indent, sDim, label, st, lines[0])
	pad := termtext.Width(label)
	for _, l := range lines[1:] {
		p.line(indent+pad, st, l)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// dur formats a duration for people: 0s, 850µs, 12ms, 1.4s, 2m05s.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// pdur is dur padded to a fixed width, so that columns line up and a
// line's length does not depend on how long a call took.
func pdur(d time.Duration) string { return fmt.Sprintf("%5s", dur(d)) }

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if strings.HasSuffix(one, "y") {
		return strconv.Itoa(n) + " " + one[:len(one)-1] + "ies"
	}
	return strconv.Itoa(n) + " " + one + "s"
}

func layerStyle(layer string) string {
	switch layer {
	case timeline.LayerNone:
		return sGreen
	case timeline.LayerPermission, timeline.LayerHook, timeline.LayerLimit, timeline.LayerCancellation:
		return sYellow
	}
	return sRed
}

func outcomeMark(o string) (mark, st string) {
	switch o {
	case timeline.OutcomeOK:
		return "✓", sGreen
	case timeline.OutcomePending:
		return "…", sCyan
	case timeline.OutcomeDenied, timeline.OutcomeBlocked, timeline.OutcomeCancelled:
		return "⊘", sYellow
	}
	return "✗", sRed
}

// headline says, in one line, how the session's last run ended and where
// to look (timeline.Session.Verdict), with its style.
func headline(s *timeline.Session) (style, text string) {
	layer, text := s.Verdict()
	switch {
	case s.LastRun() == nil:
		return sDim, text
	case layer == "running":
		return sCyan, text
	}
	return layerStyle(layer) + sBold, text
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tokens(in, out int) string { return fmt.Sprintf("in %d out %d", in, out) }

// turnTokens is a model call's tokens, its input split into what the
// provider's cache did not serve, read and wrote when the cache did any.
func turnTokens(m *timeline.ModelCall) string {
	u := m.Usage
	if u.CacheReadTokens == 0 && u.CacheWriteTokens == 0 {
		return tokens(u.InputTokens, u.OutputTokens)
	}
	return fmt.Sprintf("in %d (uncached %d, cache read %d, write %d) out %d",
		u.InputTokens, m.Uncached(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens)
}

// costText formats a cost in the currency of the Agent's Prices, to the
// millionth, without trailing zeros: 0.0049, 0.00004, 12.5.
func costText(c float64) string {
	s := strings.TrimRight(strconv.FormatFloat(c, 'f', 6, 64), "0")
	return strings.TrimSuffix(s, ".")
}

// cacheText says what the session's cache did, for its header: the
// share of input tokens read from the cache, the turns that broke the
// cached prefix, and the cost when the records have one; "" when there
// is nothing to say.
func cacheText(s *timeline.Session) string {
	var parts []string
	if share, ok := s.CacheReadShare(); ok && s.Usage.CacheReadTokens+s.Usage.CacheWriteTokens > 0 {
		parts = append(parts, "cache read "+percent(share))
	}
	if n := s.CacheBreaks(); n > 0 {
		parts = append(parts, plural(n, "cache break"))
	}
	if c, ok := s.Cost(); ok {
		parts = append(parts, "cost "+costText(c))
	}
	return strings.Join(parts, " · ")
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// renderText prints the terminal timeline of s.
func renderText(w io.Writer, s *timeline.Session, o textOptions) error {
	p := &printer{w: w, o: o}
	st, head := headline(s)
	p.o.width = 0 // the headline is never cut
	p.line(0, st, head)
	p.o.width = o.width
	meta := fmt.Sprintf("created %s · %s · %s · %s · tokens %s", s.Created.UTC().Format("2006-01-02 15:04:05"),
		plural(len(s.Runs), "run"), plural(s.Turns(), "turn"), workText(s, pdur), tokens(s.Usage.InputTokens, s.Usage.OutputTokens))
	if c := cacheText(s); c != "" {
		meta += " · " + c
	}
	if !s.Traced {
		meta += " · no trace records (times from line timestamps)"
	}
	p.line(0, sBold, "session "+s.ID, sDim, "  "+meta)
	if s.Tail != nil {
		p.line(0, sRed, fmt.Sprintf("damaged last line %d dropped: %v", s.Tail.Line, s.Tail.Err))
	}
	for _, r := range filterRuns(s, o.run, 0).Runs {
		p.line(0, "", "")
		renderRun(p, s, r)
	}
	return p.err
}

// workText says how long the session's runs worked and waited for a
// person, as every renderer does, with d formatting a duration.
func workText(s *timeline.Session, d func(time.Duration) string) string {
	work, waited := s.Work()
	text := d(work) + " of work"
	if waited > 0 {
		text += ", " + d(waited) + " waiting for a person"
	}
	return text
}

func renderRun(p *printer, s *timeline.Session, r *timeline.Run) {
	status := r.Status()
	head := []string{sBold, fmt.Sprintf("run %d", r.Index), sDim, fmt.Sprintf(" · %s · %s · %s · ", r.Start.UTC().Format("15:04:05"), plural(len(r.Turns), "turn"), pdur(r.Duration()))}
	if r.Waited > 0 {
		head = append(head, sCyan, "waited "+dur(r.Waited)+" for a person", sDim, " · ")
	}
	p.line(0, append(head, layerStyle(r.Layer), status, sDim, " · tokens "+tokens(r.Usage.InputTokens, r.Usage.OutputTokens))...)
	for _, c := range r.Resumed {
		mark, st := outcomeMark(c.Outcome)
		p.line(2, sCyan, "↻ resumed ", st, mark+" ", sBold, c.Tool, sDim, " "+c.ID+" of turn "+strconv.Itoa(turnOf(s, c))+" ", st, c.Outcome, sDim, decidedBy(c, false)+" "+pdur(c.Duration))
	}
	for _, t := range r.Turns {
		if p.o.turn != 0 && t.N != p.o.turn {
			continue
		}
		renderTurn(p, s, t)
	}
	if r.Ended || r.Layer != "" {
		end := "■ end: " + status
		if why := r.Why(); why != "" {
			p.block(2, layerStyle(r.Layer), end+": ", why)
		} else {
			p.line(2, layerStyle(r.Layer), end)
		}
	}
}

// turnOf returns the number of the turn that asked for c.
func turnOf(s *timeline.Session, c *timeline.ToolCall) int {
	for _, r := range s.Runs {
		for _, t := range r.Turns {
			for _, tc := range t.Calls {
				if tc == c {
					return t.N
				}
			}
		}
	}
	return 0
}

// decidedBy says who allowed or denied c, and, with inRun, in which run
// when a later one did.
func decidedBy(c *timeline.ToolCall, inRun bool) string {
	d := c.Decision
	if d == nil {
		return ""
	}
	who := " by " + orDash(d.Source)
	if d.Allow {
		who = " (allowed by " + orDash(d.Source) + ")"
	}
	if inRun && c.ResumedIn > 0 {
		who += " in run " + strconv.Itoa(c.ResumedIn)
	}
	return who
}

func renderTurn(p *printer, s *timeline.Session, t *timeline.Turn) {
	for _, m := range t.Input {
		p.block(2, "", "› user: ", m.Content)
	}
	if c := t.Compaction; c != nil {
		p.block(2, sBlue, fmt.Sprintf("⇊ compaction up to message %d: ", c.UpTo), c.Summary)
	}
	m := t.Model
	parts := []string{sBold, fmt.Sprintf("turn %d", t.N), "", " · model"}
	if m != nil {
		if m.Provider != "" || m.Model != "" {
			parts = append(parts, "", " "+strings.Trim(m.Provider+"/"+m.Model, "/"))
		}
		parts = append(parts, "", " "+pdur(m.Duration))
		if m.TTFT > 0 {
			parts = append(parts, sDim, " (first token "+pdur(m.TTFT)+")")
		}
		parts = append(parts, sDim, " · "+turnTokens(m))
		if m.Usage.ReasoningTokens > 0 {
			parts = append(parts, sDim, fmt.Sprintf(" reasoning %d", m.Usage.ReasoningTokens))
		}
		if m.Messages > 0 {
			shown := fmt.Sprintf(" · shown %s ~%d tok", plural(m.Messages, "msg"), m.Tokens)
			if m.CompactionUpTo >= 0 {
				shown += fmt.Sprintf(" (compacted up to %d)", m.CompactionUpTo)
			}
			parts = append(parts, sDim, shown)
		}
		if m.Cost != nil {
			parts = append(parts, sDim, " · cost "+costText(*m.Cost))
		}
		if len(m.Retries) > 0 {
			parts = append(parts, sYellow, " · "+plural(len(m.Retries), "retry"))
		}
		if m.Finish != "" {
			parts = append(parts, sDim, " · finish "+m.Finish)
		}
	}
	p.line(2, parts...)
	if b := t.CacheBreak; b != nil {
		p.line(4, sYellow, "✂ cache break: "+b.Cause)
	}
	if m != nil {
		for _, rt := range m.Retries {
			p.block(4, sYellow, fmt.Sprintf("↻ attempt %d failed (%s), retried after %s: ", rt.Attempt, orDash(rt.Layer), pdur(rt.Wait)), rt.Error)
		}
		if m.Error != "" {
			p.block(4, layerStyle(m.Layer)+sBold, fmt.Sprintf("✗ model call failed at the %s layer: ", m.Layer), m.Error)
		}
	}
	if t.Message != nil {
		if text := t.Message.Text(); text != "" {
			p.block(4, "", "« ", text)
		}
	}
	for _, c := range t.Calls {
		renderCall(p, s, c)
	}
}

func renderCall(p *printer, s *timeline.Session, c *timeline.ToolCall) {
	mark, st := outcomeMark(c.Outcome)
	parts := []string{st, mark + " ", sBold, c.Tool, sDim, " " + c.ID + " ", st, c.Outcome, sDim, decidedBy(c, true) + " " + pdur(c.Duration) + " "}
	if !p.o.full {
		parts = append(parts, "", oneLine(string(c.Input)))
		if c.Result != nil {
			parts = append(parts, sDim, " → ", st, oneLine(c.Result.Content))
		}
		p.line(4, parts...)
	} else {
		p.line(4, parts...)
		p.block(6, "", "input:  ", string(c.Input))
		if c.Result != nil {
			p.block(6, st, "result: ", c.Result.Content)
		}
	}
	if d := c.Decision; d != nil && !d.Allow && p.o.full {
		p.block(6, sYellow, "decision: ", d.Reason)
	}
	if c.Error != "" && p.o.full {
		p.block(6, st, "error:  ", c.Error)
	}
	if sa := c.SubAgent; sa != nil {
		text := "↳ sub-agent " + sa.Agent + ": session " + sa.SessionID
		if child, err := timeline.Load(context.Background(), filepath.Dir(s.File), sa.SessionID); err == nil {
			if r := child.LastRun(); r != nil {
				text += fmt.Sprintf(" · %s · %s", plural(child.Turns(), "turn"), r.Status())
			}
		}
		p.line(6, sCyan, text)
	}
}
