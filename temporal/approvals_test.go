package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// askLaterChecker defers every write tool call to a person, as a server
// does in-process (agentrt.Decision.Pending).
var askLaterChecker = agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	if req.Tool.ReadOnly {
		return agentrt.Decision{Allow: true}, nil
	}
	return agentrt.Decision{Pending: true}, nil
})

// updateResult is what became of an update, once the workflow took it.
type updateResult struct {
	accepted bool
	rejected error
}

// update sends UpdateApprove; the callbacks fill the result as the
// workflow handles it.
func update(env *testsuite.TestWorkflowEnvironment, a agentrt.Decision) *updateResult {
	r := &updateResult{}
	env.UpdateWorkflow(UpdateApprove, "u-"+a.ToolUseID+"-"+a.Reason, &testsuite.TestUpdateCallback{
		OnAccept:   func() { r.accepted = true },
		OnReject:   func(err error) { r.rejected = err },
		OnComplete: func(any, error) {},
	}, a)
	return r
}

// TestApprovalSameShapeAsInProcess: the Agent's own checker leaves writes
// to a person (Decision.Pending, PolicyFromAgent); approvals edit the input,
// remember a decision with a pattern, deny; an approval of an unknown or
// decided call is refused.
func TestApprovalSameShapeAsInProcess(t *testing.T) {
	t.Parallel()
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTool("save_note", `{"text":"draft"}`),
		agenttest.CallTool("save_note", `{"text":"notes: b"}`),
		agenttest.CallTool("save_note", `{"text":"c"}`),
		agenttest.Reply("done"),
	)
	ag := newAgent(f, script)
	ag.Permission = askLaterChecker
	env := newEnv(t, ag, Options{})
	var first, second State
	var unknown, deferred, approved, decided *updateResult
	env.RegisterDelayedCallback(func() {
		first = queryState(t, env)
		unknown = update(env, agentrt.Decision{ToolUseID: "call_nope", Allow: true})
		// A pending decision decides nothing: the update refuses it, a
		// signal is ignored (the call still waits for the approval below).
		deferred = update(env, agentrt.Decision{ToolUseID: "call_1", Pending: true, Reason: "later"})
		env.SignalWorkflow(SignalApprove, agentrt.Decision{ToolUseID: "call_1", Pending: true})
		approved = update(env, agentrt.Decision{ToolUseID: "call_1", Allow: true, Input: json.RawMessage(`{"text":"notes: edited"}`),
			Always: true, Pattern: `"text":"notes: `})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		second = queryState(t, env)
		decided = update(env, agentrt.Decision{ToolUseID: "call_1", Allow: true, Reason: "again"})
		env.SignalWorkflow(SignalApprove, agentrt.Decision{ToolUseID: second.Pending[0].ToolUseID, Reason: "not c", Source: "alice"})
	}, 2*time.Hour)
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save notes"})
	res := runResult(t, env)

	require.Len(t, first.Pending, 1)
	assert.Equal(t, "call_1", first.Pending[0].ToolUseID)
	var ae *temporal.ApplicationError
	require.ErrorAs(t, unknown.rejected, &ae)
	assert.Equal(t, ErrorTypeNotPending, ae.Type())
	assert.Contains(t, ae.Error(), "no open call")
	require.ErrorAs(t, deferred.rejected, &ae)
	assert.Contains(t, ae.Error(), "cannot be pending")
	require.NoError(t, approved.rejected)
	assert.True(t, approved.accepted)
	require.ErrorAs(t, decided.rejected, &ae)
	assert.Equal(t, ErrorTypeNotPending, ae.Type())
	assert.Contains(t, ae.Error(), "already")
	err := approveError("wf", agentrt.Decision{ToolUseID: "call_1"}, decided.rejected)
	require.ErrorIs(t, err, agentrt.ErrNotPending)
	assert.Equal(t, 1, strings.Count(err.Error(), "no such pending call"), "Approve's error says it once: %v", err)
	assert.Contains(t, err.Error(), "already decided")
	require.Len(t, second.Pending, 1, "the call outside the pattern waits")
	assert.Equal(t, json.RawMessage(`{"text":"c"}`), second.Pending[0].Input)

	assert.Equal(t, []string{"notes: edited", "notes: b"}, f.savedNotes())
	results := toolResults(res.Messages)
	require.Len(t, results, 3)
	assert.Equal(t, `permission denied: "alice" refused this call of "save_note": not c`, results[2].Content)
	assert.True(t, results[2].IsError)
	decisions := agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env))
	var sources []string
	for _, d := range decisions {
		sources = append(sources, d.Decision.Source)
	}
	assert.Equal(t, []string{"user", "remembered", "alice"}, sources)
	assert.True(t, decisions[0].Decision.Always, "the remembered decision is visible in the events")
	assert.Equal(t, []Rule{{Tool: "save_note", Pattern: `"text":"notes: `, Allow: true}}, res.Rules)

	// The session's next run (what Start does): the rule holds.
	f2 := newFixture()
	ag2 := newAgent(f2, agenttest.Script(agenttest.CallTool("save_note", `{"text":"notes: d"}`), agenttest.Reply("ok")))
	ag2.Permission = askLaterChecker
	env2 := newEnv(t, ag2, Options{})
	env2.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "one more", History: res.Messages, Rules: res.Rules})
	runResult(t, env2)
	assert.Equal(t, []string{"notes: d"}, f2.savedNotes())
	decisions = agenttest.Filter[agentrt.PermissionDecision](queryEvents(t, env2))
	require.Len(t, decisions, 1)
	assert.Equal(t, "remembered", decisions[0].Decision.Source)
}

// TestApprovalEditedInputIsValidated: an edited input goes through the
// tool's validation like the model's.
func TestApprovalEditedInputIsValidated(t *testing.T) {
	t.Parallel()
	f := newFixture()
	ag := newAgent(f, agenttest.Script(agenttest.CallTool("save_note", `{"text":"x"}`), agenttest.Reply("done")))
	env := newEnv(t, ag, Options{Policy: PolicyAsk})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalApprove, agentrt.Decision{ToolUseID: "call_1", Allow: true, Input: json.RawMessage(`{"text":""}`)})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName(""), RunInput{SessionID: "s1", Input: "save x"})
	res := runResult(t, env)
	assert.Empty(t, f.savedNotes())
	results := toolResults(res.Messages)
	require.Len(t, results, 1)
	assert.True(t, results[0].IsError)
	assert.Contains(t, results[0].Content, "text")
}
