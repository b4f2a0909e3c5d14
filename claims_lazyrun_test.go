package agentrt_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// claimSpecCounter is a tool that counts the calls of its Spec.
type claimSpecCounter struct {
	agentrt.Tool
	specs *atomic.Int32
}

func (c claimSpecCounter) Spec() agentrt.ToolSpec {
	c.specs.Add(1)
	return c.Tool.Spec()
}

// TestClaimRunDoesNothingUntilRanged shows what Agent.Run and README's
// Concepts table say: Run "does nothing until ranged". Calling Run without
// ranging over its iterator calls no planner (nor a tool's Spec), takes no
// lock and reads or writes nothing in the store; ranging it later does the
// run.
func TestClaimRunDoesNothingUntilRanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var plans, specs atomic.Int32
	script := agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("3"))
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		plans.Add(1)
		return script.Plan(ctx, req)
	})
	store := newClaimStore()
	ag := &agentrt.Agent{Planner: planner, Store: store, Tools: []agentrt.Tool{claimSpecCounter{addTool(), &specs}}}

	seq := ag.Run(ctx, "s1", "What is 1+2?")
	require.NotNil(t, seq)
	_ = ag.Run(ctx, "s1", "a second Run, never ranged")

	assert.Zero(t, plans.Load(), "no planner call")
	assert.Zero(t, specs.Load(), "the Agent is not even prepared")
	assert.Empty(t, store.entries(), "no lock, no load, no write")
	unlock, err := store.mem.Lock(ctx, "s1")
	require.NoError(t, err, "the session is not locked")
	unlock()
	msgs, err := store.mem.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Empty(t, msgs, "nothing is stored")

	// Ranging it does the run: the probes above see work when there is some.
	events, err := agenttest.Collect(seq)
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, "3", done.FinalText)
	assert.Equal(t, int32(2), plans.Load())
	assert.Equal(t, int32(1), specs.Load())
	log := store.entries()
	require.NotEmpty(t, log)
	assert.Equal(t, "lock", log[0])
	assert.Equal(t, "unlock", log[len(log)-1])
	assert.Contains(t, log, "append:user")
	msgs, err = store.mem.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Len(t, msgs, 4)
}
