package cachebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	oai "github.com/openai/openai-go/v3"
	oaioption "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/sqlitemem"
	"github.com/agentrt/agentrt/provider/anthropic"
	"github.com/agentrt/agentrt/provider/gemini"
	"github.com/agentrt/agentrt/provider/openai"
	"github.com/agentrt/agentrt/summarize"
)

const (
	turns       = 200  // planner calls in the session
	budget      = 8000 // Agent.ContextTokens, for the Window
	callsPerRun = 5    // of one Run: 4 tool turns, then the answer
	scope       = "user-42"
)

// size is the length of a session: the number of planner calls and the
// Window's budget.
type size struct{ turns, budget int }

// raceEnabled is set when the test runs under the race detector.
var raceEnabled bool

// full is the session the figures are for. Under the race detector,
// which makes each call about 6 times slower, the test runs its first 80
// turns (one compaction instead of 5 to 8).
var full = size{turns, budget}

func testSize() size {
	if raceEnabled {
		return size{80, budget}
	}
	return full
}

// instructions is the system prompt: long enough that the system prompt
// and tools are a real part of every request, as in production agents.
var instructions = "You are a careful coding assistant working in a Go repository. " +
	strings.Repeat("Read the files you need before you answer, cite paths and line numbers, and keep answers short. ", 8)

// step is what the fake model answers to call n (from 0): parallel tool
// calls, or, at the end of a run, a text answer.
type step struct {
	n     int
	calls []call
	text  string
}

type call struct {
	id, name string
	input    string
}

func stepOf(n int) step {
	if n%callsPerRun == callsPerRun-1 {
		return step{n: n, text: fmt.Sprintf("Done: the answer to question %d is in src/file%d.go.", n/callsPerRun, n)}
	}
	s := step{n: n}
	for i := range 1 + n%3 { // 1 to 3 calls in parallel
		c := call{id: fmt.Sprintf("call_%d_%d", n, i)}
		if i%2 == 0 {
			c.name, c.input = "read_file", fmt.Sprintf(`{"path":"src/file%d_%d.go"}`, n, i)
		} else {
			c.name, c.input = "search", fmt.Sprintf(`{"query":"symbol%d_%d"}`, n, i)
		}
		s.calls = append(s.calls, c)
	}
	return s
}

type pathIn struct {
	Path string `json:"path" jsonschema:"description=a path relative to the repository root" validate:"required"`
}

type queryIn struct {
	Query string `json:"query" jsonschema:"description=a Go identifier or a regular expression" validate:"required"`
}

func tools() []agentrt.Tool {
	read := agentrt.NewTool("read_file", "Read a file of the repository and return its text, with line numbers.",
		func(_ context.Context, in pathIn) (string, error) {
			var b strings.Builder
			for i := range 4 {
				fmt.Fprintf(&b, "%d\tfunc f%d() { return helper(%q, %d) } // %s\n", i+1, i, in.Path, i, in.Path)
			}
			return b.String(), nil
		}, agentrt.ReadOnly())
	search := agentrt.NewTool("search", "Search the repository for a symbol and return the matching lines.",
		func(_ context.Context, in queryIn) (string, error) {
			return strings.Repeat(fmt.Sprintf("src/pkg/a.go:12: var %s = newThing()\n", in.Query), 2), nil
		}, agentrt.ReadOnly())
	list := agentrt.NewTool("list_dir", "List the files of a directory.",
		func(_ context.Context, in pathIn) ([]string, error) { return []string{in.Path + "/a.go"}, nil },
		agentrt.ReadOnly())
	return []agentrt.Tool{read, search, list}
}

// asks end the questions of the session's runs, one after another, so
// that the memory hook, which searches with the last user message, recalls
// other facts from run to run.
var asks = []string{
	"How should I test it?",
	"How are its errors handled?",
	"Where does it write its logs?",
	"Which database table does it use?",
	"When can I deploy a change to it?",
	"How do I benchmark it?",
	"Which Go version does it need?",
}

// question is the user message of run n.
func question(n int) string {
	return fmt.Sprintf("Question %d: where is symbol%d defined, and what calls it? %s", n, n, asks[n%len(asks)])
}

