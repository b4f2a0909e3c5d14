package pgstore

import (
	"os"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	os.Exit(pgtest.Main(m))
}

// newStore returns a store on a new, empty database.
func newStore(t testing.TB, opts *Options) *Store {
	t.Helper()
	url := pgtest.NewDatabase(t)
	if opts == nil {
		opts = &Options{}
	}
	opts.Migrate = true
	s, err := Open(t.Context(), url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStoreContract(t *testing.T) {
	agenttest.TestStore(t, func(t *testing.T) agentrt.SessionStore { return newStore(t, nil) })
}

func TestStoreContractSyncEveryTurn(t *testing.T) {
	agenttest.TestStore(t, func(t *testing.T) agentrt.SessionStore {
		return newStore(t, &Options{Durability: SyncEveryTurn})
	})
}
