package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file serve damaged, cut, reordered and hostile replies
// to both planners and check that each call ends, quickly, with either a
// classified error or a valid answer: never a panic, a hang, a bare SDK or
// JSON error, or an answer that is silently wrong.
//
// TestReplyMutations applies structural mutations to every recording of
// testdata (both APIs, streamed and not) and checks, for each mutation
// class, the outcome it must have (see the comments of mutateChatStream,
// mutateResponsesStream and mutateBody). FuzzChatReply and
// FuzzResponsesReply feed the fuzzer's bytes as the body, seeded with the
// recordings.

// ---- the server ----

// bodyServer answers every request with the body registered under the
// request's X-Case header: one httptest server for a whole test or fuzz
// run.
type bodyServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string]served
	next   atomic.Int64
}

type served struct {
	body []byte
	sse  bool
}

func newBodyServer() *bodyServer {
	s := &bodyServer{bodies: map[string]served{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.bodies[r.Header.Get("X-Case")]
		s.mu.Unlock()
		if !ok {
			http.Error(w, "no such case", http.StatusTeapot)
			return
		}
		if b.sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b.body)
	}))
	return s
}

// planners returns the planner of api answered by body.
func (s *bodyServer) planner(api string, body []byte, sse bool) (agentrt.Planner, func()) {
	id := strconv.FormatInt(s.next.Add(1), 10)
	s.mu.Lock()
	s.bodies[id] = served{body: body, sse: sse}
	s.mu.Unlock()
	client := oai.NewClient(option.WithBaseURL(s.URL+"/v1"), option.WithAPIKey("k"),
		option.WithHeader("X-Case", id), option.WithMaxRetries(0))
	done := func() {
		s.mu.Lock()
		delete(s.bodies, id)
		s.mu.Unlock()
	}
	if api == responsesAPI {
		return openai.NewResponses(client, "gpt-5", nil), done
	}
	return openai.New(client, "gpt-4o", nil), done
}

// outcome is what one call returned.
type outcome struct {
	resp     *agentrt.ModelResponse
	err      error
	streamed string // the text handed to OnText
}

// planTimeout bounds every call: a call still running then is a hang.
const planTimeout = 5 * time.Second

// play serves body to the planner of api, streamed (OnText set) or not.
func (s *bodyServer) play(api string, body []byte, stream bool) outcome {
	p, done := s.planner(api, body, stream)
	defer done()
	return plan(p, stream)
}

// fuzzPlanner is a planner whose every call is answered with the body
// set by its function: one planner for a whole fuzz run (the calls of a
// fuzz worker are sequential).
func (s *bodyServer) fuzzPlanner(api string) (agentrt.Planner, func(body []byte, sse bool)) {
	id := "fuzz-" + api
	client := oai.NewClient(option.WithBaseURL(s.URL+"/v1"), option.WithAPIKey("k"),
		option.WithHeader("X-Case", id), option.WithMaxRetries(0))
	var p agentrt.Planner = openai.New(client, "gpt-4o", nil)
	if api == responsesAPI {
		p = openai.NewResponses(client, "gpt-5", nil)
	}
	return p, func(body []byte, sse bool) {
		s.mu.Lock()
		s.bodies[id] = served{body: body, sse: sse}
		s.mu.Unlock()
	}
}

// plan calls p, streamed or not, within planTimeout.
func plan(p agentrt.Planner, stream bool) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), planTimeout)
	defer cancel()
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("hi")}}
	var o outcome
	var sb strings.Builder
	if stream {
		req.OnText = func(s string) { sb.WriteString(s) }
	}
	o.resp, o.err = p.Plan(ctx, req)
	o.streamed = sb.String()
	return o
}

// ---- the properties every outcome must have ----

var errorKinds = []error{
	agentrt.ErrBadResponse, agentrt.ErrInvalidRequest, agentrt.ErrRateLimited,
	agentrt.ErrOverloaded, agentrt.ErrAuth, agentrt.ErrContextLength,
}