// facts are what the user's memory holds: each ask finds one or two of
// them (and a question's number now and then another: "6" is in
// "-count 6"), and "defined" finds the last one in every question.
var facts = []string{
	"The user prefers table-driven tests written with testify, and runs them with -race.",
	"Errors are wrapped with fmt.Errorf and %w, and handled once, by the caller.",
	"The service writes its logs through log/slog, as JSON, never to stdout.",
	"The database tables are created by pgstore/schema.sql; every change needs a migration.",
	"The team deploys on Fridays only, after a code review of the change.",
	"Benchmarks run with -count 6 and are compared with benchstat before a merge.",
	"The repository needs Go 1.26; it is a go.work workspace of several modules.",
	"Every exported symbol is defined in the package named after its directory.",
}

// newMemory returns an in-process memory (sqlitemem, in memory: no
// server) holding facts in scope.
func newMemory(t testing.TB) *sqlitemem.Store {
	mem, err := sqlitemem.Open(":memory:", nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, mem.Close()) })
	for i, f := range facts {
		_, err := mem.Put(context.Background(), scope, memory.Item{ID: fmt.Sprintf("fact-%d", i), Kind: memory.KindFact, Text: f, Source: "session-1"})
		require.NoError(t, err)
	}
	return mem
}

// hookFor makes a session's hook; store is the agent's session store.
type hookFor func(store agentrt.SessionStore) agentrt.Hooks

// recallHook is memory.Hook on mem, recording what it recalls in the
// session, as a program would: before every call it searches with the
// last user message and appends the hits, under memory.RecallHeading, as
// one user message after the session's messages, for that call only.
func recallHook(mem memory.Store) hookFor {
	return func(store agentrt.SessionStore) agentrt.Hooks {
		return memory.Hook(mem, scope, &memory.HookOptions{Records: store})
	}
}

// badHook puts the time into the system prompt: every request differs
// from its start.
func badHook(agentrt.SessionStore) agentrt.Hooks {
	return agentrt.Hooks{BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
		req.System = "Now: " + time.Now().Format(time.RFC3339Nano) + "\n" + req.System
		return ctx, nil
	}}
}

// recallStart is how a JSON string starting with the line memory.Hook
// puts first in its message is written in a request body.
var recallStart = func() []byte {
	b, err := json.Marshal(memory.RecallHeading + "\n")
	if err != nil {
		panic(err)
	}
	return b[:len(b)-1] // without the closing quote
}()

// isRecall reports whether a part of a request is (or holds) the message
// memory.Hook added.
func isRecall(data []byte) bool { return bytes.Contains(data, recallStart) }

// noStream makes the adapters call the non-streaming endpoint, whose
// replies are simpler to fake; the prompt in the body is the same.
func noStream() agentrt.Hooks {
	return agentrt.Hooks{BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
		req.OnText = nil
		return ctx, nil
	}}
}

// part is one piece of a request's prompt, in cache order.
type part struct {
	kind string // "tool", "system" or "message"
	msg  int    // the message's index, for a message part
	data []byte
	bp   bool // a cache breakpoint ends here (Anthropic)
	tail bool // memory.Hook's message: this call's only
}

// vendor is one adapter under test.
type vendor struct {
	name    string
	planner func(url string) agentrt.Planner
	reply   func(s step) any
	parts   func(body []byte) ([]part, error)
	// atBreakpoints: the cache serves a prefix up to a breakpoint only.
	atBreakpoints bool
}

var vendors = []vendor{
	{name: "openai-chat", planner: openaiPlanner, reply: openaiReply, parts: openaiParts},
	{name: "openai-responses", planner: responsesPlanner, reply: responsesReply, parts: responsesParts},
	{name: "anthropic", planner: anthropicPlanner, reply: anthropicReply, parts: anthropicParts, atBreakpoints: true},
	{name: "gemini", planner: geminiPlanner, reply: geminiReply, parts: geminiParts},
}

func openaiPlanner(url string) agentrt.Planner {
	return openai.New(oai.NewClient(oaioption.WithBaseURL(url+"/v1"), oaioption.WithAPIKey("k"), oaioption.WithMaxRetries(0)), "gpt-test", nil)
}

