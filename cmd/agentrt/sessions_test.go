package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/summarize"
	"github.com/agentrt/agentrt/timeline"
)

// The sessions the golden tests render are recorded by running real agent
// code (scripted planners, real tools, permissions, hooks, limits and the
// JSONL store) into a directory; the store's clock is fixed so that line
// times do not depend on the wall clock (durations are normalised).

type addIn struct {
	A int `json:"a" validate:"required"`
	B int `json:"b" validate:"required"`
}

func addTool() agentrt.Tool {
	return agentrt.NewTool("add", "Add two integers.", func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
}

type pathIn struct {
	Path string `json:"path" validate:"required"`
}

func readTool() agentrt.Tool {
	return agentrt.NewTool("read_file", "Read a file.", func(_ context.Context, in pathIn) (string, error) {
		if in.Path == "missing.go" {
			return "", errors.New("open missing.go: no such file or directory")
		}
		if strings.HasPrefix(in.Path, "part") {
			return "package main\n\n// " + strings.Repeat("lorem ipsum dolor sit amet ", 20) + "\n", nil
		}
		return "package main\n\nfunc main() {}\n", nil
	}, agentrt.ReadOnly())
}

func deleteTool() agentrt.Tool {
	return agentrt.NewTool("delete_file", "Delete a file.", func(_ context.Context, in pathIn) (string, error) { return "deleted " + in.Path, nil })
}

type urlIn struct {
	URL string `json:"url" validate:"required"`
}

func fetchTool() agentrt.Tool {
	return agentrt.NewTool("fetch", "Fetch a URL.", func(_ context.Context, in urlIn) (string, error) { return "<html>", nil }, agentrt.ReadOnly())
}

// described gives a scripted planner a provider name and model, as a real
// provider has.
type described struct{ *agenttest.Planner }

func (described) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: "scripted", Model: "script-1"}
}

