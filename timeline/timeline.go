// Package timeline reads a JSONL session file (docs/jsonl-format.md) into
// a timeline a person can follow: the session's runs, each run's turns,
// and in each turn the model call (duration, retries, tokens, what the
// model was shown), the tool calls (duration, outcome, the permission
// decision and who made it) and, at the end, the layer that stopped the
// run.
//
// Where a model call's request stopped repeating the previous call's, so
// that the provider's prompt cache stopped serving it, is the turn's
// [CacheBreak], with its cause, read from the request fingerprints of the
// trace ([Prefix]).
//
// Turns are numbered on across runs. A run's duration is its own time;
// the time the session waited for a person between a run that left calls
// pending and the run that resumed them is [Run.Waited]. [Run.Status] and
// [Session.Verdict] give the words every renderer uses for a stop.
//
// It reads every version-1 file. The trace records the runtime writes
// (model_call, tool_call, run) make the timeline exact; a file written
// before them still renders, with times taken from its lines' timestamps
// and the stop inferred from its messages (Session.Traced is then false).
//
// The cmd/agentrt command renders timelines in a terminal and as HTML; a
// program can render [Session] in its own UI, or marshal it as JSON.
package timeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
)

// Layers a run can stop at or a call can fail at, in [Run.Layer],
// [Problem.Layer] and [Session.FailingLayer]. They extend agentrt's
// [agentrt.Layer] values with the layers of single calls and of a process
// that died.
const (
	// LayerNone: the run completed (or is still going), as
	// [agentrt.LayerNone]. A run record's "layer":"success", written
	// before version 2 of the trace, reads as LayerNone.
	LayerNone = ""
	// Deprecated: a completed run has no layer; use LayerNone.
	LayerSuccess      = LayerNone
	LayerProvider     = "provider"     // the model API failed
	LayerPlanner      = "planner"      // the planner or compressor failed, or bad output
	LayerTool         = "tool"         // a tool failed, panicked, timed out or got invalid input
	LayerPermission   = "permission"   // the permission checker denied a call, or left it to a person
	LayerHook         = "hook"         // a hook blocked a call or refused the planner call
	LayerStore        = "store"        // the session store failed
	LayerLimit        = "limit"        // max turns, the loop guard or the budget
	LayerCancellation = "cancellation" // the context was cancelled
	// LayerCrash: the run has no end record and was followed by another
	// run, or no process holds the session: the process died.
	LayerCrash = "crash"
)

// Outcomes of a tool call, in [ToolCall.Outcome].
const (
	OutcomeOK           = "ok"
	OutcomeToolError    = "tool_error"
	OutcomeInvalidInput = "invalid_input"
	OutcomeDenied       = "denied"
	OutcomeBlocked      = "blocked"
	OutcomeTimeout      = "timeout"
	OutcomePanic        = "panic"
	OutcomeCancelled    = "cancelled"
	OutcomeInterrupted  = "interrupted" // the process died while it ran
	OutcomePending      = "pending"     // no result yet
)

// OutcomeLayer returns the layer a call with outcome o failed at, or "" for
// a call that did not fail.
func OutcomeLayer(o string) string {
	switch o {
	case OutcomeToolError, OutcomeInvalidInput, OutcomeTimeout, OutcomePanic:
		return LayerTool
	case OutcomeDenied:
		return LayerPermission
	case OutcomeBlocked:
		return LayerHook
	case OutcomeCancelled:
		return LayerCancellation
	case OutcomeInterrupted:
		return LayerCrash
	}
	return ""
}

