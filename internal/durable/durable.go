// Package durable gives this repository's durable runtime (package
// temporal) the turn logic of package agentrt without making that logic
// part of agentrt's API.
//
// The loop a durable runtime drives, with its deterministic loop side and
// its step side that runs the user's callbacks, is agentrt's unexported
// durableLoop (durable.go in the repository root, whose doc comment says
// how a run goes). The root package keeps its exported surface to what its
// users call; a runtime of this repository reaches the loop through New
// instead, and only this repository's packages may import this one.
//
// agentrt imports this package to set New, so this package cannot import
// agentrt (a cycle), and the values cross as any: New takes an
// *agentrt.Agent and an agentrt.PermissionChecker and returns agentrt's
// *durableLoop. Callers use package internal/durable/loop instead, which
// imports agentrt and gives the loop, New and the output helpers their
// agentrt types. PlanOutcome, the result
// of the loop's Plan, is generic for the same reason; agentrt instantiates
// it as PlanOutcome[*agentrt.ModelResponse, *agentrt.Compaction,
// agentrt.Layer].
package durable

import (
	"encoding/json"
	"reflect"
	"time"
)

// New returns the loop of one run of agent (an *agentrt.Agent) on
// sessionID, as agentrt's *durableLoop. permission, when non-nil (an
// agentrt.PermissionChecker), replaces Agent.Permission in the loop's
// Decide and for the sub-agents an AgentTool runs in its Execute. It fails
// like Agent.Run for an invalid Agent.
//
// Package agentrt sets New in its init, so it is set in every program
// that imports agentrt, which every caller of New does to make the Agent.
var New func(agent any, sessionID string, permission any) (any, error)

// OutputSchema returns the JSON Schema of t that agentrt.RunTyped sends to
// the model, and ParseOutput decodes a final answer into out, a pointer to
// t, as agentrt.RunTyped does: the JSON value in text (an object may come
// with prose or a code fence around it), decoded strictly, then checked
// against t's validate tags. A typed run of a durable runtime makes the
// same checks. Package agentrt sets both in its init, with New.
var (
	OutputSchema func(t reflect.Type) (json.RawMessage, error)
	ParseOutput  func(text string, out any) error
)

// PlanOutcome is the outcome of one planner attempt made by the loop's
// Plan. agentrt uses it as PlanOutcome[*agentrt.ModelResponse,
// *agentrt.Compaction, agentrt.Layer].
type PlanOutcome[Response, Compaction, Layer any] struct {
	// Response is the planner's answer, nil when Err is set.
	Response Response
	// Compaction is the compaction the Compressor made in this attempt,
	// or nil: pass it as prev from now on.
	Compaction Compaction
	// Err is the attempt's failure and Layer where it came from.
	Err   error
	Layer Layer
	// Compact says to make the same attempt again with force (a
	// context-length error); Retry to make the next attempt after Delay
	// (a transient error, per Agent.Retry). With neither, Err ends the run.
	Compact bool
	Retry   bool
	Delay   time.Duration
}
