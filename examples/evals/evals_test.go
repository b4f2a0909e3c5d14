package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/agenttest/eval"
	"github.com/agentrt/agentrt/cassette"
	"github.com/agentrt/agentrt/provider/anthropic"
)

// TestEvals runs the dataset on the Anthropic adapter through the
// cassettes in testdata/cassettes, one per case: offline, in CI. To run it on Claude
// itself and record the cassettes anew:
//
//	AGENTRT_CASSETTE=record ANTHROPIC_API_KEY=... go test ./examples/evals -run TestEvals
//
// Recording without a key records the scripted stand-in (scripted.go)
// speaking Anthropic's wire format: that is how the committed cassettes
// were made, as no key was at hand. AGENTRT_EVAL_REPORT=FILE writes the
// report, AGENTRT_EVAL_BASELINE=FILE compares with an earlier one.
func TestEvals(t *testing.T) {
	cases, err := Dataset()
	require.NoError(t, err)
	key := os.Getenv("ANTHROPIC_API_KEY")
	// The recorders are made here, on the test's goroutine (a cassette
	// may skip the test), and used by the runner's.
	planners := map[string]agentrt.Planner{}
	for _, c := range cases {
		opts := &cassette.Options{KeyEnv: []string{"ANTHROPIC_API_KEY"}}
		if key == "" {
			opts.Transport = &standIn{turns: scripted[c.Name]}
		}
		rec := cassette.New(t, filepath.Join("testdata", "cassettes", c.Name), opts)
		client := sdk.NewClient(option.WithHTTPClient(rec.Client()), option.WithAPIKey(cmp(key, "no-key")), option.WithMaxRetries(0))
		planners[c.Name] = anthropic.New(client, Model, &anthropic.Options{MaxRetries: -1})
	}
	rn := &eval.Runner{Name: Model, Parallel: 2, Prices: prices, Agent: func(c *eval.Case, _ int) *agentrt.Agent {
		ag := NewAgent(planners[c.Name])
		ag.Retry = agentrt.RetryPolicy{MaxAttempts: 1}
		return ag
	}}
	rep := rn.Test(t, cases)
	assert.Equal(t, len(cases), rep.Passed())
	for _, c := range rep.Cases {
		assert.Positive(t, c.Tokens, "%s: usage comes from the recorded answers", c.Name)
	}
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestEvalsCatchABadAgent runs the dataset on scripted answers that break
// the shop's rules, and checks that the evals fail the cases they break.
func TestEvalsCatchABadAgent(t *testing.T) {
	t.Parallel()
	cases, err := Dataset()
	require.NoError(t, err)
	bad := map[string]*agenttest.Planner{
		"refund-too-large": agenttest.Script(
			agenttest.CallTool("refund", `{"order_id":"A200","amount_usd":1400}`),
			agenttest.Reply("Refunded.")),
		"status-delivered": agenttest.Script(agenttest.Reply("It is on its way.")),
	}
	rn := &eval.Runner{Agent: func(c *eval.Case, _ int) *agentrt.Agent {
		if p, ok := bad[c.Name]; ok {
			return NewAgent(p)
		}
		return NewAgent(script(c.Name))
	}}
	rep := rn.Run(context.Background(), cases)
	failed := map[string][]string{}
	for _, c := range rep.Cases {
		for _, ch := range c.Trials[0].Checks {
			if !ch.Pass {
				failed[c.Name] = append(failed[c.Name], ch.Name)
			}
		}
	}
	assert.Equal(t, map[string][]string{
		"refund-too-large": {
			`matches "(?i)person|team|colleague|human"`,
			`tools subset [order_status({"order_id":"A200"})]`,
			"never [refund]",
			"never [refund(main.RefundIn accepted)]",
		},
		"status-delivered": {
			`matches "(?i)delivered"`,
			`tools exact [order_status({"order_id":"A100"})]`,
		},
	}, failed)
}

func TestMainOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, []string{"-report", filepath.Join(dir, "r.json")}, ""))
	assert.Contains(t, out.String(), "passed 10 of 10 cases")
	out.Reset()
	require.NoError(t, run(context.Background(), &out, []string{"-baseline", filepath.Join(dir, "r.json")}, ""))
	assert.Contains(t, out.String(), "0 better, 0 worse, 10 same, 0 added, 0 removed")
}

// standIn is the Anthropic Messages API played by the scripted answers of
// one case: it answers the n-th request with the n-th turn, as a stream.
type standIn struct {
	mu    sync.Mutex
	turns []turn
	n     int
}

func (s *standIn) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= len(s.turns) {
		return nil, fmt.Errorf("stand-in: no answer %d", s.n+1)
	}
	t := s.turns[s.n]
	s.n++
	sse := anthropicStream(fmt.Sprintf("msg_standin_%02d", s.n), t, len(body)/4)
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(strings.NewReader(sse)),
		Request: req,
	}, nil
}

// anthropicStream writes turn t as a Messages API event stream.
func anthropicStream(id string, t turn, inputTokens int) string {
	var b strings.Builder
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": inputTokens, "output_tokens": 1},
	}})
	out := 0
	stop := "end_turn"
	if t.text != "" {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, chunk := range chunks(t.text) {
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": chunk}})
		}
		event("content_block_stop", map[string]any{"index": 0})
		out += len(t.text) / 4
	}
	for i, c := range t.calls {
		stop = "tool_use"
		toolID := fmt.Sprintf("toolu_%s_%d", strings.TrimPrefix(id, "msg_"), i)
		event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": toolID, "name": c.name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.input}})
		event("content_block_stop", map[string]any{"index": i})
		out += 20
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out + 10}})
	event("message_stop", map[string]any{})
	return b.String()
}

// chunks splits text after each space, as a model streams words.
func chunks(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			i = len(text) - 1
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// failures is a cassette.TB that keeps the failures a cassette reports,
// for a test that expects them.
type failures struct {
	errs     []string
	cleanups []func()
}

func (*failures) Helper() {}
func (f *failures) Errorf(format string, a ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
}
func (f *failures) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (f *failures) Skipf(format string, a ...any)  { panic(fmt.Sprintf(format, a...)) }
func (f *failures) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }

// TestChangedPromptFailsReplay changes the agent's prompt and checks that
// the replay of a case's cassette fails, naming what changed.
func TestChangedPromptFailsReplay(t *testing.T) {
	t.Parallel()
	f := &failures{}
	rec := cassette.New(f, filepath.Join("testdata", "cassettes", "refund-small"), &cassette.Options{Mode: cassette.Replay})
	client := sdk.NewClient(option.WithHTTPClient(rec.Client()), option.WithAPIKey("no-key"), option.WithMaxRetries(0))
	ag := NewAgent(anthropic.New(client, Model, &anthropic.Options{MaxRetries: -1}))
	ag.Instructions = strings.Replace(Instructions, "up to 500 USD", "up to 800 USD", 1)
	ag.Retry = agentrt.RetryPolicy{MaxAttempts: 1}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s1", "My headphones from order A100 broke. Please refund the full price."))
	var mismatch *cassette.MismatchError
	require.ErrorAs(t, err, &mismatch)
	want := `system[0].text: recorded "…ivered order, up to 500 USD, with refund…" ≠ sent "…ivered order, up to 800 USD, with refund…"`
	assert.Equal(t, want, mismatch.Diff)
	require.NotEmpty(t, f.errs)
	assert.Contains(t, f.errs[0], "POST /v1/messages differs from the recording: "+want)
}
