package agentrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt/internal/textcut"
)

// loop is the turn logic of one run, the same on every runtime: it gives
// every tool_use a unique id, decides what cannot run, settles results
// (output cap, loop guard), applies the loop guard, the budget and max
// turns, asks for the final answer without tools, checks typed output and
// repairs a resumed session.
//
// It is deterministic: no clock, no goroutine, no I/O and no user
// callback. The runtime that drives it performs the effects (the planner
// call, the tool calls, the store) and feeds their outcomes back, so a
// durable runtime can replay it.
type loop struct {
	p         *prepared
	sessionID string
	output    *outputSpec

	history []Message
	// Every tool_use id in the session, and the message that gave it: the
	// value of turns then, 0 for a stored message.
	ids       map[string]int
	turn      int // the current turn, from 1
	turns     int // planner calls that returned a message
	usage     Usage
	guard     loopState
	looping   int // highest repeat count seen this turn
	outputTry int // corrective re-asks made for the output check
	limit     *limitStop

	calls []call  // the tool_uses of the current assistant message
	parts []Block // the parts of the user's input after its text
}

// limitStop is a limit the run has reached; the next planner call is the
// final answer without tools.
type limitStop struct {
	reason StopReason
	why    string
}

func (l *loop) init(p *prepared, sessionID string, output *outputSpec) {
	l.p, l.sessionID, l.output = p, sessionID, output
	l.ids = map[string]int{}
}

// begin takes the stored session and returns the messages to append
// before the first turn: "interrupted" results for tool_uses a crash left
// unanswered, and the user's input, if any. It does not add them to the
// history; the runtime appends each with add once it is stored.
func (l *loop) begin(stored []Message, input string) (repairs []Message, user Message, hasUser bool, err error) {
	l.history = append(make([]Message, 0, len(stored)+8), stored...) // room for this run's first turns
	for i := range stored {
		for _, b := range stored[i].Blocks {
			if b.Type == BlockToolUse {
				l.ids[b.ID] = 0
			}
		}
	}
	if input == "" && len(l.parts) == 0 && len(stored) == 0 {
		return nil, Message{}, false, ErrEmptyInput
	}
	repairs = unanswered(stored, interruptedResult)
	if input != "" || len(l.parts) > 0 {
		return repairs, NewUserMessage(input, l.parts...), true, nil
	}
	return repairs, Message{}, false, nil
}

// add records a message that is now in the session.
func (l *loop) add(m Message) { l.history = append(l.history, m) }

// request returns a new request for the next planner call, with the
// messages view (the history, or the Compressor's view of it). The caller
// owns it. After a limit, a note asks for the final answer; it goes after
// the messages, not into the system prompt, so that the request still
// begins as the one before it did (the prompt cache, docs/caching.md).
func (l *loop) request(view []Message) *ModelRequest {
	req := &ModelRequest{
		SessionID: l.sessionID,
		Turn:      l.turn,
		System:    l.p.instructions,
		Messages:  view,
		Tools:     l.p.specs,
	}
	if o := l.output; o != nil {
		req.System += o.instructions
		req.ResponseSchema = o.schema
	}
	if l.limit != nil {
		req.Messages = append(view[:len(view):len(view)], NewUserMessage(limitNote(l.limit.why)))
		req.ToolChoice = ToolChoice{Mode: "none"}
	}
	return req
}

// limitNote is the runtime's note of the last planner call after a limit.
func limitNote(why string) string {
	return "This run has reached a limit and is about to stop: " + why +
		" Do not call any tool. Answer the user now, as well as you can with what you have found so far, and say what is left undone."
}

// accept takes the planner's response and returns the assistant message
// to store: role set, stray Content moved into a text block, every
// tool_use given an id unique in the whole session and an input that is
// valid JSON. It fills l.calls, one per tool_use, with what the loop
// already knows: the tool, or why the call must not run. The response's
// Blocks are copied before any change.
func (l *loop) accept(resp *ModelResponse) Message {
	l.turns++
	l.usage = l.usage.Add(resp.Usage)
	l.looping = 0
	m := resp.Message
	m.Role = RoleAssistant
	m.ToolUseID, m.IsError = "", false
	if m.Content != "" {
		m.Blocks = append([]Block{TextBlock(m.Content)}, m.Blocks...)
		m.Content = ""
	}
	l.collectCalls(m.Blocks)
	l.repairCalls(&m)
	if l.limit != nil {
		// The final answer was to call no tool: none runs.
		for k := range l.calls {
			if l.calls[k].note == "" {
				l.calls[k].note = "not run: the run reached a limit and is over"
			}
		}
	}
	return m
}

