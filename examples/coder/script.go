package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentrt/agentrt"
)

// scriptEnv names a JSON file of planner steps that replaces the model,
// for tests that drive the program from outside (through a terminal). It
// is not a flag: it is not meant for people.
const scriptEnv = "CODER_TEST_SCRIPT"

// scriptStep is one planner answer of a test script: a tool call or a
// text reply.
type scriptStep struct {
	// WaitFile makes the planner wait, "thinking", until this file
	// exists (or the turn is cancelled) before it answers.
	WaitFile string `json:"wait_file,omitempty"`
	// Tool and Input make the answer a call of that tool.
	Tool  string          `json:"tool,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// Text is the reply, streamed word by word.
	Text string `json:"text,omitempty"`
	// Hang makes the planner wait for the turn to be cancelled after
	// streaming Text, as a model that stalls mid-answer.
	Hang bool `json:"hang,omitempty"`
}

// scriptPlanner plays the steps of a test script in order, one per
// planner call, whatever the conversation; after the last it replies that
// the script has ended. It is safe for concurrent use.
type scriptPlanner struct {
	mu    sync.Mutex
	steps []scriptStep
	calls int
}

func loadScript(path string) (*scriptPlanner, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", scriptEnv, err)
	}
	var steps []scriptStep
	if err := json.Unmarshal(b, &steps); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", scriptEnv, path, err)
	}
	return &scriptPlanner{steps: steps}, nil
}

// Plan plays the next step.
func (s *scriptPlanner) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	s.mu.Lock()
	step := scriptStep{Text: "(the test script has ended)"}
	if s.calls < len(s.steps) {
		step = s.steps[s.calls]
	}
	s.calls++
	n := s.calls
	s.mu.Unlock()

	if step.WaitFile != "" {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := os.Stat(step.WaitFile); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			case <-tick.C:
			}
		}
	}
	usage := agentrt.Usage{InputTokens: 1000 * n, OutputTokens: 20}
	if step.Tool != "" {
		id := fmt.Sprintf("script_%d", n)
		return &agentrt.ModelResponse{
			Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id, step.Tool, step.Input)),
			Finish:  agentrt.FinishToolUse,
			Usage:   usage,
		}, nil
	}
	if req.OnText != nil {
		for _, w := range strings.SplitAfter(step.Text, " ") {
			req.OnText(w)
		}
	}
	if step.Hang {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(agentrt.TextBlock(step.Text)),
		Finish:  agentrt.FinishStop,
		Usage:   usage,
	}, nil
}

// Describe names the planner in logs.
func (s *scriptPlanner) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: "script", Model: "test"}
}
