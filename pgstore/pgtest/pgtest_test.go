package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestServerRestart(t *testing.T) {
	ctx := t.Context()
	url := NewDatabase(t)
	c, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	_, err = c.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
	require.NoError(t, err)
	c.Close(ctx)

	srv := Require(t)
	require.NoError(t, srv.Restart(ctx))
	c, err = pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer c.Close(ctx)
	var x int
	require.NoError(t, c.QueryRow(ctx, "SELECT x FROM t").Scan(&x))
	require.Equal(t, 7, x, "data survives a restart")
	var user string
	require.NoError(t, c.QueryRow(ctx, "SELECT current_user").Scan(&user))
	require.Equal(t, "postgres", user)
}