// problems returns what is wrong with an outcome, whatever the reply was:
// an error must be classified (an agentrt error kind, a ProviderError
// with a Kind) and not a timeout (a hang); an answer must be a valid
// assistant message whose streamed text is its text.
func problems(o outcome, stream bool) []string {
	var out []string
	if o.err != nil {
		if o.resp != nil {
			out = append(out, "both an answer and an error")
		}
		if errors.Is(o.err, context.DeadlineExceeded) {
			return append(out, "the call hung: "+o.err.Error())
		}
		var pe *agentrt.ProviderError
		classified := errors.As(o.err, &pe) && pe.Kind != nil
		for _, k := range errorKinds {
			classified = classified || errors.Is(o.err, k)
		}
		if !classified {
			out = append(out, fmt.Sprintf("unclassified error %T: %v", o.err, o.err))
		}
		return out
	}
	r := o.resp
	if r == nil {
		return append(out, "neither an answer nor an error")
	}
	if r.Message.Role != agentrt.RoleAssistant {
		out = append(out, "role "+string(r.Message.Role))
	}
	if r.Finish == "" {
		out = append(out, "no finish reason")
	}
	u := r.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		out = append(out, fmt.Sprintf("negative usage %+v", u))
	}
	for i, b := range r.Message.Blocks {
		if b.Type != agentrt.BlockToolUse {
			continue
		}
		if b.ID == "" || b.Name == "" {
			out = append(out, fmt.Sprintf("tool_use %d without id or name: %q %q", i, b.ID, b.Name))
		}
		if !json.Valid(b.Input) {
			out = append(out, fmt.Sprintf("tool_use %d input is not JSON: %q", i, b.Input))
		}
	}
	if stream && o.streamed != answerText(r) {
		out = append(out, fmt.Sprintf("OnText got %q, the answer's text is %q", truncated(o.streamed), truncated(answerText(r))))
	}
	return out
}

func truncated(s string) string {
	if len(s) > 200 {
		return s[:100] + "…" + s[len(s)-100:]
	}
	return s
}