// Session is the timeline of one session file. It is a plain value: a
// program may read, change or marshal it.
type Session struct {
	ID   string `json:"id"`
	File string `json:"file"`
	// Header is the file's first line; nil for an empty file.
	Header  *Header   `json:"header,omitempty"`
	Created time.Time `json:"created"`
	// Updated is the time of the last line.
	Updated time.Time `json:"updated"`
	Lines   int       `json:"lines"`
	// Traced is true when the file holds trace records.
	Traced bool `json:"traced"`
	// Running is true when a process held the session's lock as it was
	// read.
	Running bool   `json:"running"`
	Runs    []*Run `json:"runs"`
	// Usage is the total of every model call.
	Usage agentrt.Usage `json:"usage"`
	// Tail is the damaged last line a crash left, which readers drop; nil
	// when there is none.
	Tail *jsonl.LineError `json:"-"`
	// TailError is Tail's text, for JSON.
	TailError string `json:"tail_error,omitempty"`
}

// Header is the first line of a JSONL session file (docs/jsonl-format.md).
type Header struct {
	// Version is the format version.
	Version int `json:"version"`
	// SessionID is the id the session was created under.
	SessionID string `json:"session_id"`
	// Created is when the session file was created.
	Created time.Time `json:"created"`
	// Metadata is the JSON object given to agentrt.JSONLStore.Create,
	// copied by Fork; nil when there is none.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// ForkedFrom names the session this one was forked from, and how
	// many of its messages were copied; nil when it was not forked.
	ForkedFrom *struct {
		SessionID string `json:"session_id"`
		Messages  int    `json:"messages"`
	} `json:"forked_from,omitempty"`
}

// Run is one Run of an agent on the session.
type Run struct {
	Index int `json:"index"` // from 1
	// Input is the user's message that started the run ("" when the run
	// continued the session without one).
	Input string    `json:"input"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Ended is true when the run's end record is in the file.
	Ended bool `json:"ended"`
	// Reason is the stop reason (agentrt.StopReason), "" when not ended.
	Reason string `json:"reason,omitempty"`
	// Layer is where the run stopped: a failing layer, or LayerNone for
	// a run that completed or is still going.
	Layer string `json:"layer,omitempty"`
	// Error says why a run failed; Detail says why a run that did not
	// fail stopped where it did (a pending stop, a limit).
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Waited is how long the session waited for a person before this run
	// resumed the calls the last run left pending: waiting, not work.
	Waited time.Duration `json:"waited,omitempty"`
	// Resumed are the calls of earlier turns this run decided and ran
	// (agentrt.Agent.Resume). They stay listed in their own turns too.
	Resumed []*ToolCall   `json:"-"`
	Turns   []*Turn       `json:"turns"`
	Usage   agentrt.Usage `json:"usage"`
	Line    int           `json:"line"` // of the run's first line
	EndLine int           `json:"end_line,omitempty"`
	TraceID string        `json:"trace_id,omitempty"`
	SpanID  string        `json:"span_id,omitempty"`

	traced bool // a trace record is part of it
	base   int  // the turn of the calls it resumed (Agent.Resume), 0 if none
}

// Duration is the run's own time, from its start to its end, without the
// time it waited for a person before (see Waited).
func (r *Run) Duration() time.Duration {
	if r.Start.IsZero() || r.End.Before(r.Start) {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Completed reports whether the run completed.
func (r *Run) Completed() bool { return r.Reason == string(agentrt.StopComplete) }

// Turn is one planner call and the tool calls it asked for.
type Turn struct {
	// N numbers the session's turns, from 1, on across runs: the Nth
	// model call of the session.
	N int `json:"n"`
	// Input is the user messages sent before this turn's model call.
	Input []agentrt.Message `json:"input,omitempty"`
	Model *ModelCall        `json:"model"`
	// Message is the assistant's message; nil when the model call failed.
	Message *agentrt.Message `json:"message,omitempty"`
	Calls   []*ToolCall      `json:"calls,omitempty"`
	// Compaction is the compaction recorded before this turn's call, if
	// any.
	Compaction *agentrt.Compaction `json:"compaction,omitempty"`
	// CacheBreak is the first part of the call's request that differs
	// from the previous call's (the session's, across runs); nil when the
	// request only appended to it, for the first call, and when the
	// records hold no fingerprints (model_call "prefix").
	CacheBreak *CacheBreak `json:"cache_break,omitempty"`
	Line       int         `json:"line"` // of the assistant message

	rec int // the turn number the run's trace records use
}

// ModelCall is a turn's planner call, retries included.
type ModelCall struct {
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// TTFT is the time to the first streamed token; 0 when not streamed.
	TTFT     time.Duration `json:"ttft,omitempty"`
	Provider string        `json:"provider,omitempty"`
	Model    string        `json:"model,omitempty"`
	Retries  []Retry       `json:"retries,omitempty"`
	Usage    agentrt.Usage `json:"usage"`
	// Cost is the call's cost in the currency of the Agent's Prices; nil
	// when no prices were set.
	Cost *float64 `json:"cost,omitempty"`
	// Prefix is the fingerprint of the request; nil in files written
	// before it.
	Prefix *Prefix `json:"prefix,omitempty"`
	// Messages and Tokens are what the model was shown, after compression:
	// the number of messages and the token estimate.
	Messages int `json:"messages,omitempty"`
	Tokens   int `json:"tokens,omitempty"`
	// CompactionUpTo is the compaction in use (its UpTo), -1 for none.
	CompactionUpTo int    `json:"compaction_up_to"`
	Finish         string `json:"finish,omitempty"`
	// Error and Layer say why the call failed and where.
	Error   string `json:"error,omitempty"`
	Layer   string `json:"layer,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Traced is false when the times come from line timestamps.
	Traced bool `json:"traced"`
	Line   int  `json:"line,omitempty"`
}

