package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Compressor chooses what the planner sees of a long session: it is called
// before every planner call with the whole history and returns the
// messages to send. The session itself is never shortened: the store keeps
// every message.
//
// What it returns must satisfy the runtime's invariants (a tool_use is
// never separated from its results) and should start with a user message.
// To stay flat per turn as history grows, a Compressor should look only at
// the part of the history it keeps (see [Window]).
type Compressor interface {
	Compress(ctx context.Context, req *CompressRequest) (*CompressResult, error)
}

// CompressRequest is what a [Compressor] is given. Messages is the
// session's history itself, not a copy: read it and do not modify it (the
// result may share it).
type CompressRequest struct {
	SessionID string
	// Messages is the whole session, read-only.
	Messages []Message
	// Budget is the number of tokens the returned messages should fit in
	// (Agent.ContextTokens); 0 means no budget.
	Budget int
	// Count estimates the tokens of messages: Agent.TokenCounter, or the
	// default estimate. It is never nil.
	Count func([]Message) int
	// Previous is the last compaction of this session (from this run, or
	// recorded in the store by an earlier one), or nil.
	Previous *Compaction
	// Force is set when the provider reported that the context was too
	// long: the compressor must return less than last time.
	Force bool
	// State is what the compressor returned as CompressResult.State on the
	// previous turn of this run (nil on the first): a place for work it can
	// reuse, so that it need not redo it every turn.
	State any
}

// CompressResult is what a [Compressor] returns. The runtime keeps
// Messages as the planner's view until the next compression, so the
// compressor must not modify it after returning.
type CompressResult struct {
	// Messages is what the planner sees this turn.
	Messages []Message
	// Compaction, when non-nil, is a new summary that the runtime records
	// in the session (a RecordCompaction record) and passes back as
	// Previous on later turns and runs.
	Compaction *Compaction
	// State is passed back as CompressRequest.State on the next turn.
	State any
}

// Compaction is a summary that stands for the session's messages before
// index UpTo.
type Compaction struct {
	UpTo    int    `json:"up_to"`
	Summary string `json:"summary"`
}

// estimateTokens is the default token estimate ([Agent.TokenCounter]):
// about four bytes of text per token (the usual rule of thumb for English
// and code with BPE tokenizers), plus a few tokens of overhead per message
// and block. It over-estimates more often than not, which is the safe side
// for a budget.
func estimateTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + (len(m.Content)+3)/4
		for _, b := range m.Blocks {
			n += 4 + (len(b.Text)+len(b.Name)+len(b.Input)+3)/4
		}
	}
	return n
}

// Window is a Compressor that keeps the first user message (the goal) and
// as many of the most recent messages as fit in the budget, at most
// MaxMessages of them. It cuts only in front of an assistant message, so a
// tool_use stays with its results and roles keep alternating; the first
// message then says how many messages were left out. Window is a plain
// value, safe for concurrent use; its zero value keeps what fits in the
// budget (Agent.ContextTokens), with no cap on the number of messages.
type Window struct {
	// MaxMessages caps the recent messages kept; 0 means no cap (the budget
	// alone decides).
	MaxMessages int
}

// Compress implements [Compressor]. When the window must be cut, it is
// cut to three quarters of the budget, and the following turns only append
// their messages to it until the budget is reached again: the cost per turn
// stays flat however long the session grows.
func (w Window) Compress(_ context.Context, req *CompressRequest) (*CompressResult, error) {
	msgs := req.Messages
	budget := req.Budget
	if req.Force {
		if budget == 0 {
			budget = req.Count(msgs)
		}
		budget /= 2
	}
	if len(msgs) < 3 || (budget == 0 && (w.MaxMessages == 0 || len(msgs)-1 <= w.MaxMessages)) {
		return &CompressResult{Messages: msgs}, nil
	}
	if budget > 0 {
		// Room for the first message and the note added to it.
		budget = max(1, budget-req.Count(msgs[:1])-16)
	}
	if st, ok := req.State.(*windowState); ok && !req.Force && st.n <= len(msgs) {
		added := msgs[st.n:]
		tokens := st.tokens + req.Count(added)
		if (budget == 0 || tokens <= budget) && (w.MaxMessages == 0 || len(msgs)-st.cut <= w.MaxMessages) {
			// Appending to the view never changes what an earlier request
			// saw: its slice ends where the new messages begin.
			st.view = append(st.view, added...)
			st.n, st.tokens = len(msgs), tokens
			return &CompressResult{Messages: st.view, State: st}, nil
		}
	}
	target := budget
	if budget > 0 && !req.Force {
		target = max(1, budget*3/4)
	}
	cut := windowCut(msgs, 1, target, w.MaxMessages, req.Count)
	if cut <= 1 {
		return &CompressResult{Messages: msgs}, nil
	}
	out := make([]Message, 0, 1+len(msgs)-cut+16)
	first := msgs[0]
	first.Content += fmt.Sprintf("\n\n[agentrt: %d earlier messages of this conversation are not shown]", cut-1)
	out = append(out, first)
	out = append(out, msgs[cut:]...)
	st := &windowState{n: len(msgs), cut: cut, view: out, tokens: req.Count(msgs[cut:])}
	return &CompressResult{Messages: out, State: st}, nil
}