// answerText is the text of the answer's text blocks.
func answerText(r *agentrt.ModelResponse) string {
	var sb strings.Builder
	for _, b := range r.Message.Blocks {
		if b.Type == agentrt.BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

var madeUpID = regexp.MustCompile(`call_[0-9a-f]{24}\b`)

// summary is an answer in a comparable form: the ids the adapter makes
// up are masked.
func summary(r *agentrt.ModelResponse) string {
	b, _ := json.Marshal(struct {
		M agentrt.Message
		U agentrt.Usage
		F agentrt.FinishReason
		N string
	}{r.Message, r.Usage, r.Finish, r.Model})
	return madeUpID.ReplaceAllString(string(b), "call_MADEUP")
}

// ---- recordings ----

type recording struct {
	name string
	api  string
	sse  bool
	body []byte
}

// recordings returns every recorded answer of testdata: streams and JSON
// bodies of both APIs (error bodies, requests and files of other shapes
// are left out).
func recordings(tb testing.TB) []recording {
	tb.Helper()
	var out []recording
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "fuzz" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path, "testdata"+string(filepath.Separator))
		switch {
		case strings.HasSuffix(path, ".sse"):
			api := chatAPI
			if bytes.Contains(b, []byte(`"type":"response.`)) || bytes.Contains(b, []byte("event: response.")) {
				api = responsesAPI
			}
			out = append(out, recording{name: name, api: api, sse: true, body: b})
		case strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".request.json"):
			var top map[string]json.RawMessage
			if json.Unmarshal(b, &top) != nil {
				return nil
			}
			if _, ok := top["choices"]; ok {
				out = append(out, recording{name: name, api: chatAPI, body: b})
			} else if _, ok := top["output"]; ok {
				out = append(out, recording{name: name, api: responsesAPI, body: b})
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// ---- SSE helpers ----

// eventData returns the data of an SSE event (its data: lines joined),
// and false for an event without data (a comment).
func eventData(ev []byte) ([]byte, bool) {
	var data [][]byte
	found := false
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
			found = true
		}
	}
	return bytes.Join(data, []byte("\n")), found
}

// hasData reports whether an event carries data other than [DONE].
func hasData(ev []byte) bool {
	d, ok := eventData(ev)
	return ok && !bytes.HasPrefix(d, []byte("[DONE]"))
}

func join(evs [][]byte) []byte { return bytes.Join(evs, nil) }

// withEvent returns the events with ev inserted at i.
func withEvent(evs [][]byte, i int, ev string) [][]byte {
	out := append([][]byte{}, evs[:i]...)
	out = append(out, []byte(ev))
	return append(out, evs[i:]...)
}

// sampled returns the event positions to mutate one by one: all of them
// for a short stream, the first and last 8 and every 25th for a long
// one (a stream of 300 text deltas has nothing new in its middle).
func sampled(n int) []int {
	var out []int
	for i := range n {
		if n <= 24 || i < 8 || i >= n-8 || i%25 == 0 {
			out = append(out, i)
		}
	}
	return out
}

// ---- the expected outcome of a stream ----

// expectation is what a (mutated) stream must produce: an error, or an
// answer whose text blocks hold text (when textKnown).
type expectation struct {
	err       bool
	why       string
	text      string
	textKnown bool
}

func decodeObject(data []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || m == nil || d.More() {
		return nil, false
	}
	return m, true
}

func num(v any, def int64) int64 {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return def
}

// expectChat is what a Chat Completions stream must give, as doc.go
// says: reading stops at [DONE]; an event that is not a JSON object, or
// holds an "error", is an error; so is a stream without a finish reason,
// and a tool call without a function name or whose id another call has.
// The answer's text is the content and refusal deltas of choice 0, in
// order.
func expectChat(evs [][]byte) expectation {
	type call struct{ id, name string }
	var calls []*call
	byIndex := map[int64]int{}
	var text strings.Builder
	known, finished := true, false
	for _, ev := range evs {
		data, ok := eventData(ev)
		if !ok {
			continue
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			break
		}
		m, ok := decodeObject(data)
		if !ok {
			return expectation{err: true, why: "a chunk that is not a JSON object"}
		}
		if _, ok := m["error"]; ok {
			return expectation{err: true, why: "an error event"}
		}
		choices, _ := m["choices"].([]any)
		for _, c := range choices {
			ch, _ := c.(map[string]any)
			if num(ch["index"], 0) != 0 {
				continue
			}
			delta, _ := ch["delta"].(map[string]any)
			switch v := delta["content"].(type) {
			case string:
				text.WriteString(v)
			case nil:
			default:
				known = false // a list of parts (Mistral)
			}
			if v, ok := delta["refusal"].(string); ok {
				text.WriteString(v)
			}
			tcs, _ := delta["tool_calls"].([]any)
			for i, x := range tcs {
				tc, _ := x.(map[string]any)
				idx := num(tc["index"], int64(i))
				id, _ := tc["id"].(string)
				fn, _ := tc["function"].(map[string]any)
				name, _ := fn["name"].(string)
				pos, ok := byIndex[idx]
				if !ok || (id != "" && calls[pos].id != "" && calls[pos].id != id) {
					pos = len(calls)
					calls = append(calls, &call{})
					byIndex[idx] = pos
				}
				if id != "" {
					calls[pos].id = id
				}
				if name != "" && name != calls[pos].name {
					calls[pos].name += name
				}
			}
			switch f := ch["finish_reason"].(type) {
			case string:
				finished = finished || f != ""
			case json.Number:
				finished = true // read as its text, an unknown reason: FinishOther
			}
		}
	}
	if !finished {
		return expectation{err: true, why: "no finish reason"}
	}
	for _, c := range calls {
		if c.name == "" {
			return expectation{err: true, why: "a tool call without a name"}
		}
	}
	return expectation{text: text.String(), textKnown: known}
}

// expectResponses is what a Responses API stream must give: reading
// stops at the first response.completed or response.incomplete, which
// carries the answer (its output, or else the output_item.done items);
// response.failed, an "error" event or an event with an "error" key, an
// event that is not a JSON object, and a stream without a final event are
// errors. The text deltas handed to OnText must be the final response's
// text: a stream whose deltas say otherwise (one lost, repeated or out of
// order) is an error, never an answer whose text differs from what the
// caller was shown.
func expectResponses(evs [][]byte) expectation {
	var deltas strings.Builder
	var items []any
	var final map[string]any
	for _, ev := range evs {
		data, ok := eventData(ev)
		if !ok {
			continue
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			break
		}
		m, ok := decodeObject(data)
		if !ok {
			return expectation{err: true, why: "an event that is not a JSON object"}
		}
		if _, ok := m["error"]; ok {
			return expectation{err: true, why: "an error event"}
		}
		switch m["type"] {
		case "response.output_text.delta", "response.refusal.delta":
			s, _ := m["delta"].(string)
			deltas.WriteString(s)
		case "response.output_item.done":
			items = append(items, m["item"])
		case "response.completed", "response.incomplete":
			final, _ = m["response"].(map[string]any)
			if final == nil {
				final = map[string]any{}
			}
		case "response.failed":
			return expectation{err: true, why: "response.failed"}
		}
		if final != nil {
			break
		}
	}
	if final == nil {
		return expectation{err: true, why: "no final event"}
	}
	output, _ := final["output"].([]any)
	if len(output) == 0 {
		output = items
	}
	text, e := responsesOutput(output)
	if e.err {
		return e
	}
	if text != deltas.String() {
		return expectation{err: true, why: "the deltas are not the final text"}
	}
	return expectation{text: text, textKnown: true}
}

// responsesOutput is the text of output's messages, and the error that
// a function call without a name, or an
// unanswered MCP approval request must give.
func responsesOutput(output []any) (string, expectation) {
	var text strings.Builder
	for _, x := range output {
		item, _ := x.(map[string]any)
		switch item["type"] {
		case "message":
			parts, _ := item["content"].([]any)
			for _, p := range parts {
				part, _ := p.(map[string]any)
				switch part["type"] {
				case "output_text":
					s, _ := part["text"].(string)
					text.WriteString(s)
				case "refusal":
					s, _ := part["refusal"].(string)
					text.WriteString(s)
				}
			}
		case "function_call":
			if name, _ := item["name"].(string); name == "" {
				return "", expectation{err: true, why: "a function call without a name"}
			}
		case "mcp_approval_request":
			return "", expectation{err: true, why: "an mcp approval request"} // none of the streams answers one
		}
	}
	return text.String(), expectation{}
}

// An event that the body's end cuts before its blank line is never
// dispatched (as the SSE specification says), so it is left out.
func expectStream(api string, evs [][]byte) expectation {
	if n := len(evs); n > 0 && !bytes.HasSuffix(evs[n-1], []byte("\n\n")) {
		evs = evs[:n-1]
	}
	if api == responsesAPI {
		return expectResponses(evs)
	}
	return expectChat(evs)
}

// ---- mutations ----

// mutation is a mutated body and how its outcome is checked.
type mutation struct {
	name string
	body []byte
	// same: the answer (or error) must be the one of the recording
	// itself: the mutation changes nothing the adapter may read.
	same bool
	// wantErr: the outcome must be an ErrBadResponse.
	wantErr bool
	// expect: the outcome the stream's events call for (expectStream).
	expect bool
	// empty: the answer must have no blocks (an empty output).
	empty bool
}

// mutateStream returns the structural mutations of a recorded stream.
// The outcome of each class:
//
//   - cut after event i, drop event i, duplicate event i, swap events i
//     and i+1, [DONE] inserted after event i: what expectStream says of
//     the resulting events (an error when the finish reason, or the final
//     event, is gone; otherwise an answer whose text is the deltas');
//   - event i's JSON replaced with garbage: an error, since reading it
//     fails, unless the event is one the adapter never reads (a Responses
//     event after the final one): expectStream again;
//   - [DONE] missing: the same outcome as the recording (the finish
//     reason, or the final event, ends the answer);
//   - an event of an unknown type, a delta with unknown fields, a chunk
//     with no choices, an output item of an unknown type: the same
//     outcome as the recording;
//   - arguments for a tool call index never started (Chat): an error,
//     since that call has no name.
func mutateStream(api string, body []byte) []mutation {
	evs := sseEvents(body)
	var out []mutation
	add := func(name string, m [][]byte) {
		out = append(out, mutation{name: name, body: join(m), expect: true})
	}
	for _, i := range sampled(len(evs)) {
		add(fmt.Sprintf("cut after %d", i), evs[:i+1])
		add(fmt.Sprintf("drop %d", i), append(append([][]byte{}, evs[:i]...), evs[i+1:]...))
		add(fmt.Sprintf("duplicate %d", i), withEvent(evs, i, string(evs[i])))
		if i+1 < len(evs) {
			sw := append([][]byte{}, evs...)
			sw[i], sw[i+1] = sw[i+1], sw[i]
			add(fmt.Sprintf("swap %d", i), sw)
		}
		add(fmt.Sprintf("[DONE] after %d", i), withEvent(evs, i+1, "data: [DONE]\n\n"))
		if hasData(evs[i]) {
			g := append([][]byte{}, evs...)
			g[i] = []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"\n\n")
			add(fmt.Sprintf("garbage %d", i), g)
			g2 := append([][]byte{}, evs...)
			g2[i] = []byte("data: [1, 2\n\n")
			add(fmt.Sprintf("garbage array %d", i), g2)
		}
	}
	// No [DONE] at all.
	var noDone [][]byte
	for _, ev := range evs {
		if d, ok := eventData(ev); !ok || !bytes.HasPrefix(d, []byte("[DONE]")) {
			noDone = append(noDone, ev)
		}
	}
	out = append(out, mutation{name: "no [DONE]", body: join(noDone), same: true})
	// Insertions that change nothing, after the first data event.
	first := 0
	for first < len(evs) && !hasData(evs[first]) {
		first++
	}
	if first == len(evs) {
		return out
	}
	at := first + 1
	var inserts map[string]string
	if api == chatAPI {
		inserts = map[string]string{
			"unknown event type":    "event: vendor.ping\ndata: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n",
			"unknown delta field":   `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"x_future":{"a":[1,2]},"audio":null},"finish_reason":null}]}` + "\n\n",
			"chunk with no choices": `data: {"id":"x","object":"chat.completion.chunk","choices":[]}` + "\n\n",
			"chunk without choices": `data: {"id":"x","object":"chat.completion.chunk"}` + "\n\n",
			"comment":               ": keep-alive\n\n",
			"other choice":          `data: {"id":"x","choices":[{"index":1,"delta":{"content":"not this one","tool_calls":[{"index":0,"function":{"arguments":"{"}}]},"finish_reason":null}]}` + "\n\n",
		}
	} else {
		inserts = map[string]string{
			"unknown event type":  `data: {"type":"response.future_event","sequence_number":1,"item":{"type":"future_item"}}` + "\n\n",
			"unknown item added":  `data: {"type":"response.output_item.added","sequence_number":1,"output_index":9,"item":{"type":"future_item","id":"fi_1"}}` + "\n\n",
			"named unknown event": "event: response.future\ndata: {\"type\":\"response.future\",\"sequence_number\":1}\n\n",
			"comment":             ": keep-alive\n\n",
		}
	}
	names := make([]string, 0, len(inserts))
	for k := range inserts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, mutation{name: k, body: join(withEvent(evs, at, inserts[k])), same: true})
	}
	if api == chatAPI {
		orphan := `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":7,"function":{"arguments":"{\"a\":1}"}}]},"finish_reason":null}]}` + "\n\n"
		out = append(out, mutation{name: "arguments for an index never started", body: join(withEvent(evs, at, orphan)), wantErr: true})
	} else {
		// An output item of an unknown type at the end of the final
		// response's output changes nothing.
		for i, ev := range evs {
			d, ok := eventData(ev)
			m, isObj := decodeObject(d)
			if !ok || !isObj || (m["type"] != "response.completed" && m["type"] != "response.incomplete") {
				continue
			}
			resp, _ := m["response"].(map[string]any)
			if resp == nil {
				break
			}
			output, _ := resp["output"].([]any)
			if len(output) == 0 {
				break // the items of output_item.done make the output
			}
			resp["output"] = append(output, map[string]any{"type": "future_item", "id": "fi_1", "status": "completed"})
			b, _ := json.Marshal(m)
			mu := append([][]byte{}, evs...)
			mu[i] = []byte("data: " + string(b) + "\n\n")
			out = append(out, mutation{name: "unknown output item type", body: join(mu), same: true})
			break
		}
	}
	return out
}

