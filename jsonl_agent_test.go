package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonl"
)

// The runtime on a JSONL store: resume after a crash, one run per session,
// many sessions in parallel, and what a run leaves in the file.

type jsonlEchoIn struct {
	Text string `json:"text" validate:"required"`
}

func jsonlEchoTool() agentrt.Tool {
	return agentrt.NewTool("echo", "Echo the text.",
		func(_ context.Context, in jsonlEchoIn) (string, error) { return in.Text, nil }, agentrt.ReadOnly())
}

func TestJSONLResumeRepairsDanglingToolUse(t *testing.T) {
	t.Parallel()
	s, w := newWarnStore(t, nil)
	ctx := context.Background()
	// What a crash between starting two tool calls and finishing the second leaves.
	appendAll(t, s, "s1",
		agentrt.NewUserMessage("write two files"),
		agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("w1", "write", json.RawMessage(`{"path":"a"}`)),
			agentrt.ToolUseBlock("w2", "write", json.RawMessage(`{"path":"b"}`))),
		agentrt.NewToolMessage("w1", "ok", false))
	// ...and a half-written line after it.
	f, err := os.OpenFile(sessionFile(s, "s1"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"message","seq":4,"ts":"2026-01-02T03:04:05Z","message":{"role":"tool","tool_use_id":"w2","cont`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var ran atomic.Int32 // the write tool must not run again by itself
	write := agentrt.NewTool("write", "Write a file.", func(context.Context, struct {
		Path string `json:"path"`
	}) (string, error) {
		ran.Add(1)
		return "written", nil
	})
	script := agenttest.Script(agenttest.Reply("I was interrupted; shall I retry b?"))
	ag := &agentrt.Agent{Tools: []agentrt.Tool{write}, Planner: script, Store: s, Permission: agentrt.AllowAll()}
	events, err := agenttest.Collect(ag.Run(ctx, "s1", ""))
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)

	msgs := load(t, s, "s1")
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5)
	assert.Equal(t, agentrt.NewToolMessage("w1", "ok", false), msgs[2])
	assert.Equal(t, "w2", msgs[3].ToolUseID)
	assert.True(t, msgs[3].IsError)
	assert.Contains(t, msgs[3].Content, "interrupted")
	assert.Equal(t, "I was interrupted; shall I retry b?", msgs[4].Text())
	require.Len(t, script.Requests(), 1)
	assert.Equal(t, msgs[:4], script.Requests()[0].Messages, "the planner sees the repaired history")
	assert.Zero(t, ran.Load(), "a tool is never re-run by itself")
	require.NoError(t, s.Verify(ctx, "s1"), "the partial line is gone from the file")
	warns := w.take()
	// Skipped by Load, and by LoadRecords (open tool_uses may be calls
	// pending a person's decision), then removed by the first append.
	require.Len(t, warns, 3, "the tail was skipped by Load and LoadRecords, then removed by the first append")
	var tail *jsonl.LineError
	for _, w := range warns[:2] {
		require.ErrorAs(t, w, &tail)
		assert.True(t, tail.Tail)
		assert.False(t, tail.Repaired)
	}
	require.ErrorAs(t, warns[2], &tail)
	assert.True(t, tail.Tail)
	assert.True(t, tail.Repaired)
	assert.Equal(t, 5, tail.Line)
}