func openaiReply(s step) any {
	msg := map[string]any{"role": "assistant", "content": nil}
	finish := "tool_calls"
	if s.calls == nil {
		msg["content"], finish = s.text, "stop"
	}
	var calls []any
	for _, c := range s.calls {
		calls = append(calls, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.input}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	return map[string]any{"id": fmt.Sprintf("chatcmpl-%d", s.n), "object": "chat.completion", "created": 1764770000, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
}

func openaiParts(body []byte) ([]part, error) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	// The system message, the tools, the other messages.
	var out []part
	msgs := req.Messages
	if len(msgs) > 0 && bytes.Contains(msgs[0], []byte(`"role":"system"`)) {
		out = append(out, part{kind: "system", data: msgs[0]})
	}
	for _, t := range req.Tools {
		out = append(out, part{kind: "tool", data: t})
	}
	for i, m := range msgs {
		if i == 0 && len(out) > 0 && out[0].kind == "system" {
			continue
		}
		out = append(out, part{kind: "message", msg: i, data: m, tail: isRecall(m)})
	}
	return out, nil
}

func responsesPlanner(url string) agentrt.Planner {
	return openai.NewResponses(oai.NewClient(oaioption.WithBaseURL(url+"/v1"), oaioption.WithAPIKey("k"), oaioption.WithMaxRetries(0)), "gpt-test", nil)
}

func responsesReply(s step) any {
	var output []any
	if s.calls == nil {
		output = []any{map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", s.n), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": s.text, "annotations": []any{}}}}}
	}
	for _, c := range s.calls {
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.id, "call_id": c.id, "name": c.name, "arguments": c.input, "status": "completed"})
	}
	return map[string]any{"id": fmt.Sprintf("resp_%d", s.n), "object": "response", "created_at": 1764770000, "status": "completed", "model": "gpt-test",
		"output": output, "usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}
}

func responsesParts(body []byte) ([]part, error) {
	var req struct {
		Input []json.RawMessage `json:"input"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	// The developer message (the system prompt), the tools, the other items.
	var out []part
	items := req.Input
	if len(items) > 0 && bytes.Contains(items[0], []byte(`"role":"developer"`)) {
		out = append(out, part{kind: "system", data: items[0]})
	}
	for _, t := range req.Tools {
		out = append(out, part{kind: "tool", data: t})
	}
	for i, m := range items {
		if i == 0 && len(out) > 0 && out[0].kind == "system" {
			continue
		}
		out = append(out, part{kind: "message", msg: i, data: m, tail: isRecall(m)})
	}
	return out, nil
}

func anthropicPlanner(url string) agentrt.Planner {
	return anthropic.New(anthropicsdk.NewClient(anthropicoption.WithBaseURL(url), anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0)), "claude-test", nil)
}

func anthropicReply(s step) any {
	var content []any
	stop := "tool_use"
	if s.calls == nil {
		content, stop = []any{map[string]any{"type": "text", "text": s.text}}, "end_turn"
	}
	for _, c := range s.calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.input)})
	}
	return map[string]any{"id": fmt.Sprintf("msg_%d", s.n), "type": "message", "role": "assistant", "model": "claude-test",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 10}}
}

// cacheControl is how the Anthropic SDK writes a breakpoint.
var cacheControl = []byte(`"cache_control":{"type":"ephemeral"},`)

// unmark removes a cache_control marker from a block, reporting whether
// it had one.
func unmark(b []byte) ([]byte, bool) {
	if !bytes.Contains(b, []byte(`"cache_control"`)) {
		return b, false
	}
	out := bytes.Replace(b, cacheControl, nil, 1)
	if len(out) == len(b) {
		out = bytes.Replace(b, []byte(`,"cache_control":{"type":"ephemeral"}`), nil, 1)
	}
	return out, true
}

func anthropicParts(body []byte) ([]part, error) {
	var req struct {
		System   []json.RawMessage `json:"system"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var out []part
	for _, t := range req.Tools {
		d, bp := unmark(t)
		out = append(out, part{kind: "tool", data: d, bp: bp})
	}
	for _, s := range req.System {
		d, bp := unmark(s)
		out = append(out, part{kind: "system", data: d, bp: bp})
	}
	for i, m := range req.Messages {
		out = append(out, part{kind: "message", msg: i, data: []byte(m.Role)})
		for _, b := range m.Content {
			d, bp := unmark(b)
			if bytes.Contains(d, []byte(`"cache_control"`)) {
				return nil, fmt.Errorf("unexpected cache_control form: %s", b)
			}
			out = append(out, part{kind: "message", msg: i, data: d, bp: bp, tail: isRecall(d)})
		}
	}
	return out, nil
}

func geminiPlanner(url string) agentrt.Planner {
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		panic(err)
	}
	return gemini.New(client, "gemini-test", &gemini.Options{MaxRetries: -1})
}