// fixedClock returns a clock that starts at a fixed time and advances one
// second per reading.
func fixedClock() func() time.Time {
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

// scenario is a recorded session and the layer its timeline must show.
type scenario struct {
	id      string
	layer   string // Session.FailingLayer
	stopped string // the last run's stop layer
	record  func(t *testing.T, store *agentrt.JSONLStore, id string)
}

func runAgent(t *testing.T, ag *agentrt.Agent, id, input string) {
	t.Helper()
	_, _ = agenttest.Collect(ag.Run(context.Background(), id, input))
}

var scenarios = []scenario{
	{id: "success", layer: "", stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		p := agenttest.Script(
			agenttest.CallTool("add", `{"a":2,"b":40}`).WithUsage(agentrt.Usage{InputTokens: 120, OutputTokens: 18}),
			agenttest.StreamReply("2 + 40 ", "is 42.").WithUsage(agentrt.Usage{InputTokens: 160, OutputTokens: 9, ReasoningTokens: 4, CacheReadTokens: 100}),
		)
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: described{p}, Store: s}, id, "What is 2+40?")
	}},
	{id: "tool-errors", layer: timeline.LayerTool, stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		p := agenttest.Script(
			agenttest.CallTools(agenttest.ToolUse("read_file", `{"path":"missing.go"}`), agenttest.ToolUse("add", `{"a":"two"}`)),
			agenttest.Reply("missing.go does not exist, and I sent add a bad input."),
		)
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{readTool(), addTool()}, Planner: p, Store: s}, id, "Read missing.go and add two numbers.")
	}},
	{id: "denial", layer: timeline.LayerPermission, stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		p := agenttest.Script(
			agenttest.CallTools(agenttest.ToolUse("read_file", `{"path":"main.go"}`), agenttest.ToolUse("delete_file", `{"path":"old.go"}`)),
			agenttest.Reply("main.go holds an empty program; I was not allowed to delete old.go."),
		)
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{readTool(), deleteTool()}, Planner: p, Store: s}, id, "What is in main.go? Then delete old.go.")
	}},
	{id: "hook-block", layer: timeline.LayerHook, stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		p := agenttest.Script(
			agenttest.CallTool("fetch", `{"url":"https://example.com"}`),
			agenttest.Reply("I cannot reach the network here."),
		)
		block := agentrt.Hooks{BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
			if call.Tool.Name == "fetch" {
				return ctx, errors.New("no network access from this sandbox")
			}
			return ctx, nil
		}}
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{fetchTool()}, Planner: p, Store: s, Hooks: []agentrt.Hooks{block}}, id, "Fetch example.com")
	}},
	{id: "loop", layer: timeline.LayerLimit, stopped: timeline.LayerLimit, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		var steps []agenttest.Step
		for range 6 {
			steps = append(steps, agenttest.CallTool("add", `{"a":1,"b":1}`))
		}
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: agenttest.Script(steps...), Store: s, LoopGuard: agentrt.LoopGuard{Warn: 2, Stop: 3}}, id, "Add 1 and 1 until you are sure.")
	}},
	{id: "budget", layer: timeline.LayerLimit, stopped: timeline.LayerLimit, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		u := agentrt.Usage{InputTokens: 400, OutputTokens: 200}
		p := agenttest.Script(
			agenttest.CallTool("add", `{"a":1,"b":2}`).WithUsage(u),
			agenttest.CallTool("add", `{"a":3,"b":4}`).WithUsage(u),
		)
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: p, Store: s, Budget: agentrt.Budget{MaxTokens: 1000}, NoFinalAnswer: true}, id, "Add many numbers.")
	}},
	{id: "provider-failure", layer: timeline.LayerProvider, stopped: timeline.LayerProvider, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		overloaded := &agentrt.ProviderError{Provider: "scripted", StatusCode: 529, Kind: agentrt.ErrOverloaded, Message: "Overloaded"}
		p := agenttest.Script(
			agenttest.CallTool("add", `{"a":2,"b":2}`),
			agenttest.Fail(overloaded), agenttest.Fail(overloaded), agenttest.Fail(overloaded),
		)
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: described{p}, Store: s,
			Retry: agentrt.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}}, id, "What is 2+2?")
	}},
	{id: "compaction", layer: "", stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		var steps []agenttest.Step
		for i := range 4 {
			steps = append(steps, agenttest.CallTool("read_file", fmt.Sprintf(`{"path":"part%d.go"}`, i)))
		}
		steps = append(steps, agenttest.Reply("I read the four parts."))
		summarizer := agenttest.Script(agenttest.Reply("The user asked to read four files; parts 0 and 1 hold an empty main package."))
		ag := &agentrt.Agent{Tools: []agentrt.Tool{readTool()}, Planner: agenttest.Script(steps...), Store: s,
			Compressor: &summarize.Compressor{Planner: summarizer, Threshold: 400}}
		runAgent(t, ag, id, "Read part0.go to part3.go.")
	}},
	{id: "sub-agent", layer: "", stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		child := &agentrt.Agent{Name: "researcher", Tools: []agentrt.Tool{readTool()}, Store: s, Planner: agenttest.Script(
			agenttest.CallTool("read_file", `{"path":"main.go"}`),
			agenttest.Reply("main.go declares an empty main function."),
		)}
		p := agenttest.Script(
			agenttest.CallTool("researcher", `{"task":"Summarize main.go"}`),
			agenttest.Reply("The researcher says main.go declares an empty main function."),
		)
		tool := agentrt.AgentTool(child, "researcher", "Reads files and reports.")
		runAgent(t, &agentrt.Agent{Tools: []agentrt.Tool{tool}, Planner: p, Store: s}, id, "Ask the researcher about main.go.")
	}},
	{id: "crash", layer: timeline.LayerCrash, stopped: timeline.LayerNone, record: recordCrash},
	{id: "pending", layer: timeline.LayerPermission, stopped: timeline.LayerPermission, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		runAgent(t, approvalAgent(s, agenttest.Script(agenttest.CallTool("delete_file", `{"path":"old.go"}`))), id, "Delete old.go.")
	}},
	{id: "approved", layer: "", stopped: timeline.LayerNone, record: func(t *testing.T, s *agentrt.JSONLStore, id string) {
		ag := approvalAgent(s, agenttest.Script(
			agenttest.CallTool("delete_file", `{"path":"old.go"}`),
			agenttest.Reply("Deleted old.go, as you approved."),
		))
		runAgent(t, ag, id, "Delete old.go.")
		_, _ = agenttest.Collect(ag.Resume(context.Background(), id, agentrt.Decision{ToolUseID: "call_1", Allow: true, Source: "alice"}))
	}},
}