// setPath sets the value at path (keys and indexes) of v, and reports
// whether the path was there.
func setPath(v any, path []any, val any) bool {
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := m[k]; !ok {
				return false
			}
			if last {
				m[k] = val
				return true
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return false
			}
			if last {
				a[k] = val
				return true
			}
			v = a[k]
		}
	}
	return false
}

// typeChanges are the fields of an answer body given a value of a wrong
// type: a reply the adapter cannot read as sent, so ErrBadResponse.
func typeChanges(api string, top map[string]any) map[string][]any {
	if api == chatAPI {
		ch := map[string][]any{
			"choices":           {"choices"},
			"message":           {"choices", 0, "message"},
			"content":           {"choices", 0, "message", "content"},
			"tool_calls":        {"choices", 0, "message", "tool_calls"},
			"tool call id":      {"choices", 0, "message", "tool_calls", 0, "id"},
			"function name":     {"choices", 0, "message", "tool_calls", 0, "function", "name"},
			"finish_reason":     {"choices", 0, "finish_reason"},
			"usage":             {"usage"},
			"prompt_tokens":     {"usage", "prompt_tokens"},
			"completion_tokens": {"usage", "completion_tokens"},
		}
		return ch
	}
	out := map[string][]any{
		"output":       {"output"},
		"status":       {"status"},
		"usage":        {"usage"},
		"input_tokens": {"usage", "input_tokens"},
	}
	items, _ := top["output"].([]any)
	for i, x := range items {
		item, _ := x.(map[string]any)
		switch item["type"] {
		case "message":
			out["content"] = []any{"output", i, "content"}
			out["text"] = []any{"output", i, "content", 0, "text"}
		case "function_call":
			out["call_id"] = []any{"output", i, "call_id"}
			out["name"] = []any{"output", i, "name"}
		}
		out[fmt.Sprintf("item %d type", i)] = []any{"output", i, "type"}
	}
	return out
}