// Uncached is the call's input tokens the provider's cache neither read
// nor wrote: Usage.InputTokens counts them all.
func (m *ModelCall) Uncached() int {
	return Uncached(m.Usage)
}

// Uncached is u's input tokens that the cache neither read nor wrote.
func Uncached(u agentrt.Usage) int {
	return max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
}

// Retry is a failed attempt of a model call that was retried.
type Retry struct {
	Attempt int           `json:"attempt"`
	Error   string        `json:"error"`
	Layer   string        `json:"layer,omitempty"`
	Wait    time.Duration `json:"wait"`
}

// ToolCall is one tool_use and its result.
type ToolCall struct {
	ID     string           `json:"id"`
	Tool   string           `json:"tool"`
	Input  json.RawMessage  `json:"input,omitempty"`
	Result *agentrt.Message `json:"result,omitempty"`
	// Outcome is one of the Outcome constants.
	Outcome  string        `json:"outcome"`
	Error    string        `json:"error,omitempty"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// Decision is the recorded permission decision, nil when none was
	// recorded (a read-only tool allowed by policy).
	Decision *Decision `json:"decision,omitempty"`
	// SubAgent is the child session of an agent tool.
	SubAgent *SubAgent `json:"sub_agent,omitempty"`
	// ResumedIn is the later run that decided and ran the call (the
	// run that asked for it left it to a person); 0 for the same run.
	ResumedIn  int    `json:"resumed_in,omitempty"`
	TraceID    string `json:"trace_id,omitempty"`
	SpanID     string `json:"span_id,omitempty"`
	Traced     bool   `json:"traced"`
	ResultLine int    `json:"result_line,omitempty"`

	run *Run // that asked for it
}

// Layer is the layer the call failed at or, for a denied call, the
// layer whose outcome it is; "" for a call that did not fail.
func (c *ToolCall) Layer() string { return OutcomeLayer(c.Outcome) }

// DeniedByPerson reports whether a person denied the call: an outcome of
// the permission layer, not a problem of the run.
func (c *ToolCall) DeniedByPerson() bool {
	return c.Outcome == OutcomeDenied && c.Decision != nil && c.Decision.ByPerson()
}

// Decision is a permission decision on a call.
type Decision struct {
	Allow  bool            `json:"allow"`
	Reason string          `json:"reason,omitempty"`
	Source string          `json:"source,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
	Line   int             `json:"line"`
}

