package agentrt

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt/internal/textcut"
)

// WithTraceSpan returns a copy of ctx that carries the ids of the
// tracing span it runs in, as hex strings. A hook (agentotel's) returns it
// from OnRunStart, BeforePlan or BeforeTool, and the runtime writes the
// ids into the trace records, so that a session line leads to its span.
func WithTraceSpan(ctx context.Context, traceID, spanID string) context.Context {
	return context.WithValue(ctx, spanKey{}, &spanIDs{traceID, spanID})
}

type spanKey struct{}

type spanIDs struct{ trace, span string }

func spanOf(ctx context.Context) *spanIDs {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(spanKey{}).(*spanIDs)
	return s
}

// tracer is the trace state of one run.
type tracer struct {
	start time.Time
	span  *spanIDs // of the current planner call
	// The current planner call.
	pstart  time.Time
	ttft    time.Duration
	retries []byte // encoded retries, "" when none
	msgs    int
	tokens  int
	// The token count of the Compressor's view, when it is not the
	// history itself (compress counts it).
	viewTokens int
	upTo       int // the compaction in use, +1; 0 for none
	// The running token estimate of the history, when the view is the
	// history itself: messages counted and their tokens.
	estN, est int
	buf       []byte       // the record of the turn in progress
	run       []byte       // the run's record, built at its end
	sec       int64        // the Unix second of prefix, +1; 0 for none yet
	prefix    [21]byte     // `"YYYY-MM-DDThh:mm:ss.`
	off       bool         // the store keeps no records
	on        bool         // the trace is written (the store keeps records)
	open      bool         // a planner call is in progress
	pending   bool         // buf holds a turn's record, not yet written
	split     bool         // its model call was written apart
	calls     int32        // tool calls in buf's record
	fp        fingerprints // of each planner request (fingerprint.go)
}

// viewTokens counts the tokens of a Compressor's view, for the trace. A
// Window's view is its first message (with a note) and messages its state
// has counted already, so with the default count, a sum over messages,
// only the first is counted again: a turn then costs what it added, not
// the view's whole length.
func viewTokens(res *CompressResult, count func([]Message) int, additive bool) int {
	if st, ok := res.State.(*windowState); ok && additive && len(res.Messages) > 0 && sameSlice(st.view, res.Messages) {
		return count(res.Messages[:1]) + st.tokens
	}
	return count(res.Messages)
}

// begin returns the run's record buffer, emptied: one record is built at
// a time, and appendTrace hands the store a copy.
func (t *tracer) begin() []byte { return t.buf[:0] }

// traceStart begins the run's trace: none when the store keeps no
// records, or for a Resume that decides nothing (it writes nothing).
func (r *run) traceStart() {
	t := &r.tr
	if r.p.records == nil || r.appr.idle() {
		t.off = true
		if len(r.p.hooks) > 0 {
			t.start = time.Now() // RunInfo.Start
		}
		return
	}
	t.on = true
	t.start = time.Now()
	// Room for a turn's record and a message's bytes to hash, so that they
	// do not grow from nothing in every run.
	t.buf, t.fp.buf = make([]byte, 0, 512), make([]byte, 0, 256)
}

// now returns the current time. Once the run has a start time, it is that
// plus the monotonic clock's time since: one clock read, where time.Now
// makes two (the wall clock too).
func (r *run) now() time.Time {
	if s := r.tr.start; !s.IsZero() {
		return s.Add(time.Since(s))
	}
	return time.Now()
}

// tracePlan notes what the planner is shown: view, out of the history
// full. It starts the planner call's clock the first time in a turn.
func (r *run) tracePlan(view, full []Message) {
	t := &r.tr
	if t.off {
		return
	}
	if !t.open {
		r.traceTurnEnd()
		// The run's start plus the monotonic time since: cheaper than
		// time.Now, which also reads the wall clock.
		t.open, t.pstart, t.ttft, t.retries, t.span = true, r.now(), 0, t.retries[:0], nil
	}
	t.msgs = len(view)
	if sameSlice(view, full) {
		if t.estN > len(full) {
			t.estN, t.est = 0, 0
		}
		t.est += estimateTokens(full[t.estN:])
		t.estN = len(full)
		t.tokens = t.est
	} else {
		t.tokens = t.viewTokens // counted by compress
	}
	t.fp.compaction = !sameSlice(view, full)
	t.upTo = 0
	if r.compact != nil && r.p.compressor != nil {
		t.upTo = r.compact.UpTo + 1
	}
}