// mutateBody returns the mutations of a recorded JSON answer:
//
//   - cut at a few points: an error (not JSON), or, when what remains is
//     still the whole JSON value, the recording's outcome;
//   - a field the adapter reads given a value of another type (an object
//     for a string or a number, a string for a list or a number): an
//     error, never an answer missing what the field held;
//   - empty choices (Chat): an error, there is no message; empty output
//     (Responses): an answer without blocks, as the server said.
func mutateBody(api string, body []byte) []mutation {
	var out []mutation
	for _, f := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9} {
		n := int(f * float64(len(body)))
		cut := body[:n]
		out = append(out, mutation{name: fmt.Sprintf("cut at %d", n), body: cut, same: json.Valid(cut), wantErr: !json.Valid(cut)})
	}
	trimmed := bytes.TrimRight(body, " \r\n\t")
	out = append(out, mutation{name: "last byte cut", body: trimmed[:len(trimmed)-1], wantErr: true})
	decode := func() map[string]any {
		m, _ := decodeObject(body)
		return m
	}
	changes := typeChanges(api, decode())
	names := make([]string, 0, len(changes))
	for k := range changes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, wrong := range []any{map[string]any{"x": 1}, "7", json.Number("7"), []any{true}} {
			top := decode()
			var cur any = top
			for _, p := range changes[k] {
				switch q := p.(type) {
				case string:
					m, _ := cur.(map[string]any)
					cur = m[q]
				case int:
					a, _ := cur.([]any)
					if q < len(a) {
						cur = a[q]
					} else {
						cur = nil
					}
				}
			}
			if _, list := cur.([]any); api == chatAPI && k == "content" && list && sameKind("", wrong) {
				continue // a Chat content is a string or a list of parts: both right
			}
			if cur == nil || sameKind(cur, wrong) || !setPath(top, changes[k], wrong) {
				continue
			}
			b, _ := json.Marshal(top)
			out = append(out, mutation{name: fmt.Sprintf("%s as %T", k, wrong), body: b, wantErr: true})
		}
	}
	top := decode()
	if api == chatAPI {
		top["choices"] = []any{}
		b, _ := json.Marshal(top)
		out = append(out, mutation{name: "empty choices", body: b, wantErr: true})
	} else {
		top["output"] = []any{}
		b, _ := json.Marshal(top)
		out = append(out, mutation{name: "empty output", body: b, empty: true})
	}
	return out
}

