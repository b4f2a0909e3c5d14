package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// Whatever a server sends back, Plan returns either an error of one of
// agentrt's kinds or a valid answer: it never panics, never hangs, and
// never returns an answer that is silently wrong. TestReplyMutations
// damages every recording of testdata in known ways and says, for each
// way, what must come out; FuzzReply serves the fuzzer's bytes as the body
// and checks the properties that hold for any body (checkOutcome).

// replyTimeout bounds one Plan: a call that has not returned by then hangs.
const replyTimeout = 5 * time.Second

// replyServer is one httptest server for many bodies: the body of case n
// is served at /c/n/v1/messages, so that cases can run concurrently, each
// through a Provider whose base URL ends in /c/n.
type replyServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies map[int][]byte
	next   atomic.Int64
}

func newReplyServer(tb testing.TB) *replyServer {
	s := &replyServer{bodies: map[int][]byte{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *replyServer) serve(w http.ResponseWriter, req *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(req.URL.Path, "/c/"), "/", 2)
	n, err := strconv.Atoi(parts[0])
	s.mu.Lock()
	body, ok := s.bodies[n]
	s.mu.Unlock()
	if err != nil || !ok {
		http.Error(w, "no such case", http.StatusTeapot)
		return
	}
	var r struct{ Stream bool }
	_ = json.NewDecoder(req.Body).Decode(&r)
	if r.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	_, _ = w.Write(body)
}

// outcome is what one Plan returned.
type outcome struct {
	resp  *agentrt.ModelResponse
	err   error
	shown string // the OnText deltas, joined (streamed calls)
}

// plan serves body to one Plan call, streamed (OnText set) or not, and
// returns what it gave. A call that does not return within replyTimeout
// fails tb.
func (s *replyServer) plan(tb testing.TB, body []byte, stream bool) outcome {
	n := int(s.next.Add(1))
	s.mu.Lock()
	s.bodies[n] = body
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.bodies, n)
		s.mu.Unlock()
	}()
	client := sdk.NewClient(
		option.WithBaseURL(fmt.Sprintf("%s/c/%d/", s.srv.URL, n)),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(s.srv.Client()),
	)
	p := New(client, "claude-sonnet-4-5", &Options{MaxRetries: -1, NoCache: true})
	var shown strings.Builder
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
	if stream {
		req.OnText = func(d string) { shown.WriteString(d) }
	}
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	start := time.Now()
	resp, err := p.Plan(ctx, req)
	if ctx.Err() != nil || time.Since(start) >= replyTimeout {
		tb.Errorf("Plan did not return within %v (err %v)", replyTimeout, err)
	}
	return outcome{resp: resp, err: err, shown: shown.String()}
}

// errorKinds are the kinds of agentrt.ProviderError.
var errorKinds = []error{
	agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrAuth,
	agentrt.ErrContextLength, agentrt.ErrInvalidRequest, agentrt.ErrBadResponse,
}

