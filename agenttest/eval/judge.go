package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
)

// judgeSystem is the judge's system prompt; the rubric follows it.
const judgeSystem = `You grade the answer of an AI agent against a rubric. ` +
	`Reply with one JSON object and nothing else: {"reasoning": "<why, in a few sentences>", "pass": true or false}.

Rubric:
`

// judgeSchema is the JSON Schema of the judge's reply.
const judgeSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"pass":{"type":"boolean"}},"required":["reasoning","pass"],"additionalProperties":false}`

// Judge asks p (another model) whether the run meets rubric, showing it
// the input, the tool calls and the final answer. The judge's reasoning
// is kept in the report, pass or fail. A judge that does not answer with
// the JSON asked for fails the check.
func Judge(p agentrt.Planner, rubric string) Check {
	return Check{Name: "judge: " + clip(rubric), Fn: func(ctx context.Context, r *Run) error {
		var sb strings.Builder
		fmt.Fprintf(&sb, "User input:\n%s\n\n", r.Case.Input)
		if len(r.Calls) > 0 {
			sb.WriteString("Tool calls:\n")
			for _, c := range r.Calls {
				fmt.Fprintf(&sb, "- %s\n", c)
			}
			sb.WriteString("\n")
		}
		fmt.Fprintf(&sb, "Final answer:\n%s\n", r.Done.FinalText)
		resp, err := p.Plan(ctx, &agentrt.ModelRequest{
			System:         judgeSystem + rubric,
			Messages:       []agentrt.Message{agentrt.NewUserMessage(sb.String())},
			ResponseSchema: json.RawMessage(judgeSchema),
		})
		if err != nil {
			return fmt.Errorf("judge: %w", err)
		}
		text := resp.Message.Text()
		var verdict struct {
			Reasoning string `json:"reasoning"`
			Pass      *bool  `json:"pass"`
		}
		i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
		if i < 0 || j < i || json.Unmarshal([]byte(text[i:j+1]), &verdict) != nil || verdict.Pass == nil {
			return fmt.Errorf("judge: no verdict in %q", clip(text))
		}
		if !*verdict.Pass {
			return errors.New(verdict.Reasoning)
		}
		return &Note{Text: verdict.Reasoning}
	}}
}