// sameKind reports whether a and b are JSON values of one kind: an
// object, a list, or a scalar.
func sameKind(a, b any) bool {
	switch a.(type) {
	case map[string]any:
		_, ok := b.(map[string]any)
		return ok
	case []any:
		_, ok := b.([]any)
		return ok
	case string, json.Number:
		// The SDK reads a number for a string, and a number in a
		// string, keeping the value: not a wrong type.
		switch b.(type) {
		case string, json.Number:
			return true
		}
	}
	return false
}

// ---- the test ----

// checkMutation plays m and returns what is wrong with its outcome.
func checkMutation(s *bodyServer, rec recording, base outcome, m mutation, stream bool) []string {
	o := s.play(rec.api, m.body, stream)
	probs := problems(o, stream)
	isBad := o.err != nil && errors.Is(o.err, agentrt.ErrBadResponse)
	switch {
	case m.same:
		// The recording's own outcome, exactly.
		switch {
		case (o.err == nil) != (base.err == nil):
			probs = append(probs, fmt.Sprintf("outcome %v, the recording's %v", o.err, base.err))
		case o.err == nil && summary(o.resp) != summary(base.resp):
			probs = append(probs, fmt.Sprintf("answer\n%s\nthe recording's\n%s", summary(o.resp), summary(base.resp)))
		case o.err == nil && o.streamed != base.streamed:
			probs = append(probs, "OnText text differs from the recording's")
		}
	case m.wantErr && base.err != nil:
		// A recording that is an error stays one.
		if o.err == nil {
			probs = append(probs, "want an error, got an answer: "+summary(o.resp))
		}
	case m.wantErr:
		if !isBad {
			probs = append(probs, fmt.Sprintf("want ErrBadResponse, got %v", o.err))
		}
	case m.empty:
		if o.err != nil {
			probs = append(probs, fmt.Sprintf("want an empty answer, got %v", o.err))
		} else if len(o.resp.Message.Blocks) != 0 {
			probs = append(probs, fmt.Sprintf("want no blocks, got %+v", o.resp.Message.Blocks))
		}
	case m.expect:
		want := expectStream(rec.api, sseEvents(m.body))
		switch {
		case want.err && o.err == nil:
			probs = append(probs, "want an error ("+want.why+"), got an answer: "+summary(o.resp))
		case !want.err && o.err != nil:
			probs = append(probs, fmt.Sprintf("want an answer, got %v", o.err))
		case !want.err && want.textKnown && answerText(o.resp) != want.text:
			probs = append(probs, fmt.Sprintf("answer text %q, the stream's %q", truncated(answerText(o.resp)), truncated(want.text)))
		case want.err && base.err == nil && !isBad:
			// A recording that answers, once damaged, is a bad response.
			probs = append(probs, fmt.Sprintf("want ErrBadResponse (%s), got %v", want.why, o.err))
		}
	}
	return probs
}

