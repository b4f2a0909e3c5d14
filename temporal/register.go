package temporal

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable/loop"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

// Policy says who decides whether a tool call may run on Temporal.
type Policy int

const (
	// PolicyFromAgent runs Agent.Permission (nil means
	// agentrt.AllowReadOnly()) in the decide activity, on a worker, with
	// the same decisions as in-process. A call the checker leaves to a
	// person (agentrt.Decision.Pending) waits, durably, for an [agentrt.Decision], as
	// under PolicyAsk. A checker that asks a person on a terminal
	// (agentrt.AskOnWrite) asks on the worker's: to have a person answer
	// from anywhere, durably, use Decision.Pending or PolicyAsk.
	PolicyFromAgent Policy = iota
	// PolicyReadOnly runs read-only tools and denies write tools, like
	// agentrt.AllowReadOnly, whatever Agent.Permission is.
	PolicyReadOnly
	// PolicyAsk runs read-only tools; each write tool call waits, durably
	// and for as long as it takes (or Options.ApprovalTimeout), for an
	// [agentrt.Decision] sent as the signal [SignalApprove] or the update
	// [UpdateApprove] (see [Approve]). Pending calls are
	// listed by the queries [QueryState] and [QueryEvents]. Agent.Permission
	// is not used; a sub-agent's write calls are denied.
	PolicyAsk
	// PolicyAllowAll runs every tool, like agentrt.AllowAll.
	PolicyAllowAll
)