// checkOutcome checks what holds for any body served with HTTP 200: an
// error of one of agentrt's kinds, or a valid answer, and for a streamed
// call, OnText shown exactly the answer's text. It returns the problems
// found, none for a good outcome.
func checkOutcome(body []byte, stream bool, o outcome) []string {
	var bad []string
	if o.err != nil {
		if o.resp != nil {
			bad = append(bad, "an answer with an error")
		}
		var pe *agentrt.ProviderError
		if !errors.As(o.err, &pe) {
			bad = append(bad, fmt.Sprintf("error is not a *agentrt.ProviderError: %T %v", o.err, o.err))
		}
		kind := false
		for _, k := range errorKinds {
			kind = kind || errors.Is(o.err, k)
		}
		if !kind {
			bad = append(bad, fmt.Sprintf("error of no kind: %v", o.err))
		}
		return bad
	}
	r := o.resp
	if r == nil {
		return []string{"no answer and no error"}
	}
	if r.Message.Role != agentrt.RoleAssistant {
		bad = append(bad, fmt.Sprintf("role %q", r.Message.Role))
	}
	switch r.Finish {
	case agentrt.FinishStop, agentrt.FinishToolUse, agentrt.FinishLength, agentrt.FinishContentFilter, agentrt.FinishOther:
	default:
		bad = append(bad, fmt.Sprintf("finish %q", r.Finish))
	}
	u := r.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		bad = append(bad, fmt.Sprintf("negative usage %+v", u))
	}
	var text strings.Builder
	for i, b := range r.Message.Blocks {
		switch b.Type {
		case agentrt.BlockToolUse:
			if b.ID == "" || b.Name == "" {
				bad = append(bad, fmt.Sprintf("block %d: tool_use without id or name", i))
			}
			if !json.Valid(b.Input) {
				bad = append(bad, fmt.Sprintf("block %d: tool_use input %q is not JSON", i, b.Input))
			}
		case agentrt.BlockText:
			if !utf8.ValidString(b.Text) && !bytes.Contains(body, []byte(b.Text)) {
				bad = append(bad, fmt.Sprintf("block %d: text is not UTF-8 nor what the server sent", i))
			}
			text.WriteString(b.Text)
		}
	}
	if stream && o.shown != text.String() {
		bad = append(bad, fmt.Sprintf("OnText showed %q, the answer's text is %q", o.shown, text.String()))
	}
	// A stream without its end, or a body without its stop reason, is
	// never a complete answer.
	if stream && !bytes.Contains(body, []byte(`message_stop`)) {
		bad = append(bad, "an answer from a stream without message_stop")
	}
	if !bytes.Contains(body, []byte(`stop_reason`)) {
		bad = append(bad, "an answer from a body without stop_reason")
	}
	return bad
}

// sameAnswer returns the differences between two answers.
func sameAnswer(want, got outcome) []string {
	var bad []string
	// Tool inputs are compared as JSON: a body re-encoded from a map has
	// its keys in another order.
	if !reflect.DeepEqual(normalInputs(want.resp.Message), normalInputs(got.resp.Message)) {
		bad = append(bad, fmt.Sprintf("message %s, want %s", asJSON(got.resp.Message), asJSON(want.resp.Message)))
	}
	if want.resp.Usage != got.resp.Usage {
		bad = append(bad, fmt.Sprintf("usage %+v, want %+v", got.resp.Usage, want.resp.Usage))
	}
	if want.resp.Finish != got.resp.Finish || want.resp.Model != got.resp.Model {
		bad = append(bad, fmt.Sprintf("finish, model %s %s, want %s %s", got.resp.Finish, got.resp.Model, want.resp.Finish, want.resp.Model))
	}
	if want.shown != got.shown {
		bad = append(bad, fmt.Sprintf("OnText showed %q, want %q", got.shown, want.shown))
	}
	return bad
}