func geminiReply(s step) any {
	var parts []any
	if s.calls == nil {
		parts = []any{map[string]any{"text": s.text}}
	}
	for _, c := range s.calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.id, "name": c.name, "args": json.RawMessage(c.input)}})
	}
	return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-test", "responseId": fmt.Sprintf("r%d", s.n)}
}

func geminiParts(body []byte) ([]part, error) {
	var req struct {
		System   json.RawMessage   `json:"systemInstruction"`
		Tools    []json.RawMessage `json:"tools"`
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var out []part
	if req.System != nil {
		out = append(out, part{kind: "system", data: req.System})
	}
	for _, t := range req.Tools {
		out = append(out, part{kind: "tool", data: t})
	}
	for i, c := range req.Contents {
		out = append(out, part{kind: "message", msg: i, data: []byte(c.Role)})
		for _, p := range c.Parts {
			out = append(out, part{kind: "message", msg: i, data: p, tail: isRecall(p)})
		}
	}
	return out, nil
}

// fakeServer answers each call with the scripted step and keeps the
// request bodies.
type fakeServer struct {
	mu     sync.Mutex
	bodies [][]byte
	reply  func(step) any
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(f.reply(stepOf(n)))
}

// result is what one session measured.
type result struct {
	turns        int
	inputTokens  int // estimated: bytes/4
	cachedTokens int
	breaks       map[string][]int // cause: the turns (from 1) it broke
	bytesSent    int              // the request bodies, whole
	recalled     int              // requests with the memory hook's message
	hitSets      int              // distinct lists of items the hook recalled
}

func (r result) share() float64 { return float64(r.cachedTokens) / float64(r.inputTokens) }

func (r result) breakCount() int {
	n := 0
	for _, t := range r.breaks {
		n += len(t)
	}
	return n
}

func (r result) String() string {
	causes := make([]string, 0, len(r.breaks))
	for c, t := range r.breaks {
		causes = append(causes, fmt.Sprintf("%s: %d turns %v", c, len(t), abbrev(t)))
	}
	sort.Strings(causes)
	return fmt.Sprintf("%d turns (%d with recalled memory, %d distinct recalls), %d input tokens (est.), %.1f%% a cached prefix, %d breaks; %s",
		r.turns, r.recalled, r.hitSets, r.inputTokens, 100*r.share(), r.breakCount(), strings.Join(causes, "; "))
}

func abbrev(t []int) string {
	if len(t) > 12 {
		return fmt.Sprint(t[:12]) + "..."
	}
	return fmt.Sprint(t)
}

// session runs the scripted session through v with hook and measures it.
func session(t testing.TB, v vendor, hook hookFor, sz size, compaction agentrt.Compressor) result {
	srv := &fakeServer{reply: v.reply}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Instructions:  instructions,
		Tools:         tools(),
		Planner:       v.planner(ts.URL),
		Store:         store,
		Compressor:    compaction,
		ContextTokens: sz.budget,
		Hooks:         []agentrt.Hooks{noStream(), hook(store)},
	}
	ctx := context.Background()
	for run := range sz.turns / callsPerRun {
		for ev, err := range ag.Run(ctx, "bench-session", question(run)) {
			require.NoError(t, err)
			if d, ok := ev.(agentrt.Done); ok {
				require.Equal(t, agentrt.StopComplete, d.Reason, "run %d: %+v", run, d)
			}
		}
	}
	require.Equal(t, sz.turns, len(srv.bodies), "requests")
	res := measure(t, v, srv.bodies)
	res.hitSets = hitSets(t, store)
	return res
}

// hitSets counts the distinct lists of items memory.Hook recalled in the
// session, from its records.
func hitSets(t testing.TB, store agentrt.RecordStore) int {
	recs, err := store.LoadRecords(context.Background(), "bench-session")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Kind != memory.RecordKind {
			continue
		}
		var rr memory.RecallRecord
		require.NoError(t, json.Unmarshal(r.Data, &rr))
		ids := make([]string, len(rr.Hits))
		for i, h := range rr.Hits {
			ids[i] = h.ID
		}
		seen[strings.Join(ids, ",")] = true
	}
	return len(seen)
}

