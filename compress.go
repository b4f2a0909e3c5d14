package agentrt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt/internal/window"
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
// cut to three quarters of the budget (and of MaxMessages), and the following turns only append
// their messages to it until the budget is reached again: the cost per turn
// stays flat however long the session grows, and the requests between two
// cuts begin with the same bytes (the prompt cache reads them). The first
// call of a run finds the cut the calls before it made (reading the
// history once), so a new run does not cut again either.
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
	// A cut keeps three quarters of what fits, so that the following turns
	// only append for a while: the prompt cache's prefix then holds.
	target, keep := budget, w.MaxMessages
	if !req.Force {
		if budget > 0 {
			target = max(1, budget*3/4)
		}
		if keep > 0 {
			keep = max(1, keep*3/4)
		}
	}
	st, ok := req.State.(*windowState)
	if !ok && !req.Force {
		// The first call of a run: find the cut the calls before it made,
		// so that its request begins as the last one of the run before
		// (cutting afresh would rewrite the prefix at every run).
		st = w.replay(msgs, budget, target, keep, req.Count)
		if st == nil && (budget == 0 || req.Count(msgs[1:]) <= budget) && (w.MaxMessages == 0 || len(msgs)-1 <= w.MaxMessages) {
			return &CompressResult{Messages: msgs}, nil // never cut yet
		}
	}
	if st != nil && !req.Force && st.n <= len(msgs) {
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
	cut := windowCut(msgs, 1, target, keep, req.Count)
	if cut <= 1 {
		return &CompressResult{Messages: msgs}, nil
	}
	st = windowView(msgs, cut, req.Count(msgs[cut:]))
	return &CompressResult{Messages: st.view, State: st}, nil
}

// windowView returns the state of the view msgs[0] (with a note) +
// msgs[cut:], whose messages after the first count tokens.
func windowView(msgs []Message, cut, tokens int) *windowState {
	out := make([]Message, 0, 1+len(msgs)-cut+16)
	first := msgs[0]
	first.Content += fmt.Sprintf("\n\n[agentrt: %d earlier messages of this conversation are not shown]", cut-1)
	out = append(out, first)
	out = append(out, msgs[cut:]...)
	return &windowState{n: len(msgs), cut: cut, view: out, tokens: tokens}
}

// replay returns the state Window had after the calls that wrote the
// assistant messages of msgs (each saw the messages before its answer),
// or nil if none of them was cut. It reads the history once per run.
func (w Window) replay(msgs []Message, budget, target, keep int, count func([]Message) int) *windowState {
	cut, n, tokens := 1, 1, 0
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		tokens += count(msgs[n:i])
		n = i
		if (budget > 0 && tokens > budget) || (w.MaxMessages > 0 && i-cut > w.MaxMessages) {
			if c := windowCut(msgs[:i], 1, target, keep, count); c > cut {
				cut, tokens = c, count(msgs[c:i])
			}
		}
	}
	if cut <= 1 {
		return nil
	}
	return windowView(msgs[:n], cut, tokens)
}

// windowState is what Window keeps from one turn to the next.
type windowState struct {
	n      int       // the length of the history the view was made from
	cut    int       // the view is msgs[0] (with a note) + msgs[cut:n]
	view   []Message // what the planner saw
	tokens int       // the count of msgs[cut:n]
}

// windowCut returns the index from which msgs[from:] is kept: see
// window.Cut.
func windowCut(msgs []Message, from, budget, max int, count func([]Message) int) int {
	return window.Cut(msgs, from, budget, max, count, isAssistant)
}

func isAssistant(m *Message) bool { return m.Role == RoleAssistant }

// compactionRecord encodes c for the store.
func compactionRecord(c *Compaction) Record {
	data, _ := json.Marshal(c)
	return Record{Kind: RecordCompaction, Data: data}
}