// normalInputs returns m with its tool inputs re-encoded, keys sorted.
func normalInputs(m agentrt.Message) agentrt.Message {
	m.Blocks = append([]agentrt.Block(nil), m.Blocks...)
	for i, b := range m.Blocks {
		var v any
		if b.Type == agentrt.BlockToolUse && json.Unmarshal(b.Input, &v) == nil {
			m.Blocks[i].Input, _ = json.Marshal(v)
		}
	}
	return m
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sseEvent is one event of a recorded stream.
type sseEvent struct {
	raw   string // "event: ...\ndata: ..."
	typ   string // the data's "type" (for ping: "ping")
	index int    // content_block_*: the block's index
	delta string // content_block_delta: the delta's type
	block string // content_block_start: the block's type
	text  string // the text a text block gets from it
}

// parseSSE splits a recorded stream into its events.
func parseSSE(tb testing.TB, body []byte) []sseEvent {
	var evs []sseEvent
	for chunk := range strings.SplitSeq(string(body), "\n\n") {
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		e := sseEvent{raw: strings.TrimLeft(chunk, "\n")}
		for line := range strings.SplitSeq(e.raw, "\n") {
			data, ok := strings.CutPrefix(line, "data:")
			if !ok {
				continue
			}
			var d struct {
				Type         string `json:"type"`
				Index        int    `json:"index"`
				ContentBlock struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content_block"`
				Delta struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"delta"`
			}
			require.NoError(tb, json.Unmarshal([]byte(data), &d), "event %q", e.raw)
			e.typ, e.index, e.delta, e.block = d.Type, d.Index, d.Delta.Type, d.ContentBlock.Type
			if d.Type == "content_block_start" && d.ContentBlock.Type == "text" {
				e.text = d.ContentBlock.Text
			}
			if d.Delta.Type == "text_delta" {
				e.text = d.Delta.Text
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// joinSSE writes events back as a stream.
func joinSSE(evs []sseEvent) []byte {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.raw)
		b.WriteString("\n\n")
	}
	return []byte(b.String())
}

// sentText is the text the text blocks of evs carry, up to message_stop:
// what an answer to them holds, and OnText shows. (The recordings' own
// message_start never holds text.)
func sentText(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.typ == "message_stop" {
			break
		}
		b.WriteString(e.text)
	}
	return b.String()
}

// What a mutation must lead to.
type expect int

const (
	// expectSame: the answer of the recording, unchanged.
	expectSame expect = iota
	// expectError: an error of kind ErrBadResponse.
	expectError
	// expectEither: ErrBadResponse, or an answer whose text is the text
	// the mutated stream's text blocks carry (sentText). For what the
	// adapter cannot tell from a real reply: a text_delta sent twice or
	// left out.
	expectEither
)

func (e expect) String() string {
	return [...]string{"same answer", "ErrBadResponse", "ErrBadResponse or the text sent"}[e]
}

// mutation is one damaged body.
type mutation struct {
	name   string
	body   []byte
	stream bool
	want   expect
	sent   string // expectEither on a stream: sentText of the body
}

// isDelta reports whether e is a content_block_delta.
func (e sseEvent) isDelta() bool { return e.typ == "content_block_delta" }

// streamMutations returns the mutations of a recorded stream, each with
// the outcome it must have.
func streamMutations(tb testing.TB, body []byte, seenShape map[string]bool) []mutation {
	evs := parseSSE(tb, body)
	require.GreaterOrEqual(tb, len(evs), 2)
	stop := -1 // index of message_stop
	startStop := false
	for i, e := range evs {
		if e.typ == "message_stop" && stop < 0 {
			stop = i
		}
		if e.typ == "message_start" && strings.Contains(e.raw, `"stop_reason":"`) {
			startStop = true // message_start already holds the stop reason
		}
	}
	require.GreaterOrEqual(tb, stop, 0, "no message_stop")
	starts := 0
	for _, e := range evs {
		if e.typ == "message_start" {
			starts++
		}
	}
	// Events of one shape (type, delta, block type, and the event types
	// before and after) get the same mutations with the same outcome: each
	// mutation that takes one event is applied to the first event of each
	// shape among all the recordings (seenShape), which keeps the test fast (also under -race) while every
	// kind of event, in every place it occurs, is mutated.
	first := make([]bool, len(evs))
	shape := func(i int) string {
		if i < 0 || i >= len(evs) {
			return "-"
		}
		return evs[i].typ + "/" + evs[i].delta + "/" + evs[i].block
	}
	typ := func(i int) string {
		if i < 0 || i >= len(evs) {
			return "-"
		}
		return evs[i].typ
	}
	for i := range evs {
		k := typ(i-1) + " " + shape(i) + " " + typ(i+1)
		first[i] = !seenShape[k]
		seenShape[k] = true
	}
	var ms []mutation
	add := func(name string, mod []sseEvent, want expect) {
		if starts > 1 && want == expectError && strings.Contains(name, "message_start") {
			// A stream with message_start twice (of one message, the
			// second ignored): one of them dropped or moved may leave
			// a complete stream, with the counts of the other.
			want = expectEither
		}
		ms = append(ms, mutation{name: name, body: joinSSE(mod), stream: true, want: want, sent: sentText(mod)})
	}
	without := func(i int) []sseEvent {
		return append(append([]sseEvent(nil), evs[:i]...), evs[i+1:]...)
	}
	insert := func(i int, e ...sseEvent) []sseEvent {
		out := append([]sseEvent(nil), evs[:i]...)
		out = append(out, e...)
		return append(out, evs[i:]...)
	}
	// Cut after each event: before message_stop the stream has no end, an
	// error; from message_stop on nothing is missing.
	for i := range evs {
		if !first[i] {
			continue
		}
		want := expectError
		if i >= stop {
			want = expectSame
		}
		add(fmt.Sprintf("cut after event %d (%s)", i, evs[i].typ), evs[:i+1], want)
	}
	// Cut in the middle of each event's bytes: that event never
	// completes, so a cut up to message_stop is an error.
	for i := range evs {
		if !first[i] {
			continue
		}
		part := append([]sseEvent(nil), evs[:i]...)
		mid := sseEvent{raw: evs[i].raw[:len(evs[i].raw)/2]}
		raw := joinSSE(part)
		raw = append(raw, mid.raw...)
		want := expectError
		if i > stop {
			want = expectSame
		}
		ms = append(ms, mutation{name: fmt.Sprintf("cut inside event %d (%s)", i, evs[i].typ), body: raw, stream: true, want: want})
	}
	// Drop each event.
	for i, e := range evs {
		if !first[i] {
			continue
		}
		var want expect
		switch {
		case e.typ == "ping":
			want = expectSame // the SDK skips pings
		case e.isDelta() && e.delta == "text_delta":
			want = expectEither // text lost, which nothing can tell
		case e.isDelta():
			// An input_json_delta lost leaves JSON that does not parse, or
			// (its only delta is "") the same input; a thinking or
			// signature delta lost is not shown.
			want = expectEither
		case e.typ == "message_delta" && startStop:
			want = expectEither // message_start had the stop reason
		default:
			// message_start, content_block_start, content_block_stop,
			// message_delta (the stop reason) and message_stop are each
			// needed.
			want = expectError
		}
		add(fmt.Sprintf("drop event %d (%s %s)", i, e.typ, e.delta), without(i), want)
	}
	// Duplicate each event.
	for i, e := range evs {
		if !first[i] {
			continue
		}
		var want expect
		switch {
		case e.typ == "ping", e.typ == "message_start", e.typ == "message_stop":
			// Pings are skipped, a repeated message_start of one message
			// is ignored, nothing after message_stop is read.
			want = expectSame
		case e.typ == "message_delta":
			want = expectSame // its counts are cumulative: the same again
		case e.isDelta():
			// A text delta twice is text twice (shown twice too); input
			// JSON twice does not parse, unless the delta is "".
			want = expectEither
		default:
			// content_block_start twice is a second block at a taken
			// index; content_block_stop twice stops a stopped block.
			want = expectError
		}
		add(fmt.Sprintf("duplicate event %d (%s %s)", i, e.typ, e.delta), insert(i, e), want)
	}
	// Swap each pair of adjacent events.
	for i := 0; i+1 < len(evs); i++ {
		if !first[i] && !first[i+1] {
			continue
		}
		a, b := evs[i], evs[i+1]
		swapped := append([]sseEvent(nil), evs...)
		swapped[i], swapped[i+1] = b, a
		var want expect
		switch {
		case a.typ == "ping" || b.typ == "ping":
			want = expectSame // pings are skipped wherever they are
		case a.typ == "content_block_stop" && b.typ == "content_block_start":
			// Block i+1 starts before block i stops: blocks go by index,
			// nothing is lost.
			want = expectSame
		case a.typ == "content_block_stop" && b.typ == "message_delta":
			want = expectSame // the stop reason before the last block stops
		case a.isDelta() && b.isDelta() && a.index == b.index:
			// Two deltas of one block in the wrong order: text in
			// another order, or tool input JSON that no longer parses.
			want = expectEither
		case a.typ == "message_delta" && b.typ == "message_stop" && startStop:
			want = expectEither // message_stop first: message_start's stop reason
		default:
			// message_start not first, a delta or stop before its block's
			// start, a delta after its block's stop, message_stop before
			// the stop reason or the last block's stop.
			want = expectError
		}
		add(fmt.Sprintf("swap events %d,%d (%s %s, %s %s)", i, i+1, a.typ, a.delta, b.typ, b.delta), swapped, want)
	}
	// Replace one event's JSON with garbage: an event that does not
	// parse breaks the stream, except a ping, which is not parsed.
	for i, e := range evs {
		if !first[i] {
			continue
		}
		want := expectError
		switch {
		case e.typ == "ping":
			want = expectSame
		case i > stop:
			want = expectSame
		}
		g := e
		g.raw = "event: " + e.typ + "\ndata: {\"type\":\"" + e.typ + "\",\"index\":0,{{garbage"
		mod := append([]sseEvent(nil), evs...)
		mod[i] = g
		add(fmt.Sprintf("garbage event %d (%s)", i, e.typ), mod, want)
	}
	// Fields of the wrong type in the events the adapter reads: an error,
	// never a field taken as zero.
	for i, e := range evs {
		if !first[i] {
			continue
		}
		for _, wrong := range wrongStreamFields(e) {
			mod := append([]sseEvent(nil), evs...)
			mod[i] = sseEvent{raw: wrong.raw, typ: e.typ}
			add(fmt.Sprintf("wrong type event %d (%s): %s", i, e.typ, wrong.what), mod, expectError)
		}
	}
	// Negative counts: an error, never a negative usage.
	for i, e := range evs {
		if e.typ != "message_delta" && e.typ != "message_start" {
			continue
		}
		// -1 before the digits: -10 for 0.
		if raw := strings.Replace(e.raw, `"output_tokens":`, `"output_tokens":-1`, 1); raw != e.raw {
			mod := append([]sseEvent(nil), evs...)
			mod[i] = sseEvent{raw: raw, typ: e.typ}
			add(fmt.Sprintf("negative output_tokens in event %d (%s)", i, e.typ), mod, expectError)
		}
	}
	// What the API may add later is ignored: an unknown event type, an
	// unknown content block (with an unknown delta) after the others,
	// an unknown delta type in a text block.
	unknownEvent := sseEvent{raw: "event: future_event\ndata: {\"type\":\"future_event\",\"future\":{\"a\":[1,2]}}", typ: "future_event"}
	add("unknown event after message_start", insert(1, unknownEvent), expectSame)
	add("unknown event before message_stop", insert(stop, unknownEvent), expectSame)
	blocks, lastStop := 0, -1
	for i, e := range evs {
		if e.typ == "content_block_start" {
			blocks++
		}
		if e.typ == "content_block_stop" {
			lastStop = i
		}
	}
	if lastStop >= 0 {
		n := strconv.Itoa(blocks)
		add("unknown content block after the last", insert(lastStop+1,
			sseEvent{raw: "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" + n + ",\"content_block\":{\"type\":\"future_block\",\"data\":{\"x\":1}}}"},
			sseEvent{raw: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" + n + ",\"delta\":{\"type\":\"future_delta\",\"stuff\":\"x\"}}"},
			sseEvent{raw: "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" + n + "}"},
		), expectSame)
	}
	for i, e := range evs {
		if e.typ == "content_block_start" && strings.Contains(e.raw, `"content_block":{"type":"text"`) {
			add(fmt.Sprintf("unknown delta in text block %d", e.index), insert(i+1,
				sseEvent{raw: fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"future_delta\",\"text\":{\"not\":\"text\"}}}", e.index)},
			), expectSame)
		}
	}
	return ms
}

// wrongField is an event, or a body, with one field of the wrong type.
type wrongField struct {
	what string
	raw  string
}

// wrongStreamFields returns e with each field the adapter reads given a
// value of the wrong type.
func wrongStreamFields(e sseEvent) []wrongField {
	var out []wrongField
	// The fields of blocks the adapter maps; those of other blocks (a
	// server tool's name, a tool result's text) are not read.
	mapped := e.block == "text" || e.block == "tool_use" || e.block == "thinking"
	for _, r := range []struct {
		from, to string
		in       bool // whether e has the field where the adapter reads it
	}{
		{`"index":`, `"index":"0","x":`, strings.HasPrefix(e.typ, "content_block_")},
		{`"text":"`, `"text":7,"x":"`, e.delta == "text_delta" || e.block == "text"},
		{`"partial_json":"`, `"partial_json":7,"x":"`, e.delta == "input_json_delta"},
		{`"stop_reason":"`, `"stop_reason":7,"x":"`, e.typ == "message_delta"},
		{`"output_tokens":`, `"output_tokens":"12","x":`, e.typ == "message_delta" || e.typ == "message_start"},
		{`"id":"toolu`, `"id":7,"x":"toolu`, e.block == "tool_use"},
		{`"name":"`, `"name":7,"x":"`, e.block == "tool_use"},
		{`"content_block":{"type":"`, `"content_block":{"type":7,"x":"`, mapped},
	} {
		if !r.in {
			continue
		}
		if raw := strings.Replace(e.raw, r.from, r.to, 1); raw != e.raw {
			out = append(out, wrongField{what: r.from, raw: raw})
		}
	}
	return out
}

// jsonMutations returns the mutations of a recorded JSON answer.
func jsonMutations(tb testing.TB, body []byte) []mutation {
	var ms []mutation
	add := func(name string, b []byte, want expect) {
		ms = append(ms, mutation{name: name, body: b, want: want})
	}
	trimmed := bytes.TrimSpace(body)
	// Cut: JSON that does not end is an error.
	for _, at := range []int{1, len(trimmed) / 4, len(trimmed) / 2, 3 * len(trimmed) / 4, len(trimmed) - 1} {
		add(fmt.Sprintf("cut at %d of %d", at, len(trimmed)), bytes.Clone(trimmed[:at]), expectError)
	}
	decode := func() map[string]any {
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		require.NoError(tb, d.Decode(&m))
		return m
	}
	encode := func(m map[string]any) []byte {
		b, err := json.Marshal(m)
		require.NoError(tb, err)
		return b
	}
	content := func(m map[string]any) []any { c, _ := m["content"].([]any); return c }
	// Unknown fields, at the top, in usage and in each block: ignored.
	m := decode()
	m["future_field"] = map[string]any{"a": []any{1, "b"}}
	if u, ok := m["usage"].(map[string]any); ok {
		u["future_tokens"] = 99
	}
	for _, c := range content(m) {
		c.(map[string]any)["future"] = []any{true}
	}
	add("unknown fields", encode(m), expectSame)
	// Unknown block types, first and last: left out.
	m = decode()
	m["content"] = append(append([]any{map[string]any{"type": "future_block", "data": map[string]any{"x": 1}}}, content(m)...),
		map[string]any{"type": "future_block", "text": 5})
	add("unknown block types", encode(m), expectSame)
	// A field the adapter reads, of the wrong type: an error, never a
	// field taken as zero or a block left out.
	for _, k := range []string{"content", "stop_reason", "usage", "model"} {
		if _, ok := decode()[k]; !ok {
			continue
		}
		m := decode()
		m[k] = 7
		if k == "stop_reason" || k == "model" {
			m[k] = []any{"end_turn"}
		}
		add("wrong type: "+k, encode(m), expectError)
	}
	for _, k := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
		m := decode()
		u, ok := m["usage"].(map[string]any)
		if !ok || u[k] == nil {
			continue
		}
		u[k] = "12"
		add("wrong type: usage."+k, encode(m), expectError)
		m = decode()
		u = m["usage"].(map[string]any)
		u[k] = -3
		add("negative: usage."+k, encode(m), expectError)
		u[k] = 1.5
		add("fraction: usage."+k, encode(m), expectError)
	}
	for i := range content(decode()) {
		block := func(m map[string]any) map[string]any { return content(m)[i].(map[string]any) }
		typ, _ := block(decode())["type"].(string)
		fields := map[string][]any{
			"text":              {"text"},
			"tool_use":          {"id", "name", "input"},
			"thinking":          {"thinking", "signature"},
			"redacted_thinking": {"data"},
		}[typ]
		for _, f := range append([]any{"type"}, fields...) {
			m := decode()
			b := block(m)
			if f == "input" {
				// Any JSON is an input: one that is not an object goes to
				// the runtime as sent (TestReplyToolInputNotObjectKept).
				continue
			}
			b[f.(string)] = 7
			add(fmt.Sprintf("wrong type: content[%d].%s", i, f), encode(m), expectError)
		}
	}
	return ms
}

