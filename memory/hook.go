package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentrt/agentrt"
)

// RecordKind is the kind of the session record the [Hook] writes each time
// it adds memories to a planner request, so that a person reading the
// session sees what the model was shown. Its data:
//
//	{"turn": 2, "scope": "user-42", "query": "the last user message",
//	 "terms": ["last", "user", "message"],
//	 "hits": [{"id": "...", "kind": "fact", "source": "...", "heading": "...",
//	           "score": 0.83, "text": "..."}]}
//
// Readers that do not know the kind skip it (see agentrt.Record).
const RecordKind agentrt.RecordKind = "memory.recall"

// RecallRecord is the data of a [RecordKind] record.
type RecallRecord struct {
	Turn  int    `json:"turn"`
	Scope string `json:"scope"`
	Query string `json:"query"`
	// Terms are the words searched for ([QueryTerms] of Query: at most
	// [MaxQueryTerms] of them, however long the message).
	Terms []string    `json:"terms,omitempty"`
	Hits  []RecallHit `json:"hits"`
}

// RecallHit is one item shown to the model.
type RecallHit struct {
	ID      string  `json:"id"`
	Kind    Kind    `json:"kind"`
	Source  string  `json:"source,omitempty"`
	Heading string  `json:"heading,omitempty"`
	Score   float64 `json:"score"`
	Text    string  `json:"text"`
}

// RecallHeading is the first line of the message [Hook] adds.
const RecallHeading = "Relevant memory, recalled for this turn (from earlier conversations and the documents, not written by the user; cite the file and heading of what you use):"

// HookOptions configures [Hook].
type HookOptions struct {
	// Limit is the number of items added to each request; 0 means 3.
	Limit int
	// Kinds are the kinds of items added; empty means every kind.
	Kinds []Kind
	// MaxText cuts each item's text to this many bytes in the request; 0
	// means 800.
	MaxText int
	// Records receives the record of what was added (normally the agent's
	// session store). Nil means nothing is recorded; a store that cannot
	// keep records (not an agentrt.RecordStore) makes Hook panic rather
	// than drop them silently, as a negative Limit or MaxText does.
	Records agentrt.SessionStore
}

// Hook returns hooks that, before every planner call, query the scope with
// the last user message (searching for at most [MaxQueryTerms] of its
// words, so that a long paste costs what a question does), add the best
// items to the request as one trailing user message (under [RecallHeading])
// and record them in the session as a [RecordKind] record. It adds nothing
// when nothing matches. A failing query or record ends the run with the
// error, as a failing BeforePlan does.
//
// The message is for that call only: the session does not keep it, and
// the next call gets its own. The system prompt and the history before it
// stay byte-identical from call to call, so the provider's prompt cache
// keeps serving them (docs/caching.md).
func Hook(s Store, scope string, opts *HookOptions) agentrt.Hooks {
	var o HookOptions
	if opts != nil {
		o = *opts
	}
	if o.Limit < 0 || o.MaxText < 0 {
		panic(fmt.Sprintf("memory: Hook: negative HookOptions.Limit (%d) or MaxText (%d)", o.Limit, o.MaxText))
	}
	if o.Limit == 0 {
		o.Limit = 3
	}
	if o.MaxText == 0 {
		o.MaxText = 800
	}
	ra, ok := o.Records.(agentrt.RecordStore)
	if o.Records != nil && !ok {
		panic(fmt.Sprintf("memory: Hook: HookOptions.Records is a %T, which cannot keep records (it is not an agentrt.RecordStore)", o.Records))
	}
	return agentrt.Hooks{
		BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			query := lastUserText(req.Messages)
			if strings.TrimSpace(query) == "" {
				return ctx, nil
			}
			hits, err := s.Query(ctx, scope, Query{Text: query, Kinds: o.Kinds, Limit: o.Limit})
			if err != nil {
				return ctx, fmt.Errorf("memory: %w", err)
			}
			if len(hits) == 0 {
				return ctx, nil
			}
			// A new slice: the session's messages are not the hook's to change.
			req.Messages = append(slices.Clip(req.Messages), agentrt.NewUserMessage(RecallHeading+"\n"+FormatHits(hits, o.MaxText)))
			if ra == nil {
				return ctx, nil
			}
			rec := RecallRecord{Turn: req.Turn, Scope: scope, Query: query, Terms: QueryTerms(query), Hits: make([]RecallHit, len(hits))}
			for i, h := range hits {
				rec.Hits[i] = RecallHit{ID: h.ID, Kind: h.Kind, Source: h.Source, Heading: h.Heading, Score: h.Score, Text: h.Text}
			}
			data, err := json.Marshal(rec)
			if err != nil {
				return ctx, err
			}
			if err := ra.AppendRecord(ctx, req.SessionID, agentrt.Record{Kind: RecordKind, Data: data}); err != nil {
				return ctx, fmt.Errorf("memory: record what was recalled: %w", err)
			}
			return ctx, nil
		},
	}
}

// lastUserText is the text of the last user message, passing over what
// a Hook before this one added.
func lastUserText(msgs []agentrt.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentrt.RoleUser && !strings.HasPrefix(msgs[i].Content, RecallHeading) {
			return msgs[i].Content
		}
	}
	return ""
}
