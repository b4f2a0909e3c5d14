package agentrt

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Trace records: how long each planner and tool call took, how it ended,
// and which layer ended the run. The runtime appends them to stores that
// keep records ([RecordAppender]) as the run goes; docs/jsonl-format.md
// documents their fields and the timeline package reads them.
const (
	// RecordModelCall is one planner call of a turn, retries included:
	// {"turn", "start", "duration_ms", "provider", "model", "ttft_ms",
	// "retries", "usage", "messages", "tokens", "compaction_up_to",
	// "finish", "error", "layer", "trace_id", "span_id"}.
	RecordModelCall = "model_call"
	// RecordToolCall is one tool call: {"turn", "tool_use_id", "tool",
	// "start", "duration_ms", "outcome", "trace_id", "span_id"}; what
	// went wrong is in its result message.
	RecordToolCall = "tool_call"
	// RecordRun is the end of a run: {"start", "end", "duration_ms",
	// "reason", "layer", "turns", "usage", "error", "trace_id", "span_id"}.
	RecordRun = "run"
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
	off   bool // the store keeps no records
	start time.Time
	prov  ProviderInfo
	span  *spanIDs // of the current planner call
	// The current planner call.
	open    bool
	pstart  time.Time
	ttft    time.Duration
	retries []byte // encoded retries, "" when none
	msgs    int
	tokens  int
	upTo    int // the compaction in use, +1; 0 for none
	// The running token estimate of the history, when the view is the
	// history itself: messages counted and their tokens.
	estN, est int
	buf       []byte // scratch for encoding a record: scratch, or larger
	scratch   [384]byte
	arena     []byte // the records' data, handed to the store
}

// keep copies a record's data into the run's arena, so that a run's
// records share few allocations; the store keeps the copy, and no byte of
// the arena is written twice.
func (t *tracer) keep(data []byte) []byte {
	if cap(t.arena)-len(t.arena) < len(data) {
		t.arena = make([]byte, 0, max(1024, len(data)))
	}
	n := len(t.arena)
	t.arena = append(t.arena, data...)
	return t.arena[n:len(t.arena):len(t.arena)]
}

// traceStart begins the run's trace.
func (r *run) traceStart() {
	t := &r.tr
	if _, ok := r.p.store.(RecordAppender); !ok {
		t.off = true
		return
	}
	t.start = time.Now()
	t.buf = t.scratch[:0]
	if d, ok := r.agent.Planner.(Describer); ok {
		t.prov = d.Describe()
	}
}

// tracePlan notes what the planner is shown: view, out of the history
// full. It starts the planner call's clock the first time in a turn.
func (r *run) tracePlan(view, full []Message) {
	t := &r.tr
	if t.off {
		return
	}
	if !t.open {
		t.open, t.pstart, t.ttft, t.retries, t.span = true, time.Now(), 0, t.retries[:0], nil
	}
	t.msgs = len(view)
	if len(view) == len(full) && (len(view) == 0 || &view[0] == &full[0]) {
		if t.estN > len(full) {
			t.estN, t.est = 0, 0
		}
		t.est += EstimateTokens(full[t.estN:])
		t.estN = len(full)
		t.tokens = t.est
	} else {
		count := r.agent.TokenCounter
		if count == nil {
			count = EstimateTokens
		}
		t.tokens = count(view)
	}
	t.upTo = 0
	if r.compact != nil && r.agent.Compressor != nil {
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
	t.retries = appendJSONString(t.retries, truncate(err.Error(), 1000))
	t.retries = append(t.retries, `,"layer":"`...)
	t.retries = append(t.retries, layerOf(err)...)
	t.retries = append(t.retries, `","wait_ms":`...)
	t.retries = appendMS(t.retries, wait)
	t.retries = append(t.retries, '}')
}

// traceModelCall writes the record of the turn's planner call: resp on
// success, or the error that ended the run and its layer.
func (r *run) traceModelCall(resp *ModelResponse, err error, layer Layer) {
	t := &r.tr
	if t.off || !t.open {
		return
	}
	t.open = false
	now := time.Now()
	b := t.buf[:0]
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(r.l.turn), 10)
	b = appendStart(b, t.pstart, now.Sub(t.pstart))
	if t.prov.Name != "" {
		b = append(b, `,"provider":`...)
		b = appendJSONString(b, t.prov.Name)
	}
	if t.prov.Model != "" {
		b = append(b, `,"model":`...)
		b = appendJSONString(b, t.prov.Model)
	}
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
	b = appendFailure(b, err, layer)
	b = appendSpan(b, t.span)
	b = append(b, '}')
	r.appendTrace(RecordModelCall, b)
}

// traceToolCall writes the record of a settled call.
func (r *run) traceToolCall(c *call) {
	if r.tr.off {
		return
	}
	b := r.tr.buf[:0]
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(r.l.turn), 10)
	b = append(b, `,"tool_use_id":`...)
	b = appendJSONString(b, c.use.ID)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, c.use.Name)
	if !c.start.IsZero() {
		b = appendStart(b, c.start, c.dur)
	}
	b = append(b, `,"outcome":"`...)
	b = append(b, r.outcomeOf(c)...)
	b = append(b, '"')
	if c.ctx != nil {
		b = appendSpan(b, spanOf(c.ctx))
	}
	b = append(b, '}')
	r.appendTrace(RecordToolCall, b)
}

// traceRun writes the record of the run's end, and that of a planner call
// the stop interrupted.
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
	end := time.Now()
	b := t.buf[:0]
	b = append(b, `{"start":`...)
	b = appendTime(b, t.start)
	b = append(b, `,"end":`...)
	b = appendTime(b, end)
	b = append(b, `,"duration_ms":`...)
	b = appendMS(b, end.Sub(t.start))
	b = append(b, `,"reason":"`...)
	b = append(b, done.Reason...)
	b = append(b, `","layer":"`...)
	if done.Layer == LayerNone {
		b = append(b, "success"...)
	} else {
		b = append(b, done.Layer...)
	}
	b = append(b, `","turns":`...)
	b = strconv.AppendInt(b, int64(done.Turns), 10)
	if done.Usage != (Usage{}) {
		b = appendUsage(b, done.Usage)
	}
	if o.err != nil {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, truncate(o.err.Error(), 2000))
	} else if done.Detail != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, truncate(done.Detail, 2000))
	}
	b = appendSpan(b, spanOf(r.ctx))
	b = append(b, '}')
	r.appendTrace(RecordRun, b)
}

// appendTrace writes a trace record. It is best effort: a trace record
// the store refuses does not change the run (a broken store fails the
// next message append, which stops the run).
// data is encoded in the run's scratch buffer, and copied: the store keeps
// it.
func (r *run) appendTrace(kind string, data []byte) {
	r.tr.buf = data[:0]
	ra := r.p.store.(RecordAppender) // traceStart checked
	_ = ra.AppendRecord(r.storeCtx(), r.sessionID, Record{Kind: kind, Data: r.tr.keep(data)})
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
	_, blocked := cause.(*BlockedError)
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

func appendStart(b []byte, start time.Time, d time.Duration) []byte {
	b = append(b, `,"start":`...)
	b = appendTime(b, start)
	b = append(b, `,"duration_ms":`...)
	return appendMS(b, d)
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
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
	b = appendJSONString(b, truncate(err.Error(), 2000))
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
	start := 0
	for i := 0; i < len(s); {
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
