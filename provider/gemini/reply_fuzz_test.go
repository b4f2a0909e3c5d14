package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// This file checks what Plan makes of damaged, cut, reordered or hostile
// replies: built from the recordings of testdata by structural mutations
// (TestReplyMutations), or made by the fuzzer (FuzzReply). Whatever the
// server sends, Plan must return within a few seconds either a classified
// error (a *agentrt.ProviderError with one of agentrt's kinds) or a valid
// answer (checkAnswer); where the mutation says what the answer must be,
// the test checks that too (expect, and the classes of mutStream and
// mutJSON).

// planDeadline bounds one Plan call; hangAfter is when the test stops
// waiting for it and reports a hang.
const (
	planDeadline = 3 * time.Second
	hangAfter    = 6 * time.Second
)

// replyHost is one httptest server for many calls, concurrent or not: the
// body a call gets is chosen by the model name in its path, which is unique
// per call. Every body is sent with status 200, as a stream (text/event-stream)
// to streamGenerateContent and as JSON otherwise.
type replyHost struct {
	srv    *httptest.Server
	gemini *genai.Client
	vertex *genai.Client
	next   atomic.Int64
	bodies sync.Map // model name → []byte
}

func newReplyHost(tb testing.TB) *replyHost {
	tb.Helper()
	h := &replyHost{}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	tb.Cleanup(h.srv.Close)
	for _, b := range []genai.Backend{genai.BackendGeminiAPI, genai.BackendVertexAI} {
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey:      "test-key",
			Backend:     b,
			HTTPClient:  h.srv.Client(),
			HTTPOptions: genai.HTTPOptions{BaseURL: h.srv.URL},
		})
		if err != nil {
			tb.Fatal(err)
		}
		if b == genai.BackendVertexAI {
			h.vertex = c
		} else {
			h.gemini = c
		}
	}
	return h
}