// replyFiles returns the recorded answers in testdata: streams, and JSON
// message bodies (not requests, not error bodies).
func replyFiles(tb testing.TB) (streams, bodies []string) {
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasPrefix(path, filepath.Join("testdata", "fuzz")):
		case strings.HasSuffix(path, ".sse"):
			streams = append(streams, path)
		case strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".request.json"):
			b, err := readFile(path)
			if err != nil {
				return err
			}
			var m struct{ Type string }
			if json.Unmarshal(b, &m) == nil && m.Type == "message" {
				bodies = append(bodies, path)
			}
		}
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, streams)
	require.NotEmpty(tb, bodies)
	return streams, bodies
}

func TestReplyMutations(t *testing.T) {
	t.Parallel()
	srv := newReplyServer(t)
	streams, bodies := replyFiles(t)
	type job struct {
		file string
		base outcome
		m    mutation
	}
	var jobs []job
	counts := map[expect]int{}
	bodyShapes, eventShapes := map[string]bool{}, map[string]bool{}
	for _, files := range [][]string{streams, bodies} {
		for _, file := range files {
			body, err := readFile(file)
			require.NoError(t, err)
			stream := strings.HasSuffix(file, ".sse")
			base := srv.plan(t, body, stream)
			if bad := checkOutcome(body, stream, base); len(bad) > 0 {
				t.Errorf("%s: %s", file, strings.Join(bad, "; "))
				continue
			}
			if base.err != nil {
				// A recording of a broken stream (a spliced message):
				// its mutations are held to checkOutcome only.
				require.ErrorIs(t, base.err, agentrt.ErrBadResponse, file)
			}
			var ms []mutation
			if stream {
				ms = streamMutations(t, body, eventShapes)
			} else if k := bodyShape(body); !bodyShapes[k] {
				// One body of each shape is mutated: the mutations of a
				// body depend only on its blocks' types and its fields.
				bodyShapes[k] = true
				ms = jsonMutations(t, body)
			}
			for _, m := range ms {
				jobs = append(jobs, job{file: file, base: base, m: m})
				counts[m.want]++
			}
		}
	}
	var ran atomic.Int64
	work := make(chan job)
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range work {
				ran.Add(1)
				got := srv.plan(t, j.m.body, j.m.stream)
				bad := checkOutcome(j.m.body, j.m.stream, got)
				if j.base.err == nil {
					bad = append(bad, checkExpected(j.base, j.m, got)...)
				}
				if len(bad) > 0 {
					t.Errorf("%s: %s (want %v): %s\nbody:\n%s", j.file, j.m.name, j.m.want, strings.Join(bad, "; "), clip(j.m.body))
				}
			}
		})
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	t.Logf("%d streams, %d JSON bodies, %d mutations (%d same answer, %d error, %d either)",
		len(streams), len(bodies), ran.Load(), counts[expectSame], counts[expectError], counts[expectEither])
}