// traceText notes a streamed piece of text: the first gives the time to
// the first token.
func (r *run) traceText() {
	if t := &r.tr; t.open && t.ttft == 0 {
		t.ttft = time.Since(t.pstart)
	}
}

// traceRetry notes a failed planner attempt that is retried after wait.
func (r *run) traceRetry(attempt int, err error, wait time.Duration) {
	t := &r.tr
	if t.off {
		return
	}
	if len(t.retries) > 0 {
		t.retries = append(t.retries, ',')
	}
	t.retries = append(t.retries, `{"attempt":`...)
	t.retries = strconv.AppendInt(t.retries, int64(attempt), 10)
	t.retries = append(t.retries, `,"error":`...)
	t.retries = appendJSONString(t.retries, textcut.Ellipsis(errorText(err), 1000))
	t.retries = append(t.retries, `,"layer":"`...)
	t.retries = append(t.retries, layerOf(err)...)
	t.retries = append(t.retries, `","wait_ms":`...)
	t.retries = appendMS(t.retries, wait)
	t.retries = append(t.retries, '}')
}

// traceModelCall ends the turn's planner call: resp on success, or the
// error that ended the run and its layer. It starts the turn's record.
func (r *run) traceModelCall(resp *ModelResponse, err error, layer Layer) {
	t := &r.tr
	if t.off || !t.open {
		return
	}
	t.open = false
	d := time.Since(t.pstart)
	b := append(t.begin(), `{"turn":`...)
	b = strconv.AppendInt(b, int64(r.l.turn), 10)
	b = append(b, `,"model_call":{"start":`...)
	b = t.appendTime(b, t.pstart)
	b = append(b, `,"duration_ms":`...)
	b = appendMS(b, d)
	b = append(b, r.p.traceProvider...)
	if t.ttft > 0 {
		b = append(b, `,"ttft_ms":`...)
		b = appendMS(b, max(t.ttft, time.Microsecond)) // streamed: never 0
	}
	if len(t.retries) > 0 {
		b = append(b, `,"retries":[`...)
		b = append(b, t.retries...)
		b = append(b, ']')
	}
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(t.msgs), 10)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(t.tokens), 10)
	if t.upTo > 0 {
		b = append(b, `,"compaction_up_to":`...)
		b = strconv.AppendInt(b, int64(t.upTo-1), 10)
	}
	if resp != nil {
		if resp.Usage != (Usage{}) {
			b = appendUsage(b, resp.Usage)
		}
		if resp.Finish != "" {
			b = append(b, `,"finish":`...)
			b = appendJSONString(b, string(resp.Finish))
		}
	}
	if resp != nil && r.p.budget.Prices != (Prices{}) {
		b = append(b, `,"cost":`...)
		b = strconv.AppendFloat(b, r.p.budget.Prices.Cost(resp.Usage), 'g', 6, 64)
	}
	if t.fp.taken {
		b = t.fp.appendPrefix(b)
		t.fp.commit()
	}
	b = appendFailure(b, err, layer)
	b = appendSpan(b, t.span)
	t.buf = append(b, '}')
	t.pending, t.calls, t.split = true, 0, false
	if r.p.syncer != nil && resp != nil && len(r.l.calls) > 0 {
		// A durable store gets the model call before the tools run, as it
		// gets the calls (write-ahead), so that a crash leaves it; the
		// tool calls follow in a second record of the turn.
		r.appendTrace(RecordTurn, append(t.buf, '}'))
		b = append(t.begin(), `{"turn":`...)
		t.buf = strconv.AppendInt(b, int64(r.l.turn), 10)
		t.split = true
	}
}