// ByPerson reports whether a person made the decision: its source is
// not the program's ("policy", "hook").
func (d *Decision) ByPerson() bool {
	switch d.Source {
	case "", "policy", "hook":
		return false
	}
	return true
}

// SubAgent links a call to the session of the agent it ran.
type SubAgent struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}

// Problem is something that went wrong in a run, with its layer.
type Problem struct {
	Layer string `json:"layer"`
	Turn  int    `json:"turn"`
	What  string `json:"what"`
}

// Problems lists what went wrong in the run, in order: failed calls,
// retried model calls, and the stop itself.
func (r *Run) Problems() []Problem {
	var ps []Problem
	for _, t := range r.Turns {
		if m := t.Model; m != nil {
			for _, rt := range m.Retries {
				l := rt.Layer
				if l == "" {
					l = LayerProvider
				}
				ps = append(ps, Problem{Layer: l, Turn: t.N, What: fmt.Sprintf("model call attempt %d failed (retried after %v): %s", rt.Attempt, rt.Wait, rt.Error)})
			}
		}
		for _, c := range t.Calls {
			if l := c.Layer(); l != "" && !c.DeniedByPerson() {
				what := c.Error
				if c.Result != nil {
					what = c.Result.Content
				}
				ps = append(ps, Problem{Layer: l, Turn: t.N, What: fmt.Sprintf("%s %s %s: %s", c.Tool, c.ID, c.Outcome, what)})
			}
		}
	}
	if r.Failed() || r.Waiting() {
		turn := 0
		if len(r.Turns) > 0 {
			turn = r.Turns[len(r.Turns)-1].N
		}
		ps = append(ps, Problem{Layer: r.Layer, Turn: turn, What: r.stopText()})
	}
	return ps
}

func (r *Run) stopText() string {
	s := r.Status()
	if d := r.Why(); d != "" {
		s += ": " + d
	}
	return s
}

// Why is the run's error, or else the detail of its stop.
func (r *Run) Why() string {
	if r.Error != "" {
		return r.Error
	}
	return r.Detail
}

// Status says in a few words how the run stopped, the same words for
// every renderer: "completed", "running", "no end record", or the stop
// reason at its layer ("pending at permission", "max_turns at limit",
// "error at provider"), or "crashed".
func (r *Run) Status() string {
	switch {
	case r.Layer == LayerCrash:
		return "crashed"
	case r.Completed() && r.Layer == LayerNone:
		return "completed"
	case r.Layer == LayerNone && r.Reason == "":
		return "running"
	}
	if r.Layer == LayerNone {
		return r.reason()
	}
	return r.reason() + " at " + r.Layer
}

// reason is the stop reason, or "no end record".
func (r *Run) reason() string {
	if r.Reason == "" {
		return "no end record"
	}
	return r.Reason
}

// Failed reports whether the run stopped at a failing layer (a run that
// left calls to a person, StopPending, did not fail).
func (r *Run) Failed() bool {
	return r.Layer != LayerNone && r.Reason != string(agentrt.StopPending)
}

// Waiting reports whether the run stopped for a person's decision on
// calls that are still pending.
func (r *Run) Waiting() bool {
	if r.Reason != string(agentrt.StopPending) {
		return false
	}
	for _, t := range r.Turns {
		for _, c := range t.Calls {
			if c.Outcome == OutcomePending {
				return true
			}
		}
	}
	return false
}

// FailingLayer is the layer to look at first: the stop layer of a run
// that failed or waits for a person, or else the layer of the last
// problem of a run that completed despite it (a denied call, a tool
// error), or "" for a clean run.
func (r *Run) FailingLayer() string {
	if r.Failed() || r.Waiting() {
		return r.Layer
	}
	ps := r.Problems()
	if len(ps) > 0 {
		return ps[len(ps)-1].Layer
	}
	return ""
}