// bodyShape is the types of a JSON body's blocks and the keys of the body
// and of its usage.
func bodyShape(body []byte) string {
	var m struct {
		Content []struct{ Type string } `json:"content"`
		Usage   map[string]any          `json:"usage"`
	}
	var top map[string]any
	_ = json.Unmarshal(body, &m)
	_ = json.Unmarshal(body, &top)
	var k []string
	for _, c := range m.Content {
		k = append(k, c.Type)
	}
	k = append(k, "|")
	k = append(k, slices.Sorted(maps.Keys(m.Usage))...)
	k = append(k, "|")
	k = append(k, slices.Sorted(maps.Keys(top))...)
	return strings.Join(k, " ")
}

// checkExpected checks got against what mutation m of a recording whose
// answer is base must give.
func checkExpected(base outcome, m mutation, got outcome) []string {
	switch m.want {
	case expectSame:
		if got.err != nil {
			return []string{fmt.Sprintf("error %v", got.err)}
		}
		return sameAnswer(base, got)
	case expectError:
		if !errors.Is(got.err, agentrt.ErrBadResponse) {
			return []string{fmt.Sprintf("got %v, %s", got.err, asJSON(got.resp))}
		}
	case expectEither:
		if got.err != nil {
			if !errors.Is(got.err, agentrt.ErrBadResponse) {
				return []string{fmt.Sprintf("error %v", got.err)}
			}
			return nil
		}
		if m.stream && got.shown != m.sent {
			return []string{fmt.Sprintf("answer's text %q, the stream sent %q", got.shown, m.sent)}
		}
	}
	return nil
}

