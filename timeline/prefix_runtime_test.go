package timeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/timeline"
)

// What the runtime writes, the timeline reads: a session of three runs on
// a JSONL file, with a hook that puts the time into the system prompt in
// one call, a Window that cuts the history, and runs that only append,
// gives a cache break for each cause and none elsewhere; Verify passes.
func TestCacheBreaksOfARealSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	calls := 0
	hook := agentrt.Hooks{BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
		calls++
		if calls == 3 {
			req.System += " It is 10:02." // a bad hook, once
		}
		return ctx, nil
	}}
	var compressor agentrt.Compressor
	run := func(input string, steps ...agenttest.Step) {
		t.Helper()
		ag := &agentrt.Agent{Instructions: "Be brief.", Tools: []agentrt.Tool{add}, Store: store, Hooks: []agentrt.Hooks{hook},
			Compressor: compressor, Planner: agenttest.Script(steps...)}
		_, err := agenttest.Collect(ag.Run(ctx, "s", input))
		require.NoError(t, err)
	}
	// Run 1: calls 1-3 (call 3 has the time in its system prompt).
	run("add", agenttest.CallTool("add", `{"A":1,"B":1}`), agenttest.CallTool("add", `{"A":2,"B":1}`), agenttest.Reply("3"))
	// Run 2: call 4 only appends to call 3's history, but the system
	// prompt is the agent's again: a break.
	run("again", agenttest.Reply("ok"))
	// Run 3: call 5 only appends.
	run("once more", agenttest.Reply("fine"))
	// Run 4: a Window keeps the goal and the last messages: history cut.
	compressor = agentrt.Window{MaxMessages: 2}
	run("and now?", agenttest.Reply("done"))

	s, err := timeline.Load(ctx, dir, "s")
	require.NoError(t, err)
	var causes []string
	for _, r := range s.Runs {
		for _, tu := range r.Turns {
			require.NotNil(t, tu.Model)
			require.NotNil(t, tu.Model.Prefix, "every call has a fingerprint")
			if tu.CacheBreak != nil {
				causes = append(causes, tu.CacheBreak.Cause)
			} else {
				causes = append(causes, "")
			}
		}
	}
	require.Len(t, causes, 6)
	assert.Equal(t, "", causes[0], "the first call")
	assert.Equal(t, "", causes[1], "appended")
	assert.Equal(t, "system prompt changed by hook 0", causes[2])
	assert.Equal(t, "system prompt changed by hook 0", causes[3], "the hook's change undone, in a new run")
	assert.Equal(t, "", causes[4], "a new run that only appends")
	assert.Contains(t, causes[5], "history rewritten at message 0 by compaction")
	assert.Equal(t, 3, s.CacheBreaks())

	fs, err := timeline.Verify(ctx, dir, "s", nil)
	require.NoError(t, err)
	assert.Empty(t, fs)
}
