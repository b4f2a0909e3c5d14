package agentrt_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestClaimDefaultMaxTurns shows Agent.MaxTurns' "0 means 20": a planner
// that always calls a tool is stopped after 20 turns with max_turns (plus
// the final answer without tools, unless NoFinalAnswer).
func TestClaimDefaultMaxTurns(t *testing.T) {
	t.Parallel()
	for _, noFinal := range []bool{true, false} {
		t.Run(fmt.Sprintf("NoFinalAnswer=%v", noFinal), func(t *testing.T) {
			t.Parallel()
			var calls, final atomic.Int32
			planner := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
				n := calls.Add(1)
				if req.ToolChoice.Mode == "none" {
					final.Add(1)
					return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("best effort"))}, nil
				}
				// A new input every turn: the loop guard never fires.
				use := agentrt.ToolUseBlock(fmt.Sprintf("call_%d", n), "add", fmt.Appendf(nil, `{"a":%d,"b":1}`, n))
				return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(use), Finish: agentrt.FinishToolUse}, nil
			})
			ag := &agentrt.Agent{Planner: planner, Tools: []agentrt.Tool{addTool()}, NoFinalAnswer: noFinal}
			events, err := agenttest.Collect(ag.Run(context.Background(), "s", "loop forever"))
			require.NoError(t, err)
			done, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, agentrt.StopMaxTurns, done.Reason)
			assert.ErrorIs(t, done.Err(), agentrt.ErrMaxTurns)
			assert.Contains(t, done.Detail, "it made 20 turns without a final answer")
			assert.Len(t, agenttest.Filter[agentrt.ToolResult](events), 20, "20 turns of tool calls")
			if noFinal {
				assert.Equal(t, int32(20), calls.Load())
				assert.Equal(t, 20, done.Turns)
				assert.Zero(t, final.Load())
			} else {
				assert.Equal(t, int32(21), calls.Load())
				assert.Equal(t, 21, done.Turns)
				assert.Equal(t, int32(1), final.Load())
				assert.Equal(t, "best effort", done.FinalText)
			}
		})
	}
}

// TestClaimDefaultMaxParallelTools shows Agent.MaxParallelTools' "0 means
// 4": of eight read-only calls in one assistant message, exactly four run
// at once. Each call blocks on a gate; synctest.Wait returns once every
// goroutine is blocked, so the count of calls running then is the most
// that can run, with no sleep.
func TestClaimDefaultMaxParallelTools(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, want int
	}{{0, 4}, {2, 2}, {8, 8}} {
		t.Run(fmt.Sprintf("MaxParallelTools=%d", tc.max), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				const calls = 8
				gate := make(chan struct{})
				var running atomic.Int32
				tool := agentrt.NewTool("wait", "Waits at the gate.", func(context.Context, struct{}) (string, error) {
					running.Add(1)
					<-gate
					running.Add(-1)
					return "passed", nil
				}, agentrt.ReadOnly())
				uses := make([]agenttest.Use, calls)
				for i := range uses {
					uses[i] = agenttest.ToolUse("wait", `{}`)
				}
				script := agenttest.Script(agenttest.CallTools(uses...), agenttest.Reply("ok"))
				ag, _ := newAgent(script, tool)
				ag.MaxParallelTools = tc.max

				// The gate keeper lets one call through at a time, each time
				// once every goroutine of the bubble is blocked.
				var seen []int32
				kept := make(chan struct{})
				go func() {
					defer close(kept)
					for range calls {
						synctest.Wait()
						seen = append(seen, running.Load())
						gate <- struct{}{}
					}
				}()
				events, err := agenttest.Collect(ag.Run(t.Context(), "s1", "go"))
				<-kept
				require.NoError(t, err)
				assert.Len(t, agenttest.Filter[agentrt.ToolResult](events), calls)
				want := make([]int32, calls)
				for i := range want {
					want[i] = int32(min(tc.want, calls-i))
				}
				assert.Equal(t, want, seen, "calls running at once, before each one finished")
			})
		})
	}
}

// TestClaimDefaultMaxToolOutput shows Agent.MaxToolOutput: 0 means 64 KiB
// (a longer output is cut with a note saying how much was cut, and the
// whole output is in ToolResult.FullOutput); a negative value means no
// cap.
func TestClaimDefaultMaxToolOutput(t *testing.T) {
	t.Parallel()
	const kib64 = 64 << 10
	tests := []struct {
		name     string
		max      int
		size     int
		wantCut  bool
		wantSize int // of what the model sees, before the note
	}{
		{"default, 64 KiB exactly", 0, kib64, false, kib64},
		{"default, one byte more", 0, kib64 + 1, true, kib64},
		{"default, far more", 0, 1 << 20, true, kib64},
		{"negative, no cap", -1, 1 << 20, false, 1 << 20},
		{"explicit cap", 1000, 1001, true, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := strings.Repeat("x", tc.size)
			tool := agentrt.NewTool("big", "Big output.", func(context.Context, struct{}) (string, error) { return out, nil }, agentrt.ReadOnly())
			script := agenttest.Script(agenttest.CallTool("big", `{}`), agenttest.Reply("ok"))
			ag, store := newAgent(script, tool)
			ag.MaxToolOutput = tc.max
			events, msgs, err := runAgent(t, ag, store, "go")
			require.NoError(t, err)
			res := lastResults(events)
			require.Len(t, res, 1)
			want := out[:tc.wantSize]
			if tc.wantCut {
				want += fmt.Sprintf("\n[agentrt: output truncated: showing the first %d of %d bytes]", tc.wantSize, tc.size)
				assert.Equal(t, out, res[0].FullOutput, "the whole output is in ToolResult.FullOutput")
			} else {
				assert.Empty(t, res[0].FullOutput, "FullOutput is empty when nothing was cut")
			}
			assert.Equal(t, want, res[0].Message.Content)
			assert.False(t, res[0].Message.IsError)
			assert.Equal(t, res[0].Message, msgs[2], "the session keeps what the model saw")
			assert.Equal(t, want, script.Requests()[1].Messages[2].Content, "the model sees the cut output")
		})
	}
}
