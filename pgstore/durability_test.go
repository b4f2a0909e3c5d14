package pgstore

import (
	"fmt"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With the WAL writer slowed to 10 s and asynchronous commits as the
// server's default, every append the store acknowledged and synced
// survives an immediate stop (pg_ctl stop -m immediate), in both
// durability modes: Sync (or, by default, every append) flushes the WAL.
func TestSyncSurvivesImmediateStop(t *testing.T) {
	pgtest.Require(t)
	ctx := t.Context()
	srv, err := pgtest.Start(ctx, "wal_writer_delay=10s", "synchronous_commit=off")
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })

	const rounds, perRound = 3, 5
	for _, mode := range []Durability{SyncEveryAppend, SyncEveryTurn} {
		url, err := srv.CreateDatabase(ctx)
		require.NoError(t, err)
		lost := 0
		for r := range rounds {
			s, err := Open(ctx, url, &Options{Migrate: true, Durability: mode})
			require.NoError(t, err)
			id := fmt.Sprintf("r%d", r)
			for i := range perRound {
				require.NoError(t, s.Append(ctx, id, agentrt.NewUserMessage(fmt.Sprintf("message %d", i))))
			}
			var insert, before, after string
			require.NoError(t, s.Pool().QueryRow(ctx,
				`SELECT pg_current_wal_insert_lsn()::text, pg_current_wal_flush_lsn()::text`).Scan(&insert, &before))
			require.NoError(t, s.Sync(ctx, id))
			require.NoError(t, s.Pool().QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&after))
			var flushed bool
			require.NoError(t, s.Pool().QueryRow(ctx, `SELECT $1::pg_lsn >= $2::pg_lsn`, after, insert).Scan(&flushed))
			t.Logf("mode %d round %d: WAL inserted to %s, flushed to %s before Sync, %s after", mode, r, insert, before, after)
			assert.True(t, flushed, "mode %d: after Sync the WAL is flushed up to %s, past the appends (%s); before Sync %s", mode, after, insert, before)
			s.Close()

			require.NoError(t, srv.StopImmediate())
			require.NoError(t, srv.Start(ctx))
			s, err = Open(ctx, url, nil)
			require.NoError(t, err)
			msgs, err := s.Load(ctx, id)
			require.NoError(t, err)
			require.NoError(t, s.Verify(ctx, id))
			s.Close()
			lost += perRound - len(msgs)
		}
		if mode == SyncEveryTurn {
			// The control: appends not yet synced are what a crash takes.
			s, err := Open(ctx, url, &Options{Durability: mode})
			require.NoError(t, err)
			for i := range perRound {
				require.NoError(t, s.Append(ctx, "unsynced", agentrt.NewUserMessage(fmt.Sprintf("message %d", i))))
			}
			s.Close()
			require.NoError(t, srv.StopImmediate())
			require.NoError(t, srv.Start(ctx))
			s, err = Open(ctx, url, nil)
			require.NoError(t, err)
			msgs, err := s.Load(ctx, "unsynced")
			require.NoError(t, err)
			s.Close()
			t.Logf("control: without Sync, %d of %d appends lost", perRound-len(msgs), perRound)
		}
		t.Logf("mode %d: %d of %d acknowledged and synced messages lost", mode, lost, rounds*perRound)
		assert.Zero(t, lost, "mode %d: acknowledged and synced messages lost", mode)
	}
}