func TestJSONLConcurrentRunsOnOneSession(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	script := agenttest.Script(agenttest.Func(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		close(entered)
		<-release
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("first"))}, nil
	}))
	ag := &agentrt.Agent{Planner: script, Store: s}
	other := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("never")), Store: s}
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() { _, err := agenttest.Collect(ag.Run(ctx, "s1", "one")); errc <- err }()
	<-entered
	// A second run on the session, by the same or another agent, is refused at once.
	_, err := agenttest.Collect(ag.Run(ctx, "s1", "two"))
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	_, err = agenttest.Collect(other.Run(ctx, "s1", "three"))
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	// A second store on the same directory (as another process) too.
	s2, err := agentrt.NewJSONLStore(s.Dir(), nil)
	require.NoError(t, err)
	defer s2.Close()
	_, err = agenttest.Collect((&agentrt.Agent{Planner: agenttest.Script(), Store: s2}).Run(ctx, "s1", "four"))
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	close(release)
	require.NoError(t, <-errc)

	msgs := load(t, s, "s1")
	require.Len(t, msgs, 2, "the refused runs wrote nothing")
	assert.Equal(t, "one", msgs[0].Content)
	assert.Equal(t, "first", msgs[1].Text())
	// Once the run is over, the session is free.
	next := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("second")), Store: s}
	_, err = agenttest.Collect(next.Run(ctx, "s1", "again"))
	require.NoError(t, err)
	assert.Len(t, load(t, s, "s1"), 4)
}

func TestJSONLParallelRuns(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, nil)
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentrt.RoleUser {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("c"+fmt.Sprint(len(req.Messages)), "echo", json.RawMessage(fmt.Sprintf(`{"text":%q}`, last.Content))))}, nil
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("echoed " + last.Content))}, nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{jsonlEchoTool()}, Planner: planner, Store: s}
	const sessions, runs = 12, 3
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			for r := range runs {
				events, err := agenttest.Collect(ag.Run(context.Background(), id, fmt.Sprintf("%s-%d", id, r)))
				if !assert.NoError(t, err) {
					return
				}
				done, _ := agenttest.Done(events)
				assert.Equal(t, fmt.Sprintf("echoed %s-%d", id, r), done.FinalText)
			}
		})
	}
	wg.Wait()
	ctx := context.Background()
	infos, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, sessions)
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		msgs := load(t, s, id)
		agenttest.AssertInvariants(t, msgs)
		require.Len(t, msgs, 4*runs)
		for r := range runs {
			assert.Equal(t, fmt.Sprintf("%s-%d", id, r), msgs[4*r].Content)
		}
		require.NoError(t, s.Verify(ctx, id))
	}
}

func TestJSONLRunWritesAheadAndAudits(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, nil)
	ctx := context.Background()
	save := agentrt.NewTool("save", "Save text.", func(_ context.Context, in jsonlEchoIn) (string, error) { return "saved", nil })
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("echo", `{"text":"hi"}`), agenttest.ToolUse("save", `{"text":"x"}`)).
			WithUsage(agentrt.Usage{InputTokens: 10, OutputTokens: 5}),
		agenttest.Reply("done").WithUsage(agentrt.Usage{InputTokens: 20, OutputTokens: 2}))
	ask := agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		return agentrt.Decision{Allow: true}, nil
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{jsonlEchoTool(), save}, Planner: script, Store: s, Permission: ask}
	_, err := agenttest.Collect(ag.Run(ctx, "audit", "go"))
	require.NoError(t, err)

	var kinds []string
	var perm json.RawMessage
	for r, err := range s.Lines(ctx, "audit") {
		require.NoError(t, err)
		k := r.Kind
		if r.Kind == jsonl.KindMessage {
			var m agentrt.Message
			require.NoError(t, json.Unmarshal(r.Message, &m))
			k = string(m.Role)
		}
		if agentrt.RecordKind(r.Kind) == agentrt.RecordPermission {
			perm = r.Data
		}
		kinds = append(kinds, k)
	}
	// The calls are in the file before their results, the decision on the
	// write tool before its result, and the usage of each planner call
	// after its message; the trace of the first model call right after
	// its message (the store syncs: write-ahead), that of its tool calls
	// before the next planner call, and the run's (with its last turn) at
	// the end.
	assert.Equal(t, "header user assistant turn usage tool permission tool turn assistant usage run", strings.Join(kinds, " "))
	assert.JSONEq(t, `{"tool_use_id":"call_2","tool":"save","allow":true,"source":"user"}`, string(perm))
	agenttest.AssertInvariants(t, load(t, s, "audit"))
}
