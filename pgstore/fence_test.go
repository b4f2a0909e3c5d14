package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server restarts while run A's tool runs, and A's lock connection
// dies with it. Replica B runs the same session: it answers A's open call
// as interrupted and adds a turn. A's late append of its result is
// refused with ErrLockLost, and the session stays valid.
func TestLostLockIsFenced(t *testing.T) {
	pgtest.Require(t)
	ctx := t.Context()
	srv, err := pgtest.Start(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	url, err := srv.CreateDatabase(ctx)
	require.NoError(t, err)
	storeA, err := Open(ctx, url, &Options{Migrate: true})
	require.NoError(t, err)
	defer storeA.Close()
	var storeB *Store

	const id = "fenced"
	var runB error
	restart := agentrt.NewTool("restart_db", "Restart the database.", func(ctx context.Context, _ struct{}) (string, error) {
		if err := srv.Restart(ctx); err != nil {
			return "", err
		}
		// Replica B, and A's pool reconnected (as its health check would):
		// A's late append meets the fence, not a dead connection.
		var err error
		if storeB, err = Open(ctx, url, nil); err != nil {
			return "", err
		}
		storeA.Pool().Reset()
		b := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("B's answer")), Store: storeB}
		_, runB = agenttest.Collect(b.Run(ctx, id, "B here"))
		return "restarted", nil
	})
	a := &agentrt.Agent{
		Planner:    agenttest.Script(agenttest.CallTool("restart_db", `{}`), agenttest.Reply("A's answer")),
		Tools:      []agentrt.Tool{restart},
		Permission: agentrt.AllowAll(),
		Store:      storeA,
	}
	_, err = agenttest.Collect(a.Run(ctx, id, "restart it"))
	require.NoError(t, runB, "B runs the session once A's lock is gone")
	defer storeB.Close()
	require.ErrorIs(t, err, ErrLockLost, "A's late append is refused")
	t.Logf("run A failed with: %v", err)

	require.NoError(t, storeB.Verify(ctx, id))
	msgs, err := storeB.Load(ctx, id)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5, "A's question and call, B's interrupted result, B's question and answer")
	assert.True(t, strings.HasPrefix(msgs[2].Content, "interrupted"), msgs[2].Content)
	assert.Equal(t, "B's answer", msgs[4].Content+msgs[4].Text())
}

// A lock whose connection is gone loses the session to the next Lock at
// once: the old holder's appends are refused, the new holder's go in.
func TestAppendAfterTakeoverIsRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := newStore(t, nil)
	b, err := Open(ctx, a.pool.Config().ConnString(), nil)
	require.NoError(t, err)
	defer b.Close()
	const id = "taken"
	require.NoError(t, a.Append(ctx, id, agentrt.NewUserMessage("before")))
	unlockA, err := a.Lock(ctx, id)
	require.NoError(t, err)
	defer unlockA()
	require.NoError(t, a.Append(ctx, id, agentrt.NewUserMessage("held")))
	_, err = b.Lock(ctx, id)
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)

	// The server drops A's lock connection, as a network failure would.
	_, err = a.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	require.NoError(t, err)
	unlockB := lockSoon(t, b, id)
	require.NoError(t, b.Append(ctx, id, agentrt.NewUserMessage("B")))
	require.ErrorIs(t, a.Append(ctx, id, agentrt.NewUserMessage("late")), ErrLockLost)
	require.ErrorIs(t, a.AppendRecord(ctx, id, agentrt.Record{Kind: "note", Data: []byte(`{}`)}), ErrLockLost)
	unlockB()
	require.ErrorIs(t, a.Append(ctx, id, agentrt.NewUserMessage("later")), ErrLockLost, "refused after B's unlock too")

	msgs, err := b.Load(ctx, id)
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	assert.Equal(t, "B", msgs[2].Content)
	require.NoError(t, b.Verify(ctx, id))
}

// A live holder keeps its lease past its time limit (the heartbeat
// extends it) and its appends go in; once it unlocks, another store
// locks at once.
func TestLeaseKeptByHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const lease = 600 * time.Millisecond
	a := newStore(t, &Options{Lease: lease})
	b, err := Open(ctx, a.pool.Config().ConnString(), &Options{Lease: lease})
	require.NoError(t, err)
	defer b.Close()
	unlock, err := a.Lock(ctx, "live")
	require.NoError(t, err)
	// Tried on this goroutine: assert.Never would leave its last try
	// running (and holding b's claim) when it returns.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(4 * lease); time.Now().Before(end); <-tick.C {
		u, err := b.Lock(ctx, "live")
		if err == nil {
			u()
			t.Fatal("another store locked a session whose holder is alive")
		}
		require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	}
	require.NoError(t, a.Append(ctx, "live", agentrt.NewUserMessage("still mine")), "after 4 leases")
	unlock()
	u, err := b.Lock(ctx, "live")
	require.NoError(t, err)
	u()
}