// TestReplyMutations serves the mutations of every recording, streamed
// and not, to its planner and checks their outcomes.
func TestReplyMutations(t *testing.T) {
	t.Parallel()
	s := newBodyServer()
	t.Cleanup(s.Close)
	recs := recordings(t)
	var total atomic.Int64
	perClass := sync.Map{}
	for _, rec := range recs {
		t.Run(rec.name, func(t *testing.T) {
			t.Parallel()
			var muts []mutation
			if rec.sse {
				muts = mutateStream(rec.api, rec.body)
			} else {
				muts = mutateBody(rec.api, rec.body)
			}
			// Streams are played streamed, JSON answers both ways (a
			// stream asked for and a JSON body received is read as an
			// SSE stream without events).
			modes := []bool{true}
			if !rec.sse {
				modes = []bool{false}
			}
			for _, stream := range modes {
				base := s.play(rec.api, rec.body, stream)
				if p := problems(base, stream); len(p) > 0 {
					t.Errorf("the recording itself: %v", p)
				}
				if rec.sse {
					// The recording gives what its events call for.
					want := expectStream(rec.api, sseEvents(rec.body))
					if want.err != (base.err != nil) {
						t.Errorf("the recording: want error %v (%s), got %v", want.err, want.why, base.err)
					}
				}
				// Play the mutations in parallel, a few at a time.
				var wg sync.WaitGroup
				sem := make(chan struct{}, 8)
				var mu sync.Mutex
				for _, m := range muts {
					wg.Add(1)
					sem <- struct{}{}
					go func() {
						defer wg.Done()
						defer func() { <-sem }()
						o := checkMutation(s, rec, base, m, stream)
						total.Add(1)
						class := strings.TrimRight(m.name, "0123456789 ")
						c, _ := perClass.LoadOrStore(class, new(atomic.Int64))
						c.(*atomic.Int64).Add(1)
						if len(o) > 0 {
							mu.Lock()
							t.Errorf("%s (stream %v): %s\nbody: %s", m.name, stream, strings.Join(o, "; "), truncated(string(m.body)))
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
			}
		})
	}
	t.Cleanup(func() {
		var lines []string
		perClass.Range(func(k, v any) bool {
			lines = append(lines, fmt.Sprintf("%s: %d", k, v.(*atomic.Int64).Load()))
			return true
		})
		sort.Strings(lines)
		t.Logf("%d recordings, %d mutations played:\n%s", len(recs), total.Load(), strings.Join(lines, "\n"))
	})
}

// ---- fuzzing ----

// fuzzSeeds adds the recordings of api to f's corpus.
func fuzzSeeds(f *testing.F, api string) {
	for _, rec := range recordings(f) {
		if rec.api == api {
			f.Add(rec.body, rec.sse)
		}
	}
}

// fuzzReply plays the fuzzer's bytes as a reply, streamed or not, on one
// server for the whole run, and checks the properties every outcome must
// have; a stream must moreover have the outcome its events call for.
func fuzzReply(f *testing.F, api string) {
	fuzzSeeds(f, api)
	s := newBodyServer()
	f.Cleanup(s.Close)
	p, serve := s.fuzzPlanner(api)
	f.Fuzz(func(t *testing.T, body []byte, stream bool) {
		serve(body, stream)
		o := plan(p, stream)
		if p := problems(o, stream); len(p) > 0 {
			t.Fatalf("%s\nbody: %q", strings.Join(p, "; "), body)
		}
		if !stream {
			return
		}
		if bytes.ContainsRune(body, '\r') {
			return // the expectation splits events on "\n\n" only
		}
		want := expectStream(api, sseEvents(body))
		switch {
		case want.err && o.err == nil:
			t.Fatalf("want an error (%s), got an answer %s\nbody: %q", want.why, summary(o.resp), body)
		case !want.err && o.err == nil && want.textKnown && answerText(o.resp) != want.text:
			t.Fatalf("answer text %q, the stream's %q\nbody: %q", answerText(o.resp), want.text, body)
		}
	})
}

// FuzzChatReply fuzzes the body of a Chat Completions reply.
func FuzzChatReply(f *testing.F) { fuzzReply(f, chatAPI) }

// FuzzResponsesReply fuzzes the body of a Responses API reply.
func FuzzResponsesReply(f *testing.F) { fuzzReply(f, responsesAPI) }

// ---- regressions: failures the mutations found ----

// planBody plays body on the planner of api and returns the error.
func planBody(t *testing.T, api string, body string, stream bool) outcome {
	t.Helper()
	s := newBodyServer()
	t.Cleanup(s.Close)
	o := s.play(api, []byte(body), stream)
	if p := problems(o, stream); len(p) > 0 {
		t.Fatalf("%v", p)
	}
	return o
}

func wantBadResponse(t *testing.T, o outcome) {
	t.Helper()
	if o.err == nil {
		t.Fatalf("want ErrBadResponse, got an answer: %s (OnText %q)", summary(o.resp), o.streamed)
	}
	if !errors.Is(o.err, agentrt.ErrBadResponse) {
		t.Fatalf("want ErrBadResponse, got %v", o.err)
	}
}

// TestRegressionResponsesDeltasNotFinalText: a Responses stream whose
// text deltas (one lost, repeated or out of order) are not the text of
// response.completed was an answer whose text differed from what OnText
// had shown.
func TestRegressionResponsesDeltasNotFinalText(t *testing.T) {
	t.Parallel()
	const body = `data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}

data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello","annotations":[]}]}]}}

`
	wantBadResponse(t, planBody(t, responsesAPI, body, true))
}

// A Responses stream without any text delta (a server that sends the
// text only in response.completed) is the answer, its text given to
// OnText once, whole.
func TestResponsesStreamWithoutDeltas(t *testing.T) {
	t.Parallel()
	const body = `data: {"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello","annotations":[]}]}]}}

`
	o := planBody(t, responsesAPI, body, true)
	if o.err != nil {
		t.Fatal(o.err)
	}
	want := agentrt.NewAssistantMessage(agentrt.TextBlock("Hello"))
	if o.streamed != "Hello" || !reflect.DeepEqual(o.resp.Message, want) {
		t.Fatalf("OnText %q, answer %+v; want Hello for both", o.streamed, o.resp.Message)
	}
}

// Two tool calls of one id (a server that numbers every answer's calls
// alike): the answer keeps both, and the runtime runs the first and
// answers the second as a duplicate, so the run goes on.
func TestDuplicateToolCallIDsLeftToTheRuntime(t *testing.T) {
	t.Parallel()
	const chat = `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},
		{"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`
	const stream = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

`
	const resp = `{"id":"resp_1","object":"response","status":"completed","output":[
		{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"},
		{"type":"function_call","call_id":"call_1","name":"g","arguments":"{}"}]}`
	for _, c := range []struct {
		api, body string
		stream    bool
	}{{chatAPI, chat, false}, {chatAPI, stream, true}, {responsesAPI, resp, false}} {
		o := planBody(t, c.api, c.body, c.stream)
		if o.err != nil {
			t.Fatalf("%s: %v", c.api, o.err)
		}
		var got []string
		for _, b := range o.resp.Message.Blocks {
			got = append(got, b.ID+" "+b.Name)
		}
		if !reflect.DeepEqual(got, []string{"call_1 f", "call_1 g"}) {
			t.Fatalf("%s: calls %q", c.api, got)
		}
	}
}

// Servers that send a tool call's arguments as a JSON object rather than
// a string holding one (llama.cpp's llama-server in 2026, Hugging Face
// TGI): the object is the input, streamed or not, on both APIs.
func TestToolArgumentsAsObject(t *testing.T) {
	t.Parallel()
	want := agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_1", "f", json.RawMessage(`{"transaction_id":"T1001"}`)))
	for _, c := range []struct {
		api, body string
		stream    bool
	}{
		{chatAPI, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":{"transaction_id":"T1001"}}}]}}]}`, false},
		{chatAPI, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":{"transaction_id":"T1001"}}}]},"finish_reason":"tool_calls"}]}

`, true},
		{responsesAPI, `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"function_call","call_id":"call_1","name":"f","arguments":{"transaction_id":"T1001"}}]}`, false},
	} {
		o := planBody(t, c.api, c.body, c.stream)
		if o.err != nil {
			t.Fatalf("%s: %v", c.api, o.err)
		}
		var got []agentrt.Block
		for _, b := range o.resp.Message.Blocks {
			b.Signature, b.Provider = nil, ""
			got = append(got, b)
		}
		if !reflect.DeepEqual(got, want.Blocks) {
			t.Fatalf("%s: blocks %+v, want %+v", c.api, got, want.Blocks)
		}
	}
}

// TestRegressionWrongFieldTypes: a field of another type than the API's
// is left empty by the SDK, which made an answer that silently lost it
// (no usage, no text, no output).
func TestRegressionWrongFieldTypes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ api, body string }{
		{chatAPI, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":"many"}`},
		{chatAPI, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":{"text":"hi"}}}]}`},
		{chatAPI, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":-5}}`},
		{responsesAPI, `{"id":"resp_1","object":"response","status":"completed","output":"hi"}`},
		{responsesAPI, `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","content":"hi"}]}`},
	} {
		wantBadResponse(t, planBody(t, c.api, c.body, false))
	}
	const stream = `data: {"choices":[{"index":0,"delta":{"content":{"text":"hi"}},"finish_reason":"stop"}]}

`
	wantBadResponse(t, planBody(t, chatAPI, stream, true))
}
