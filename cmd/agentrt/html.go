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
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/timeline"
)

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
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

// The page's data. The page holds the session's header and verdict as
// HTML, and its runs and turns as JSON (pageData) that its script turns
// into rows as the person scrolls, building a call's details only when
// it is opened: a session of thousands of turns opens at once.
type page struct {
	S         *timeline.Session
	Head      string
	HeadLayer string
	Badge     string
	Work      string
	Cache     string // cacheText: share read from the cache, breaks, cost
	Data      template.JS
}

type pageData struct {
	Runs []pageRun `json:"runs"`
}

type pageRun struct {
	Index   int        `json:"index"`
	Layer   string     `json:"layer"`
	Badge   string     `json:"badge"`
	Meta    string     `json:"meta"`
	Input   string     `json:"input,omitempty"`
	Ticks   []pageTick `json:"ticks"`
	Resumed []pageCall `json:"resumed,omitempty"`
	Turns   []pageTurn `json:"turns"`
	Final   string     `json:"final,omitempty"` // the last answer's text
	Status  string     `json:"status"`
	Why     string     `json:"why,omitempty"`
	Ended   bool       `json:"ended"`
}

type pageTick struct {
	Pos   string `json:"pos"`
	Label string `json:"label"`
}

type pageTurn struct {
	N      int    `json:"n"`
	Tokens string `json:"tokens,omitempty"`
	TokIn  string `json:"tok_in,omitempty"` // the token bar: input and output widths
	TokOut string `json:"tok_out,omitempty"`
	Shown  string `json:"shown,omitempty"`
	Cost   string `json:"cost,omitempty"`
	// Break is the cause of the turn's cache break (timeline.CacheBreak),
	// BreakPart the part of the request it is in.
	Break     string     `json:"break,omitempty"`
	BreakPart string     `json:"break_part,omitempty"`
	Model     *pageCall  `json:"model,omitempty"`
	Calls     []pageCall `json:"calls,omitempty"`
}

// pageCall is a row that opens: a model call or a tool call.
type pageCall struct {
	Kind    string      `json:"kind"` // model, tool, or resumed (a call of an earlier turn)
	ID      string      `json:"id,omitempty"`
	Of      string      `json:"of,omitempty"` // a resumed call's tool_use id
	Name    string      `json:"name"`
	Outcome string      `json:"outcome,omitempty"`
	Layer   string      `json:"layer,omitempty"`
	Class   string      `json:"cls,omitempty"`
	Badges  []pageBadge `json:"badges,omitempty"`
	Bar     string      `json:"bar,omitempty"`
	Dur     string      `json:"dur"`
	KV      []pageKV    `json:"kv,omitempty"`
	Pre     []pagePre   `json:"pre,omitempty"`
}

type pageBadge struct {
	Attr  string `json:"k"` // data-layer or data-outcome
	Value string `json:"v"`
	Text  string `json:"t"`
	Layer bool   `json:"layer,omitempty"` // the layer a call failed at
}

type pageKV struct {
	Key   string `json:"k"`
	Value string `json:"v"`
	Class string `json:"c,omitempty"`
}

type pagePre struct {
	Label string `json:"l"`
	Text  string `json:"t"`
	Class string `json:"c,omitempty"`
}

// renderHTML writes the self-contained page of s. What a model or a tool
// wrote is shown with its control characters, bidi controls and invalid
// UTF-8 escaped, as on a terminal (termtext.Safe): a bidi override would
// reorder the text a person reads in a browser too. The data's strings
// are made safe before they are encoded, and the page has no such
// character of its own (only newlines and tabs), so the whole page goes
// through it too.
func renderHTML(w io.Writer, s *timeline.Session) error {
	layer, head := s.Verdict()
	p := page{S: s, Head: head, HeadLayer: layer, Badge: layer, Work: workText(s, dur), Cache: cacheText(s)}
	if p.Badge == timeline.LayerNone {
		p.Badge = "completed"
		if s.LastRun() == nil {
			p.Badge = "empty"
		}
	}
	var d pageData
	for _, r := range s.Runs {
		d.Runs = append(d.Runs, layoutRun(s, r))
	}
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return err
	}
	// In a script element only "<" can end it ("</script", "<!--"):
	// escaped, the data is one text node whatever the content holds.
	p.Data = template.JS(bytes.ReplaceAll(bytes.TrimSpace(data.Bytes()), []byte("<"), []byte(`\u003c`)))
	var b strings.Builder
	if err := pageTmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err := io.WriteString(w, safe(b.String()))
	return err
}