func measure(t testing.TB, v vendor, bodies [][]byte) result {
	res := result{turns: len(bodies), breaks: map[string][]int{}}
	var prev []part
	for i, body := range bodies {
		res.bytesSent += len(body)
		cur, err := v.parts(body)
		require.NoError(t, err)
		size := 0
		for _, p := range cur {
			size += len(p.data)
		}
		res.inputTokens += size / 4
		// The leading parts equal to the previous request's.
		k, same, cached := 0, 0, 0
		for k < len(prev) && k < len(cur) && prev[k].kind == cur[k].kind && bytes.Equal(prev[k].data, cur[k].data) {
			same += len(cur[k].data)
			if !v.atBreakpoints || prev[k].bp {
				cached = same
			}
			k++
		}
		res.cachedTokens += cached / 4
		if slices.ContainsFunc(cur, func(p part) bool { return p.tail }) {
			res.recalled++
		}
		if i > 0 {
			stable := len(prev)
			for j, p := range prev {
				if p.tail {
					stable = j
					break
				}
			}
			if k < stable {
				cause := causeOf(prev, cur, k)
				res.breaks[cause] = append(res.breaks[cause], i+1)
			}
		}
		prev = cur
	}
	return res
}

// causeOf names the part where cur first differs from prev.
func causeOf(prev, cur []part, k int) string {
	if k >= len(cur) {
		return "request shorter"
	}
	switch p := cur[k]; p.kind {
	case "tool":
		return "tool list changed"
	case "system":
		return "system prompt changed"
	default:
		last := func(ps []part) int { return ps[len(ps)-1].msg }
		if p.msg == 0 || last(cur) < last(prev) {
			return fmt.Sprintf("history rewritten at message %d (compaction)", p.msg)
		}
		return fmt.Sprintf("history rewritten at message %d", p.msg)
	}
}

// compactions are the two compressors the session is measured with.
var compactions = []struct {
	name string
	new  func() agentrt.Compressor
}{
	{"window", func() agentrt.Compressor { return agentrt.Window{} }},
	{"summarize", func() agentrt.Compressor {
		n := 0
		return summarize.Compressor{Planner: agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			n++
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(
				fmt.Sprintf("Summary %d: the user asks where symbols are defined; the files read so far are listed above.", n)))}, nil
		})}
	}},
}

// TestPrefixStability runs the 200-turn session with memory.Hook through
// each adapter with a Window (and through Anthropic's with the summarizing
// compressor too, which is the same for every adapter): every call must
// carry recalled memory, which varies with the question; at least 90% of
// the input must be a prefix the previous request had, the prefix may
// break only at a compaction, and a hook that writes the time into the
// system prompt (in a quarter of the session) must bring the share near 0.
func TestPrefixStability(t *testing.T) {
	t.Parallel()
	sz := testSize()
	for _, v := range vendors {
		for _, c := range compactions {
			if c.name != "window" && v.name != "anthropic" {
				continue
			}
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				good := session(t, v, recallHook(newMemory(t)), sz, c.new())
				t.Logf("memory.Hook: %v", good)
				assert.GreaterOrEqual(t, good.share(), 0.90, "%v", good)
				assert.Equal(t, sz.turns, good.recalled, "memory.Hook recalls something for every call")
				assert.GreaterOrEqual(t, good.hitSets, len(asks), "what it recalls varies with the question")
				assert.NotEmpty(t, good.breaks, "the session measures compaction turns too")
				for cause := range good.breaks {
					assert.Contains(t, cause, "(compaction)", "%v", good)
				}

				short := size{sz.turns / 4, sz.budget}
				bad := session(t, v, badHook, short, c.new())
				t.Logf("time in the system prompt: %v", bad)
				assert.Less(t, bad.share(), 0.05, "%v", bad)
				assert.Len(t, bad.breaks["system prompt changed"], short.turns-1, "%v", bad)
				assert.Zero(t, bad.recalled, "%v", bad)
			})
		}
	}
}

// BenchmarkPrefixStability reports, per adapter and compressor, the share
// of the session's input tokens that is a cached prefix (prefix-%), the
// turns whose prefix broke, and the bytes sent per turn.
func BenchmarkPrefixStability(b *testing.B) {
	mem := newMemory(b)
	for _, v := range vendors {
		for _, c := range compactions {
			b.Run(v.name+"/"+c.name, func(b *testing.B) {
				var res result
				for b.Loop() {
					res = session(b, v, recallHook(mem), full, c.new())
				}
				b.ReportMetric(100*res.share(), "prefix-%")
				b.ReportMetric(float64(res.breakCount()), "breaks")
				b.ReportMetric(float64(res.bytesSent)/float64(res.turns), "bytes/turn")
			})
		}
	}
}
