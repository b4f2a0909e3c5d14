package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// named is a scripted planner that reports a provider and model.
type named struct {
	*agenttest.Planner
	info agentrt.ProviderInfo
}

func (n named) Describe() agentrt.ProviderInfo { return n.info }

// slowly returns a step that takes d, as a model call does, and reports
// usage u.
func slowly(d time.Duration, step agenttest.Step, u agentrt.Usage) agenttest.Step {
	return agenttest.Func(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		time.Sleep(d) // the model's latency, for the waterfall
		resp, err := agenttest.Script(step).Plan(ctx, req)
		if resp != nil {
			resp.Usage = u
		}
		return resp, err
	})
}

type testIn struct {
	Path string `json:"path" validate:"required"`
}

// recordShowcase records the session of the README's screenshot: a coding
// agent that reads a file, is refused a write, has a model call retried,
// and runs a test that fails.
func recordShowcase(t *testing.T, dir string) {
	t.Helper()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	read := agentrt.NewTool("read_file", "Read a file.", func(_ context.Context, in pathIn) (string, error) {
		time.Sleep(8 * time.Millisecond)
		return "package main\n\nfunc Add(a, b int) int { return a - b }\n", nil
	}, agentrt.ReadOnly())
	write := agentrt.NewTool("write_file", "Write a file.", func(_ context.Context, in pathIn) (string, error) { return "ok", nil })
	tests := agentrt.NewTool("run_tests", "Run the tests of a file.", func(_ context.Context, in testIn) (string, error) {
		time.Sleep(60 * time.Millisecond)
		return "", errors.New("--- FAIL: TestAdd (0.00s)\n    main_test.go:6: Add(2, 3) = -1, want 5\nFAIL\nexit status 1")
	}, agentrt.ReadOnly())
	overloaded := &agentrt.ProviderError{Provider: "anthropic", StatusCode: 529, Kind: agentrt.ErrOverloaded, Message: "Overloaded"}
	p := agenttest.Script(
		slowly(90*time.Millisecond, agenttest.CallTools(
			agenttest.ToolUse("read_file", `{"path":"main.go"}`),
			agenttest.ToolUse("write_file", `{"path":"main.go"}`),
		), agentrt.Usage{InputTokens: 1840, OutputTokens: 96, CacheReadTokens: 1536}),
		agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			time.Sleep(20 * time.Millisecond)
			return nil, overloaded
		}),
		slowly(70*time.Millisecond, agenttest.CallTool("run_tests", `{"path":"main_test.go"}`), agentrt.Usage{InputTokens: 2310, OutputTokens: 41, CacheReadTokens: 1792}),
		slowly(110*time.Millisecond, agenttest.StreamReply("Add subtracts instead of adding: ", "main.go line 3 returns a - b. ", "I was not allowed to write main.go, so the fix is yours: return a + b."),
			agentrt.Usage{InputTokens: 2480, OutputTokens: 58, CacheReadTokens: 2048}),
	)
	ag := &agentrt.Agent{
		Name:    "coder",
		Tools:   []agentrt.Tool{read, write, tests},
		Planner: named{p, agentrt.ProviderInfo{Name: "anthropic", Model: "claude-sonnet-4-5"}},
		Store:   store,
		Retry:   agentrt.RetryPolicy{BaseDelay: 15 * time.Millisecond, MaxDelay: 15 * time.Millisecond},
	}
	_, _ = agenttest.Collect(ag.Run(context.Background(), "showcase", "The test in main_test.go fails. Find out why and fix it."))
}
