package timeline

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
)

// The JSON bodies of the trace records (docs/jsonl-format.md).
type turnRecord struct {
	Turn      int              `json:"turn"`
	ModelCall *modelCallRecord `json:"model_call"`
	ToolCalls []toolCallRecord `json:"tool_calls"`
}

type modelCallRecord struct {
	Start      time.Time      `json:"start"`
	DurationMS float64        `json:"duration_ms"`
	Provider   string         `json:"provider"`
	Model      string         `json:"model"`
	TTFTMS     float64        `json:"ttft_ms"`
	Retries    []retryRecord  `json:"retries"`
	Messages   int            `json:"messages"`
	Tokens     int            `json:"tokens"`
	UpTo       *int           `json:"compaction_up_to"`
	Usage      *agentrt.Usage `json:"usage"`
	Cost       *float64       `json:"cost"`
	Prefix     *Prefix        `json:"prefix"`
	Finish     string         `json:"finish"`
	Error      string         `json:"error"`
	Layer      string         `json:"layer"`
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
}

type retryRecord struct {
	Attempt int     `json:"attempt"`
	Error   string  `json:"error"`
	Layer   string  `json:"layer"`
	WaitMS  float64 `json:"wait_ms"`
}

type toolCallRecord struct {
	ToolUseID  string    `json:"tool_use_id"`
	Tool       string    `json:"tool"`
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	Error      string    `json:"error"`
	TraceID    string    `json:"trace_id"`
	SpanID     string    `json:"span_id"`
}

type runRecord struct {
	Start      time.Time      `json:"start"`
	End        time.Time      `json:"end"`
	DurationMS float64        `json:"duration_ms"`
	Reason     string         `json:"reason"`
	Layer      string         `json:"layer"`
	Turns      int            `json:"turns"`
	Usage      *agentrt.Usage `json:"usage"`
	Error      string         `json:"error"`
	Detail     string         `json:"detail"`
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
	LastTurn   *turnRecord    `json:"last_turn"`
}

// layer is the record's layer: none for a completed run, whether the
// record says "success" (as before version 2 of the trace) or nothing.
func (r *runRecord) layer() string {
	if r.Layer == "success" {
		return LayerNone
	}
	return r.Layer
}

// detail is the human detail of a stop that is not an error: the record's
// "detail", or its "error" in a record written before "detail" existed.
func (r *runRecord) detail() (errText, detail string) {
	if r.Detail != "" {
		return r.Error, r.Detail
	}
	switch agentrt.StopReason(r.Reason) {
	case agentrt.StopPending, agentrt.StopMaxTurns, agentrt.StopLoopDetected, agentrt.StopBudgetExceeded:
		return "", r.Error
	}
	return r.Error, ""
}

type permissionRecord struct {
	ToolUseID string          `json:"tool_use_id"`
	Tool      string          `json:"tool"`
	Allow     bool            `json:"allow"`
	Reason    string          `json:"reason"`
	Source    string          `json:"source"`
	Input     json.RawMessage `json:"input"`
}

type usageRecord struct {
	Turn  int           `json:"turn"`
	Usage agentrt.Usage `json:"usage"`
}

