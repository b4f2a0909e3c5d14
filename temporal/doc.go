// Package temporal runs agentrt agents durably on Temporal
// (https://temporal.io): the agent loop is a Temporal workflow, each
// planner call and each tool call an activity, so a run survives the crash
// of the process running it, and a write tool can wait hours for a human's
// approval.
//
// It is its own Go module (github.com/agentrt/agentrt/temporal), so that
// programs using only the in-process runtime do not depend on the Temporal
// SDK.
//
// # One agent, two runtimes
//
// The same [agentrt.Agent] value runs in-process with its Run method, or on
// Temporal: a worker registers it with [Register], and a client runs it
// with [Runtime], which implements [agentrt.Runtime]:
//
//	// worker process
//	w := worker.New(c, "agents", worker.Options{})
//	if err := temporal.Register(w, ag, temporal.Options{Policy: temporal.PolicyAsk}); err != nil { ... }
//	w.Run(worker.InterruptCh())
//
//	// client process
//	rt := &temporal.Runtime{Client: c, Options: temporal.StartOptions{TaskQueue: "agents"}}
//	for ev, err := range rt.Run(ctx, "session-1", "What is 2+40?") { ... }
//
// # What is durable
//
// The workflow history records the input and output of every planner and
// tool activity: when a worker dies, another replays the history and goes
// on from where the run was, without calling the model or a finished tool
// again. A tool that was running when its worker died is retried if it is
// read-only or listed in [Options.Idempotent]; any other write tool is
// never run twice: the model gets an is_error "interrupted" result, as the
// in-process runtime gives after a crash. Both invariants of the runtime
// (every tool_use answered by exactly one result right after its message;
// every failure an is_error result) hold in the workflow's messages.
//
// # Approvals
//
// The in-process [agentrt.PermissionChecker] is a callback and cannot run
// in workflow code; on Temporal a [Policy] decides. Under [PolicyAsk] a
// write tool call waits, durably, for an [Approval] sent as the signal
// [SignalApprove] ([Approve], the temporal CLI, or [Runtime.Ask] in the
// client). The query [QueryState] returns the session's messages and the
// pending approvals.
//
// # Determinism
//
// The workflow reads no clock, draws no random number and ranges over no
// map; it iterates tool_uses in message order. Changing an agent's tools,
// Options or this package's workflow code while runs are open needs
// Temporal's versioning (or draining the open runs); a replay test over a
// recorded history (see the package tests) catches changes that break
// replay.
package temporal
