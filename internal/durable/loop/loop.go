// Package loop is the typed side of internal/durable: the interface of
// agentrt's durable loop, with agentrt's types, for the packages that drive
// it (package temporal, and agentrt's own external tests). It imports
// agentrt, which internal/durable cannot (agentrt imports that package to
// fill it in), so the one conversion from any happens here, once.
package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable"
)

// Loop is the turn logic of one run, agentrt's durableLoop: the loop of
// agentrt.Agent.Run, made for a runtime that records every step. Its loop
// side (Begin, Request, Accept, Batch, Runs, Settle, Next, Stop,
// ExpectOutput) is deterministic; its step side (Plan, Decide, Execute)
// runs the user's callbacks. The methods' contract is on the type that
// implements them (durable.go in the repository root).
type Loop interface {
	Begin(history []agentrt.Message, input string) ([]agentrt.Message, error)
	Request() *agentrt.ModelRequest
	Accept(resp *agentrt.ModelResponse) (agentrt.Message, []agentrt.ToolCall)
	Batch(i int) int
	Runs(i int) bool
	Settle(i int, out agentrt.ToolResult, ran bool) agentrt.ToolResult
	Next() (msgs []agentrt.Message, done *agentrt.Done, err error)
	ExpectOutput(schema json.RawMessage, maxRetries int) error
	Stop(reason agentrt.StopReason, layer agentrt.Layer, err error) ([]agentrt.Message, agentrt.Done)
	Personal(tool string, d agentrt.Decision) agentrt.Decision
	Denial(tool string, d agentrt.Decision) string

	Plan(ctx context.Context, req *agentrt.ModelRequest, prev *agentrt.Compaction, force bool, attempt int, emit func(agentrt.Event)) PlanOutcome
	Decide(ctx context.Context, turn int, use agentrt.Block, emit func(agentrt.Event)) (input json.RawMessage, denied *agentrt.ToolResult)
	Recheck(ctx context.Context, turn int, use agentrt.Block, d agentrt.Decision, emit func(agentrt.Event)) (input json.RawMessage, denied *agentrt.ToolResult)
	Execute(ctx context.Context, turn int, use agentrt.Block, input json.RawMessage, emit func(agentrt.Event)) (out agentrt.ToolResult, ran bool)
}

// PlanOutcome is the outcome of one planner attempt (Loop.Plan).
type PlanOutcome = durable.PlanOutcome[*agentrt.ModelResponse, *agentrt.Compaction, agentrt.Layer]

// New returns the loop of one run of ag on sessionID. permission, when
// non-nil, replaces Agent.Permission in Decide and for the sub-agents an
// AgentTool runs in Execute. It fails like agentrt.Agent.Run for an
// invalid Agent.
func New(ag *agentrt.Agent, sessionID string, permission agentrt.PermissionChecker) (Loop, error) {
	v, err := durable.New(ag, sessionID, permission)
	if err != nil {
		return nil, err
	}
	lp, ok := v.(Loop)
	if !ok { // the method sets above and in durable.go differ
		return nil, fmt.Errorf("agentrt: the durable loop %T lacks a method of loop.Loop", v)
	}
	return lp, nil
}

// OutputSchema returns the JSON Schema of T that agentrt.RunTyped sends
// to the model.
func OutputSchema[T any]() (json.RawMessage, error) {
	return durable.OutputSchema(reflect.TypeFor[T]())
}

// ParseOutput decodes a final answer into T as agentrt.RunTyped does.
func ParseOutput[T any](text string) (T, error) {
	var out T
	err := durable.ParseOutput(text, &out)
	return out, err
}
