package agenttest

import (
	"context"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/agentrt/agentrt"
)

// Replay returns a Planner that answers with the assistant messages of a
// recorded session, in order: record a session once against a real model
// (for example with a JSONLStore), then replay it offline as a golden test.
// Run the agent on the recorded session's first user message, then compare
// the new session with the recording using [Diff]: a change in what the
// agent's tools return, or in the tools the agent offers, shows up there.
func Replay(recorded []agentrt.Message) *Planner {
	var steps []Step
	for _, m := range recorded {
		if m.Role != agentrt.RoleAssistant {
			continue
		}
		finish := agentrt.FinishStop
		if m.HasToolUse() {
			finish = agentrt.FinishToolUse
		}
		msg := m
		steps = append(steps, Step{desc: "replay " + m.String(), fn: func(_ context.Context, _ *agentrt.ModelRequest, _ *Planner) (*agentrt.ModelResponse, error) {
			return &agentrt.ModelResponse{Message: msg, Finish: finish}, nil
		}})
	}
	return Script(steps...)
}

// Diff compares two sessions message by message (in their String form) and
// returns a unified diff, or "" when they are the same.
func Diff(want, got []agentrt.Message) string {
	lines := func(msgs []agentrt.Message) []string {
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = strings.ReplaceAll(m.String(), "\n", `\n`) + "\n"
		}
		return out
	}
	a, b := lines(want), lines(got)
	if strings.Join(a, "") == strings.Join(b, "") {
		return ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: "recorded", ToFile: "replayed", Context: 2})
	if err != nil {
		return fmt.Sprintf("sessions differ (%v)", err)
	}
	return d
}
