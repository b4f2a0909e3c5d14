package agentrt_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// TestDefaultMaxParallelTools shows Agent.MaxParallelTools' "0 means
// 4": of eight read-only calls in one assistant message, exactly four run
// at once. Each call blocks on a gate; synctest.Wait returns once every
// goroutine is blocked, so the count of calls running then is the most
// that can run, with no sleep.
func TestDefaultMaxParallelTools(t *testing.T) {
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

// TestDefaultMaxToolOutput shows Agent.MaxToolOutput: 0 means 64 KiB
// (a longer output is cut with a note saying how much was cut, and the
// whole output is in ToolResult.FullOutput); a negative value means no
// cap.
func TestDefaultMaxToolOutput(t *testing.T) {
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

// stubbornIn is the input of stubbornTool: Work is
// how long the call works, in virtual time (synctest), whatever its
// context says.
type stubbornIn struct {
	Work string `json:"work"`
}

// stubbornTool returns a read-only tool that works for its input's
// duration, ignoring its context, then succeeds with "finished <name>";
// returned counts the calls that have returned.
func stubbornTool(name string, returned *atomic.Int32, opts ...agentrt.ToolOption) agentrt.Tool {
	opts = append([]agentrt.ToolOption{agentrt.ReadOnly()}, opts...)
	return agentrt.NewTool(name, "Works for a while and ignores its context.", func(_ context.Context, in stubbornIn) (string, error) {
		d, err := time.ParseDuration(in.Work)
		if err != nil {
			return "", err
		}
		time.Sleep(d) // virtual: the test runs in a synctest bubble
		returned.Add(1)
		return "finished " + name, nil
	}, opts...)
}

// TestToolTimeout shows what README ("A tool's timeout ... cancels its
// context; if the tool ignores that and returns later, its late output is
// discarded and the model gets the "timed out" result, but Run still waits
// for it to return"), Agent.ToolTimeout ("bounds each call of a tool that has
// no timeout of its own") and WithTimeout say, and that a tool's own
// WithTimeout wins over Agent.ToolTimeout whether it is shorter or longer.
// Time is synctest's virtual clock, so durations are exact.
func TestToolTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		agentTimeout time.Duration
		toolTimeout  time.Duration // WithTimeout; 0 for none
		work         time.Duration
		want         string // the result the model sees
		wantErr      bool
	}{
		{"Agent.ToolTimeout bounds a tool without its own", 2 * time.Second, 0, 5 * time.Second,
			`tool "slow" timed out after 2s`, true},
		{"a shorter WithTimeout wins", 10 * time.Second, time.Second, 5 * time.Second,
			`tool "slow" timed out after 1s`, true},
		{"a longer WithTimeout wins and times out at its own limit", time.Second, 10 * time.Second, 15 * time.Second,
			`tool "slow" timed out after 10s`, true},
		{"a longer WithTimeout wins and lets the call finish", time.Second, 10 * time.Second, 5 * time.Second,
			"finished slow", false},
		{"no timeout at all", 0, 0, time.Hour, "finished slow", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var returned atomic.Int32
				var opts []agentrt.ToolOption
				if tc.toolTimeout > 0 {
					opts = append(opts, agentrt.WithTimeout(tc.toolTimeout))
				}
				script := agenttest.Script(
					agenttest.CallTool("slow", fmt.Sprintf(`{"work":%q}`, tc.work)),
					agenttest.Reply("ok"))
				ag, store := newAgent(script, stubbornTool("slow", &returned, opts...))
				ag.ToolTimeout = tc.agentTimeout

				var called time.Time
				var res []agentrt.ToolResult
				for ev, err := range ag.Run(t.Context(), "s1", "go") {
					require.NoError(t, err)
					switch e := ev.(type) {
					case agentrt.ToolCall:
						called = time.Now()
					case agentrt.ToolResult:
						// Run waited for the tool to return, even past its timeout.
						assert.Equal(t, int32(1), returned.Load(), "the tool has returned when its result is yielded")
						assert.Equal(t, tc.work, time.Since(called), "the result comes when the tool returns, not at the timeout")
						res = append(res, e)
					}
				}
				script.AssertDone(t)
				require.Len(t, res, 1)
				assert.Equal(t, tc.want, res[0].Message.Content, "the late output is discarded")
				assert.Equal(t, tc.wantErr, res[0].Message.IsError)
				assert.Equal(t, tc.work, res[0].Duration, "Duration is how long Execute took")
				if tc.wantErr {
					assert.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
				} else {
					assert.NoError(t, res[0].Err)
				}
				msgs, err := store.Load(t.Context(), "s1")
				require.NoError(t, err)
				agenttest.AssertInvariants(t, msgs)
				require.Len(t, msgs, 4)
				assert.Equal(t, res[0].Message, msgs[2], "the session keeps what the model saw")
				// The next planner call sees the timeout result.
				reqs := script.Requests()
				require.Len(t, reqs, 2)
				assert.Equal(t, tc.want, reqs[1].Messages[2].Content)
			})
		})
	}
}