// windowState is what Window keeps from one turn to the next.
type windowState struct {
	n      int       // the length of the history the view was made from
	cut    int       // the view is msgs[0] (with a note) + msgs[cut:n]
	view   []Message // what the planner saw
	tokens int       // the count of msgs[cut:n]
}

// windowCut returns the index from which msgs[from:] is kept: the smallest
// index i >= from, at an assistant message, such that msgs[i:] fits in
// budget tokens (when budget > 0) and holds at most max messages (when
// max > 0). It walks back from the end only as far as it keeps. When not
// even the last turn fits, the last assistant message is kept anyway.
func windowCut(msgs []Message, from, budget, max int, count func([]Message) int) int {
	tokens := 0
	best := -1
	for i := len(msgs) - 1; i >= from; i-- {
		tokens += count(msgs[i : i+1])
		if budget > 0 && tokens > budget {
			break
		}
		if max > 0 && len(msgs)-i > max {
			break
		}
		if msgs[i].Role == RoleAssistant {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	// Keep at least the last assistant message and what follows it.
	for i := len(msgs) - 1; i >= from; i-- {
		if msgs[i].Role == RoleAssistant {
			return i
		}
	}
	return from
}

// Summarizer is a Compressor that asks a model (a cheaper one will do) to
// summarize the older part of a long session into one paragraph, and
// shows the planner the first user message with that summary, followed by
// the recent messages. The summary is recorded in the session (a
// compaction record), so a resumed session starts from it while the full
// history stays on disk, and it is reused turn after turn until the
// messages after it outgrow the threshold again.
//
// Planner is required. A Summarizer keeps no state of its own (the
// summary travels in the session), so one value may serve any number of
// agents and runs at once.
type Summarizer struct {
	// Planner writes the summaries: a provider adapter, for a model that
	// need not be the agent's. Required.
	Planner Planner
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

// Compress implements [Compressor].
func (s *Summarizer) Compress(ctx context.Context, req *CompressRequest) (*CompressResult, error) {
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
		return &CompressResult{Messages: s.view(msgs, prev)}, nil
	}
	cut := windowCut(msgs, start, keep, 0, req.Count)
	if cut <= start {
		return &CompressResult{Messages: s.view(msgs, prev)}, nil
	}
	summary, err := s.summarize(ctx, msgs, prev, start, cut)
	if err != nil {
		return nil, err
	}
	c := &Compaction{UpTo: cut, Summary: summary}
	return &CompressResult{Messages: s.view(msgs, c), Compaction: c}, nil
}

func (s *Summarizer) view(msgs []Message, c *Compaction) []Message {
	if c == nil || len(msgs) == 0 {
		return msgs
	}
	first := msgs[0]
	first.Content += "\n\n[agentrt: summary of the conversation so far]\n" + c.Summary
	out := make([]Message, 0, 1+len(msgs)-c.UpTo)
	out = append(out, first)
	return append(out, msgs[c.UpTo:]...)
}

func (s *Summarizer) summarize(ctx context.Context, msgs []Message, prev *Compaction, start, cut int) (string, error) {
	if s.Planner == nil {
		return "", fmt.Errorf("agentrt: Summarizer has no Planner")
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
	resp, err := s.Planner.Plan(ctx, &ModelRequest{
		System:   prompt,
		Messages: []Message{NewUserMessage(sb.String())},
	})
	if err != nil {
		return "", wrapf(err, "summarize")
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", fmt.Errorf("agentrt: summarize: the model returned an empty summary")
	}
	return text, nil
}

// compactionRecord encodes c for the store.
func compactionRecord(c *Compaction) Record {
	data, _ := json.Marshal(c)
	return Record{Kind: RecordCompaction, Data: data}
}