// collectCalls fills l.calls with the tool_use blocks, each marked if its
// id cannot stay (see checkID). First the ids the model gave that can
// stay are taken, so that an id invented later never takes one of them.
func (l *loop) collectCalls(blocks []Block) {
	clear(l.calls)
	l.calls = l.calls[:0]
	for i := range blocks {
		b := &blocks[i]
		if b.Type != BlockToolUse {
			continue
		}
		keep, note := l.checkID(b.ID)
		l.calls = append(l.calls, call{use: *b, index: i, newID: !keep, note: note})
	}
}

// checkID reports whether a tool_use id can stay (it is then taken) and,
// if the call must not run, why. An empty id, one that is not UTF-8 and
// one an earlier turn used get a new id and run: most APIs' servers, not
// the model, give the ids, and some give the same ones every turn ("0",
// "call_1"). A second call with the id of one before it in the same
// message does not run: it may be that call repeated.
func (l *loop) checkID(id string) (keep bool, note string) {
	given, seen := l.ids[id]
	switch {
	case seen && given == l.turns:
		return false, fmt.Sprintf("invalid tool_use: duplicate id %q in this message; this call was not run. Give every tool_use a unique id.", id)
	case id == "", seen, !utf8.ValidString(id):
		return false, ""
	}
	l.ids[id] = l.turns
	return true, ""
}

// repairCalls gives each call in l.calls with a bad id a new one, turns an
// input that is not valid JSON into a JSON string, and finds the tool of
// each call that may run. m's Blocks are copied before the first change.
func (l *loop) repairCalls(m *Message) {
	copied := false
	own := func() {
		if !copied {
			m.Blocks = append([]Block(nil), m.Blocks...)
			copied = true
		}
	}
	for k := range l.calls {
		c := &l.calls[k]
		if c.newID {
			own()
			b := &m.Blocks[c.index]
			b.ID = l.inventID(k)
			c.use.ID = b.ID
		}
		if len(c.use.Input) > 0 && !json.Valid(c.use.Input) {
			own()
			b := &m.Blocks[c.index]
			if c.note == "" {
				c.note = fmt.Sprintf("tool %q: input is not valid JSON: %s; send the input as one JSON object", c.use.Name, textcut.Ellipsis(string(b.Input), 200))
			}
			// Kept as a JSON string so that the session stays valid JSON.
			q, _ := json.Marshal(string(b.Input))
			b.Input = q
			c.use.Input = q
		}
		if c.note != "" {
			continue
		}
		e, ok := l.p.tools[c.use.Name]
		if !ok {
			c.note = l.p.unknownTool(c.use.Name)
			continue
		}
		c.entry = e
	}
}

// inventID returns an id for the k-th tool_use of this turn that no
// tool_use of the session has, and reserves it.
func (l *loop) inventID(k int) string {
	base := "agentrt_t" + strconv.Itoa(l.turn) + "_" + strconv.Itoa(k+1)
	id := base
	for n := 2; l.has(id); n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	l.ids[id] = l.turns
	return id
}

// batch returns the end of the group of calls that starts at i: a call
// that does not run, a write tool or a single read-only tool alone, or a
// run of read-only calls that may run together.
func (l *loop) batch(i int) int {
	if !l.calls[i].parallel(l.p.maxPar) {
		return i + 1
	}
	j := i + 1
	for j < len(l.calls) && l.calls[j].parallel(l.p.maxPar) {
		j++
	}
	return j
}

// settle turns a call's outcome into the result the model sees: the
// output cut to MaxToolOutput, and a note when the loop guard sees the
// same call with the same result again.
func (l *loop) settle(c *call) {
	if cut, ok := truncateOutput(c.result.Content, l.p.maxOutput); ok {
		c.full = c.result.Content
		c.result.Content = cut
	}
	if g := l.p.guard; !g.Disabled && c.ran {
		warn, _ := g.limits()
		if n := l.guard.observe(c.use.Name, c.use.Input, c.result); n >= warn {
			c.result.Content += loopNote(n)
			l.looping = max(l.looping, n)
		}
	}
}

