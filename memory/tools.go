package memory

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
)

// Tools returns the tools that give a model the memory of one scope:
//
//   - remember {"text"}: keeps a fact;
//   - recall {"query", "limit"}: returns the facts most relevant to query;
//   - search {"query", "limit"}: returns the document sections most
//     relevant to query, each with its citation (file § heading).
//
// The scope is fixed by the program (the user the agent serves, say): the
// model cannot name another one. recall and search are read-only.
func Tools(s Store, scope string) []agentrt.Tool {
	type rememberIn struct {
		Text string `json:"text" jsonschema:"description=the fact to remember in one self-contained sentence" validate:"required"`
	}
	type queryIn struct {
		Query string `json:"query" jsonschema:"description=what to look for in words" validate:"required"`
		Limit int    `json:"limit,omitempty" jsonschema:"description=how many results (default 5 and at most 20)" validate:"gte=0,lte=20"`
	}
	return []agentrt.Tool{
		agentrt.NewTool("remember", "Remember a fact about the user or the task for later conversations.",
			func(ctx context.Context, in rememberIn) (string, error) {
				id, err := Remember(ctx, s, scope, in.Text, "")
				if err != nil {
					return "", err
				}
				return "remembered (" + id + ")", nil
			}),
		agentrt.NewTool("recall", "Recall remembered facts relevant to a query.",
			func(ctx context.Context, in queryIn) (string, error) {
				hits, err := Recall(ctx, s, scope, in.Query, in.Limit)
				if err != nil {
					return "", err
				}
				return FormatHits(hits, 0), nil
			}, agentrt.ReadOnly()),
		agentrt.NewTool("search", "Search the documents for passages relevant to a query; each result names its file and section.",
			func(ctx context.Context, in queryIn) (string, error) {
				hits, err := Search(ctx, s, scope, in.Query, in.Limit)
				if err != nil {
					return "", err
				}
				return FormatHits(hits, 600), nil
			}, agentrt.ReadOnly()),
	}
}

// FormatHits renders hits for a model: each starts on a line of its own
// with its number and citation ("[1] docs/x.md § Setup"), its text
// following on the next lines (for a fact, on the same line), cut to
// maxText bytes (0: whole); entries are separated by a blank line. The
// heading path that starts a document's text is not repeated.
func FormatHits(hits []Hit, maxText int) string {
	if len(hits) == 0 {
		return "nothing found"
	}
	var b strings.Builder
	for i, h := range hits {
		text := strings.TrimPrefix(h.Text, h.Heading+"\n\n")
		if maxText > 0 && len(text) > maxText {
			cut := maxText
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "…"
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		if c := h.Citation(); c != "" {
			fmt.Fprintf(&b, "[%d] %s\n%s", i+1, c, text)
		} else {
			fmt.Fprintf(&b, "[%d] %s", i+1, text)
		}
	}
	return b.String()
}
