package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// tinyPNG is a 1x1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func TestJSONLLoadsCheckedInV1Session(t *testing.T) {
	t.Parallel()
	// testdata/session-v1.jsonl was written by JSONLStore before content
	// parts existed (format v1, commit 730dd39), with Anthropic thinking
	// carried in a tool_use block's Signature as that version did.
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/session-v1.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v1.jsonl"), b, 0o600))
	s, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	msgs, err := s.Load(ctx, "v1")
	require.NoError(t, err)
	require.Len(t, msgs, 8)
	assert.Equal(t, agentrt.NewUserMessage("What is 2+40?"), msgs[0])
	use := msgs[1].ToolUses()
	require.Len(t, use, 1)
	assert.Equal(t, "add", use[0].Name)
	assert.JSONEq(t, `{"a":2,"b":40}`, string(use[0].Input))
	assert.Contains(t, string(use[0].Signature), `"anthropic_thinking"`)
	assert.Equal(t, agentrt.NewToolMessage("toolu_02", "permission denied", true), msgs[6])
	assert.Equal(t, "I may not delete it.", msgs[7].Text())

	// The session goes on in the current form: a user turn with an image.
	require.NoError(t, s.Append(ctx, "v1", agentrt.NewUserMessage("And this?", agentrt.ImageBlock("image/png", tinyPNG))))
	msgs, err = s.Load(ctx, "v1")
	require.NoError(t, err)
	require.Len(t, msgs, 9)
	assert.Equal(t, tinyPNG, msgs[8].Blocks[0].Data)
}