// afterTools decides, once every result of a turn is in, whether the run
// goes on: ok is true to plan again. Otherwise the run stops with reason,
// after a final answer when final is true.
func (l *loop) afterTools() (reason StopReason, why string, final, ok bool) {
	if _, stop := l.p.guard.limits(); !l.p.guard.Disabled && l.looping >= stop {
		return StopLoopDetected, fmt.Sprintf("the model made the same tool call with the same result %d times, after it was told to stop (loop_detected).", l.looping), false, false
	}
	if why := l.p.budget.exceeded(l.usage); why != "" {
		return StopBudgetExceeded, "it reached " + why + " (budget_exceeded).", !l.p.noFinal, false
	}
	if l.turn >= l.p.maxTurns {
		return StopMaxTurns, fmt.Sprintf("it made %d turns without a final answer (max_turns).", l.p.maxTurns), !l.p.noFinal, false
	}
	l.turn++
	return "", "", false, true
}

// finalAnswer makes the next planner call the final answer without tools.
func (l *loop) finalAnswer(reason StopReason, why string) {
	l.limit = &limitStop{reason: reason, why: why}
	l.turn++
}

// answered checks an answer without tool calls. With typed output, an
// answer that does not match gives the text of a corrective user message
// (retry) while tries remain, then an *OutputError.
func (l *loop) answered(msg Message) (retry string, err error) {
	o := l.output
	if o == nil || l.limit != nil {
		return "", nil
	}
	cerr := o.check(msg.Text())
	if cerr == nil {
		return "", nil
	}
	if l.outputTry < o.retries() && l.turn < l.p.maxTurns {
		l.outputTry++
		l.turn++
		return fmt.Sprintf(outputRetryText, cerr), nil
	}
	return "", &OutputError{Raw: msg.Text(), Err: cerr}
}

// outcome is what follows a turn once every result of it is in: plan
// again (stop false), after appending a corrective user message when retry
// is set, or stop the run.
type outcome struct {
	retry  string
	stop   bool
	reason StopReason
	layer  Layer
	text   string
	detail string
	err    error
}

// next decides what follows the turn whose assistant message is msg, once
// its calls are settled: the typed-output check of an answer, the stop
// after a final answer, or the loop guard, the budget and max turns (and
// the final answer they ask for).
func (l *loop) next(msg Message) outcome {
	if lim := l.limit; lim != nil {
		return outcome{stop: true, reason: lim.reason, layer: LayerLimit, text: msg.Text(), detail: "The run stopped: " + lim.why}
	}
	if len(l.calls) == 0 {
		retry, err := l.answered(msg)
		switch {
		case err != nil:
			return outcome{stop: true, reason: StopError, layer: LayerPlanner, err: err}
		case retry != "":
			return outcome{retry: retry}
		}
		return outcome{stop: true, reason: StopComplete, layer: LayerNone, text: msg.Text()}
	}
	reason, why, final, ok := l.afterTools()
	switch {
	case ok:
		return outcome{}
	case final:
		l.finalAnswer(reason, why)
		return outcome{}
	}
	return outcome{stop: true, reason: reason, layer: LayerLimit, detail: "The run stopped: " + why}
}

// done returns the Done event of a run that stops.
func (l *loop) done(o outcome) Done {
	d := Done{Reason: o.reason, Layer: o.layer, FinalText: o.text, Usage: l.usage, Turns: l.turns}
	switch {
	case o.err != nil:
		d.Detail = "The run stopped: " + errorText(o.err)
	default:
		d.Detail = o.detail
	}
	return d
}

// timeBudget is the outcome of a run whose Budget.MaxDuration expired.
func (l *loop) timeBudget() outcome {
	return outcome{stop: true, reason: StopBudgetExceeded, layer: LayerLimit,
		detail: fmt.Sprintf("The run stopped: it reached its time budget of %v (budget_exceeded).", l.p.budget.MaxDuration)}
}