// LastRun returns the session's last run, or nil.
func (s *Session) LastRun() *Run {
	if len(s.Runs) == 0 {
		return nil
	}
	return s.Runs[len(s.Runs)-1]
}

// FailingRun returns the last run with a failing layer (see
// [Run.FailingLayer]), or nil for a clean session.
func (s *Session) FailingRun() *Run {
	for i := len(s.Runs) - 1; i >= 0; i-- {
		if s.Runs[i].FailingLayer() != "" {
			return s.Runs[i]
		}
	}
	return nil
}

// FailingLayer is the failing layer of the last run that has one (see
// [Run.FailingLayer]), or "" for a clean session.
func (s *Session) FailingLayer() string {
	if r := s.FailingRun(); r != nil {
		return r.FailingLayer()
	}
	return ""
}

// Work is the time the session's runs took, without the time between
// them; Waited is the part of that gap spent waiting for a person.
func (s *Session) Work() (work, waited time.Duration) {
	for _, r := range s.Runs {
		work += r.Duration()
		waited += r.Waited
	}
	return work, waited
}

// Cost is the sum of the costs of the session's model calls, and
// whether any call had one (the Agent's Prices were set).
func (s *Session) Cost() (cost float64, priced bool) {
	for _, r := range s.Runs {
		c, p := r.Cost()
		cost += c
		priced = priced || p
	}
	return cost, priced
}

// Cost is the sum of the costs of the run's model calls, and whether any
// call had one.
func (r *Run) Cost() (cost float64, priced bool) {
	for _, t := range r.Turns {
		if t.Model != nil && t.Model.Cost != nil {
			cost += *t.Model.Cost
			priced = true
		}
	}
	return cost, priced
}

// CacheReadShare is the share of the session's input tokens read from
// the provider's cache, from 0 to 1; ok is false when no input tokens
// were counted.
func (s *Session) CacheReadShare() (share float64, ok bool) {
	if s.Usage.InputTokens <= 0 {
		return 0, false
	}
	return float64(s.Usage.CacheReadTokens) / float64(s.Usage.InputTokens), true
}

// CacheBreaks counts the turns whose request broke the cached prefix.
func (s *Session) CacheBreaks() int {
	n := 0
	for _, r := range s.Runs {
		for _, t := range r.Turns {
			if t.CacheBreak != nil {
				n++
			}
		}
	}
	return n
}

// Turns counts the turns of every run.
func (s *Session) Turns() int {
	n := 0
	for _, r := range s.Runs {
		n += len(r.Turns)
	}
	return n
}

// Resolve turns what a user names into a store directory and a session
// id: a .jsonl file ("dir/id.jsonl"), or an id in a directory ("dir/id").
func Resolve(arg string) (dir, id string, err error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		base := filepath.Base(arg)
		id, ok := strings.CutSuffix(base, ".jsonl")
		if !ok {
			return "", "", fmt.Errorf("timeline: %s: not a .jsonl session file", arg)
		}
		return filepath.Dir(arg), id, nil
	}
	if _, err := os.Stat(arg + ".jsonl"); err == nil {
		return filepath.Dir(arg), filepath.Base(arg), nil
	}
	return "", "", fmt.Errorf("timeline: %s: no such session file (give a .jsonl file, or DIR/ID)", arg)
}

// Open reads the session arg names (see [Resolve]).
func Open(ctx context.Context, arg string) (*Session, error) {
	dir, id, err := Resolve(arg)
	if err != nil {
		return nil, err
	}
	return Load(ctx, dir, id)
}

