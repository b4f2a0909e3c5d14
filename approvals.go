package agentrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"strings"
)

// Deferred approvals: a permission checker may leave a call to a person
// (Decision.Pending). The run then decides the turn's later calls without running
// any, records the open calls in a "pending" record, and stops with
// StopPending, leaving those tool_uses unanswered (nothing plans until
// they are). Resume gives the person's decisions; each is recorded (and
// synced) right before its call runs, so that a crash between the two
// makes the call "interrupted" on the next run, never run twice.
//
// On load, the open tool_uses of the last assistant message are read
// against the last pending record P and the permission records after it,
// in order: a call listed pending with no decision after P still waits; a
// call with a decision (in P, or after P while a call before it is still
// open) has not run and runs when its turn comes; a call with a decision
// after P and every call before it answered may have run: it gets the
// "interrupted" result, as after any crash.

// personal returns a person's decision d on a call of tool as the run
// applies it: Source defaults to "user", a denial drops any Input and gets
// a standard reason.
func personal(d Decision, tool string) Decision {
	if d.Source == "" {
		d.Source = "user"
	}
	if raw, ok := rawJSON(d.Input); ok && len(raw) == 0 {
		d.Input = nil
	}
	if !d.Allow {
		d.Input = nil
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("permission denied: the user refused this call of %q", tool)
		}
	}
	d.ToolUseID = ""
	return d
}

// Resume continues a session that stopped with [StopPending], with a
// person's decisions on some or all of its pending calls, each naming its
// call by ToolUseID (they may come from another process, after a
// restart). It locks the session like Run. A decision for a call that is
// not pending, or a decision that is itself Pending, fails the run early
// with [ErrNotPending], before anything runs. The calls decided run
// in order, as in Run (decoded and validated again, the BeforeTool and
// AfterTool hooks around them); a call still without a decision stops the
// run again with StopPending, and once every call of the turn is
// answered the loop goes on. With no decisions nothing runs: the run
// stops at once with StopPending and Done.Pending lists the calls.
//
// Run with an empty input does the same as Resume without Approvals. Run
// with an input on a pending session denies the pending calls (the person
// moved on) and goes on with the input.
func (a *Agent) Resume(ctx context.Context, sessionID string, decisions ...Decision) iter.Seq2[Event, error] {
	return a.run(ctx, sessionID, "", runOptions{approvals: decisions, resume: true})
}

// approvalState is the deferred-approval state of one run. What most
// runs never need is allocated on first use, to keep the run small.
type approvalState struct {
	resume    bool // a Resume: the session must have pending calls
	ask       bool // a durableLoop step whose runtime asks the person itself
	deferring bool // a call of this turn waits for a person
	dirty     bool // the pending record must be written again at the stop
	loaded    bool // x.rules hold the session's rules
	x         *approvalData
}

type approvalData struct {
	approvals []Decision // Resume's
	resumed   []call     // the open calls of a pending session, to run first
	rules     []rule
	pending   []*ToolCall // Done.Pending
}

func (st *approvalState) data() *approvalData {
	if st.x == nil {
		st.x = new(approvalData)
	}
	return st.x
}

// idle reports whether the run is a Resume with no decision: it changes
// nothing in the session, and only reports the pending calls.
func (st *approvalState) idle() bool {
	return st.resume && (st.x == nil || len(st.x.approvals) == 0)
}

// resuming reports whether the run starts with the open calls of a
// pending session.
func (st *approvalState) resuming() bool { return st.x != nil && st.x.resumed != nil }

// rule is a remembered decision.
type rule struct {
	tool string // "" with AnyTool
	re   *regexp.Regexp
	d    Decision
}

func newRule(tool string, d Decision) (rule, bool) {
	ru := rule{d: d}
	if !d.AnyTool {
		ru.tool = tool
	}
	if d.Pattern != "" {
		re, err := regexp.Compile(d.Pattern)
		if err != nil {
			return rule{}, false
		}
		ru.re = re
	}
	ru.d.Source, ru.d.Always, ru.d.Input, ru.d.Pending = "remembered", false, nil, false
	return ru, true
}

func (ru *rule) matches(tool string, input []byte) bool {
	if ru.tool != "" && ru.tool != tool {
		return false
	}
	if ru.re == nil {
		return true
	}
	var b bytes.Buffer
	if json.Compact(&b, input) == nil {
		input = b.Bytes()
	}
	return ru.re.Match(input)
}