// safe shows control characters, bidi controls and invalid UTF-8 escaped.
func safe(s string) string { return termtext.Safe(s, '\n', '\t') }

func layoutRun(s *timeline.Session, r *timeline.Run) pageRun {
	// The axis spans the run's own time: a call of one of its turns that a
	// later run decided and ran is drawn there, not here.
	start, end := r.Start, r.End
	maxTok := 1
	widen := func(t time.Time, d time.Duration) {
		if t.IsZero() {
			return
		}
		if start.IsZero() || t.Before(start) {
			start = t
		}
		if e := t.Add(d); e.After(end) {
			end = e
		}
	}
	for _, t := range r.Turns {
		if m := t.Model; m != nil {
			widen(m.Start, m.Duration)
			maxTok = max(maxTok, m.Usage.InputTokens+m.Usage.OutputTokens)
		}
		for _, c := range t.Calls {
			if c.ResumedIn == 0 {
				widen(c.Start, c.Duration)
			}
		}
	}
	for _, c := range r.Resumed {
		widen(c.Start, c.Duration)
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	bar := func(t time.Time, d time.Duration) string {
		left := 0.0
		if !t.IsZero() {
			left = float64(t.Sub(start)) / float64(span) * 100
		}
		width := float64(d) / float64(span) * 100
		left = min(max(left, 0), 99.4)
		width = min(max(width, 0.6), 100-left)
		return fmt.Sprintf("left:%.2f%%;width:%.2f%%", left, width)
	}
	// The words and order of show's run line.
	meta := plural(len(r.Turns), "turn") + " · " + dur(r.Duration())
	if r.Waited > 0 {
		meta += " · waited " + dur(r.Waited) + " for a person"
	}
	meta += fmt.Sprintf(" · %s · tokens in %d out %d", r.Status(), r.Usage.InputTokens, r.Usage.OutputTokens)
	if r.TraceID != "" {
		meta += " · trace " + r.TraceID
	}
	pr := pageRun{Index: r.Index, Layer: r.Layer, Badge: r.Layer, Meta: safe(meta), Input: safe(r.Input),
		Status: r.Status(), Why: safe(r.Why()), Ended: r.Ended || r.Layer != ""}
	switch {
	case r.Layer != timeline.LayerNone:
	case r.Completed():
		pr.Badge = "completed"
	default:
		pr.Badge = "running"
	}
	for i := 0; i <= 4; i++ {
		pr.Ticks = append(pr.Ticks, pageTick{Pos: fmt.Sprintf("left:%d%%", i*25), Label: dur(span * time.Duration(i) / 4)})
	}
	for _, c := range r.Resumed {
		pc := toolRow(s, c, bar(c.Start, c.Duration))
		pc.Kind, pc.Of, pc.ID = "resumed", c.ID, ""
		pc.Name = c.Tool + " (turn " + strconv.Itoa(turnOf(s, c)) + ", resumed)"
		pr.Resumed = append(pr.Resumed, pc)
	}
	for _, t := range r.Turns {
		pt := pageTurn{N: t.N}
		if m := t.Model; m != nil {
			u := m.Usage
			pt.Tokens = fmt.Sprintf("in %d · out %d", u.InputTokens, u.OutputTokens)
			if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
				pt.Tokens = fmt.Sprintf("in %d (uncached %d · cache read %d · cache write %d) · out %d", u.InputTokens, m.Uncached(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens)
			}
			if u.ReasoningTokens > 0 {
				pt.Tokens += fmt.Sprintf(" · reasoning %d", u.ReasoningTokens)
			}
			pt.TokIn = fmt.Sprintf("width:%.1f%%", float64(u.InputTokens)/float64(maxTok)*100)
			pt.TokOut = fmt.Sprintf("width:%.1f%%", float64(u.OutputTokens)/float64(maxTok)*100)
			if m.Messages > 0 {
				pt.Shown = fmt.Sprintf("%s, ~%d tokens", plural(m.Messages, "message"), m.Tokens)
				if m.CompactionUpTo >= 0 {
					pt.Shown += fmt.Sprintf(", compacted up to message %d", m.CompactionUpTo)
				}
			}
			if m.Cost != nil {
				pt.Cost = "cost " + costText(*m.Cost)
			}
			if b := t.CacheBreak; b != nil {
				pt.Break, pt.BreakPart = safe(b.Cause), b.Part
			}
			mc := modelRow(t, bar(m.Start, m.Duration))
			pt.Model = &mc
		}
		if t.Message != nil {
			if text := t.Message.Text(); len(t.Calls) == 0 && text != "" {
				pr.Final = safe(text)
			}
		}
		for _, c := range t.Calls {
			b := ""
			if c.ResumedIn == 0 {
				b = bar(c.Start, c.Duration)
			}
			pt.Calls = append(pt.Calls, toolRow(s, c, b))
		}
		pr.Turns = append(pr.Turns, pt)
	}
	return pr
}

func modelRow(t *timeline.Turn, bar string) pageCall {
	m := t.Model
	pc := pageCall{Kind: "model", Name: "model", Layer: m.Layer, Bar: bar, Dur: dur(m.Duration)}
	if m.Model != "" {
		pc.Name += " " + safe(m.Model)
	}
	if m.Error != "" {
		pc.Class = "err"
	}
	if len(m.Retries) > 0 {
		pc.Badges = append(pc.Badges, pageBadge{Attr: "layer", Value: timeline.LayerProvider, Text: plural(len(m.Retries), "retry")})
	}
	if m.Error != "" {
		pc.Badges = append(pc.Badges, pageBadge{Attr: "layer", Value: m.Layer, Text: m.Layer, Layer: true})
	}
	kv := func(k, v string) { pc.KV = append(pc.KV, pageKV{Key: k, Value: safe(v)}) }
	if m.Provider != "" {
		v := m.Provider
		if m.Model != "" {
			v += " / " + m.Model
		}
		kv("provider", v)
	}
	kv("started", m.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	d := dur(m.Duration)
	if m.TTFT > 0 {
		d += " (first token after " + dur(m.TTFT) + ")"
	}
	kv("duration", d)
	u := m.Usage
	tok := fmt.Sprintf("in %d · out %d", u.InputTokens, u.OutputTokens)
	if u.ReasoningTokens > 0 {
		tok += fmt.Sprintf(" · reasoning %d", u.ReasoningTokens)
	}
	kv("tokens", tok)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		kv("input", fmt.Sprintf("uncached %d · cache read %d · cache write %d", m.Uncached(), u.CacheReadTokens, u.CacheWriteTokens))
	}
	if m.Cost != nil {
		kv("cost", costText(*m.Cost))
	}
	if b := t.CacheBreak; b != nil {
		kv("cache break", b.Cause)
	}
	if m.Messages > 0 {
		shown := fmt.Sprintf("%s, ~%d tokens", plural(m.Messages, "message"), m.Tokens)
		if m.CompactionUpTo >= 0 {
			shown += fmt.Sprintf(", compaction up to message %d", m.CompactionUpTo)
		}
		kv("shown", shown)
	}
	if m.Finish != "" {
		kv("finish", m.Finish)
	}
	if m.SpanID != "" {
		kv("span", m.TraceID+" / "+m.SpanID)
	}
	pre := func(l, text, class string) {
		pc.Pre = append(pc.Pre, pagePre{Label: l, Text: safe(text), Class: class})
	}
	for _, rt := range m.Retries {
		pre(fmt.Sprintf("attempt %d failed (%s), retried after %s", rt.Attempt, rt.Layer, dur(rt.Wait)), rt.Error, "error")
	}
	if m.Error != "" {
		pre("error at the "+m.Layer+" layer", m.Error, "error")
	}
	for _, in := range t.Input {
		pre("user", in.Content, "")
	}
	if c := t.Compaction; c != nil {
		pre(fmt.Sprintf("compaction: summary of messages before %d", c.UpTo), c.Summary, "")
	}
	if t.Message != nil {
		if text := t.Message.Text(); text != "" {
			pre("assistant", text, "message")
		}
	}
	return pc
}

func toolRow(s *timeline.Session, c *timeline.ToolCall, bar string) pageCall {
	pc := pageCall{Kind: "tool", ID: safe(c.ID), Name: safe(c.Tool), Outcome: c.Outcome, Layer: c.Layer(), Bar: bar, Dur: dur(c.Duration)}
	switch c.Layer() {
	case timeline.LayerTool, timeline.LayerProvider, timeline.LayerPlanner, timeline.LayerStore:
		pc.Class = "err"
	case timeline.LayerPermission, timeline.LayerHook, timeline.LayerCancellation:
		pc.Class = "warn"
	case timeline.LayerCrash:
		pc.Class = "crash"
	}
	if c.ResumedIn > 0 {
		pc.Dur = "in run " + strconv.Itoa(c.ResumedIn)
	}
	pc.Badges = append(pc.Badges, pageBadge{Attr: "outcome", Value: c.Outcome, Text: c.Outcome})
	if l := c.Layer(); l != "" {
		pc.Badges = append(pc.Badges, pageBadge{Attr: "layer", Value: l, Text: l, Layer: true})
	}
	kv := func(k, v, class string) { pc.KV = append(pc.KV, pageKV{Key: k, Value: safe(v), Class: class}) }
	kv("tool_use id", c.ID, "")
	if !c.Start.IsZero() {
		kv("started", c.Start.UTC().Format("2006-01-02 15:04:05 UTC"), "")
	}
	kv("duration", dur(c.Duration), "")
	switch d := c.Decision; {
	case d != nil:
		v := "denied by " + d.Source
		if d.Allow {
			v = "allowed by " + d.Source
		}
		if c.ResumedIn > 0 {
			v += " in run " + strconv.Itoa(c.ResumedIn)
		}
		if d.Reason != "" {
			v += ": " + d.Reason
		}
		kv("decision", v, "decision")
	case c.Outcome == timeline.OutcomeOK || c.Outcome == timeline.OutcomeToolError || c.Outcome == timeline.OutcomeTimeout || c.Outcome == timeline.OutcomePanic:
		kv("decision", "allowed (read-only tool, by policy: not recorded)", "decision")
	default:
		kv("decision", "-", "decision")
	}
	if sa := c.SubAgent; sa != nil {
		kv("sub-agent", sa.Agent+": session "+sa.SessionID, "")
	}
	if c.SpanID != "" {
		kv("span", c.TraceID+" / "+c.SpanID, "")
	}
	result, class := "", "result"
	if c.Result != nil {
		result = c.Result.Content
	}
	if c.Layer() != "" {
		class += " error"
	}
	pc.Pre = append(pc.Pre, pagePre{Label: "input", Text: safe(pretty(c.Input)), Class: "input"}, pagePre{Label: "result", Text: safe(result), Class: class})
	if c.Error != "" {
		pc.Pre = append(pc.Pre, pagePre{Label: "error", Text: safe(c.Error), Class: "error"})
	}
	return pc
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