func (h *replyHost) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	model := path[strings.LastIndex(path, "models/")+len("models/"):]
	model, method, _ := strings.Cut(model, ":")
	body, ok := h.bodies.Load(model)
	if !ok {
		http.Error(w, `{"error":{"code":404,"message":"no such reply","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	if method == "streamGenerateContent" {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	_, _ = w.Write(body.([]byte))
}

// outcome is what one Plan call gave.
type outcome struct {
	resp   *agentrt.ModelResponse
	err    error
	texts  []string // what OnText got
	panic  string   // the panic value and stack, if Plan panicked
	hang   bool     // Plan did not return in hangAfter
	stream bool
}

// plan calls Plan once with body as the server's reply, streamed (OnText
// set) or not, on the Vertex AI backend or the Gemini API's.
func (h *replyHost) plan(body []byte, stream, vertex bool) outcome {
	model := "reply-" + strconv.FormatInt(h.next.Add(1), 10)
	h.bodies.Store(model, body)
	defer h.bodies.Delete(model)
	client := h.gemini
	if vertex {
		client = h.vertex
	}
	p := New(client, model, &Options{MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), planDeadline)
	defer cancel()
	out := outcome{stream: stream}
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("Hi")}}
	var mu sync.Mutex
	if stream {
		req.OnText = func(s string) {
			mu.Lock()
			out.texts = append(out.texts, s)
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				out.panic = fmt.Sprintf("%v\n%s", v, debug.Stack())
			}
		}()
		out.resp, out.err = p.Plan(ctx, req)
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		return outcome{hang: true, stream: stream}
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

// kinds are agentrt's kinds of provider failure.
var kinds = []error{
	agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrAuth, agentrt.ErrContextLength,
	agentrt.ErrInvalidRequest, agentrt.ErrBadResponse, agentrt.ErrUnsupportedContent,
}

// checkOutcome checks the properties every outcome has: no panic, no hang,
// either a classified error (a *ProviderError of the adapter with one of
// agentrt's kinds; a deadline is a hang) or a valid answer (checkAnswer).
// It returns the violations.
func checkOutcome(o outcome) []string {
	switch {
	case o.panic != "":
		return []string{"Plan panicked: " + o.panic}
	case o.hang:
		return []string{"Plan did not return within " + hangAfter.String()}
	case o.err != nil:
		if errors.Is(o.err, context.DeadlineExceeded) || errors.Is(o.err, context.Canceled) {
			return []string{"Plan ran until its deadline: " + o.err.Error()}
		}
		var pe *agentrt.ProviderError
		if !errors.As(o.err, &pe) || pe.Provider != providerName {
			return []string{fmt.Sprintf("unclassified error %T: %v", o.err, o.err)}
		}
		for _, k := range kinds {
			if errors.Is(o.err, k) && pe.Kind != nil {
				return nil
			}
		}
		return []string{fmt.Sprintf("error without a kind: %v", o.err)}
	case o.resp == nil:
		return []string{"Plan returned neither an answer nor an error"}
	}
	return checkAnswer(o)
}

// checkAnswer checks an answer: role assistant, a Finish, non-negative
// usage, tool_use blocks with an id, a name and a JSON object as input,
// ids unique; streamed, the text OnText got is the text of its text blocks
// (doc.go: "The streamed answer is the same message as the unstreamed
// one", and OnText gets each text part; thoughts are not text).
func checkAnswer(o outcome) []string {
	var bad []string
	r := o.resp
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
	ids := map[string]bool{}
	for i, b := range r.Message.Blocks {
		switch b.Type {
		case agentrt.BlockText, agentrt.BlockThinking:
		case agentrt.BlockToolUse:
			if b.ID == "" || b.Name == "" {
				bad = append(bad, fmt.Sprintf("block %d: tool_use with id %q, name %q", i, b.ID, b.Name))
			}
			var obj map[string]any
			if err := json.Unmarshal(b.Input, &obj); err != nil || obj == nil {
				bad = append(bad, fmt.Sprintf("block %d: tool_use input %s is not a JSON object", i, b.Input))
			}
			if ids[b.ID] {
				bad = append(bad, fmt.Sprintf("block %d: call id %q repeated", i, b.ID))
			}
			ids[b.ID] = true
		default:
			bad = append(bad, fmt.Sprintf("block %d: type %q in an answer", i, b.Type))
		}
	}
	if o.stream {
		if got, want := strings.Join(o.texts, ""), blockText(r, agentrt.BlockText); got != want {
			bad = append(bad, fmt.Sprintf("OnText got %q, the text blocks say %q", got, want))
		}
	}
	return bad
}

// blockText joins the text of the blocks of type typ.
func blockText(r *agentrt.ModelResponse, typ agentrt.BlockType) string {
	var sb strings.Builder
	for _, b := range r.Message.Blocks {
		if b.Type == typ {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// callNames lists the names of the tool_use blocks.
func callNames(r *agentrt.ModelResponse) []string {
	var out []string
	for _, b := range r.Message.Blocks {
		if b.Type == agentrt.BlockToolUse {
			out = append(out, b.Name)
		}
	}
	return out
}

// summary is what the events of a reply say, read independently of the
// adapter (as decoded JSON): the reference the answers are checked against.
type summary struct {
	garbage  bool // an event is not a JSON object
	errEvent bool // an event is an {"error": {...}}
	finish   bool // the candidate has a finish reason
	blocked  bool // promptFeedback.blockReason
	cand     bool // some event has candidate 0
	text     string
	thought  string
	names    []string // named function calls, in order
	dupID    bool     // two calls carry the same API id
	partial  bool     // calls streamed in pieces (Vertex AI partialArgs)
	negUsage bool     // a negative token count
}

// summarize reads events (the JSON of each SSE event, or the one JSON body).
func summarize(events [][]byte) summary {
	var s summary
	ids := map[string]bool{}
	for _, ev := range events {
		var m map[string]any
		if err := json.Unmarshal(ev, &m); err != nil || m == nil {
			s.garbage = true
			continue
		}
		if e, ok := m["error"].(map[string]any); ok && e != nil {
			s.errEvent = true
			continue
		}
		if pf, ok := m["promptFeedback"].(map[string]any); ok {
			if br, _ := pf["blockReason"].(string); br != "" {
				s.blocked = true
			}
		}
		if u, ok := m["usageMetadata"].(map[string]any); ok {
			for _, v := range u {
				if f, ok := v.(float64); ok && f < 0 {
					s.negUsage = true
				}
			}
		}
		cand := rawFirstCandidate(m)
		if cand == nil {
			continue
		}
		s.cand = true
		if fr, _ := cand["finishReason"].(string); fr != "" && fr != "FINISH_REASON_UNSPECIFIED" {
			s.finish = true
		}
		content, _ := cand["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			if fc, ok := part["functionCall"].(map[string]any); ok {
				if _, ok := fc["partialArgs"]; ok {
					s.partial = true
				}
				if _, ok := fc["willContinue"]; ok {
					s.partial = true
				}
				if name, _ := fc["name"].(string); name != "" {
					s.names = append(s.names, name)
					if id, _ := fc["id"].(string); id != "" {
						s.dupID = s.dupID || ids[id]
						ids[id] = true
					}
				}
				continue
			}
			other := false
			for _, k := range []string{"inlineData", "fileData", "executableCode", "codeExecutionResult", "functionResponse", "toolCall", "toolResponse"} {
				if _, ok := part[k]; ok {
					other = true
				}
			}
			if other {
				continue
			}
			text, _ := part["text"].(string)
			if th, _ := part["thought"].(bool); th {
				s.thought += text
			} else {
				s.text += text
			}
		}
	}
	return s
}

// rawFirstCandidate returns the candidate of index 0 (an absent index is 0):
// the one the answer is made of, whatever its place in the array.
func rawFirstCandidate(m map[string]any) map[string]any {
	cands, _ := m["candidates"].([]any)
	for _, c := range cands {
		cand, _ := c.(map[string]any)
		if cand == nil {
			continue
		}
		if idx, ok := cand["index"].(float64); ok && idx != 0 {
			continue
		}
		return cand
	}
	return nil
}

// expect checks o against what its events say (s), for a reply served
// whole (stream says how). The rules:
//   - an event that is not JSON: ErrBadResponse;
//   - an error event: a classified error (its kind depends on its status);
//   - a stream without a finish reason (nor a blocked prompt): ErrBadResponse,
//     never a partial answer; unstreamed, a body without any candidate nor
//     blockReason: ErrBadResponse (a candidate without a finish reason is
//     an answer with FinishOther, as the recording pydanticai/no-finish-reason.json);
//   - two calls with the same API id, or a negative token count:
//     ErrBadResponse (the answer cannot be right);
//   - otherwise an answer whose text, thoughts and call names are those of
//     the events; with calls streamed in pieces (partialArgs), which a
//     reordering can make inconsistent, ErrBadResponse is also right.
func expect(s summary, o outcome) []string {
	bad := checkOutcome(o)
	if len(bad) > 0 {
		return bad
	}
	wantErr := ""
	switch {
	case s.garbage:
		wantErr = "an undecodable event"
	case s.errEvent:
		if o.err == nil {
			return []string{"an error event gave an answer"}
		}
		return nil
	case o.stream && !s.finish && !s.blocked:
		wantErr = "no finish reason"
	case !o.stream && !s.cand && !s.blocked:
		wantErr = "no candidate"
	case s.dupID && !s.partial:
		wantErr = "two calls with one id"
	case s.negUsage:
		wantErr = "a negative token count"
	}
	if wantErr != "" {
		if !errors.Is(o.err, agentrt.ErrBadResponse) {
			return []string{fmt.Sprintf("%s: want ErrBadResponse, got %v (answer %+v)", wantErr, o.err, o.resp)}
		}
		return nil
	}
	if o.err != nil {
		if s.partial && errors.Is(o.err, agentrt.ErrBadResponse) {
			return nil
		}
		return []string{fmt.Sprintf("want an answer, got %v", o.err)}
	}
	if got := blockText(o.resp, agentrt.BlockText); got != s.text {
		bad = append(bad, fmt.Sprintf("text %q, the events say %q", got, s.text))
	}
	if got := blockText(o.resp, agentrt.BlockThinking); got != s.thought {
		bad = append(bad, fmt.Sprintf("thoughts %q, the events say %q", got, s.thought))
	}
	if got := callNames(o.resp); !slicesEq(got, s.names) {
		bad = append(bad, fmt.Sprintf("calls %q, the events say %q", got, s.names))
	}
	return bad
}

func slicesEq(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// sameAnswer checks that o is the answer base is, but for the tool_use
// ids (generated at random for an answer without a responseId) and with
// finish, if not empty, as its Finish.
func sameAnswer(base, o outcome, finish agentrt.FinishReason) []string {
	if bad := checkOutcome(o); len(bad) > 0 {
		return bad
	}
	if base.err != nil {
		if o.err == nil || !sameKind(base.err, o.err) {
			return []string{fmt.Sprintf("want the recording's error %v, got %v", base.err, o.err)}
		}
		return nil
	}
	if o.err != nil {
		return []string{fmt.Sprintf("want the recording's answer, got %v", o.err)}
	}
	want, got := *base.resp, *o.resp
	want.Message, got.Message = noIDs(want.Message), noIDs(got.Message)
	if finish != "" {
		want.Finish = finish
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("answer differs from the recording's:\nwant %+v\ngot  %+v", want, got)}
	}
	if o.stream && !reflect.DeepEqual(base.texts, o.texts) {
		return []string{fmt.Sprintf("OnText got %q, the recording gives %q", o.texts, base.texts)}
	}
	return nil
}

func sameKind(a, b error) bool {
	for _, k := range kinds {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	return true
}

func noIDs(m agentrt.Message) agentrt.Message {
	m.Blocks = append([]agentrt.Block(nil), m.Blocks...)
	for i := range m.Blocks {
		if m.Blocks[i].Type == agentrt.BlockToolUse {
			m.Blocks[i].ID = ""
		}
	}
	return m
}

// recording is a reply of testdata: an SSE stream or a JSON answer.
type recording struct {
	name   string
	stream bool
	vertex bool
	body   []byte
	events [][]byte // the JSON of each event; the body for a JSON answer
}

// recordings returns every recorded stream and JSON answer of testdata
// (all folders). Request bodies and error bodies are not replies to
// mutate: a JSON file is an answer when it has candidates or
// promptFeedback.
func recordings(tb testing.TB) []recording {
	tb.Helper()
	var out []recording
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, filepath.Join("testdata", "fuzz")) {
			return err
		}
		name := filepath.ToSlash(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)))
		rec := recording{name: name, vertex: strings.Contains(name, "vertex")}
		switch {
		case strings.HasSuffix(name, ".sse"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rec.stream, rec.body, rec.events = true, b, sseData(b)
		case strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".request.json"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var m map[string]any
			if json.Unmarshal(b, &m) != nil {
				return nil
			}
			if _, ok := m["candidates"]; !ok {
				if _, ok := m["promptFeedback"]; !ok {
					return nil
				}
			}
			rec.body, rec.events = b, [][]byte{b}
		default:
			return nil
		}
		out = append(out, rec)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sseData returns the data of each "data:" line of an SSE body.
func sseData(b []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(d))
		}
	}
	return out
}

// sse frames events as the Gemini API does.
func sse(events [][]byte) []byte {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("data: ")
		b.Write(e)
		b.WriteString("\r\n\r\n")
	}
	return b.Bytes()
}

// mutation is one damaged reply made from a recording.
type mutation struct {
	name   string
	class  string
	body   []byte
	events [][]byte // what the body's events are, for summarize; nil if class is checked otherwise
	// same: the answer must be the recording's, with Finish finish if set.
	same   bool
	finish agentrt.FinishReason
	// wantErr: the outcome must be an ErrBadResponse error.
	wantErr bool
}

// garbage replaces an event's JSON.
var garbage = [][]byte{
	[]byte(`{"candidates":[{"content":{"parts":[{"text":"cut`),
	[]byte(`not json at all`),
	[]byte(`[]`),
	[]byte(`"a string"`),
	[]byte(`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}}`),
	[]byte("\x00\xff\xfe"),
}

// editEvents applies f to each event's decoded JSON and re-encodes it; an
// event that does not decode is kept as it is.
func editEvents(events [][]byte, f func(i int, m map[string]any)) [][]byte {
	out := make([][]byte, len(events))
	for i, e := range events {
		var m map[string]any
		if json.Unmarshal(e, &m) != nil || m == nil {
			out[i] = e
			continue
		}
		f(i, m)
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

// rawCandidate0 returns the candidates array of m and its candidate 0.
func rawCandidate0(m map[string]any) ([]any, map[string]any) {
	cands, _ := m["candidates"].([]any)
	if len(cands) == 0 {
		return cands, nil
	}
	c, _ := cands[0].(map[string]any)
	return cands, c
}

// clone deep-copies decoded JSON.
func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// shared are the mutations of both streams and JSON answers, each applied
// to every event: what the answer must then be is in each comment.
func shared(events [][]byte) []mutation {
	var out []mutation
	// Fields the SDK does not know, at the top, in the candidate, in each
	// part and in the content: ignored, the answer is the recording's.
	out = append(out, mutation{name: "unknown fields", class: "unknown-fields", same: true, events: editEvents(events, func(_ int, m map[string]any) {
		m["futureTopLevel"] = map[string]any{"a": []any{1, "x"}}
		if _, c := rawCandidate0(m); c != nil {
			c["futureCandidateField"] = "v"
			if content, ok := c["content"].(map[string]any); ok {
				content["futureContentField"] = true
				parts, _ := content["parts"].([]any)
				for _, p := range parts {
					if pm, ok := p.(map[string]any); ok {
						pm["futurePartField"] = 1.5
					}
				}
			}
		}
	})})
	// A part of a kind the SDK does not know, in front of the parts: it
	// decodes as an empty part, which is nothing; the answer is the
	// recording's.
	out = append(out, mutation{name: "unknown part kind", class: "unknown-part", same: true, events: editEvents(events, func(_ int, m map[string]any) {
		if _, c := rawCandidate0(m); c != nil {
			if content, ok := c["content"].(map[string]any); ok {
				parts, _ := content["parts"].([]any)
				content["parts"] = append([]any{map[string]any{"futurePart": map[string]any{"x": 1}}}, parts...)
			}
		}
	})})
	// A finish reason this adapter does not know: FinishOther, otherwise
	// the recording's answer (doc.go: "anything else → FinishOther").
	unknownFinish := false
	ev := editEvents(events, func(_ int, m map[string]any) {
		if _, c := rawCandidate0(m); c != nil {
			if _, ok := c["finishReason"]; ok {
				c["finishReason"] = "FUTURE_FINISH_REASON"
				unknownFinish = true
			}
		}
	})
	if unknownFinish {
		out = append(out, mutation{name: "unknown finish reason", class: "unknown-finish", same: true, finish: agentrt.FinishOther, events: ev})
	}
	// More candidates: a second one (index 1, other text, another call)
	// after candidate 0, and in front of it. The answer is made of
	// candidate 0 only: the recording's.
	for _, front := range []bool{false, true} {
		name := "a second candidate after the first"
		if front {
			name = "a second candidate in front of the first"
		}
		out = append(out, mutation{name: name, class: "several-candidates", same: true, events: editEvents(events, func(_ int, m map[string]any) {
			cands, c := rawCandidate0(m)
			if c == nil {
				return
			}
			other := clone(c).(map[string]any)
			other["index"] = 1.0
			other["content"] = map[string]any{"role": "model", "parts": []any{
				map[string]any{"text": "OTHER CANDIDATE"},
				map[string]any{"functionCall": map[string]any{"name": "other_candidate_tool", "args": map[string]any{}}},
			}}
			if front {
				m["candidates"] = append([]any{other}, cands...)
			} else {
				m["candidates"] = append(cands, other)
			}
		})})
	}
	// Each event in turn with its candidate's content removed: the rest
	// of the answer, as the events say (expect).
	for _, i := range ends(len(events)) {
		ev := editEvents(events, func(j int, m map[string]any) {
			if _, c := rawCandidate0(m); c != nil && i == j {
				delete(c, "content")
			}
		})
		if !bytes.Equal(ev[i], events[i]) {
			out = append(out, mutation{name: fmt.Sprintf("no content in event %d", i), class: "no-content", events: ev})
		}
	}
	// A negative token count: ErrBadResponse (expect).
	out = append(out, mutation{name: "negative usage", class: "negative-usage", events: editEvents(events, func(_ int, m map[string]any) {
		if u, ok := m["usageMetadata"].(map[string]any); ok {
			u["candidatesTokenCount"] = -7.0
		}
	})})
	return out
}

// positions returns the events the per-event mutations touch: every
// event of a stream of up to 16, and of a longer one (the 76 events of
// vertex-partial-args-nested-stream.sse) the first 2, the last 2 and every
// 15th, so that the test stays fast under -race; the middle events of those
// streams are pieces of one kind, like the ones kept.
func positions(n int) []int {
	var out []int
	for i := range n {
		if n <= 16 || i < 2 || i >= n-2 || i%15 == 0 {
			out = append(out, i)
		}
	}
	return out
}

// ends returns the first, the middle and the last event: those the
// mutations whose outcome does not depend on the event's place touch
// (garbage, a cut inside an event, content removed).
func ends(n int) []int {
	switch n {
	case 1:
		return []int{0}
	case 2:
		return []int{0, 1}
	}
	return []int{0, n / 2, n - 1}
}

// mutStream makes the mutations of a recorded stream.
func mutStream(rec recording) []mutation {
	ev := rec.events
	n := len(ev)
	var out []mutation
	for _, i := range positions(n) {
		// Cut after event i: an answer only if a finish reason came
		// (expect).
		if i < n-1 {
			out = append(out, mutation{name: fmt.Sprintf("cut after event %d", i), class: "cut", events: ev[:i+1]})
		}
		// Drop, duplicate event i, swap events i and i+1: the answer the
		// events say, or ErrBadResponse if no finish reason is left, or
		// two calls share an API id (expect).
		if n > 1 {
			out = append(out, mutation{name: fmt.Sprintf("drop event %d", i), class: "drop", events: append(append([][]byte{}, ev[:i]...), ev[i+1:]...)})
		}
		out = append(out, mutation{name: fmt.Sprintf("duplicate event %d", i), class: "duplicate", events: append(append(append([][]byte{}, ev[:i+1]...), ev[i]), ev[i+1:]...)})
		if i < n-1 {
			sw := append([][]byte{}, ev...)
			sw[i], sw[i+1] = sw[i+1], sw[i]
			out = append(out, mutation{name: fmt.Sprintf("swap events %d and %d", i, i+1), class: "swap", events: sw})
		}
	}
	for k, i := range ends(n) {
		// Cut inside event i: an undecodable last event, ErrBadResponse.
		half := sse(ev[:i+1])
		half = half[:len(half)-4-len(ev[i])/2]
		out = append(out, mutation{name: fmt.Sprintf("cut inside event %d", i), class: "cut-inside", body: half, wantErr: true})
		// Event i's JSON replaced by garbage: ErrBadResponse (expect).
		g := append([][]byte{}, ev...)
		g[i] = garbage[(k+len(rec.name))%len(garbage)]
		out = append(out, mutation{name: fmt.Sprintf("garbage for event %d", i), class: "garbage", events: g})
	}
	// A candidate without content (nor finish reason) added before the
	// last event: nothing; the answer is the recording's.
	extra := []byte(`{"candidates":[{"index":0}]}`)
	out = append(out, mutation{name: "empty candidate event", class: "no-content", same: true,
		events: append(append(append([][]byte{}, ev[:n-1]...), extra), ev[n-1])})
	out = append(out, shared(ev)...)
	for i := range out {
		if out[i].body == nil {
			out[i].body = sse(out[i].events)
		}
	}
	return out
}

// mutJSON makes the mutations of a recorded JSON answer.
func mutJSON(rec recording) []mutation {
	body := bytes.TrimSpace(rec.body)
	var out []mutation
	// Cut at a few points: not JSON, ErrBadResponse.
	for _, at := range []int{1, len(body) / 3, len(body) * 2 / 3, len(body) - 1} {
		out = append(out, mutation{name: fmt.Sprintf("cut at %d of %d", at, len(body)), class: "cut", body: body[:at], wantErr: true})
	}
	// Fields of the wrong type: the SDK cannot decode them, ErrBadResponse.
	wrong := func(name string, f func(m map[string]any) bool) {
		applied := true
		ev := editEvents([][]byte{body}, func(_ int, m map[string]any) { applied = f(m) })
		if applied {
			out = append(out, mutation{name: "wrong type: " + name, class: "wrong-type", body: ev[0], wantErr: true})
		}
	}
	wrong("candidates is a string", func(m map[string]any) bool { m["candidates"] = "x"; return true })
	wrong("usageMetadata.promptTokenCount is a string", func(m map[string]any) bool {
		m["usageMetadata"] = map[string]any{"promptTokenCount": "nine"}
		return true
	})
	wrong("candidate is a number", func(m map[string]any) bool {
		cands, c := rawCandidate0(m)
		if c == nil {
			return false
		}
		cands[0] = 7.0
		return true
	})
	wrong("finishReason is a number", func(m map[string]any) bool {
		_, c := rawCandidate0(m)
		if c == nil {
			return false
		}
		c["finishReason"] = 3.0
		return true
	})
	wrong("parts is an object", func(m map[string]any) bool {
		_, c := rawCandidate0(m)
		content, ok := c["content"].(map[string]any)
		if !ok {
			return false
		}
		content["parts"] = map[string]any{"text": "x"}
		return true
	})
	wrong("a part's text is a number", func(m map[string]any) bool {
		_, c := rawCandidate0(m)
		content, _ := c["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		if len(parts) == 0 {
			return false
		}
		parts[0] = map[string]any{"text": 5.0}
		return true
	})
	wrong("functionCall.args is an array", func(m map[string]any) bool {
		_, c := rawCandidate0(m)
		content, _ := c["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		if len(parts) == 0 {
			return false
		}
		parts[0] = map[string]any{"functionCall": map[string]any{"name": "f", "args": []any{1.0}}}
		return true
	})
	// No candidates: ErrBadResponse, unless the prompt was blocked
	// (expect).
	ev := editEvents([][]byte{body}, func(_ int, m map[string]any) { m["candidates"] = []any{} })
	out = append(out, mutation{name: "empty candidates", class: "empty-candidates", events: ev})
	// promptFeedback only: with a blockReason an empty answer with
	// FinishContentFilter (doc.go); without, ErrBadResponse (expect).
	out = append(out, mutation{name: "promptFeedback only, blocked", class: "prompt-feedback",
		events: [][]byte{[]byte(`{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"HIGH"}]}}`)}})
	out = append(out, mutation{name: "promptFeedback only, no blockReason", class: "prompt-feedback",
		events: [][]byte{[]byte(`{"promptFeedback":{"safetyRatings":[]}}`)}})
	out = append(out, shared([][]byte{body})...)
	for i := range out {
		if out[i].body == nil {
			out[i].body = out[i].events[0]
		}
	}
	return out
}

// TestReplyMutations serves mutations of every recorded reply and checks
// each outcome: the properties of checkOutcome always, and what the
// mutation's class says the outcome must be.
func TestReplyMutations(t *testing.T) {
	t.Parallel()
	h := newReplyHost(t)
	recs := recordings(t)
	if len(recs) < 40 {
		t.Fatalf("only %d recordings found", len(recs))
	}
	var cases, answers, errs atomic.Int64
	classes := sync.Map{}
	// One pool of workers for all the replies: the calls wait on the
	// loopback more than they compute.
	type job struct {
		rec  int
		m    mutation
		base bool // the recording itself
	}
	bases := make([]outcome, len(recs))
	var mu sync.Mutex
	failures := map[string]int{}
	report := func(rec string, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if failures[rec]++; failures[rec] <= 5 {
			t.Errorf("%s: "+format, append([]any{rec}, args...)...)
		}
	}
	run := func(jobs []job) {
		work := make(chan job)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for j := range work {
					rec := recs[j.rec]
					if j.base {
						// The recording itself: what its events say (its
						// own test checks the details).
						bases[j.rec] = h.plan(rec.body, rec.stream, rec.vertex)
						if bad := expect(summarize(rec.events), bases[j.rec]); len(bad) > 0 {
							report(rec.name, "the recording: %s", strings.Join(bad, "; "))
						}
						continue
					}
					if bad, body := runMutation(h, rec, bases[j.rec], j.m, &cases, &answers, &errs, &classes); len(bad) > 0 {
						report(rec.name, "%s [%s]: %s\nbody: %.600s", j.m.name, j.m.class, strings.Join(bad, "; "), body)
					}
				}
			})
		}
		for _, j := range jobs {
			work <- j
		}
		close(work)
		wg.Wait()
	}
	var jobs []job
	for i := range recs {
		jobs = append(jobs, job{rec: i, base: true})
	}
	run(jobs)
	jobs = jobs[:0]
	for i, rec := range recs {
		var muts []mutation
		if rec.stream {
			muts = mutStream(rec)
		} else {
			muts = mutJSON(rec)
			// The JSON answer as a one-event stream: what it says
			// (streamed, no finish reason is an error).
			muts = append(muts, mutation{name: "as a stream", class: "json-as-stream", events: [][]byte{bytes.TrimSpace(rec.body)}})
		}
		for _, m := range muts {
			jobs = append(jobs, job{rec: i, m: m})
		}
	}
	run(jobs)
	var names []string
	classes.Range(func(k, _ any) bool { names = append(names, k.(string)); return true })
	sort.Strings(names)
	t.Logf("%d recordings, %d mutated replies (%d answers, %d errors); classes: %s",
		len(recs), cases.Load(), answers.Load(), errs.Load(), strings.Join(names, " "))
}

// runMutation serves one mutation of rec and checks its outcome: the
// properties of checkOutcome always, and what the mutation's class says.
// It returns the violations and the body served.
func runMutation(h *replyHost, rec recording, base outcome, m mutation, cases, answers, errs *atomic.Int64, classes *sync.Map) ([]string, []byte) {
	{
		{
			stream := rec.stream
			body := m.body
			if m.class == "json-as-stream" {
				stream, body = true, sse(m.events)
			}
			o := h.plan(body, stream, rec.vertex)
			cases.Add(1)
			classes.Store(m.class, true)
			if o.err != nil {
				errs.Add(1)
			} else {
				answers.Add(1)
			}
			var bad []string
			switch {
			case m.wantErr:
				bad = checkOutcome(o)
				if len(bad) == 0 && !errors.Is(o.err, agentrt.ErrBadResponse) {
					bad = []string{fmt.Sprintf("want ErrBadResponse, got %v", o.err)}
				}
			case m.same:
				bad = sameAnswer(base, o, m.finish)
			default:
				bad = expect(summarize(m.events), o)
			}
			return bad, body
		}
	}
}

// FuzzReply serves the fuzzer's bytes as the reply body, streamed or not,
// and checks the properties of every outcome (checkOutcome). The corpus
// is seeded with every recording (as recorded, and the other way too: a
// stream's events as JSON bodies, a JSON answer as a stream).
func FuzzReply(f *testing.F) {
	for _, rec := range recordings(f) {
		f.Add(rec.body, rec.stream, rec.vertex)
		if rec.stream {
			f.Add(rec.events[len(rec.events)-1], false, rec.vertex)
		} else {
			f.Add(sse([][]byte{bytes.TrimSpace(rec.body)}), true, rec.vertex)
		}
	}
	h := newReplyHost(f)
	f.Fuzz(func(t *testing.T, body []byte, stream, vertex bool) {
		o := h.plan(body, stream, vertex)
		if bad := checkOutcome(o); len(bad) > 0 {
			t.Fatalf("%s\nbody: %q", strings.Join(bad, "; "), body)
		}
	})
}

// planOne serves body once, through a replyHost of its own.
func planOne(t *testing.T, body string, stream bool) outcome {
	t.Helper()
	o := newReplyHost(t).plan([]byte(body), stream, false)
	if bad := checkOutcome(o); len(bad) > 0 {
		t.Fatal(strings.Join(bad, "; "))
	}
	return o
}

// requireBad checks that o is an ErrBadResponse error.
func requireBad(t *testing.T, o outcome) {
	t.Helper()
	if !errors.Is(o.err, agentrt.ErrBadResponse) {
		t.Fatalf("want ErrBadResponse, got %v (answer %+v)", o.err, o.resp)
	}
}

// Found by TestReplyMutations (wrong-type) and FuzzReply: the SDK panics
// on a body whose fields have the wrong JSON type, or on the body null;
// Plan must return ErrBadResponse instead.
func TestReplyRegressionSDKPanic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body   string
		stream bool
	}{
		{`{"candidates":"x"}`, false},
		{`{"candidates":[7]}`, false},
		{"null", false},
		{"data: {\"candidates\":\"x\"}\r\n\r\n", true},
		{"data: {\"candidates\":[7]}\r\n\r\n", true},
	} {
		t.Run(fmt.Sprintf("%q", tc.body), func(t *testing.T) {
			requireBad(t, planOne(t, tc.body, tc.stream))
		})
	}
}

// A panic of OnText is the caller's: Plan does not turn it into an error.
func TestReplyOnTextPanicPropagates(t *testing.T) {
	t.Parallel()
	h := newReplyHost(t)
	h.bodies.Store("m", []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"A\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"))
	p := New(h.gemini, "m", &Options{MaxRetries: -1})
	defer func() {
		if v := recover(); v != "from OnText" {
			t.Fatalf("recovered %v, want the panic of OnText", v)
		}
	}()
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Hi")},
		OnText:   func(string) { panic("from OnText") },
	})
	t.Fatalf("Plan returned %v", err)
}

// Found by TestReplyMutations (several-candidates): the answer is made of
// the candidate of index 0, not of the first in the array.
func TestReplyRegressionCandidateIndex(t *testing.T) {
	t.Parallel()
	o := planOne(t, `{"candidates":[{"index":1,"content":{"parts":[{"text":"B"}]},"finishReason":"STOP"},{"content":{"parts":[{"text":"A"}]},"finishReason":"STOP"}]}`, false)
	if o.err != nil || blockText(o.resp, agentrt.BlockText) != "A" {
		t.Fatalf("want the answer A, got %+v, %v", o.resp, o.err)
	}
	o = planOne(t, "data: {\"candidates\":[{\"index\":1,\"content\":{\"parts\":[{\"text\":\"B\"}]}}]}\r\n\r\n"+
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"A\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n", true)
	if o.err != nil || blockText(o.resp, agentrt.BlockText) != "A" || !reflect.DeepEqual(o.texts, []string{"A"}) {
		t.Fatalf("want the answer A, got %+v (OnText %q), %v", o.resp, o.texts, o.err)
	}
}

// Found by TestReplyMutations (negative-usage): a negative token count is
// a damaged reply, not an answer with negative usage.
func TestReplyRegressionNegativeUsage(t *testing.T) {
	t.Parallel()
	requireBad(t, planOne(t, `{"candidates":[{"content":{"parts":[{"text":"A"}]},"finishReason":"STOP"}],"usageMetadata":{"candidatesTokenCount":-7}}`, false))
}

// Found by TestReplyMutations (duplicate): two calls with one API id
// cannot both be answered; the reply is ErrBadResponse.
func TestReplyRegressionDuplicateCallID(t *testing.T) {
	t.Parallel()
	requireBad(t, planOne(t, `{"candidates":[{"content":{"parts":[{"functionCall":{"id":"a","name":"f","args":{}}},{"functionCall":{"id":"a","name":"f","args":{}}}]},"finishReason":"STOP"}]}`, false))
}