// pendingRecord is the JSON body of a RecordPending record.
type pendingRecord struct {
	Turn  int           `json:"turn"`
	Calls []pendingCall `json:"calls"`
}

type pendingCall struct {
	ToolUseID string `json:"tool_use_id"`
	Tool      string `json:"tool"`
	// Input is the decoded input, as JSON (absent if it could not be
	// encoded).
	Input json.RawMessage `json:"input,omitempty"`
	// Pending: the call waits for a person. Otherwise Decision is the
	// decision already made on a call that waits for those before it.
	Pending  bool              `json:"pending,omitempty"`
	Decision *permissionRecord `json:"decision,omitempty"`
}

// canDefer reports whether the store can hold pending calls.
func (r *run) canDefer() bool {
	_, ok := r.p.store.(RecordStore)
	return ok
}

// askRemembered gives req the session's remembered decision for c, if
// any, and applies it to a decision the checker deferred. Rules are looked
// up for a write tool, or once the checker defers a call.
func (r *run) askRemembered(c *call, req *ToolCall, check func() Decision) Decision {
	if !c.entry.spec.ReadOnly || r.appr.loaded {
		req.Remembered = r.remembered(c)
	}
	d := check()
	if d.Source == "" {
		d.Source = "policy"
	}
	if d.Pending {
		if m := r.remembered(c); m != nil {
			return *m
		}
	}
	return d
}

// remembered returns the session's remembered decision for c, loading
// the session's rules the first time.
func (r *run) remembered(c *call) *Decision {
	st := &r.appr
	if !st.loaded {
		st.loaded = true
		if len(r.l.history) > 0 && r.canDefer() {
			recs, err := r.p.store.(RecordStore).LoadRecords(r.ctx, r.sessionID)
			if err == nil {
				r.collectRules(recs)
			}
		}
	}
	if st.x == nil {
		return nil
	}
	for i := len(st.x.rules) - 1; i >= 0; i-- {
		if ru := &st.x.rules[i]; ru.matches(c.use.Name, c.use.Input) {
			d := ru.d
			return &d
		}
	}
	return nil
}

func (r *run) collectRules(recs []Record) {
	for _, rec := range recs {
		if rec.Kind != RecordPermission {
			continue
		}
		var p permissionRecord
		if json.Unmarshal(rec.Data, &p) != nil || !p.Always {
			continue
		}
		if ru, ok := newRule(p.Tool, Decision{Allow: p.Allow, Reason: p.Reason, AnyTool: p.AnyTool, Pattern: p.Pattern}); ok {
			x := r.appr.data()
			x.rules = append(x.rules, ru)
		}
	}
}

// remember keeps d as a rule of the session when it says Always.
func (r *run) remember(c *call, d Decision) {
	if !d.Always || d.Pending {
		return
	}
	if ru, ok := newRule(c.use.Name, d); ok {
		x := r.appr.data()
		x.rules = append(x.rules, ru)
	}
}

// deferCall handles the checker's Pending decision d on c, whose decoded
// input is in. It reports whether the call runs now: only in a durable
// step, where the runtime asks the person itself.
func (r *run) deferCall(c *call, d Decision, in any) bool {
	if r.p.store == nil { // a durableLoop step: its runtime asks the person
		if !r.appr.ask {
			c.decide(fmt.Sprintf("permission denied: tool %q needs a person's decision, and this runtime cannot ask one", c.use.Name), nil)
			return false
		}
		r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
		c.input = in
		return true
	}
	if !r.canDefer() {
		d = Decision{Reason: fmt.Sprintf("permission denied: tool %q needs a person's decision, and this session's store cannot keep a pending call", c.use.Name), Source: "policy"}
		r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
		c.decide(d.Reason, nil)
		return false
	}
	r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
	c.pending, c.input = true, in
	r.appr.deferring, r.appr.dirty = true, true
	return false
}