type subAgentRecord struct {
	ToolUseID string `json:"tool_use_id"`
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

const (
	interruptedPrefix = "interrupted: the previous run stopped"
	retryPrefix       = "Your final answer is not valid:"
)

// builder turns the lines of a session file into a Session.
type builder struct {
	s        *Session
	run      *Run
	turn     *Turn
	calls    map[string]*ToolCall // every call of the session by tool_use id
	pending  []agentrt.Message    // user messages not yet given to a turn
	compact  *agentrt.Compaction
	prefix   *prefixState // the request of the last model call
	turns    int          // the session's turns so far
	lastTime time.Time    // of the previous line
	lastLine int
	running  bool // a process holds the session
}

func newBuilder(id, file string) *builder {
	return &builder{s: &Session{ID: id, File: file}, calls: map[string]*ToolCall{}}
}

func (b *builder) add(rec jsonl.Line) {
	s := b.s
	s.Lines = rec.Line
	if !rec.Time.IsZero() {
		defer func() { b.lastTime = rec.Time }()
		s.Updated = rec.Time
	}
	b.lastLine = rec.Line
	if r := b.run; r != nil && !r.Ended && rec.Time.After(r.End) {
		r.End = rec.Time
	}
	switch agentrt.RecordKind(rec.Kind) {
	case jsonl.KindHeader:
		var h Header
		if json.Unmarshal(rec.Raw, &h) == nil {
			s.Header, s.Created = &h, h.Created
		}
	case jsonl.KindMessage:
		b.message(rec)
	case agentrt.RecordTurn:
		s.Traced = true
		b.currentRun(rec).traced = true
		var t turnRecord
		if json.Unmarshal(rec.Data, &t) == nil {
			b.turnTrace(rec, t)
		}
	case agentrt.RecordRun:
		s.Traced = true
		var r runRecord
		if json.Unmarshal(rec.Data, &r) == nil {
			if r.LastTurn != nil {
				b.turnTrace(rec, *r.LastTurn)
			}
			run := b.currentRun(rec)
			run.Start, run.End, run.Ended = r.Start, r.End, true
			run.Reason, run.Layer = r.Reason, r.layer()
			run.Error, run.Detail = r.detail()
			run.TraceID, run.SpanID, run.EndLine = r.TraceID, r.SpanID, rec.Line
			if r.Usage != nil {
				run.Usage = *r.Usage
			}
			b.run, b.turn = nil, nil
		}
	case agentrt.RecordPermission:
		var p permissionRecord
		if json.Unmarshal(rec.Data, &p) == nil {
			if c := b.calls[p.ToolUseID]; c != nil {
				c.Decision = &Decision{Allow: p.Allow, Reason: p.Reason, Source: p.Source, Input: p.Input, Line: rec.Line}
			}
		}
	case agentrt.RecordUsage:
		var u usageRecord
		if json.Unmarshal(rec.Data, &u) == nil && b.turn != nil && b.turn.Model != nil {
			b.turn.Model.Usage = u.Usage
		}
	case agentrt.RecordCompaction:
		var c agentrt.Compaction
		if json.Unmarshal(rec.Data, &c) == nil {
			b.compact = &c
		}
	case agentrt.RecordSubAgent:
		var sa subAgentRecord
		if json.Unmarshal(rec.Data, &sa) == nil {
			if c := b.calls[sa.ToolUseID]; c != nil {
				c.SubAgent = &SubAgent{Agent: sa.Agent, SessionID: sa.SessionID}
			}
		}
	}
}

// currentRun returns the run in progress, starting one at rec if none is.
func (b *builder) currentRun(rec jsonl.Line) *Run {
	if b.run == nil {
		b.closeRun()
		b.run = &Run{Index: len(b.s.Runs) + 1, Start: rec.Time, Line: rec.Line}
		b.s.Runs = append(b.s.Runs, b.run)
	}
	return b.run
}

// closeRun marks a traced run left without an end record as crashed, as
// a new one starts (finish judges a run without trace records).
func (b *builder) closeRun() {
	if n := len(b.s.Runs); n > 0 {
		if r := b.s.Runs[n-1]; !r.Ended && r.Layer == "" && r.traced {
			r.Layer = LayerCrash
			r.Error = "the run has no end record: the process stopped while it ran"
		}
	}
}

func (b *builder) message(rec jsonl.Line) {
	m := new(agentrt.Message)
	if json.Unmarshal(rec.Message, m) != nil {
		return // the store reads only lines whose message decodes
	}
	switch m.Role {
	case agentrt.RoleUser:
		retry := strings.HasPrefix(m.Content, retryPrefix)
		if b.run != nil && !retry && (len(b.run.Turns) > 0 || b.run.Input != "") {
			b.run = nil // a new run starts with the user's input
		}
		run := b.currentRun(rec)
		if run.Input == "" && !retry {
			run.Input = m.Content
		}
		b.pending = append(b.pending, *m)
		b.turn = nil
	case agentrt.RoleAssistant:
		run := b.currentRun(rec)
		n := run.base + 1
		if len(run.Turns) > 0 {
			n = run.Turns[len(run.Turns)-1].rec + 1
		}
		b.turns++
		t := &Turn{N: b.turns, rec: n, Input: b.pending, Message: m, Line: rec.Line, Compaction: b.compact}
		b.pending, b.compact = nil, nil
		// Without a model_call record the call is taken to span from the
		// previous line to this one.
		t.Model = &ModelCall{Start: b.lastTime, Duration: rec.Time.Sub(b.lastTime), CompactionUpTo: -1}
		if b.lastTime.IsZero() {
			t.Model.Start, t.Model.Duration = rec.Time, 0
		}
		run.Turns = append(run.Turns, t)
		b.turn = t
		start := rec.Time
		for _, u := range m.ToolUses() {
			c := &ToolCall{ID: u.ID, Tool: u.Name, Input: u.Input, Outcome: OutcomePending, Start: start, run: run}
			b.calls[u.ID] = c
			t.Calls = append(t.Calls, c)
		}
	case agentrt.RoleTool:
		c := b.calls[m.ToolUseID]
		if c == nil {
			return
		}
		c.Result, c.ResultLine = m, rec.Line
		interrupted := strings.HasPrefix(m.Content, interruptedPrefix)
		if ran := b.currentRun(rec); ran != c.run && !interrupted {
			// A call the run that asked for it left to a person, decided
			// and run by this one.
			c.ResumedIn = ran.Index
			ran.Resumed = append(ran.Resumed, c)
			c.Start = rec.Time // not when it was asked for: the trace may tell better
		}
		if !c.Traced {
			c.Duration = rec.Time.Sub(c.Start)
			c.Outcome = inferOutcome(m)
		}
		if interrupted {
			// Appended by the next run for a call the last one left open.
			c.Outcome = OutcomeInterrupted
			c.Duration = 0
			b.closeRunOf(c)
		}
	}
}

// closeRunOf marks the run holding c as crashed: a later run answered c.
func (b *builder) closeRunOf(c *ToolCall) {
	for _, r := range b.s.Runs {
		for _, t := range r.Turns {
			for _, tc := range t.Calls {
				if tc == c && !r.Ended {
					r.Layer = LayerCrash
					r.Error = "the process stopped while tool " + c.Tool + " (" + c.ID + ") ran; the next run answered it as interrupted"
					if b.run == r {
						b.run, b.turn = nil, nil
					}
				}
			}
		}
	}
}

// inferOutcome guesses a call's outcome from its result, for a file
// without tool_call records.
func inferOutcome(m *agentrt.Message) string {
	c := m.Content
	switch {
	case !m.IsError:
		return OutcomeOK
	case strings.HasPrefix(c, "interrupted:"):
		return OutcomeInterrupted
	case strings.HasPrefix(c, "cancelled:"):
		return OutcomeCancelled
	case strings.HasPrefix(c, "permission denied"):
		return OutcomeDenied
	case strings.HasPrefix(c, "blocked:"):
		return OutcomeBlocked
	case strings.Contains(c, "timed out after"):
		return OutcomeTimeout
	case strings.Contains(c, "panicked"):
		return OutcomePanic
	case strings.HasPrefix(c, "unknown tool"), strings.HasPrefix(c, "invalid tool_use"), strings.Contains(c, "invalid input"):
		return OutcomeInvalidInput
	}
	return OutcomeToolError
}

// turnTrace applies the trace of turn tr.Turn of the current run.
func (b *builder) turnTrace(rec jsonl.Line, tr turnRecord) {
	if run := b.currentRun(rec); tr.ModelCall == nil && len(run.Turns) == 0 {
		// The calls of an earlier run's turn, run by this one (resumed):
		// its own turns count on from there.
		run.base = max(run.base, tr.Turn)
	}
	if tr.ModelCall != nil {
		b.modelCall(rec, tr.Turn, *tr.ModelCall)
	}
	for _, tc := range tr.ToolCalls {
		if c := b.calls[tc.ToolUseID]; c != nil {
			if !tc.Start.IsZero() {
				c.Start = tc.Start
			}
			c.Duration, c.Outcome = ms(tc.DurationMS), tc.Outcome
			c.TraceID, c.SpanID, c.Traced = tc.TraceID, tc.SpanID, true
		}
	}
}

func (b *builder) modelCall(rec jsonl.Line, turn int, m modelCallRecord) {
	run := b.currentRun(rec)
	var t *Turn
	for i := len(run.Turns) - 1; i >= 0; i-- {
		if run.Turns[i].rec == turn {
			t = run.Turns[i]
			break
		}
	}
	if t == nil || t.Model.Traced {
		// A call that produced no message: it failed.
		b.turns++
		t = &Turn{N: b.turns, rec: turn, Input: b.pending, Line: rec.Line, Compaction: b.compact}
		b.pending, b.compact = nil, nil
		run.Turns = append(run.Turns, t)
		b.turn = t
	}
	mc := &ModelCall{
		Start: m.Start, Duration: ms(m.DurationMS), TTFT: ms(m.TTFTMS),
		Provider: m.Provider, Model: m.Model, Messages: m.Messages, Tokens: m.Tokens,
		CompactionUpTo: -1, Finish: m.Finish, Error: m.Error, Layer: m.Layer,
		TraceID: m.TraceID, SpanID: m.SpanID, Traced: true, Line: rec.Line,
		Cost: m.Cost, Prefix: m.Prefix,
	}
	if m.UpTo != nil {
		mc.CompactionUpTo = *m.UpTo
	}
	if m.Usage != nil {
		mc.Usage = *m.Usage
	} else if t.Model != nil {
		mc.Usage = t.Model.Usage // from a usage record
	}
	for _, r := range m.Retries {
		mc.Retries = append(mc.Retries, Retry{Attempt: r.Attempt, Error: r.Error, Layer: r.Layer, Wait: ms(r.WaitMS)})
	}
	t.Model = mc
	t.CacheBreak = b.cacheBreak(t, mc)
}

func (b *builder) finish() *Session {
	s := b.s
	if len(b.pending) > 0 && b.run != nil && len(b.run.Turns) == 0 {
		// A run whose first model call never came back.
		b.turns++
		b.run.Turns = append(b.run.Turns, &Turn{N: b.turns, rec: 1, Input: b.pending})
	}
	for i, r := range s.Runs {
		if i > 0 && len(r.Resumed) > 0 {
			if prev := s.Runs[i-1]; prev.Reason == string(agentrt.StopPending) && r.Start.After(prev.End) {
				r.Waited = r.Start.Sub(prev.End)
			}
		}
		var sum agentrt.Usage
		for _, t := range r.Turns {
			if t.Model != nil {
				sum = sum.Add(t.Model.Usage)
			}
		}
		if r.Usage == (agentrt.Usage{}) {
			r.Usage = sum
		}
		s.Usage = s.Usage.Add(r.Usage)
		if r.End.IsZero() && len(r.Turns) > 0 {
			r.End = s.Updated
		}
		if !r.Ended && r.Layer == "" && !(b.running && r == s.LastRun()) {
			var done bool
			r.Layer, done = inferStop(r, r.traced)
			if done {
				r.Reason = string(agentrt.StopComplete)
			}
			if r.Layer == LayerCrash && r.Error == "" {
				r.Error = "the run has no end record and no process holds the session: the process stopped while it ran"
			}
		}
	}
	return s
}

// inferStop says how a run without an end record stopped: from a file
// without trace records, completed if its last turn answered without
// tools; otherwise the process stopped (crash) or still runs ("").
func inferStop(r *Run, traced bool) (layer string, completed bool) {
	if len(r.Turns) == 0 {
		return LayerCrash, false
	}
	last := r.Turns[len(r.Turns)-1]
	if !traced && last.Message != nil && len(last.Calls) == 0 {
		return LayerNone, true
	}
	if !traced {
		for _, c := range last.Calls {
			if c.Outcome == OutcomePending {
				return LayerCrash, false
			}
		}
		return LayerNone, false
	}
	for _, c := range last.Calls {
		if c.Outcome == OutcomePending {
			c.Outcome = OutcomeInterrupted
		}
	}
	return LayerCrash, false
}