// Load reads session id of the JSONL store directory dir. A damaged last
// line is dropped and kept in Session.Tail; any other damage is an error
// naming the file and line.
func Load(ctx context.Context, dir, id string) (*Session, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("timeline: %s: not a directory", dir)
	}
	var tail *jsonl.LineError
	store, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{OnWarning: func(err error) {
		var t *jsonl.LineError
		if errors.As(err, &t) && t.Tail {
			tail = t
		}
	}})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	b := newBuilder(id, filepath.Join(dir, id+".jsonl"))
	if _, err := os.Stat(filepath.Join(dir, id+".lock")); err == nil {
		// A lock file can outlive a process that died: try the lock.
		unlock, err := store.Lock(ctx, id)
		if errors.Is(err, agentrt.ErrSessionBusy) {
			b.running = true
		} else if err == nil {
			unlock()
		}
	}
	for rec, err := range store.Lines(ctx, id) {
		if err != nil {
			return nil, err
		}
		b.add(rec)
	}
	s := b.finish()
	s.Running = b.running
	if tail != nil {
		s.Tail, s.TailError = tail, tail.Error()
	}
	return s, nil
}

// FromRecords builds the timeline of session id from its lines, as
// [agentrt.JSONLStore.Lines] yields them.
func FromRecords(id, file string, recs []jsonl.Line) *Session {
	b := newBuilder(id, file)
	for _, r := range recs {
		b.add(r)
	}
	return b.finish()
}

// Listed is one session of a directory, as [List] returns it.
type Listed struct {
	ID      string
	Session *Session // nil when Err is set
	Err     error    // why the session could not be read
}

// List reads every session (*.jsonl file) of the store directory dir,
// most recently updated first. A session that cannot be read is listed
// with its error.
func List(ctx context.Context, dir string) ([]Listed, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	var out []Listed
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || strings.HasPrefix(id, ".") {
			continue
		}
		s, err := Load(ctx, dir, id)
		out = append(out, Listed{ID: id, Session: s, Err: err})
	}
	slices.SortStableFunc(out, func(a, b Listed) int {
		var ta, tb time.Time
		if a.Session != nil {
			ta = a.Session.Updated
		}
		if b.Session != nil {
			tb = b.Session.Updated
		}
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Verdict says in one line how the session's last run ended and where to
// look, and the layer to mark it with ("running" for a run in progress,
// LayerNone for a clean session). Every renderer shows these words.
func (s *Session) Verdict() (layer, text string) {
	r := s.LastRun()
	switch {
	case r == nil:
		return LayerNone, "empty session"
	case s.Running && !r.Ended:
		return "running", fmt.Sprintf("RUNNING: run %d is in progress", r.Index)
	case r.Waiting():
		n := 0
		for _, t := range r.Turns {
			for _, c := range t.Calls {
				if c.Outcome == OutcomePending {
					n++
				}
			}
		}
		return r.Layer, fmt.Sprintf("WAITING at the %s layer: run %d left %s to a person (agentrt.Agent.Resume continues it)", r.Layer, r.Index, plural(n, "call"))
	case r.Failed():
		return r.Layer, fmt.Sprintf("FAILED at the %s layer (run %d, %s): %s", r.Layer, r.Index, r.reason(), orDash(r.Why()))
	}
	head := fmt.Sprintf("%s: run %d %s", strings.ToUpper(r.Status()), r.Index, r.Status())
	if denied := s.deniedByPeople(); denied > 0 {
		head += fmt.Sprintf("; a person denied %s", plural(denied, "call"))
	}
	f := s.FailingRun()
	if f == nil {
		return LayerNone, head
	}
	if f != r && f.Failed() {
		return f.Layer, fmt.Sprintf("%s; run %d had failed at the %s layer (%s): %s", head, f.Index, f.Layer, f.reason(), orDash(f.Why()))
	}
	ps := f.Problems()
	p := ps[len(ps)-1]
	return p.Layer, fmt.Sprintf("%s, with problems; the last at the %s layer (run %d, turn %d): %s", head, p.Layer, f.Index, p.Turn, p.What)
}

func (s *Session) deniedByPeople() int {
	n := 0
	for _, r := range s.Runs {
		for _, t := range r.Turns {
			for _, c := range t.Calls {
				if c.DeniedByPerson() {
					n++
				}
			}
		}
	}
	return n
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