// checkHeld decides a call of a resumed session: a pending call without a
// decision waits again; a decided one is recorded, synced, and then runs
// (or is denied). It reports whether the call runs.
func (r *run) checkHeld(c *call) bool {
	if c.held == nil {
		r.appr.deferring = true
		return false
	}
	d := *c.held
	c.held, c.pending = nil, false
	d, in := r.decideHeld(c, d)
	c.stage = stageCheck
	r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
	rec := permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Allow: d.Allow, Reason: d.Reason, Source: d.Source,
		Input: encodeInput(d.Input), Always: d.Always, AnyTool: d.AnyTool, Pattern: d.Pattern}
	// Recorded and synced before the tool runs: after a crash, the call is
	// "interrupted", never run a second time.
	err := r.record(RecordPermission, rec)
	if err == nil {
		err = r.sync()
	}
	if err != nil {
		c.decide("permission denied: the decision could not be recorded", err)
		return false
	}
	r.remember(c, d)
	if !d.Allow {
		c.decide(denialText(c.use.Name, d), nil)
		return false
	}
	c.input, c.rewrite = in, d.Input
	return true
}

// decideHeld returns a person's decision d on c as it stands once the
// input to run with is decoded: the model's, or d's edit, which the
// permission checker decides again (recheck). in is the decoded input.
func (r *run) decideHeld(c *call, d Decision) (_ Decision, in any) {
	if !d.Allow {
		return d, nil
	}
	var err error
	switch raw, ok := rawJSON(d.Input); {
	case d.Input == nil:
		in, err = r.decode(c, c.use.Input)
	case ok:
		in, err = r.decode(c, raw)
	default:
		in = d.Input
	}
	if err != nil {
		return Decision{Reason: fmt.Sprintf("tool %q: the input to run with is invalid: %v", c.use.Name, err), Source: d.Source}, nil
	}
	if d.Input == nil {
		return d, in
	}
	c.stage = stageCheck
	if perr := protect(nil, func() { d = r.recheck(c, d, in) }); perr != nil {
		return Decision{Reason: fmt.Sprintf("permission denied: the permission check of the edited input of tool %q panicked", c.use.Name), Source: "error"}, nil
	}
	return d, in
}

// recheck asks the permission checker about a person's edited input in
// (decision d, which allows the call): an edit is decided again, and a
// rule of the checker holds for it too. The checker may refuse the edit;
// any other answer keeps d, but a further rewrite is refused.
func (r *run) recheck(c *call, d Decision, in any) Decision {
	req := &ToolCall{SessionID: r.sessionID, Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.entry.spec,
		Input: in, RawInput: encodeInput(d.Input), EditedBy: d.Source}
	e, err := r.permission.Check(r.ctx, req)
	switch {
	case err != nil:
		return Decision{Reason: fmt.Sprintf("permission check of the edited input failed: %v", err), Source: "error"}
	case e.Pending || e.Allow && e.Input == nil:
		return d
	case e.Allow:
		return Decision{Reason: fmt.Sprintf("permission denied: the permission checker rewrote the input of tool %q that %s edited", c.use.Name, d.Source), Source: "policy"}
	}
	if e.Source == "" {
		e.Source = "policy"
	}
	reason := strings.TrimPrefix(e.Reason, "permission denied: ")
	if reason == "" {
		reason = "no reason given"
	}
	e.Reason = fmt.Sprintf("permission denied: %s refused the input of tool %q as %s edited it: %s", refuser(e.Source), c.use.Name, d.Source, reason)
	e.Always, e.AnyTool, e.Pattern = false, false, ""
	return e
}