// traceToolCall adds a settled call to the turn's record.
func (r *run) traceToolCall(c *call) {
	t := &r.tr
	if t.off {
		return
	}
	if !t.pending {
		// A call of a turn whose model call an earlier run made: the calls
		// a person decided on (Agent.Resume).
		b := append(t.begin(), `{"turn":`...)
		t.buf = strconv.AppendInt(b, int64(r.l.turn), 10)
		t.pending, t.calls, t.split = true, 0, true
	}
	b := t.buf
	if t.calls == 0 {
		b = append(b, `,"tool_calls":[{"tool_use_id":`...)
	} else {
		b = append(b, `,{"tool_use_id":`...)
	}
	t.calls++
	b = appendJSONString(b, c.use.ID)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, c.use.Name)
	if !c.start.IsZero() {
		b = append(b, `,"start":`...)
		b = t.appendTime(b, c.start)
		b = append(b, `,"duration_ms":`...)
		b = appendMS(b, c.dur)
	}
	b = append(b, `,"outcome":"`...)
	b = append(b, r.outcomeOf(c)...)
	b = append(b, '"')
	if c.ctx != nil {
		b = appendSpan(b, spanOf(c.ctx))
	}
	t.buf = append(b, '}')
}

// closeTurn ends the turn's record in t.buf, if one is pending, and
// reports whether there was one.
func (t *tracer) closeTurn() bool {
	if !t.pending {
		return false
	}
	t.pending = false
	if t.split && t.calls == 0 {
		return false
	}
	if t.calls > 0 {
		t.buf = append(t.buf, ']')
	}
	t.buf = append(t.buf, '}')
	return true
}

// traceTurnEnd writes the record of the turn that is over, if any.
func (r *run) traceTurnEnd() {
	if t := &r.tr; t.closeTurn() {
		r.appendTrace(RecordTurn, t.buf)
	}
}

// traceRun writes the record of the run's end, with the trace of the
// turn it ended in (and of a planner call the stop interrupted).
func (r *run) traceRun(o *outcome, done *Done) {
	t := &r.tr
	if t.off {
		return
	}
	if t.open {
		err := o.err
		if err == nil && o.reason == StopCancelled {
			err = context.Canceled
		}
		r.traceModelCall(nil, err, o.layer)
	}
	b := slices.Grow(t.run[:0], 256+len(t.buf)) // the run's record; the last turn's is still in t.buf
	end := t.start.Add(time.Since(t.start))     // the monotonic clock only
	b = append(b, `{"start":`...)
	b = t.appendTime(b, t.start)
	b = append(b, `,"end":`...)
	b = t.appendTime(b, end)
	b = append(b, `,"duration_ms":`...)
	b = appendMS(b, end.Sub(t.start))
	b = append(b, `,"reason":"`...)
	b = append(b, done.Reason...)
	b = append(b, '"')
	if done.Layer != LayerNone { // a completed run has no layer, as in Done
		b = append(b, `,"layer":"`...)
		b = append(b, done.Layer...)
		b = append(b, '"')
	}
	b = append(b, `,"turns":`...)
	b = strconv.AppendInt(b, int64(done.Turns), 10)
	if done.Usage != (Usage{}) {
		b = appendUsage(b, done.Usage)
	}
	if o.err != nil {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, textcut.Ellipsis(errorText(o.err), 2000))
	} else if done.Detail != "" { // a stop that is not an error: pending, a limit
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, textcut.Ellipsis(done.Detail, 2000))
	}
	b = appendSpan(b, spanOf(r.ctx))
	if t.closeTurn() {
		b = append(b, `,"last_turn":`...)
		b = append(b, t.buf...)
	}
	b = append(b, '}')
	t.run = b
	r.appendTrace(RecordRun, b)
}

// appendTrace writes a trace record. It is best effort: a trace record
// the store refuses does not change the run (a broken store fails the
// next message append, which stops the run).
// The store keeps a copy of data.
func (r *run) appendTrace(kind RecordKind, data []byte) {
	_ = r.p.records.AppendRecord(r.sctx, r.sessionID, Record{Kind: kind, Data: bytes.Clone(data)})
}

