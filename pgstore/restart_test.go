package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server goes down while a tool runs and comes back after the run
// failed: the run ends with a store error that says so, the session is
// still valid, and the next run resumes it.
func TestServerRestartMidRun(t *testing.T) {
	pgtest.Require(t)                     // skip or fail as for the other tests
	srv, err := pgtest.Start(t.Context()) // a server of its own, to restart
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	url, err := srv.CreateDatabase(t.Context())
	require.NoError(t, err)
	s, err := Open(t.Context(), url, &Options{Migrate: true})
	require.NoError(t, err)
	defer s.Close()

	const id = "restarted"
	stop := agentrt.NewTool("stop_db", "Stop the database.", func(ctx context.Context, _ struct{}) (string, error) {
		return "stopped", srv.Stop()
	})
	ag := &agentrt.Agent{
		Planner:    agenttest.Script(agenttest.CallTool("stop_db", `{}`), agenttest.Reply("unreachable")),
		Tools:      []agentrt.Tool{stop},
		Permission: agentrt.AllowAll(),
		Store:      s,
	}
	_, err = agenttest.Collect(ag.Run(t.Context(), id, "stop the database"))
	require.Error(t, err, "the run cannot store the tool's result")
	assert.Contains(t, err.Error(), `pgstore: append to session "restarted"`)
	t.Logf("the run failed with: %v", err)

	require.NoError(t, srv.Start(t.Context()))
	require.NoError(t, s.Verify(t.Context(), id))
	msgs, err := s.Load(t.Context(), id)
	require.NoError(t, err)
	require.Len(t, msgs, 2, "the question and the tool call, written ahead")
	assert.True(t, msgs[1].HasToolUse())

	// The same store (its pool reconnects) resumes the session.
	again := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("back")), Tools: ag.Tools, Permission: ag.Permission, Store: s}
	events, err := agenttest.Collect(again.Run(t.Context(), id, "again"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "back", done.FinalText)
	msgs, err = s.Load(t.Context(), id)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5)
	assert.True(t, strings.HasPrefix(msgs[2].Content, "interrupted"), msgs[2].Content)
}