// approvalAgent leaves every write to a person (agentrt.Decision.Pending).
func approvalAgent(s *agentrt.JSONLStore, p agentrt.Planner) *agentrt.Agent {
	return &agentrt.Agent{Tools: []agentrt.Tool{deleteTool()}, Planner: p, Store: s,
		Permission: agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
			return agentrt.Decision{Pending: true}, nil
		})}
}

// recordAll records every scenario into a new directory.
func recordAll(t *testing.T) (string, *agentrt.JSONLStore) {
	t.Helper()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{Now: fixedClock()})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	for _, sc := range scenarios {
		sc.record(t, store, sc.id)
	}
	return dir, store
}

func TestScenarioLayers(t *testing.T) {
	t.Parallel()
	_, store := recordAll(t)
	for _, sc := range scenarios {
		s := agenttest.Timeline(t, store, sc.id)
		agenttest.AssertStoppedAt(t, s, sc.stopped)
		if got := s.FailingLayer(); got != sc.layer {
			t.Errorf("%s: failing layer %q, want %q", sc.id, got, sc.layer)
		}
		require.True(t, s.Traced, sc.id)
	}
	// Outcomes of single calls.
	agenttest.AssertCallOutcome(t, agenttest.Timeline(t, store, "tool-errors"), "call_1", timeline.OutcomeToolError)
	agenttest.AssertCallOutcome(t, agenttest.Timeline(t, store, "tool-errors"), "call_2", timeline.OutcomeInvalidInput)
	agenttest.AssertCallOutcome(t, agenttest.Timeline(t, store, "denial"), "call_2", timeline.OutcomeDenied)
	agenttest.AssertCallOutcome(t, agenttest.Timeline(t, store, "hook-block"), "call_1", timeline.OutcomeBlocked)
	agenttest.AssertCallOutcome(t, agenttest.Timeline(t, store, "crash"), "call_1", timeline.OutcomeInterrupted)
	agenttest.AssertFailingLayer(t, agenttest.Timeline(t, store, "denial"), timeline.LayerPermission)

	pf := agenttest.Timeline(t, store, "provider-failure")
	last := pf.LastRun().Turns[len(pf.LastRun().Turns)-1]
	require.Len(t, last.Model.Retries, 2)
	require.Equal(t, timeline.LayerProvider, last.Model.Layer)
	require.Equal(t, "scripted", last.Model.Provider)

	comp := agenttest.Timeline(t, store, "compaction")
	var compacted bool
	for _, tu := range comp.LastRun().Turns {
		compacted = compacted || tu.Compaction != nil && tu.Model.CompactionUpTo == tu.Compaction.UpTo
	}
	require.True(t, compacted, "a turn shows the compaction it used")

	sub := agenttest.Timeline(t, store, "sub-agent")
	require.NotNil(t, sub.LastRun().Turns[0].Calls[0].SubAgent)
}

func TestVerifyRecordedSessions(t *testing.T) {
	t.Parallel()
	dir, _ := recordAll(t)
	var out, errb strings.Builder
	args := []string{"verify"}
	for _, sc := range scenarios {
		args = append(args, dir+"/"+sc.id)
	}
	code := run(context.Background(), args, &out, &errb)
	require.Equal(t, 0, code, "%s%s", out.String(), errb.String())
	var findings []timeline.Finding
	out.Reset()
	require.Equal(t, 0, run(context.Background(), append([]string{"verify", "-json"}, args[1:]...), &out, &errb))
	require.NoError(t, json.Unmarshal([]byte(out.String()), &findings))
	require.Empty(t, findings)
}
