package agentrt_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func TestAgentToolDelegates(t *testing.T) {
	t.Parallel()
	store := &agentrt.MemoryStore{}
	var wrote []string
	write := agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) {
		wrote = append(wrote, in.Path)
		return "written", nil
	})
	childScript := agenttest.Script(
		agenttest.CallTool("add", `{"a":20,"b":22}`),
		agenttest.CallTool("write", `{"path":"denied.txt"}`),
		agenttest.Reply("the sum is 42"))
	specialist := &agentrt.Agent{Name: "math", Instructions: "You add.", Tools: []agentrt.Tool{addTool(), write}, Planner: childScript, Store: store}
	delegate := agentrt.AgentTool(specialist, "math", "Ask the math specialist.")
	assert.False(t, delegate.Spec().ReadOnly, "the child has a write tool")

	parentScript := agenttest.Script(agenttest.CallTool("math", `{"task":"add 20 and 22"}`), agenttest.Reply("42, says math"))
	var asked []string
	coordinator := &agentrt.Agent{Name: "coord", Tools: []agentrt.Tool{delegate}, Planner: parentScript, Store: store,
		Permission: agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			asked = append(asked, req.Tool.Name+"@"+req.SessionID)
			if req.Tool.Name == "write" {
				return agentrt.Decision{Reason: "no writes today"}, nil
			}
			return agentrt.Decision{Allow: true}, nil
		})}
	events, err := agenttest.Collect(coordinator.Run(context.Background(), "p1", "what is 20+22?"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "42, says math", done.FinalText)
	assert.Empty(t, wrote, "the parent's checker denied the child's write")

	child := "p1~math~call_1"
	assert.Equal(t, []string{"math@p1", "add@" + child, "write@" + child}, asked, "the child's checks go through the parent's checker")
	sub := agenttest.Filter[agentrt.SubAgentEvent](events)
	require.NotEmpty(t, sub)
	assert.Equal(t, "math", sub[0].Agent)
	assert.Equal(t, child, sub[0].SessionID)
	_, last := sub[len(sub)-1].Event.(agentrt.Done)
	assert.True(t, last, "the child's Done is forwarded")

	childMsgs, err := store.Load(context.Background(), child)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, childMsgs)
	assert.Equal(t, "add 20 and 22", childMsgs[0].Content)
	parentMsgs, _ := store.Load(context.Background(), "p1")
	assert.Equal(t, "the sum is 42", parentMsgs[2].Content)
	var linked bool
	for _, r := range allRecords(t, store, "p1") {
		if r.Kind == agentrt.RecordSubAgent {
			var link map[string]string
			require.NoError(t, json.Unmarshal(r.Data, &link))
			linked = link["session_id"] == child && link["tool_use_id"] == "call_1"
		}
	}
	assert.True(t, linked, "the parent session links to the child session")
}

// A child with a Permission of its own decides its calls itself; the
// parent's checker sees only the call of the agent tool. ReadOnly and
// WithTimeout apply to the agent tool as to any other.
func TestAgentToolOwnPermissionAndOptions(t *testing.T) {
	t.Parallel()
	store := &agentrt.MemoryStore{}
	write := agentrt.NewTool("write", "Writes.", func(_ context.Context, in WriteIn) (string, error) { return "written", nil })
	var childAsked []string
	specialist := &agentrt.Agent{Tools: []agentrt.Tool{write}, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("write", `{"path":"a.txt"}`), agenttest.Reply("done")),
		Permission: agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			childAsked = append(childAsked, req.Tool.Name)
			return agentrt.Decision{Reason: "the child says no"}, nil
		})}
	delegate := agentrt.AgentTool(specialist, "writer", "Writes for you.", agentrt.ReadOnly(), agentrt.WithTimeout(time.Minute))
	assert.True(t, delegate.Spec().ReadOnly, "ReadOnly marks it read-only although the child has a write tool")
	assert.Equal(t, time.Minute, delegate.Spec().Timeout)

	var parentAsked []string
	coordinator := &agentrt.Agent{Tools: []agentrt.Tool{delegate}, Store: store,
		Planner: agenttest.Script(agenttest.CallTool("writer", `{"task":"write a.txt"}`), agenttest.Reply("ok")),
		Permission: agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			parentAsked = append(parentAsked, req.Tool.Name)
			return agentrt.Decision{Allow: true}, nil
		})}
	events, err := agenttest.Collect(coordinator.Run(context.Background(), "own", "write it"))
	require.NoError(t, err)
	assert.Equal(t, []string{"writer"}, parentAsked, "the parent's checker does not see the child's calls")
	assert.Equal(t, []string{"write"}, childAsked)
	var denied bool
	for _, e := range agenttest.Filter[agentrt.SubAgentEvent](events) {
		if r, ok := e.Event.(agentrt.ToolResult); ok && r.Tool == "write" {
			denied = r.Message.IsError && strings.Contains(r.Message.Content, "the child says no")
		}
	}
	assert.True(t, denied, "the child's own checker denied its write")
}

func TestAgentToolCancellation(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	childScript := agenttest.Script(agenttest.Func(func(ctx context.Context, _ *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		cancel() // the parent is cancelled while the child's model thinks
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	specialist := &agentrt.Agent{Planner: childScript}
	parentScript := agenttest.Script(agenttest.CallTool("helper", `{"task":"x"}`), agenttest.Reply("never"))
	store := &agentrt.MemoryStore{}
	coordinator := &agentrt.Agent{Tools: []agentrt.Tool{agentrt.AgentTool(specialist, "helper", "Helps.")}, Planner: parentScript, Store: store}
	_, err := agenttest.Collect(coordinator.Run(ctx, "p", "go"))
	require.ErrorIs(t, err, context.Canceled)
	msgs, _ := store.Load(context.Background(), "p")
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 3)
	assert.True(t, msgs[2].IsError)
	assert.True(t, strings.HasPrefix(msgs[2].Content, "cancelled"), msgs[2].Content)
}
