package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable"
)

// durableLoop is the turn logic of one run that the workflow and the
// activities drive: the loop of [agentrt.Agent.Run], made for a runtime
// that records every step. Its loop side (Begin, Request, Accept, Batch,
// Runs, Settle, Next, Stop, ExpectOutput) is deterministic and runs in the
// workflow; its step side (Plan, Decide, Execute) runs the user's
// callbacks, in the activities. The methods' contract is on the type that
// implements them, agentrt's durableLoop (durable.go in the repository
// root); it is not part of agentrt's API, and this package reaches it
// through internal/durable.
type durableLoop interface {
	Begin(history []agentrt.Message, input string) ([]agentrt.Message, error)
	Request() *agentrt.ModelRequest
	Accept(resp *agentrt.ModelResponse) (agentrt.Message, []agentrt.ToolCall)
	Batch(i int) int
	Runs(i int) bool
	Settle(i int, out agentrt.ToolOutcome, ran bool) agentrt.ToolResult
	Next() (msgs []agentrt.Message, done *agentrt.Done, err error)
	ExpectOutput(schema json.RawMessage, maxRetries int) error
	Stop(reason agentrt.StopReason, layer agentrt.Layer, err error) ([]agentrt.Message, agentrt.Done)

	Plan(ctx context.Context, req *agentrt.ModelRequest, prev *agentrt.Compaction, force bool, attempt int, emit func(agentrt.Event)) planOutcome
	Decide(ctx context.Context, turn int, use agentrt.Block, emit func(agentrt.Event)) (input json.RawMessage, denied *agentrt.ToolOutcome)
	Execute(ctx context.Context, turn int, use agentrt.Block, input json.RawMessage, emit func(agentrt.Event)) (out agentrt.ToolOutcome, ran bool)
}

// planOutcome is the outcome of one planner attempt (durableLoop.Plan).
type planOutcome = durable.PlanOutcome[*agentrt.ModelResponse, *agentrt.Compaction, agentrt.Layer]

// newDurableLoop returns the loop of one run of ag on sessionID.
// permission, when non-nil, replaces Agent.Permission in Decide and for
// the sub-agents an AgentTool runs in Execute. It fails like
// [agentrt.Agent.Run] for an invalid Agent.
func newDurableLoop(ag *agentrt.Agent, sessionID string, permission agentrt.PermissionChecker) (durableLoop, error) {
	v, err := durable.New(ag, sessionID, permission)
	if err != nil {
		return nil, err
	}
	lp, ok := v.(durableLoop)
	if !ok { // the method sets above and in durable.go differ
		return nil, fmt.Errorf("agentrt/temporal: the loop %T lacks a method of durableLoop", v)
	}
	return lp, nil
}