// unanswered returns an error result, with the text text gives, for every
// tool_use of the last assistant message of msgs that has no result after
// it, in tool_use order: what a run appends before it stops, and what a
// resumed session gets for the tool_uses a crash left open.
func unanswered(msgs []Message, result func(Block) Message) []Message {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 || !msgs[last].HasToolUse() {
		return nil
	}
	answered := msgs[last+1:]
	var out []Message
	for _, b := range msgs[last].Blocks {
		if b.Type != BlockToolUse {
			continue
		}
		done := false
		for _, m := range answered {
			if m.Role == RoleTool && m.ToolUseID == b.ID {
				done = true
				break
			}
		}
		if !done {
			out = append(out, result(b))
		}
	}
	return out
}

const interruptedText = "interrupted: the previous run stopped before this tool finished; it may or may not have taken effect"

// interruptedResult answers a tool_use a run left open.
func interruptedResult(b Block) Message { return NewToolMessage(b.ID, interruptedText, true) }

// stoppedText is the result of a call of the current turn that a
// stopping run answers: "not run", or, for a call whose tool ran but whose
// result could not be stored, that it may have taken effect.
func (l *loop) stoppedText(b Block) string {
	for i := range l.calls {
		if c := &l.calls[i]; c.use.ID == b.ID && c.ran {
			return fmt.Sprintf("interrupted: tool %q ran, but the run stopped before its result was stored; it may have taken effect", b.Name)
		}
	}
	return notRunText(b)
}

// stoppedResult is the result a stopping run appends for b: the call's own
// result when its tool ran and the result is known (its first append
// failed), or stoppedText.
func (l *loop) stoppedResult(b Block) Message {
	for i := range l.calls {
		if c := &l.calls[i]; c.use.ID == b.ID && c.ran && c.result.ToolUseID == b.ID {
			return c.result
		}
	}
	return NewToolMessage(b.ID, l.stoppedText(b), true)
}

// notRunText is the result of a call the run stopped before it started.
func notRunText(b Block) string {
	return fmt.Sprintf("cancelled: the run was stopped before tool %q ran", b.Name)
}

// call is one tool_use of the current turn.
type call struct {
	use   Block
	index int        // of the block in the assistant message
	entry *toolEntry // the tool; nil when note is set
	note  string     // why the call must not run (decided by the loop)
	newID bool       // its id could not stay: it gets one of the runtime's

	// The outcome, set by the runtime.
	result Message
	err    error
	dur    time.Duration
	start  time.Time // when Execute was called
	full   string    // the whole output when result was cut
	ran    bool      // the tool's Execute returned

	// In-process state.
	input     any
	rewrite   any // the permission checker's replacement input, if any
	ctx       context.Context
	inv       *ToolCall
	herrs     []*hookError
	stage     stage
	skip      bool          // decided without running (in a parallel group)
	pending   bool          // waits for a person's decision (Decision.Pending)
	held      *Decision     // the decision it runs with once its turn comes
	group     chan groupMsg // set while it runs in a parallel group
	needAfter bool          // AfterTool hooks are due after a contained Goexit
}

// callEvent returns the ToolCall event of c, yielded before c is handled.
func (l *loop) callEvent(c *call) ToolCall {
	ev := ToolCall{SessionID: l.sessionID, Turn: l.turn, ToolUseID: c.use.ID, RawInput: c.use.Input}
	if e := c.entry; e != nil {
		ev.Tool = e.spec
	} else if e, ok := l.p.tools[c.use.Name]; ok {
		ev.Tool = e.spec
	} else {
		ev.Tool.Name = c.use.Name
	}
	return ev
}

// decide gives c an error result without running it.
func (c *call) decide(text string, err error) {
	c.result = NewToolMessage(c.use.ID, text, true)
	if err == nil {
		err = errors.New(text)
	}
	c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: err}
}

// panicked gives c the result of a tool that panicked.
func (c *call) panicked(perr *PanicError) {
	c.result = NewToolMessage(c.use.ID, fmt.Sprintf("tool %q panicked: %v", c.use.Name, perr.Value), true)
	c.err = &ToolError{Tool: c.use.Name, ToolUseID: c.use.ID, Err: perr}
}

// parallel reports whether the call may run concurrently with its
// read-only neighbours.
func (c *call) parallel(maxPar int) bool {
	return c.note == "" && c.entry != nil && c.entry.spec.ReadOnly && maxPar > 1
}

// has reports whether a tool_use of the session has the id.
func (l *loop) has(id string) bool {
	_, ok := l.ids[id]
	return ok
}
