// Package temporal runs agentrt agents durably on Temporal
// (https://temporal.io): the agent loop is a Temporal workflow, each
// planner call, permission decision and tool call an activity, so a run
// survives the crash of the process running it, and a write tool can wait
// hours for a human's approval.
//
// It is its own Go module (github.com/agentrt/agentrt/temporal), so that
// programs using only the in-process runtime do not depend on the Temporal
// SDK.
//
// # One agent, two runtimes
//
// The same [agentrt.Agent] definition runs in-process with its Run method,
// or on Temporal: a worker registers it with [Register], and a client runs
// it with [Runtime], which implements [agentrt.Runtime]:
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
// The workflow drives the loop of [agentrt.Agent.Run] itself
// (not a copy of it): ids, the output cap, the loop guard, the budget,
// max turns and the final answer, the repair of a resumed session are
// decided by the same code, and the same definition gives the same
// session on both runtimes (the package's parity tests check it). Every
// Agent field works the same, or [Register] refuses the Agent with an
// error naming the field: Agent.Store (the workflow history is the
// session) and the OnRunStart, OnRunEnd, OnTurnStart and OnTurnEnd hooks.
// Typed output: [RunTyped] is [agentrt.RunTyped] on Temporal, with the
// same check of the final answer against the type's schema and the same
// corrections sent back to the model.
//
// # Where the callbacks run
//
// Workflow code must be deterministic, so it runs none of the user's
// callbacks; each runs in an activity, on a worker, through the same code
// as in-process (a panic or runtime.Goexit is contained the same way):
//
//   - the planner activity: the Compressor (given the session's last
//     Compaction, which the workflow keeps; its per-turn State is always
//     nil, since it cannot travel between activities), the BeforePlan
//     hooks, the Planner and the AfterPlan hooks;
//   - the decide activity: the tool's Decode and the permission checker
//     ([Options.Policy]), one call after another, as in-process;
//   - the tool activity: the BeforeTool hooks, the tool with its timeout
//     and the AfterTool hooks, in one activity so that the context a
//     BeforeTool hook returns reaches the tool and its AfterTool hooks.
//
// Their events (permission decisions, contained hook failures) are
// returned to the workflow and recorded with the others.
//
// # What is durable
//
// The workflow history records the input and output of every activity:
// when a worker dies, another replays the history and goes on from where
// the run was, without calling the model or a finished tool again. A tool
// that was running when its worker died is retried if it is read-only or
// listed in [Options.Idempotent]; any other write tool is never run twice:
// the model gets an is_error "interrupted" result, as the in-process
// runtime gives after a crash. Both invariants of the runtime (every
// tool_use answered by exactly one result right after its message; every
// failure an is_error result) hold in the workflow's messages.
//
// A model call that finished but whose activity did not complete (its
// worker died before reporting the result, or the activity timed out) is
// made again: the model is called twice and the provider bills both. Only
// the recorded call's tokens count toward Agent.Budget; the lost call's do
// not, since the workflow never saw them. Such retries use the planner
// activity's own retry policy ([Options.PlannerAttempts]), not
// Agent.Retry, which the workflow applies to the planner's own errors
// (rate limits, overload) with a durable timer between attempts.
//
// # Approvals
//
// Under [PolicyAsk] a write tool call waits, durably, for an [agentrt.Decision]
// sent as the signal [SignalApprove] ([Approve], the temporal CLI, or
// [Runtime.Ask] in the client). The query [QueryState] returns the
// session's messages and the pending approvals. Under [PolicyFromAgent]
// the Agent's own checker decides, on a worker; a call it leaves to a
// person (agentrt.Decision.Pending) waits for a decision the same way.
//
// An approval is an [agentrt.Decision], the value agentrt.Agent.Resume
// takes in-process: allow, deny with a reason, allow with an edited input
// (decoded and validated again by the tool, and decided again by the
// checker in the decide activity, which sees agentrt.ToolCall.EditedBy),
// and remember the decision
// for the session (Always, optionally for any tool and an input pattern).
// Remembered decisions ([Rule]) are shown as PermissionDecision events
// with Source "remembered", kept in [State] and [Result], and carried to
// the session's next run by [Start]. [Approve] sends the update
// [UpdateApprove], which refuses an approval of an unknown or
// already-decided call with an error wrapping agentrt.ErrNotPending.
//
// A server that must not hold a request open while a person decides sets
// [Runtime.Detach]: Run then ends with agentrt.StopPending and the pending
// calls in Done.Pending, as an in-process run does, and [Runtime.Resume]
// answers them later, from any process, like agentrt.Agent.Resume.
//
// # Sub-agents
//
// An [agentrt.AgentTool] runs its child agent inside the tool activity,
// in-process on the worker, in the child's Store. The child session is
// named after the parent's session and the call's tool_use id, as
// in-process, so two workflows (or two parallel calls) never share one.
// The child's events are not recorded, and a read-only agent tool retried
// after a worker death continues the same child session.
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