func TestContentRoundTripsThroughJSONL(t *testing.T) {
	t.Parallel()
	s, err := agentrt.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	want := []agentrt.Message{
		agentrt.NewUserMessage("Compare these.",
			agentrt.ImageBlock("image/png", tinyPNG),
			agentrt.DocumentBlock("notes.txt", "text/plain", []byte("hello")),
			agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/a.png"}),
		agentrt.NewAssistantMessage(
			agentrt.Block{Type: agentrt.BlockThinking, Text: "look first", Signature: []byte("sig-a"), Provider: "anthropic"},
			agentrt.Block{Type: agentrt.BlockThinking, Signature: []byte("encrypted"), Redacted: true, Provider: "anthropic"},
			agentrt.ToolUseBlock("c1", "shot", json.RawMessage(`{}`))),
		{Role: agentrt.RoleTool, ToolUseID: "c1", Content: "the screen", Blocks: []agentrt.Block{agentrt.ImageBlock("image/png", tinyPNG)}},
	}
	for _, m := range want {
		require.NoError(t, s.Append(ctx, "c", m))
	}
	got, err := s.Load(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// The line is plain JSON that jq reads: the image's bytes are base64.
	raw, err := os.ReadFile(filepath.Join(s.Dir(), "c.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var rec struct {
		Message struct {
			Blocks []map[string]any `json:"blocks"`
		} `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &rec))
	assert.Equal(t, "image", rec.Message.Blocks[0]["type"])
	assert.Equal(t, "image/png", rec.Message.Blocks[0]["media_type"])
	assert.Equal(t, "iVBORw0KGgo", rec.Message.Blocks[0]["data"].(string)[:11])
}

func TestRunPartsSendsImage(t *testing.T) {
	t.Parallel()
	p := agenttest.Script(agenttest.Reply("a red dot"))
	ag := &agentrt.Agent{Planner: p}
	events, err := agenttest.Collect(ag.RunParts(context.Background(), "s", "What is this?", agentrt.ImageBlock("image/png", tinyPNG)))
	require.NoError(t, err)
	assert.Equal(t, "a red dot", events[len(events)-1].(agentrt.Done).FinalText)
	reqs := p.Requests()
	require.Len(t, reqs, 1)
	user := reqs[0].Messages[0]
	assert.Equal(t, "What is this?", user.Content)
	require.Len(t, user.Blocks, 1)
	assert.Equal(t, agentrt.BlockImage, user.Blocks[0].Type)
	assert.Equal(t, tinyPNG, user.Blocks[0].Data)

	// An image alone is input enough for a new session.
	p2 := agenttest.Script(agenttest.Reply("ok"))
	_, err = agenttest.Collect((&agentrt.Agent{Planner: p2}).RunParts(context.Background(), "s2", "", agentrt.ImageBlock("image/png", tinyPNG)))
	require.NoError(t, err)
	assert.Equal(t, "[image image/png 70 bytes]", p2.Requests()[0].Messages[0].String()[len("user: "):])
}

type shotIn struct {
	Caption bool `json:"caption"`
}

func TestTypedToolReturnsParts(t *testing.T) {
	t.Parallel()
	shot := agentrt.NewTool("screenshot", "Take a screenshot.", func(_ context.Context, in shotIn) ([]agentrt.Block, error) {
		parts := []agentrt.Block{agentrt.ImageBlock("image/png", tinyPNG)}
		if in.Caption {
			parts = append([]agentrt.Block{agentrt.TextBlock("the screen")}, parts...)
		}
		return parts, nil
	}, agentrt.ReadOnly())
	_, ok := shot.(agentrt.ContentTool)
	require.True(t, ok, "NewTool with a []Block result is a ContentTool")

	// Execute, for callers that take text only, describes the image.
	in, err := shot.Decode(json.RawMessage(`{"caption":true}`))
	require.NoError(t, err)
	text, err := shot.Execute(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "the screen\n[image image/png 70 bytes]", text)

	p := agenttest.Script(agenttest.CallTool("screenshot", `{"caption":true}`), agenttest.Reply("I see a dot"))
	ag := &agentrt.Agent{Planner: p, Tools: []agentrt.Tool{shot}}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "Look at the screen."))
	require.NoError(t, err)
	var res *agentrt.ToolResult
	for _, ev := range events {
		if r, ok := ev.(agentrt.ToolResult); ok {
			res = &r
		}
	}
	require.NotNil(t, res)
	assert.Equal(t, "the screen", res.Message.Content)
	require.Len(t, res.Message.Blocks, 1)
	assert.Equal(t, tinyPNG, res.Message.Blocks[0].Data)
	// The model's next request carries the image in the tool result.
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, agentrt.RoleTool, last.Role)
	assert.Equal(t, res.Message, last)
}

func TestUsageCountsReasoningAndCache(t *testing.T) {
	t.Parallel()
	u1 := agentrt.Usage{InputTokens: 1000, OutputTokens: 300, ReasoningTokens: 200, CacheReadTokens: 600, CacheWriteTokens: 100}
	u2 := agentrt.Usage{InputTokens: 500, OutputTokens: 50, ReasoningTokens: 10, CacheReadTokens: 400}
	p := agenttest.Script(agenttest.CallTool("nope", `{}`).WithUsage(u1), agenttest.Reply("done").WithUsage(u2))
	s, err := agentrt.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	ag := &agentrt.Agent{Planner: p, Store: s}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.NoError(t, err)
	done := events[len(events)-1].(agentrt.Done)
	var perCall []agentrt.Usage
	for _, m := range agenttest.Filter[agentrt.AssistantMessage](events) {
		perCall = append(perCall, m.Usage)
	}
	assert.Equal(t, []agentrt.Usage{u1, u2}, perCall, "each AssistantMessage event has its call's usage")
	want := agentrt.Usage{InputTokens: 1500, OutputTokens: 350, ReasoningTokens: 210, CacheReadTokens: 1000, CacheWriteTokens: 100}
	assert.Equal(t, want, done.Usage)

	// Reasoning is output; cache reads and writes have their own prices.
	prices := agentrt.Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	cost := (400*3 + 350*15 + 1000*0.3 + 100*3.75) / 1e6
	assert.InDelta(t, cost, prices.Cost(done.Usage), 1e-12)

	// The usage records of the session carry them, one per planner call.
	var usage []string
	for rec, err := range s.Lines(context.Background(), "s") {
		require.NoError(t, err)
		if agentrt.RecordKind(rec.Kind) == agentrt.RecordUsage {
			usage = append(usage, string(rec.Data))
		}
	}
	require.Len(t, usage, 2)
	assert.JSONEq(t, `{"turn":1,"usage":{"input_tokens":1000,"output_tokens":300,"reasoning_tokens":200,"cache_read_tokens":600,"cache_write_tokens":100}}`, usage[0])
	assert.JSONEq(t, `{"turn":2,"usage":{"input_tokens":500,"output_tokens":50,"reasoning_tokens":10,"cache_read_tokens":400}}`, usage[1])
}

func TestFinalAnswerUsesToolChoiceNone(t *testing.T) {
	t.Parallel()
	tool := agentrt.NewTool("noop", "Do nothing.", func(context.Context, shotIn) (string, error) { return "ok", nil }, agentrt.ReadOnly())
	p := agenttest.Script(agenttest.CallTool("noop", `{}`), agenttest.Reply("stopping"))
	ag := &agentrt.Agent{Planner: p, Tools: []agentrt.Tool{tool}, MaxTurns: 1}
	events, err := agenttest.Collect(ag.Run(context.Background(), "s", "go"))
	require.True(t, err == nil || errors.Is(err, agentrt.ErrMaxTurns), "%v", err)
	done := events[len(events)-1].(agentrt.Done)
	assert.Equal(t, agentrt.StopMaxTurns, done.Reason)
	assert.Equal(t, "stopping", done.FinalText)
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, agentrt.ToolChoice{}, reqs[0].ToolChoice)
	// The final answer keeps the tools (the same prompt prefix, cached)
	// and forbids calling them.
	assert.Equal(t, agentrt.ToolChoice{Mode: "none"}, reqs[1].ToolChoice)
	assert.Len(t, reqs[1].Tools, 1)
}

func TestMessageStringShowsParts(t *testing.T) {
	t.Parallel()
	m := agentrt.Message{Role: agentrt.RoleTool, ToolUseID: "c1", Content: "shot", Blocks: []agentrt.Block{
		agentrt.DocumentBlock("a.pdf", "application/pdf", []byte("%PDF")),
		{Type: agentrt.BlockImage, URL: "https://x/y.png"},
	}}
	assert.Equal(t, "tool c1: shot [document a.pdf application/pdf 4 bytes] [image https://x/y.png]", m.String())
	a := agentrt.NewAssistantMessage(agentrt.Block{Type: agentrt.BlockThinking, Redacted: true, Provider: "anthropic"}, agentrt.TextBlock("hi"))
	assert.Equal(t, "assistant: [thinking anthropic: (redacted)] hi", a.String())
	assert.Equal(t, "hi", a.Text())
	u := agentrt.NewUserMessage("", agentrt.TextBlock("a"), agentrt.ImageBlock("image/png", tinyPNG), agentrt.TextBlock("b"))
	assert.Equal(t, "ab", u.Text())
}

// A screenshot tool called again and again with the same input and the
// same text is not a loop while its image changes; it is once the image
// stays the same.
func TestLoopGuardSeesImages(t *testing.T) {
	t.Parallel()
	for _, changing := range []bool{true, false} {
		var n atomic.Int32
		shot := agentrt.NewTool("shot", "Screenshot.", func(context.Context, struct{}) ([]agentrt.Block, error) {
			img := []byte{byte(n.Add(1))}
			if !changing {
				img = []byte{7}
			}
			return []agentrt.Block{agentrt.TextBlock("the screen"), agentrt.ImageBlock("image/png", img)}, nil
		}, agentrt.ReadOnly())
		steps := make([]agenttest.Step, 0, 7)
		for range 6 {
			steps = append(steps, agenttest.CallTool("shot", `{}`))
		}
		ag := &agentrt.Agent{Tools: []agentrt.Tool{shot}, Planner: agenttest.Script(append(steps, agenttest.Reply("ok"))...)}
		events, err := agenttest.Collect(ag.Run(context.Background(), "s", "watch"))
		require.NoError(t, err)
		done, _ := agenttest.Done(events)
		if changing {
			assert.Equal(t, agentrt.StopComplete, done.Reason)
		} else {
			assert.Equal(t, agentrt.StopLoopDetected, done.Reason)
		}
	}
}