// Tool call outcomes, in the "outcome" of a RecordToolCall record.
const (
	outcomeOK           = "ok"
	outcomeToolError    = "tool_error"
	outcomeInvalidInput = "invalid_input"
	outcomeDenied       = "denied"
	outcomeBlocked      = "blocked"
	outcomeTimeout      = "timeout"
	outcomePanic        = "panic"
	outcomeCancelled    = "cancelled"
)

// outcomeOf classifies how a settled call ended.
func (r *run) outcomeOf(c *call) string {
	// c.err is a *ToolError wrapping the cause (no errors.As: it
	// allocates, and this runs for every call).
	var cause error
	if te, ok := c.err.(*ToolError); ok {
		cause = te.Err
	}
	_, panicked := cause.(*PanicError)
	_, blocked := cause.(*blockedError)
	switch {
	case c.ran && panicked:
		return outcomePanic
	case c.ran && c.err != nil && r.ctx.Err() != nil:
		return outcomeCancelled
	case c.ran && errors.Is(c.err, context.DeadlineExceeded):
		return outcomeTimeout
	case c.ran && c.err != nil:
		return outcomeToolError
	case c.ran:
		return outcomeOK
	case c.note != "" && strings.HasPrefix(c.note, "not run"):
		return outcomeCancelled
	case c.note != "":
		return outcomeInvalidInput
	case blocked, c.stage == stageBeforeTool:
		return outcomeBlocked
	case errors.Is(c.err, context.Canceled), errors.Is(c.err, context.DeadlineExceeded):
		return outcomeCancelled
	case c.stage == stageDecode:
		return outcomeInvalidInput
	}
	return outcomeDenied
}

// appendTime appends tm as a JSON string, in RFC 3339 with nanoseconds,
// UTC. The part up to the second is formatted once a second.
func (t *tracer) appendTime(b []byte, tm time.Time) []byte {
	tm = tm.UTC()
	if sec := tm.Unix(); sec+1 != t.sec {
		if p := tm.AppendFormat(t.prefix[:0], `"2006-01-02T15:04:05.`); len(p) != len(t.prefix) {
			t.sec = 0 // a year of other than 4 digits (never from a clock): not kept
			return tm.AppendFormat(b, `"2006-01-02T15:04:05.000000000Z"`)
		}
		t.sec = sec + 1
	}
	b = append(b, t.prefix[:]...)
	b = append(b, `000000000Z"`...)
	digits := b[len(b)-11 : len(b)-2]
	for i, n := 8, tm.Nanosecond(); n > 0; i, n = i-1, n/10 {
		digits[i] = byte('0' + n%10)
	}
	return b
}

// appendMS appends d in milliseconds, to the microsecond.
func appendMS(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	b = strconv.AppendInt(b, us/1000, 10)
	if f := us % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return b
}

func appendUsage(b []byte, u Usage) []byte {
	b = append(b, `,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	if u.ReasoningTokens != 0 {
		b = append(b, `,"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.ReasoningTokens), 10)
	}
	if u.CacheReadTokens != 0 {
		b = append(b, `,"cache_read_tokens":`...)
		b = strconv.AppendInt(b, int64(u.CacheReadTokens), 10)
	}
	if u.CacheWriteTokens != 0 {
		b = append(b, `,"cache_write_tokens":`...)
		b = strconv.AppendInt(b, int64(u.CacheWriteTokens), 10)
	}
	return append(b, '}')
}

func appendFailure(b []byte, err error, layer Layer) []byte {
	if err == nil {
		return b
	}
	b = append(b, `,"error":`...)
	b = appendJSONString(b, textcut.Ellipsis(errorText(err), 2000))
	if layer != LayerNone {
		b = append(b, `,"layer":"`...)
		b = append(b, layer...)
		b = append(b, '"')
	}
	return b
}

func appendSpan(b []byte, s *spanIDs) []byte {
	if s == nil {
		return b
	}
	b = append(b, `,"trace_id":`...)
	b = appendJSONString(b, s.trace)
	b = append(b, `,"span_id":`...)
	return appendJSONString(b, s.span)
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	if i == len(s) { // plain ASCII, the usual case
		b = append(b, s...)
		return append(b, '"')
	}
	b = append(b, s[:i]...)
	start := i
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
