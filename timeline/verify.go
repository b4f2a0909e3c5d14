package timeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
)

// Finding is a problem [Verify] found in a session file.
type Finding struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Rule is what was broken: "format" (a line the JSONL format does not
	// allow), "tail" (the damaged last line a crash leaves), "seq",
	// "invariant" (the message chain) or "record" (a record that does not
	// agree with the messages).
	Rule string `json:"rule"`
	// Warning is true for what a crash normally leaves and the next run
	// repairs (tool calls without results at the end of the file).
	Warning bool   `json:"warning,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	w := ""
	if f.Warning {
		w = "warning: "
	}
	return fmt.Sprintf("%s:%d: %s%s: %s", f.File, f.Line, w, f.Rule, f.Message)
}

// VerifyOptions configures [Verify]. The zero value is ready to use.
type VerifyOptions struct {
	// MaxLineSize is the longest line allowed, as the store that wrote the
	// file was configured (JSONLOptions.MaxLineSize); 0 means
	// agentrt.DefaultMaxLineSize.
	MaxLineSize int
}

// Verify checks session id of the store directory dir: the format (what
// [agentrt.JSONLStore.Verify] checks: every line valid, the damaged tail
// a crash leaves), gapless seq numbers, the message invariants (every
// tool_use answered by exactly one result, directly after its message;
// no result without a call; unique ids) and the consistency of the
// records with the messages (decisions, trace and usage records naming
// calls and turns that exist, in the right order, with valid values). An
// error is returned only when the file cannot be read at all. opts may be
// nil.
func Verify(ctx context.Context, dir, id string, opts *VerifyOptions) ([]Finding, error) {
	file := filepath.Join(dir, id+".jsonl")
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	var so agentrt.JSONLOptions
	if opts != nil {
		so.MaxLineSize = opts.MaxLineSize
	}
	store, err := agentrt.NewJSONLStore(dir, &so)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	v := &verifier{file: file, uses: map[string]*useState{}, lastPrefix: -1}
	if err := store.Verify(ctx, id); err != nil {
		var bad *jsonl.LineError
		switch {
		case errors.As(err, &bad) && bad.Tail:
			v.add(bad.Line, "tail", "%v", bad.Err)
		case bad != nil:
			v.add(bad.Line, "format", "%v", bad.Err)
			return v.out, nil
		case errors.Is(err, agentrt.ErrBrokenSession):
			// The verifier below reports it, with its line.
		default:
			return nil, err
		}
	}
	for rec, err := range store.Lines(ctx, id) {
		if err != nil {
			var bad *jsonl.LineError
			if errors.As(err, &bad) {
				v.add(bad.Line, "format", "%v", bad.Err)
				break
			}
			return nil, err
		}
		v.line(rec)
	}
	v.end()
	slices.SortStableFunc(v.out, func(a, b Finding) int { return a.Line - b.Line })
	return v.out, nil
}

type useState struct {
	tool    string
	line    int
	result  int // line of its result, 0 if none
	decided int // line of its permission record
	traced  int // line of its tool_call record
	assist  int // index of its assistant message
}

type verifier struct {
	file    string
	out     []Finding
	seq     int64
	uses    map[string]*useState
	open    []string // tool_uses of the last assistant message without a result
	assists int      // assistant messages so far
	msgs    int
	waiting bool // the last line is the end of a run that left calls to a person
	// The number of messages of the last model call's prefix, -1 when
	// it had none.
	lastPrefix int
}

func (v *verifier) add(line int, rule, format string, args ...any) {
	v.out = append(v.out, Finding{File: v.file, Line: line, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (v *verifier) line(rec jsonl.Line) {
	if rec.Kind == jsonl.KindHeader {
		return
	}
	if rec.Seq != v.seq+1 {
		v.add(rec.Line, "seq", "seq %d follows %d (seq numbers must be 1, 2, 3, ... without gaps)", rec.Seq, v.seq)
	}
	v.seq = rec.Seq
	v.waiting = false
	if rec.Time.IsZero() {
		v.add(rec.Line, "format", `a %q record without a valid "ts"`, rec.Kind)
	}
	switch agentrt.RecordKind(rec.Kind) {
	case jsonl.KindMessage:
		v.message(rec)
	case agentrt.RecordPermission:
		var p permissionRecord
		if v.decode(rec, &p) {
			u := v.use(rec, p.ToolUseID, p.Tool)
			if u != nil {
				if u.result != 0 {
					v.add(rec.Line, "record", "the permission decision on %q comes after its result (line %d)", p.ToolUseID, u.result)
				}
				u.decided = rec.Line
			}
		}
	case agentrt.RecordTurn:
		var t turnRecord
		if v.decode(rec, &t) {
			v.turnTrace(rec, t)
		}
	case agentrt.RecordUsage:
		var u usageRecord
		if v.decode(rec, &u) {
			if u.Turn < 1 || u.Usage.InputTokens < 0 || u.Usage.OutputTokens < 0 {
				v.add(rec.Line, "record", "usage record with turn %d, tokens %d/%d", u.Turn, u.Usage.InputTokens, u.Usage.OutputTokens)
			}
		}
	case agentrt.RecordRun:
		var r runRecord
		if v.decode(rec, &r) {
			if r.End.Before(r.Start) || r.Start.IsZero() {
				v.add(rec.Line, "record", "run record ends (%v) before it starts (%v)", r.End, r.Start)
			}
			switch r.layer() {
			case LayerNone, LayerProvider, LayerPlanner, LayerHook, LayerStore, LayerLimit, LayerCancellation, LayerPermission:
			default:
				v.add(rec.Line, "record", "run record with unknown layer %q", r.Layer)
			}
			if (r.layer() == LayerNone) != (r.Reason == string(agentrt.StopComplete)) {
				v.add(rec.Line, "record", "run record with reason %q at layer %q", r.Reason, r.Layer)
			}
			if len(v.open) > 0 && r.Reason != string(agentrt.StopPending) {
				v.add(rec.Line, "invariant", "the run ended with tool_use %q unanswered", v.open[0])
			}
			v.waiting = r.Reason == string(agentrt.StopPending)
			if r.LastTurn != nil {
				v.turnTrace(rec, *r.LastTurn)
			}
		}
	case agentrt.RecordSubAgent:
		var s subAgentRecord
		if v.decode(rec, &s) {
			v.use(rec, s.ToolUseID, "")
			if agentrt.ValidateSessionID(s.SessionID) != nil {
				v.add(rec.Line, "record", "subagent record with invalid session id %q", s.SessionID)
			}
		}
	case agentrt.RecordCompaction:
		var c agentrt.Compaction
		if v.decode(rec, &c) && (c.UpTo < 0 || c.UpTo > v.msgs) {
			v.add(rec.Line, "record", "compaction up_to %d is outside the %d messages before it", c.UpTo, v.msgs)
		}
	}
}

// turnTrace checks the trace of a turn: the model call's values, and
// each tool call against the messages before it.
func (v *verifier) turnTrace(rec jsonl.Line, t turnRecord) {
	if t.Turn < 1 {
		v.add(rec.Line, "record", "turn %d (turns count from 1)", t.Turn)
	}
	if m := t.ModelCall; m == nil && len(t.ToolCalls) == 0 {
		v.add(rec.Line, "record", "a turn trace without a model_call or tool_calls")
	} else if m != nil {
		if m.DurationMS < 0 || m.TTFTMS < 0 {
			v.add(rec.Line, "record", "negative duration in model_call")
		}
		if m.Start.IsZero() {
			v.add(rec.Line, "record", `model_call without "start"`)
		}
		for i, r := range m.Retries {
			if r.Attempt != i+1 {
				v.add(rec.Line, "record", "model_call retry %d has attempt %d", i+1, r.Attempt)
			}
		}
		if m.UpTo != nil && (*m.UpTo < 0 || *m.UpTo > v.msgs) {
			v.add(rec.Line, "record", "compaction_up_to %d is outside the %d messages before it", *m.UpTo, v.msgs)
		}
		if m.Cost != nil && *m.Cost < 0 {
			v.add(rec.Line, "record", "model_call with a negative cost %v", *m.Cost)
		}
		v.prefix(rec, m.Prefix)
	}
	for _, c := range t.ToolCalls {
		u := v.use(rec, c.ToolUseID, c.Tool)
		switch {
		case u == nil:
		case u.result == 0:
			v.add(rec.Line, "record", "the trace of call %q comes before its result", c.ToolUseID)
		case u.traced != 0:
			v.add(rec.Line, "record", "a second trace of call %q (first on line %d)", c.ToolUseID, u.traced)
		default:
			u.traced = rec.Line
		}
		if OutcomeLayer(c.Outcome) == "" && c.Outcome != OutcomeOK || c.Outcome == OutcomeInterrupted || c.Outcome == OutcomePending {
			v.add(rec.Line, "record", "unknown tool call outcome %q", c.Outcome)
		}
		if c.DurationMS < 0 {
			v.add(rec.Line, "record", "negative duration_ms %v for call %q", c.DurationMS, c.ToolUseID)
		}
	}
}

// prefix checks a model call's fingerprint: hashes of 8 lowercase hex
// digits, a "from" within the request and the previous one, one hash
// per message from it on.
func (v *verifier) prefix(rec jsonl.Line, p *Prefix) {
	last := v.lastPrefix
	v.lastPrefix = -1
	if p == nil {
		return
	}
	bad := func(format string, args ...any) { v.add(rec.Line, "record", "model_call prefix: "+format, args...) }
	for _, h := range []struct{ name, hash string }{{"system", p.System}, {"tools", p.Tools}} {
		if !validHash(h.hash) {
			bad("%s hash %q is not 8 lowercase hex digits", h.name, h.hash)
		}
	}
	for i, t := range p.ToolList {
		if t.Name == "" || !validHash(t.Hash) {
			bad("tool_list[%d] is %q with hash %q (want a name and 8 lowercase hex digits)", i, t.Name, t.Hash)
		}
	}
	for i, h := range p.Hashes {
		if !validHash(h) {
			bad("hashes[%d] %q is not 8 lowercase hex digits", i, h)
			break
		}
	}
	switch {
	case p.Messages < 0 || p.From < 0 || p.From > p.Messages:
		bad("from %d is outside its %d messages", p.From, p.Messages)
	case len(p.Hashes) != p.Messages-p.From:
		bad("%d hashes for messages %d to %d (want %d)", len(p.Hashes), p.From, p.Messages, p.Messages-p.From)
	case last >= 0 && p.From > last:
		bad("from %d is past the %d messages of the previous call", p.From, last)
	case last < 0 && p.From > 0:
		bad("from %d, but no call before it has a prefix to continue", p.From)
	}
	if p.Tail < 0 || p.Tail > p.Messages {
		bad("tail %d is outside its %d messages", p.Tail, p.Messages)
	}
	for _, part := range slices.Sorted(maps.Keys(p.Changed)) {
		by := p.Changed[part]
		switch part {
		case PartSystem, PartTools, PartMessages:
		default:
			bad("changed names part %q (want system, tools or messages)", part)
		}
		if !validChange(by) {
			bad("changed %s is %q (want \"hook N\", \"compaction\" or \"runtime\")", part, by)
		}
	}
	v.lastPrefix = p.Messages
}

// decode decodes a record's data into p, reporting a body of the wrong
// shape.
func (v *verifier) decode(rec jsonl.Line, p any) bool {
	if err := json.Unmarshal(rec.Data, p); err != nil {
		v.add(rec.Line, "record", "a %q record whose data does not decode: %v", rec.Kind, err)
		return false
	}
	return true
}

// use returns the call a record names, reporting an unknown one or a tool
// name that does not match.
func (v *verifier) use(rec jsonl.Line, id, tool string) *useState {
	u := v.uses[id]
	if u == nil {
		v.add(rec.Line, "record", "a %q record names tool_use %q, which no message before it has", rec.Kind, id)
		return nil
	}
	if tool != "" && tool != u.tool {
		v.add(rec.Line, "record", "a %q record names tool %q for %q, which calls %q (line %d)", rec.Kind, tool, id, u.tool, u.line)
	}
	return u
}

func (v *verifier) message(rec jsonl.Line) {
	m := new(agentrt.Message)
	if err := json.Unmarshal(rec.Message, m); err != nil {
		v.add(rec.Line, "format", "a message that does not decode: %v", err)
		return
	}
	v.msgs++
	switch m.Role {
	case agentrt.RoleUser, agentrt.RoleAssistant:
		for _, id := range v.open {
			v.add(rec.Line, "invariant", "tool_use %q (line %d) has no result before this %s message", id, v.uses[id].line, m.Role)
		}
		v.open = v.open[:0]
		if m.Role == agentrt.RoleUser {
			return
		}
		v.assists++
		for _, b := range m.Blocks {
			if b.Type != agentrt.BlockToolUse {
				continue
			}
			switch {
			case b.ID == "":
				v.add(rec.Line, "invariant", "a tool_use of %q without an id", b.Name)
			case v.uses[b.ID] != nil:
				v.add(rec.Line, "invariant", "tool_use id %q is used again (first on line %d)", b.ID, v.uses[b.ID].line)
			default:
				v.uses[b.ID] = &useState{tool: b.Name, line: rec.Line, assist: v.assists}
				v.open = append(v.open, b.ID)
			}
			if len(b.Input) > 0 && !json.Valid(b.Input) {
				v.add(rec.Line, "invariant", "tool_use %q has an input that is not JSON", b.ID)
			}
		}
	case agentrt.RoleTool:
		u := v.uses[m.ToolUseID]
		switch {
		case u == nil:
			v.add(rec.Line, "invariant", "a tool result for %q, which no tool_use has", m.ToolUseID)
		case u.result != 0:
			v.add(rec.Line, "invariant", "a second result for %q (first on line %d)", m.ToolUseID, u.result)
		case u.assist != v.assists:
			v.add(rec.Line, "invariant", "the result for %q (line %d) does not follow its assistant message directly", m.ToolUseID, u.line)
			u.result = rec.Line
		default:
			u.result = rec.Line
			v.open = slices.DeleteFunc(v.open, func(id string) bool { return id == m.ToolUseID })
		}
	default:
		v.add(rec.Line, "format", "a message with role %q", m.Role)
	}
}

func (v *verifier) end() {
	if v.waiting {
		return // the calls wait for a person (Agent.Resume)
	}
	for _, id := range v.open {
		v.out = append(v.out, Finding{File: v.file, Line: v.uses[id].line, Rule: "invariant", Warning: true,
			Message: fmt.Sprintf("tool_use %q has no result at the end of the file (a crash while it ran, or a run in progress; the next run answers it as interrupted)", id)})
	}
}
