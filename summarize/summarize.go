// Package summarize is a Compressor that has a model summarize the older
// part of a long session:
//
//	ag.Compressor = &summarize.Compressor{Planner: cheapModel}
//
// # Compaction and the prompt cache
//
// A prompt cache serves a request only the part that begins as the
// request before it did, and a compaction rewrites the history: the
// request after a cut is read in full. So both compressors cut rarely
// and in large steps. This one summarizes when the history after the
// last summary passes Threshold, and keeps Keep (half of it) verbatim;
// the summary is reused, byte for byte, until the history grows by the
// other half again, also across runs (it is recorded in the session).
// agentrt.Window cuts to three quarters of its budget and then only
// appends until the budget is reached again, and a new run finds the
// cut the run before made instead of cutting afresh. Between two cuts
// every request begins with the bytes of the one before; the system
// prompt and tools stay the same across cuts. Measured on a scripted
// 200-turn session of 5-call runs through the three adapters
// (examples/cachebench), 94% of the input tokens were a prefix of the
// request before, the 8 cuts included.
package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/window"
)

// Compressor is an [agentrt.Compressor] that asks a model (a cheaper one
// will do) to summarize the older part of a long session into one paragraph, and
// shows the planner the first user message with that summary, followed by
// the recent messages. The summary is recorded in the session (a
// compaction record), so a resumed session starts from it while the full
// history stays on disk, and it is reused turn after turn until the
// messages after it outgrow the threshold again.
//
// Planner is required. A Compressor is a plain value, usable as one or
// through a pointer, and it keeps no state of its own (the
// summary travels in the session), so one value may serve any number of
// agents and runs at once.
type Compressor struct {
	// Planner writes the summaries: a provider adapter, for a model that
	// need not be the agent's. Required.
	Planner agentrt.Planner
	// Threshold is the token count of unsummarized history above which a
	// new summary is made; 0 means the request's Budget, or 8000.
	Threshold int
	// Keep is the share of Threshold kept verbatim after a summary, in
	// tokens; 0 means Threshold/2.
	Keep int
	// Prompt is the system prompt of the summarizing call; empty means a
	// built-in one.
	Prompt string
}

const defaultSummaryPrompt = `You compress conversations between a user and an AI agent that uses tools.
Summarize the conversation below so that the agent can continue the task without it: the user's goal and constraints, decisions made, facts learned from tools (exact values, names, paths), what was tried and failed, and what remains to do. Be concise and factual. Write only the summary.`

// Compress implements [agentrt.Compressor].
func (s Compressor) Compress(ctx context.Context, req *agentrt.CompressRequest) (*agentrt.CompressResult, error) {
	msgs := req.Messages
	threshold := s.Threshold
	if threshold == 0 {
		threshold = req.Budget
	}
	if threshold == 0 {
		threshold = 8000
	}
	if req.Force {
		threshold /= 2
	}
	keep := s.Keep
	if keep == 0 || keep >= threshold {
		keep = threshold / 2
	}
	prev := req.Previous
	start := 1
	if prev != nil && prev.UpTo > 0 && prev.UpTo <= len(msgs) {
		start = prev.UpTo
	} else {
		prev = nil
	}
	if req.Count(msgs[start:]) <= threshold {
		return &agentrt.CompressResult{Messages: s.view(msgs, prev)}, nil
	}
	cut := window.Cut(msgs, start, keep, 0, req.Count, isAssistant)
	if cut <= start {
		return &agentrt.CompressResult{Messages: s.view(msgs, prev)}, nil
	}
	summary, err := s.summarize(ctx, msgs, prev, start, cut)
	if err != nil {
		return nil, err
	}
	c := &agentrt.Compaction{UpTo: cut, Summary: summary}
	return &agentrt.CompressResult{Messages: s.view(msgs, c), Compaction: c}, nil
}

func (s Compressor) view(msgs []agentrt.Message, c *agentrt.Compaction) []agentrt.Message {
	if c == nil || len(msgs) == 0 {
		return msgs
	}
	first := msgs[0]
	first.Content += "\n\n[agentrt: summary of the conversation so far]\n" + c.Summary
	out := make([]agentrt.Message, 0, 1+len(msgs)-c.UpTo)
	out = append(out, first)
	return append(out, msgs[c.UpTo:]...)
}

func (s Compressor) summarize(ctx context.Context, msgs []agentrt.Message, prev *agentrt.Compaction, start, cut int) (string, error) {
	if s.Planner == nil {
		return "", errors.New("agentrt: summarize.Compressor has no Planner")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "The user's goal: %s\n\n", msgs[0].Content)
	if prev != nil {
		fmt.Fprintf(&sb, "Summary of the earlier conversation:\n%s\n\n", prev.Summary)
	}
	sb.WriteString("The conversation to summarize:\n")
	for _, m := range msgs[start:cut] {
		sb.WriteString(m.String())
		sb.WriteByte('\n')
	}
	prompt := s.Prompt
	if prompt == "" {
		prompt = defaultSummaryPrompt
	}
	resp, err := s.Planner.Plan(ctx, &agentrt.ModelRequest{
		System:   prompt,
		Messages: []agentrt.Message{agentrt.NewUserMessage(sb.String())},
	})
	if err != nil {
		return "", &summarizeError{err}
	}
	if resp == nil {
		return "", errors.New("agentrt: summarize: the planner returned no response and no error")
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", fmt.Errorf("agentrt: summarize: the model returned an empty summary")
	}
	return text, nil
}

func isAssistant(m *agentrt.Message) bool { return m.Role == agentrt.RoleAssistant }

// summarizeError is a failed summary: its text says so once, with the
// package's prefix, however the planner's own error begins.
type summarizeError struct{ err error }

func (e *summarizeError) Error() string {
	return "agentrt: summarize: " + strings.TrimPrefix(e.err.Error(), "agentrt: ")
}

func (e *summarizeError) Unwrap() error { return e.err }
