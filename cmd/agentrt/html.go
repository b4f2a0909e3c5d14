package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/timeline"
)

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"dur":    dur,
	"plural": plural,
	"base":   filepath.Base,
	"utc":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
}).Parse(pageHTML))

func cmdHTML(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("html", stderr)
	out := fs.String("o", "", "write to this file instead of standard output")
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
	var buf bytes.Buffer
	if err := renderHTML(&buf, s); err != nil {
		return err
	}
	if *out != "" {
		return os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// The page's data: the timeline with every bar placed on its run's time
// axis, in percent.
type page struct {
	S         *timeline.Session
	Head      string
	HeadLayer string
	Runs      []pageRun
}

type pageRun struct {
	*timeline.Run
	Dur   string
	Ticks []pageTick
	Turns []pageTurn
	Final string // the last answer's text
}

type pageTick struct {
	Pos   template.CSS
	Label string
}

type pageTurn struct {
	*timeline.Turn
	Bar      template.CSS
	Tok      template.CSS // the token bar: input and output widths
	TokIn    template.CSS
	Tokens   string
	Shown    string
	Text     string
	Calls    []pageCall
	Failed   bool
	Finished string
}

type pageCall struct {
	*timeline.ToolCall
	Bar    template.CSS
	Input  string
	Result string
	Layer  string
}

// renderHTML writes the self-contained page of s. What a model or a tool
// wrote is shown with its control characters, bidi controls and invalid
// UTF-8 escaped, as on a terminal (termtext.Safe): a bidi override would
// reorder the text a person reads in a browser too, and the page itself
// has none of them (only newlines and tabs), so the whole page goes
// through it.
func renderHTML(w io.Writer, s *timeline.Session) error {
	_, head := headline(s)
	p := page{S: s, Head: head, HeadLayer: s.FailingLayer()}
	if r := s.LastRun(); r != nil && s.Running && !r.Ended {
		p.HeadLayer = "running"
	}
	for _, r := range s.Runs {
		p.Runs = append(p.Runs, layoutRun(r))
	}
	var b strings.Builder
	if err := pageTmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err := io.WriteString(w, termtext.Safe(b.String(), '\n', '\t'))
	return err
}

func layoutRun(r *timeline.Run) pageRun {
	start, end := r.Start, r.End
	maxTok := 1
	for _, t := range r.Turns {
		if m := t.Model; m != nil {
			if !m.Start.IsZero() && (start.IsZero() || m.Start.Before(start)) {
				start = m.Start
			}
			if e := m.Start.Add(m.Duration); e.After(end) {
				end = e
			}
			maxTok = max(maxTok, m.Usage.InputTokens+m.Usage.OutputTokens)
		}
		for _, c := range t.Calls {
			if !c.Start.IsZero() && c.Start.Before(start) {
				start = c.Start
			}
			if e := c.Start.Add(c.Duration); e.After(end) {
				end = e
			}
		}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	bar := func(t time.Time, d time.Duration) template.CSS {
		left := 0.0
		if !t.IsZero() {
			left = float64(t.Sub(start)) / float64(span) * 100
		}
		width := float64(d) / float64(span) * 100
		left = min(max(left, 0), 99.4)
		width = min(max(width, 0.6), 100-left)
		return template.CSS(fmt.Sprintf("left:%.2f%%;width:%.2f%%", left, width))
	}
	pr := pageRun{Run: r, Dur: dur(span)}
	for i := 0; i <= 4; i++ {
		pr.Ticks = append(pr.Ticks, pageTick{Pos: template.CSS(fmt.Sprintf("left:%d%%", i*25)), Label: dur(span * time.Duration(i) / 4)})
	}
	for _, t := range r.Turns {
		pt := pageTurn{Turn: t}
		if m := t.Model; m != nil {
			pt.Bar = bar(m.Start, m.Duration)
			u := m.Usage
			pt.Tokens = fmt.Sprintf("in %d · out %d", u.InputTokens, u.OutputTokens)
			if u.CacheReadTokens > 0 {
				pt.Tokens += fmt.Sprintf(" · cached %d", u.CacheReadTokens)
			}
			if u.ReasoningTokens > 0 {
				pt.Tokens += fmt.Sprintf(" · reasoning %d", u.ReasoningTokens)
			}
			pt.TokIn = template.CSS(fmt.Sprintf("width:%.1f%%", float64(u.InputTokens)/float64(maxTok)*100))
			pt.Tok = template.CSS(fmt.Sprintf("width:%.1f%%", float64(u.OutputTokens)/float64(maxTok)*100))
			if m.Messages > 0 {
				pt.Shown = fmt.Sprintf("%s, ~%d tokens", plural(m.Messages, "message"), m.Tokens)
				if m.CompactionUpTo >= 0 {
					pt.Shown += fmt.Sprintf(", compacted up to message %d", m.CompactionUpTo)
				}
			}
			pt.Failed = m.Error != ""
		}
		if t.Message != nil {
			pt.Text = t.Message.Text()
			if len(t.Calls) == 0 && pt.Text != "" {
				pr.Final = pt.Text
			}
		}
		for _, c := range t.Calls {
			pc := pageCall{ToolCall: c, Bar: bar(c.Start, c.Duration), Input: pretty(c.Input), Layer: c.Layer()}
			if c.Result != nil {
				pc.Result = c.Result.Content
			}
			pt.Calls = append(pt.Calls, pc)
		}
		pr.Turns = append(pr.Turns, pt)
	}
	return pr
}

// pretty indents JSON for reading.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}