// clip shortens a body for a failure message.
func clip(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "..."
	}
	return string(b)
}

// readFile reads a file of testdata, by its path from this directory.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// FuzzReply serves the fuzzer's bytes as the body of a reply, to a
// streamed call (OnText set) or not, and checks the properties any reply
// must have (checkOutcome). Seeded with every recording of testdata.
func FuzzReply(f *testing.F) {
	streams, bodies := replyFiles(f)
	for _, file := range streams {
		b, err := readFile(file)
		require.NoError(f, err)
		f.Add(b, true)
	}
	for _, file := range bodies {
		b, err := readFile(file)
		require.NoError(f, err)
		f.Add(b, false)
	}
	srv := newReplyServer(f)
	f.Fuzz(func(t *testing.T, body []byte, stream bool) {
		o := srv.plan(t, body, stream)
		if bad := checkOutcome(body, stream, o); len(bad) > 0 {
			t.Errorf("%s\nbody: %q", strings.Join(bad, "; "), clip(body))
		}
	})
}

// planReply serves one body to one Plan call, streamed when stream.
func planReply(t *testing.T, body string, stream bool) (*agentrt.ModelResponse, error) {
	t.Helper()
	rep := jsonReply([]byte(body))
	if stream {
		rep = sseReply([]byte(body))
	}
	r := newReplay(t, rep)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
	if stream {
		req.OnText = func(string) {}
	}
	return r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), req)
}