// TestToolTimeoutInParallelGroup: the same holds for a call of a group
// of read-only calls run together, and the group's other calls are not
// affected: each gets its own result, in tool_use order, and the group ends
// (the next planner call) only when the stubborn call has returned.
func TestToolTimeoutInParallelGroup(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var returned atomic.Int32
		script := agenttest.Script(
			agenttest.CallTools(
				agenttest.ToolUse("slow", `{"work":"5s"}`),      // Agent.ToolTimeout 2s: timed out
				agenttest.ToolUse("slow", `{"work":"0s"}`),      // fine
				agenttest.ToolUse("short", `{"work":"3s"}`),     // its own 500ms: timed out
				agenttest.ToolUse("long", `{"work":"4s"}`),      // its own 10s: fine
				agenttest.ToolUse("slow", `{"work":"1500ms"}`)), // under 2s: fine
			agenttest.Reply("ok"))
		ag, store := newAgent(script,
			stubbornTool("slow", &returned),
			stubbornTool("short", &returned, agentrt.WithTimeout(500*time.Millisecond)),
			stubbornTool("long", &returned, agentrt.WithTimeout(10*time.Second)))
		ag.ToolTimeout = 2 * time.Second
		ag.MaxParallelTools = 5 // the whole group at once

		start := time.Now()
		var res []agentrt.ToolResult
		var resultAt []time.Duration
		for ev, err := range ag.Run(t.Context(), "s1", "go") {
			require.NoError(t, err)
			if e, ok := ev.(agentrt.ToolResult); ok {
				res = append(res, e)
				resultAt = append(resultAt, time.Since(start))
			}
		}
		script.AssertDone(t)
		assert.Equal(t, int32(5), returned.Load())
		require.Len(t, res, 5)
		type got struct {
			Content string
			IsError bool
			Dur     time.Duration
		}
		var gots []got
		for _, r := range res {
			gots = append(gots, got{r.Message.Content, r.Message.IsError, r.Duration})
		}
		assert.Equal(t, []got{
			{`tool "slow" timed out after 2s`, true, 5 * time.Second},
			{"finished slow", false, 0},
			{`tool "short" timed out after 500ms`, true, 3 * time.Second},
			{"finished long", false, 4 * time.Second},
			{"finished slow", false, 1500 * time.Millisecond},
		}, gots)
		for i, id := range []string{"call_1", "call_2", "call_3", "call_4", "call_5"} {
			assert.Equal(t, id, res[i].Message.ToolUseID)
		}
		assert.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
		assert.ErrorIs(t, res[2].Err, context.DeadlineExceeded)
		// In tool_use order: every result waits for the first call, which
		// returns after 5s (not at its 2s timeout).
		for i, at := range resultAt {
			assert.Equal(t, 5*time.Second, at, "result %d", i)
		}
		msgs, err := store.Load(t.Context(), "s1")
		require.NoError(t, err)
		agenttest.AssertInvariants(t, msgs)
		require.Len(t, msgs, 8)
		for i := range res {
			assert.Equal(t, res[i].Message, msgs[2+i])
		}
	})
}
