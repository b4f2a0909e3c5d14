package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
)

// scriptedPlanner stands in for a model, offline: for each task it writes
// two files (each write waits for the person's approval), then answers
// with what was done, streaming its text in small pieces.
func scriptedPlanner() agentrt.Planner {
	return agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		task, results := "", []agentrt.Message(nil)
		for _, m := range req.Messages {
			switch m.Role {
			case agentrt.RoleUser:
				task, results = m.Content, nil
			case agentrt.RoleTool:
				results = append(results, m)
			}
		}
		id := fmt.Sprintf("call_%d", len(req.Messages))
		switch {
		case len(results) == 0 && len(req.Tools) > 0:
			text, err := stream(ctx, req, "I will write two files for this task: first notes/hello.txt, then a summary.")
			if err != nil {
				return nil, err
			}
			return toolCall(text, id, `{"path":"notes/hello.txt","content":`+quote("Hello from agentrt!\nTask: "+task+"\n")+`}`), nil
		case len(results) == 1 && len(req.Tools) > 0:
			text, err := stream(ctx, req, "Now the summary.")
			if err != nil {
				return nil, err
			}
			return toolCall(text, id, `{"path":"notes/summary.txt","content":`+quote("Summary of: "+task+"\n")+`}`), nil
		}
		var done, refused []string
		for _, r := range results {
			if r.IsError {
				refused = append(refused, r.Content)
			} else {
				done = append(done, r.Content)
			}
		}
		answer := "All done."
		if len(done) > 0 {
			answer = "Done: " + strings.Join(done, "; ") + "."
		}
		if len(refused) > 0 {
			answer += " Not done: " + strings.Join(refused, "; ") + "."
		}
		text, err := stream(ctx, req, answer)
		if err != nil {
			return nil, err
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)), Finish: agentrt.FinishStop}, nil
	})
}

func toolCall(text, id, input string) *agentrt.ModelResponse {
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text), agentrt.ToolUseBlock(id, "write_file", []byte(input))),
		Finish:  agentrt.FinishToolUse,
	}
}

// stream sends text to req.OnText a few words at a time, as a model's
// stream arrives, and returns it.
func stream(ctx context.Context, req *agentrt.ModelRequest, text string) (string, error) {
	if req.OnText == nil {
		return text, nil
	}
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		req.OnText(strings.Join(words[i:min(i+3, len(words))], ""))
		t := time.NewTimer(40 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	return text, nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
