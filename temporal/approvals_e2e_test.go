package temporal

import (
	"context"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EDetachAndResume: the in-process shape of deferred approvals on a
// real Temporal server. Run ends with StopPending while the workflow
// waits; a Resume in another "request" (after the worker restarted)
// approves the call, with an edited input, and streams the rest; an
// approval of an unknown or decided call is ErrNotPending.
func TestE2EDetachAndResume(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tq := uniqueName(t)
	session := "e2e-" + uniqueName(t)
	f := &e2eFixture{calcStarted: make(chan struct{})}
	script := agenttest.Script(
		agenttest.CallTool("save_note", `{"text":"draft"}`),
		agenttest.Reply("saved it"),
	)
	ag := f.agent(script)
	w := startWorker(t, c, tq, ag)
	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond, Detach: true}

	events, err := agenttest.Collect(rt.Run(ctx, session, "save a note"))
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	require.Equal(t, agentrt.StopPending, done.Reason)
	assert.Equal(t, agentrt.LayerPermission, done.Layer)
	require.Len(t, done.Pending, 1)
	p := done.Pending[0]
	assert.Equal(t, "save_note", p.Tool.Name)
	assert.JSONEq(t, `{"text":"draft"}`, string(p.RawInput))
	assert.Empty(t, f.notes, "nothing ran")

	// The worker restarts while the call waits; nothing is lost.
	w.Stop()
	w = startWorker(t, c, tq, ag)
	defer w.Stop()

	// Without decisions, it stays pending.
	events, err = agenttest.Collect(rt.Resume(ctx, session))
	require.NoError(t, err)
	done, _ = agenttest.Done(events)
	assert.Equal(t, agentrt.StopPending, done.Reason)

	_, err = agenttest.Collect(rt.Resume(ctx, session, agentrt.Decision{ToolUseID: "call_nope", Allow: true}))
	require.ErrorIs(t, err, agentrt.ErrNotPending)
	err = Approve(ctx, c, rt.Options.WorkflowID(session), agentrt.Decision{ToolUseID: "call_nope", Allow: true})
	require.ErrorIs(t, err, agentrt.ErrNotPending, "the update refuses it too")

	events, err = agenttest.Collect(rt.Resume(ctx, session, agentrt.Decision{ToolUseID: p.ToolUseID, Allow: true, Input: []byte(`{"text":"final"}`)}))
	require.NoError(t, err)
	done, ok = agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	assert.Equal(t, "saved it", done.FinalText)
	assert.Equal(t, []string{"final"}, f.notes, "run once, with the edit")
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 1)
	assert.Equal(t, "saved", results[0].Message.Content)

	err = Approve(ctx, c, rt.Options.WorkflowID(session), agentrt.Decision{ToolUseID: p.ToolUseID, Allow: true})
	require.Error(t, err, "the run is over")
	var res Result
	require.NoError(t, c.GetWorkflow(ctx, rt.Options.WorkflowID(session), "").Get(ctx, &res))
	agenttest.AssertInvariants(t, res.Messages)
}