func (p Policy) String() string {
	switch p {
	case PolicyFromAgent:
		return "from-agent"
	case PolicyReadOnly:
		return "read-only"
	case PolicyAsk:
		return "ask"
	case PolicyAllowAll:
		return "allow-all"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// Options configure an agent's workflow and activities on a worker. The
// zero value means the defaults documented on each field.
//
// Every worker that registers the same agent must use the same Options:
// they shape the workflow's commands (timeouts, retry policies), and a
// replay on a worker with different Options may fail as non-deterministic.
type Options struct {
	// Policy decides tool calls; see [Policy]. Zero means PolicyFromAgent.
	Policy Policy
	// ApprovalTimeout bounds the wait for an approval under PolicyAsk;
	// when it expires the call is denied. 0 means no limit: the workflow
	// waits for hours or days if need be, at no cost.
	ApprovalTimeout time.Duration
	// Idempotent names the write tools that may be retried after a
	// failure of the worker running them (a crash, a lost heartbeat).
	// Other write tools run at most once: when their worker dies, the model
	// gets an is_error "interrupted" result instead of a second run.
	Idempotent []string
	// ToolAttempts is the number of attempts of a read-only or idempotent
	// tool's activity, counting the first; 0 means 3. A tool that returns
	// an error is not retried: the error is its result, for the model.
	ToolAttempts int
	// MaxToolDuration is the start-to-close timeout of a tool activity
	// whose tool and Agent set no timeout; 0 means one hour. A tool with a
	// timeout (agentrt.WithTimeout or Agent.ToolTimeout) gets that timeout
	// plus HeartbeatTimeout, so that the tool's own timeout fires first and
	// becomes a "timed out" result.
	MaxToolDuration time.Duration
	// HeartbeatTimeout is how soon Temporal notices that a worker running a
	// tool or a planner call died; the activities heartbeat three times per
	// period while the tool or planner runs. Cancellation reaches a running
	// tool's context through these heartbeats. 0 means 30s.
	HeartbeatTimeout time.Duration
	// PlannerTimeout is the start-to-close timeout of one planner call,
	// and of one decide activity (Decode and the permission checker);
	// 0 means 5 minutes. The workflow retries a failed planner call as
	// Agent.Retry says (transient errors, [agentrt.ProviderError.Retryable]),
	// with a durable timer between attempts.
	PlannerTimeout time.Duration
	// PlannerAttempts is the number of attempts of one planner call whose
	// activity timed out (its worker died, or PlannerTimeout passed),
	// counting the first; 0 means 5. These do not count against
	// Agent.Retry.MaxAttempts. It also bounds the attempts of a decide
	// activity.
	PlannerAttempts int
}

// DefaultAgentName is the name used for an Agent whose Name is empty.
const DefaultAgentName = "agent"

// WorkflowName returns the workflow type under which [Register] registers
// the agent named agentName ("" means [DefaultAgentName]):
// "agentrt.NAME". Its activities are "agentrt.NAME.plan" and
// "agentrt.NAME.tool".
func WorkflowName(agentName string) string {
	if agentName == "" {
		agentName = DefaultAgentName
	}
	return "agentrt." + agentName
}

func planActivityName(agent string) string   { return WorkflowName(agent) + ".plan" }
func decideActivityName(agent string) string { return WorkflowName(agent) + ".decide" }
func toolActivityName(agent string) string   { return WorkflowName(agent) + ".tool" }

// Registry is where [Register] registers an agent: a worker.Worker, a
// testsuite.TestWorkflowEnvironment, or anything with these two methods.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers ag on a worker: the workflow that runs ag's loop under
// [WorkflowName](ag.Name), and its activities ("agentrt.NAME.plan",
// ".decide" and ".tool") bound to ag. Several agents with different names
// may share a worker.
//
// The workflow drives the same loop as [agentrt.Agent.Run]
// (not a copy of it), so every Agent field works as in-process:
// Instructions, Tools, Planner, MaxTurns, MaxParallelTools, ToolTimeout,
// MaxToolOutput, LoopGuard, Retry, Budget (MaxDuration as a durable timer
// over the whole run, approvals included), Compressor with ContextTokens
// and TokenCounter, the BeforePlan, AfterPlan, BeforeTool and AfterTool
// Hooks, NoFinalAnswer, and Permission as [Options.Policy] says. Where
// each callback runs: the Compressor, BeforePlan, the Planner and
// AfterPlan in the planner activity; Decode and the permission checker in
// the decide activity; BeforeTool, the tool and AfterTool in the tool
// activity, so that the context a BeforeTool hook returns reaches the
// tool and its AfterTool hooks.
//
// Register refuses, with an error naming the field, what it cannot honour:
// a Store (the workflow history is the session; a [Result] carries the
// messages) and the OnRunStart, OnRunEnd, OnTurnStart and OnTurnEnd hooks
// (the contexts they return would have to span activities, possibly on
// different workers). It also returns an error for an invalid Agent (no
// Planner, a nil or duplicate tool). Registering the same agent name twice
// on one worker panics, as the SDK does.
//
// The worker keeps ag and calls its callbacks from activity goroutines; ag
// must not be modified afterwards.
func Register(r Registry, ag *agentrt.Agent, opts Options) error {
	d, err := newDefinition(ag, opts)
	if err != nil {
		return err
	}
	r.RegisterWorkflowWithOptions(d.workflow, workflow.RegisterOptions{Name: WorkflowName(ag.Name)})
	acts := &activities{d: d}
	r.RegisterActivityWithOptions(acts.plan, activity.RegisterOptions{Name: planActivityName(ag.Name)})
	r.RegisterActivityWithOptions(acts.decide, activity.RegisterOptions{Name: decideActivityName(ag.Name)})
	r.RegisterActivityWithOptions(acts.tool, activity.RegisterOptions{Name: toolActivityName(ag.Name)})
	return nil
}

// definition is what the workflow and its activities derive from an Agent
// once, at registration.
type definition struct {
	ag          *agentrt.Agent
	name        string
	byName      map[string]agentrt.ToolSpec
	idempotent  map[string]bool
	policy      Policy
	toolTimeout time.Duration
	maxDuration time.Duration
	opts        Options
}

func newDefinition(ag *agentrt.Agent, opts Options) (*definition, error) {
	if ag == nil {
		return nil, fmt.Errorf("agentrt/temporal: nil Agent")
	}
	if ag.Store != nil {
		return nil, errors.New("agentrt/temporal: Agent.Store is not used on Temporal (the workflow history is the session, and a Result carries its messages): leave it nil")
	}
	for i, h := range ag.Hooks {
		for _, f := range []struct {
			name string
			set  bool
		}{{"OnRunStart", h.OnRunStart != nil}, {"OnRunEnd", h.OnRunEnd != nil}, {"OnTurnStart", h.OnTurnStart != nil}, {"OnTurnEnd", h.OnTurnEnd != nil}} {
			if f.set {
				return nil, fmt.Errorf("agentrt/temporal: Agent.Hooks[%d].%s is not supported on Temporal: a run's and a turn's steps run in separate activities, possibly on different workers, so the context it returns cannot reach them", i, f.name)
			}
		}
	}
	// The loop validates the Agent (and calls every tool's Spec once).
	if _, err := loop.New(ag, "", nil); err != nil {
		return nil, err
	}
	d := &definition{
		ag:          ag,
		name:        ag.Name,
		byName:      make(map[string]agentrt.ToolSpec, len(ag.Tools)),
		idempotent:  make(map[string]bool, len(opts.Idempotent)),
		policy:      opts.Policy,
		toolTimeout: ag.ToolTimeout,
		maxDuration: ag.Budget.MaxDuration,
	}
	for _, t := range ag.Tools {
		s := t.Spec()
		d.byName[s.Name] = s
	}
	for _, n := range opts.Idempotent {
		d.idempotent[n] = true
	}
	if opts.ToolAttempts <= 0 {
		opts.ToolAttempts = 3
	}
	if opts.PlannerAttempts <= 0 {
		opts.PlannerAttempts = 5
	}
	if opts.MaxToolDuration <= 0 {
		opts.MaxToolDuration = time.Hour
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = 30 * time.Second
	}
	if opts.PlannerTimeout <= 0 {
		opts.PlannerTimeout = 5 * time.Minute
	}
	d.opts = opts
	return d, nil
}

// checker is the permission checker of the decide activity: nil for the
// Agent's own.
func (d *definition) checker() agentrt.PermissionChecker {
	switch d.policy {
	case PolicyReadOnly:
		return agentrt.AllowReadOnly()
	case PolicyAllowAll:
		return agentrt.AllowAll()
	case PolicyAsk:
		return askChecker{}
	}
	return nil
}

// toolTimeoutOf is the tool's own timeout inside the activity, 0 for none.
func (d *definition) toolTimeoutOf(s agentrt.ToolSpec) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return d.toolTimeout
}
