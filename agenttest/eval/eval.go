// Package eval runs an agent over a dataset of cases, several times each,
// and scores every run: the final answer, the tools called and in what
// order, calls that must never happen, limits on turns, tokens and cost,
// the stop reason, and any scorer of your own, a model judge included.
//
// Cases are a Go slice or a JSONL file ([ReadJSONL]). [Runner.Test] runs
// them as subtests of a go test (a failing case shows by name) and writes
// a JSON [Report]; [Compare] says which cases got better or worse between
// two reports. On a scripted planner (agenttest.Script) an eval is an
// ordinary unit test; on a model, replayed from a cassette or live, it
// measures the model.
package eval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt"
)

// Case is one input and the expectations its runs must meet.
type Case struct {
	// Name names the case in subtests, tables and reports; it must be
	// unique in a dataset.
	Name string
	// Input is the user message the run starts with.
	Input string
	// Session, when set, is a session to continue: its messages are in
	// the store before the run starts.
	Session []agentrt.Message
	// Expect are the checks every run of the case must pass.
	Expect []Check
}

// Check scores one run. Build checks with [Contains], [Matches],
// [Decodes], [Tools], [Never], [MaxTurns], [MaxTokens], [MaxCost],
// [Stop], [Func] and [Judge].
type Check struct {
	// Name says what is checked, in reports: `contains "42"`.
	Name string
	// Fn returns nil when r passes, or an error saying why it does not.
	// A check that has more to say than pass or fail (a judge's
	// reasoning) returns it with a *Note.
	Fn func(ctx context.Context, r *Run) error
}

// Note is a passing check's remark, kept in the report (the judge's
// reasoning). Return it from Check.Fn: a *Note is not a failure.
type Note struct{ Text string }

func (n *Note) Error() string { return n.Text }

// Run is what one run of a case did, for checks to look at.
type Run struct {
	Case   *Case
	Trial  int // from 0
	Events []agentrt.Event
	// Session is the session's messages after the run.
	Session []agentrt.Message
	// Done is the run's last event (zero when the run ended without one).
	Done agentrt.Done
	// Calls are the tool calls the model made, in order.
	Calls []Call
	// Cost is Done.Usage at the runner's prices.
	Cost float64
	// Err is the error the run ended with, if any.
	Err error
}

// Call is one tool call of a run: the tool's name and its JSON input.
type Call struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (c Call) String() string {
	if len(c.Input) == 0 {
		return c.Name
	}
	return fmt.Sprintf("%s(%s)", c.Name, c.Input)
}