// Regressions found by TestReplyMutations: the SDK decodes a field of the
// wrong type as its zero value, which gave an answer with the text left
// out, a count of 0, a negative count, or a tool input that is not an
// object.

func TestReplyTextOfWrongTypeIsError(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, `{"type":"message","role":"assistant","content":[{"type":"text","text":7}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, false)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	require.Nil(t, resp)
}

func TestReplyContentOfWrongTypeIsError(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, `{"type":"message","role":"assistant","content":"hello","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, false)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	require.Nil(t, resp)
}

func TestReplyCountOfWrongTypeIsError(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, `{"type":"message","role":"assistant","content":[],"stop_reason":"end_turn","usage":{"input_tokens":"12","output_tokens":1}}`, false)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	require.Nil(t, resp)
}

// A tool input that is not an object (a proxy that sends the object as a
// JSON string) goes to the runtime as it came: the runtime decodes such a
// string, and tells the model what is wrong with anything else.
func TestReplyToolInputNotObjectKept(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, `{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":"{\"a\": 1}"}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`, false)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.ToolUseBlock("toolu_1", "f", json.RawMessage(`"{\"a\": 1}"`))), resp.Message)
}

func TestReplyNegativeStreamUsageIsError(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":-5}}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	require.Nil(t, resp)
}

func TestReplyStreamTextOfWrongTypeIsError(t *testing.T) {
	t.Parallel()
	resp, err := planReply(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"+
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":7}}\n\n"+
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true)
	require.ErrorIs(t, err, agentrt.ErrBadResponse)
	require.Nil(t, resp)
}
