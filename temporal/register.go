package temporal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

// Policy says how the workflow decides whether a tool call may run.
//
// An Agent's [agentrt.PermissionChecker] is a Go callback that may block on
// a terminal or call a service; it cannot run inside workflow code, which
// must be deterministic. On Temporal the decision is therefore made by a
// Policy, and a human answers write-tool questions with a signal (see
// [Approve] and [Runtime.Ask]).
type Policy int

const (
	// PolicyFromAgent derives the policy from Agent.Permission: nil and
	// agentrt.AllowReadOnly() give PolicyReadOnly, agentrt.AllowAll()
	// gives PolicyAllowAll, and any other checker (agentrt.AskOnWrite, a
	// custom one) gives PolicyAsk. The checker itself is never called by
	// the workflow.
	PolicyFromAgent Policy = iota
	// PolicyReadOnly runs read-only tools and denies write tools, like
	// agentrt.AllowReadOnly.
	PolicyReadOnly
	// PolicyAsk runs read-only tools; each write tool call waits, durably
	// and for as long as it takes (or Options.ApprovalTimeout), for an
	// [Approval] sent as the signal [SignalApprove]. Pending calls are
	// listed by the queries [QueryState] and [QueryEvents].
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
	// PlannerTimeout is the start-to-close timeout of one planner call;
	// 0 means 5 minutes. Planner calls are retried by Temporal as
	// Agent.Retry says (MaxAttempts, BaseDelay, MaxDelay) on transient
	// errors ([agentrt.ProviderError.Retryable]) and on timeouts and
	// worker crashes; other planner errors end the run.
	PlannerTimeout time.Duration
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

func planActivityName(agent string) string { return WorkflowName(agent) + ".plan" }
func toolActivityName(agent string) string { return WorkflowName(agent) + ".tool" }

// Registry is where [Register] registers an agent: a worker.Worker, a
// testsuite.TestWorkflowEnvironment, or anything with these two methods.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers ag on a worker: the workflow that runs ag's loop under
// [WorkflowName](ag.Name), and the activities bound to ag's Planner and
// Tools. Several agents with different names may share a worker.
//
// The worker keeps ag and calls its Planner and Tools from activity
// goroutines; ag must not be modified afterwards. Agent.Store is not used:
// on Temporal the workflow history is the durable session (a [Result]
// carries the messages). Agent.Permission is used only to choose the
// policy (see [PolicyFromAgent]). Applied by the workflow: Instructions,
// Tools, Planner, MaxTurns, MaxParallelTools, ToolTimeout, MaxToolOutput,
// Retry (as the planner activity's retry policy), Budget.MaxTokens,
// Budget.MaxCost and NoFinalAnswer. Not applied: LoopGuard, Hooks,
// Compressor (with ContextTokens and TokenCounter) and Budget.MaxDuration
// (bound a run with StartOptions.ExecutionTimeout instead).
//
// Register returns an error for an invalid Agent (no Planner, a nil or
// duplicate tool). Registering the same agent name twice on one worker
// panics, as the SDK does.
func Register(r Registry, ag *agentrt.Agent, opts Options) error {
	d, err := newDefinition(ag, opts)
	if err != nil {
		return err
	}
	r.RegisterWorkflowWithOptions(d.workflow, workflow.RegisterOptions{Name: WorkflowName(ag.Name)})
	acts := &activities{d: d, ag: ag}
	r.RegisterActivityWithOptions(acts.plan, activity.RegisterOptions{Name: planActivityName(ag.Name)})
	r.RegisterActivityWithOptions(acts.tool, activity.RegisterOptions{Name: toolActivityName(ag.Name)})
	return nil
}

// definition is what the workflow and its activities derive from an Agent
// once, at registration.
type definition struct {
	name         string
	instructions string
	tools        map[string]agentrt.Tool
	specs        []agentrt.ToolSpec
	byName       map[string]agentrt.ToolSpec
	names        string // "a", "b" for the unknown-tool message
	idempotent   map[string]bool
	policy       Policy
	maxTurns     int
	maxPar       int
	toolTimeout  time.Duration
	maxOutput    int
	retry        agentrt.RetryPolicy
	budget       agentrt.Budget
	noFinal      bool
	opts         Options
}

func newDefinition(ag *agentrt.Agent, opts Options) (*definition, error) {
	if ag == nil {
		return nil, fmt.Errorf("agentrt/temporal: nil Agent")
	}
	if ag.Planner == nil {
		return nil, agentrt.ErrNoPlanner
	}
	d := &definition{
		name:         ag.Name,
		instructions: ag.Instructions,
		tools:        make(map[string]agentrt.Tool, len(ag.Tools)),
		byName:       make(map[string]agentrt.ToolSpec, len(ag.Tools)),
		idempotent:   make(map[string]bool, len(opts.Idempotent)),
		policy:       opts.Policy,
		maxTurns:     ag.MaxTurns,
		maxPar:       ag.MaxParallelTools,
		toolTimeout:  ag.ToolTimeout,
		maxOutput:    ag.MaxToolOutput,
		retry:        ag.Retry,
		budget:       ag.Budget,
		noFinal:      ag.NoFinalAnswer,
	}
	names := make([]string, 0, len(ag.Tools))
	for i, t := range ag.Tools {
		if t == nil {
			return nil, fmt.Errorf("agentrt/temporal: Agent.Tools[%d] is nil", i)
		}
		s := t.Spec()
		if _, dup := d.tools[s.Name]; dup {
			return nil, fmt.Errorf("agentrt/temporal: two tools are named %q", s.Name)
		}
		d.tools[s.Name] = t
		d.byName[s.Name] = s
		d.specs = append(d.specs, s)
		names = append(names, strconv.Quote(s.Name))
	}
	slices.Sort(names)
	d.names = strings.Join(names, ", ")
	for _, n := range opts.Idempotent {
		d.idempotent[n] = true
	}
	if d.policy == PolicyFromAgent {
		d.policy = policyOf(ag.Permission)
	}
	if d.maxTurns <= 0 {
		d.maxTurns = agentrt.DefaultMaxTurns
	}
	if d.maxPar <= 0 {
		d.maxPar = agentrt.DefaultMaxParallelTools
	}
	if d.maxOutput == 0 {
		d.maxOutput = agentrt.DefaultMaxToolOutput
	}
	if opts.ToolAttempts <= 0 {
		opts.ToolAttempts = 3
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

// policyOf maps an in-process permission checker to a workflow policy.
func policyOf(pc agentrt.PermissionChecker) Policy {
	switch {
	case pc == nil || pc == agentrt.AllowReadOnly():
		return PolicyReadOnly
	case pc == agentrt.AllowAll():
		return PolicyAllowAll
	}
	return PolicyAsk
}

// toolTimeoutOf is the tool's own timeout inside the activity, 0 for none.
func (d *definition) toolTimeoutOf(s agentrt.ToolSpec) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return d.toolTimeout
}

// plannerRetry mirrors the defaults of agentrt.RetryPolicy.
func (d *definition) plannerRetry() (attempts int32, base, max time.Duration) {
	attempts, base, max = int32(d.retry.MaxAttempts), d.retry.BaseDelay, d.retry.MaxDelay
	if attempts <= 0 {
		attempts = 3
	}
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	return attempts, base, max
}