// encodeInput returns a rewritten input as JSON, or nil.
func encodeInput(v any) json.RawMessage {
	if raw, ok := rawJSON(v); ok {
		return raw
	}
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// holdRest ends a turn in which a call waits for a person: every call
// after the first pending one is decided (decoded and checked) but none
// runs; the open calls are recorded in a pending record and the run stops
// with StopPending. It returns false.
func (r *run) holdRest(calls []call) bool {
	p := 0
	for p < len(calls) && !calls[p].pending {
		p++
	}
	open := calls[p:]
	for k := range open {
		c := &open[k]
		if k > 0 {
			r.emit(r.l.callEvent(c))
		}
		switch {
		case c.pending || c.held != nil:
		case c.note != "":
			c.held = &Decision{Reason: c.note, Source: "policy"}
		default:
			r.holdCheck(c)
		}
	}
	return r.stopPending(open)
}

// holdCheck decides c without running it, for holdRest.
func (r *run) holdCheck(c *call) {
	in, err := r.decode(c, c.use.Input)
	if err != nil {
		c.held = &Decision{Reason: fmt.Sprintf("tool %q: %v", c.use.Name, err), Source: "policy"}
		return
	}
	d, in, perr := r.askPermission(c, in)
	if perr != nil {
		c.held = &Decision{Reason: fmt.Sprintf("permission denied: the permission check of tool %q panicked", c.use.Name), Source: "error"}
		return
	}
	if d.Pending && r.canDefer() {
		r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
		c.pending, c.input = true, in
		return
	}
	if d.Pending {
		d = Decision{Reason: fmt.Sprintf("permission denied: tool %q needs a person's decision, and this session's store cannot keep a pending call", c.use.Name), Source: "policy"}
	}
	r.emit(PermissionDecision{Turn: r.l.turn, ToolUseID: c.use.ID, Tool: c.use.Name, Decision: d})
	if !d.Allow && d.Reason == "" {
		d.Reason = fmt.Sprintf("permission denied for tool %q", c.use.Name)
	}
	c.input = in
	c.held = &d
}

// stopPending records the open calls and stops the run with StopPending.
func (r *run) stopPending(open []call) bool {
	rec := pendingRecord{Turn: r.l.turn}
	x := r.appr.data()
	x.pending = x.pending[:0]
	for k := range open {
		c := &open[k]
		pc := pendingCall{ToolUseID: c.use.ID, Tool: c.use.Name, Pending: c.pending && c.held == nil}
		if c.input != nil {
			pc.Input = encodeInput(c.input)
		}
		if pc.Pending {
			req := &ToolCall{SessionID: r.sessionID, ToolUseID: c.use.ID, Input: c.input, RawInput: c.use.Input}
			if c.entry != nil {
				req.Tool = c.entry.spec
			}
			x.pending = append(x.pending, req)
		} else {
			d := c.held
			pc.Decision = &permissionRecord{ToolUseID: c.use.ID, Tool: c.use.Name, Allow: d.Allow, Reason: d.Reason, Source: d.Source,
				Input: encodeInput(d.Input), Always: d.Always, AnyTool: d.AnyTool, Pattern: d.Pattern}
		}
		rec.Calls = append(rec.Calls, pc)
	}
	if r.appr.dirty {
		if err := r.record(RecordPending, rec); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
	}
	n := len(x.pending)
	return r.stop(StopPending, LayerPermission, "", nil,
		fmt.Sprintf("The run is waiting for a person's decision on %d tool call(s); resume it with Agent.Resume.", n))
}

// loadPending reads the open tool_uses of a resumed session (repairs are
// the "interrupted" results Run would give them) against its records, and
// returns the repairs to append now. The calls that wait, for a decision
// or for those before them, go to r.appr.x.resumed.
func (r *run) loadPending(repairs []Message, input string) ([]Message, error) {
	notPending := func(id string, why string) error {
		return fmt.Errorf("%w: %q in session %q: %s", ErrNotPending, id, r.sessionID, why)
	}
	st := r.appr.data()
	approvals := st.approvals
	var P *pendingRecord
	after := map[string]*permissionRecord{}
	if len(repairs) > 0 && r.canDefer() {
		recs, err := r.p.store.(RecordStore).LoadRecords(r.ctx, r.sessionID)
		if err != nil {
			return nil, fmt.Errorf("agentrt: load records of session %q: %w", r.sessionID, err)
		}
		r.appr.loaded = true
		r.collectRules(recs)
		for i := len(recs) - 1; i >= 0 && P == nil; i-- {
			switch recs[i].Kind {
			case RecordPending:
				var p pendingRecord
				if err := json.Unmarshal(recs[i].Data, &p); err != nil {
					return nil, fmt.Errorf("agentrt: session %q: bad pending record: %w", r.sessionID, err)
				}
				P = &p
			case RecordPermission:
				var p permissionRecord
				if json.Unmarshal(recs[i].Data, &p) == nil {
					if _, seen := after[p.ToolUseID]; !seen {
						after[p.ToolUseID] = &p
					}
				}
			}
		}
	}
	listed := map[string]*pendingCall{}
	if P != nil {
		for i := range P.Calls {
			listed[P.Calls[i].ToolUseID] = &P.Calls[i]
		}
	}
	// The last assistant message and its open calls.
	var last Message
	for i := len(r.l.history) - 1; i >= 0; i-- {
		if r.l.history[i].Role == RoleAssistant {
			last = r.l.history[i]
			break
		}
	}
	open := map[string]bool{}
	for _, m := range repairs {
		open[m.ToolUseID] = true
	}
	var keep []Message
	blocked := false
	st.resumed = nil
	for i, b := range last.Blocks {
		if b.Type != BlockToolUse || !open[b.ID] {
			continue
		}
		pc := listed[b.ID]
		dec := after[b.ID]
		if dec != nil && !dec.Allow && !blocked {
			// Denied before the crash: the call never ran, and the model
			// sees the denial it was given.
			keep = append(keep, NewToolMessage(b.ID, denialText(b.Name, Decision{Reason: dec.Reason, Source: dec.Source}), true))
			continue
		}
		if pc == nil || (dec != nil && !blocked) {
			// Not held, or decided and maybe run: interrupted.
			if blocked {
				// Cannot happen in a session this package wrote; answer it
				// anyway, in order.
				dec = &permissionRecord{Reason: interruptedText, Source: "error"}
			} else {
				keep = append(keep, interruptedResult(b))
				continue
			}
		}
		blocked = true
		c := call{use: b, index: i}
		if e, ok := r.p.tools[b.Name]; ok {
			c.entry = e
		} else {
			c.note = r.p.unknownTool(b.Name)
		}
		switch {
		case dec != nil:
			d := Decision{Allow: dec.Allow, Reason: dec.Reason, Source: dec.Source, Always: dec.Always, AnyTool: dec.AnyTool, Pattern: dec.Pattern}
			if len(dec.Input) > 0 {
				d.Input = dec.Input
			}
			c.held = &d
		case pc.Decision != nil:
			d := Decision{Allow: pc.Decision.Allow, Reason: pc.Decision.Reason, Source: pc.Decision.Source}
			if len(pc.Decision.Input) > 0 {
				d.Input = pc.Decision.Input
			}
			c.held = &d
		default:
			c.pending = true
			if len(pc.Input) > 0 && c.entry != nil {
				c.input, _ = c.entry.tool.Decode(pc.Input)
			}
		}
		st.resumed = append(st.resumed, c)
	}
	if input != "" {
		// The person moved on: the waiting calls are denied, in order.
		for _, c := range st.resumed {
			keep = append(keep, NewToolMessage(c.use.ID, fmt.Sprintf("permission denied: the user sent a new message instead of deciding on this call of %q", c.use.Name), true))
		}
		st.resumed = nil
	}
	if r.appr.resume && st.resumed == nil {
		return nil, fmt.Errorf("%w: session %q has no call waiting for a decision", ErrNotPending, r.sessionID)
	}
	seen := map[string]bool{}
	for _, a := range approvals {
		var c *call
		for k := range st.resumed {
			if st.resumed[k].use.ID == a.ToolUseID {
				c = &st.resumed[k]
			}
		}
		switch {
		case c == nil:
			return nil, notPending(a.ToolUseID, "the session has no pending call with this id")
		case seen[a.ToolUseID]:
			return nil, notPending(a.ToolUseID, "two decisions for one call")
		case !c.pending:
			return nil, notPending(a.ToolUseID, "the call was already decided")
		case a.Pending:
			return nil, notPending(a.ToolUseID, "a decision given to Resume cannot be pending; leave the call out to keep it waiting")
		}
		if a.Pattern != "" {
			if _, err := regexp.Compile(a.Pattern); err != nil {
				return nil, fmt.Errorf("agentrt: approval of %q: invalid Pattern: %w", a.ToolUseID, err)
			}
		}
		seen[a.ToolUseID] = true
		d := personal(a, c.use.Name)
		c.held = &d
		r.appr.dirty = true
	}
	return keep, nil
}

// resumeTurn finishes the turn of a resumed pending session: its open
// calls run, in order, as they would have, and the loop decides what
// follows. It returns false when the run has stopped.
func (r *run) resumeTurn() bool {
	r.turnCtx = r.ctx
	if len(r.p.hooks) > 0 {
		r.turnCtx = r.turnStartHooks()
		r.turnOpen = true
	}
	r.l.calls = r.appr.x.resumed
	r.appr.x.resumed = nil
	if !r.runTools() {
		return false
	}
	if r.ctx.Err() != nil {
		return r.stopCancelled()
	}
	var last Message
	for i := len(r.l.history) - 1; i >= 0; i-- {
		if r.l.history[i].Role == RoleAssistant {
			last = r.l.history[i]
			break
		}
	}
	o := r.l.next(last)
	switch {
	case o.stop:
		return r.stopWith(o)
	case o.retry != "":
		if err := r.append(NewUserMessage(o.retry)); err != nil {
			return r.stop(StopError, LayerStore, "", err)
		}
	}
	r.endTurn()
	return true
}
