package agentrt_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func TestMemoryStoreConformance(t *testing.T) {
	t.Parallel()
	agenttest.TestStore(t, func(*testing.T) agentrt.SessionStore { return &agentrt.MemoryStore{} })
}

func TestJSONLStoreConformance(t *testing.T) {
	t.Parallel()
	for _, d := range []agentrt.Durability{agentrt.SyncEveryTurn, agentrt.SyncEveryAppend, agentrt.SyncNever} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			agenttest.TestStore(t, func(t *testing.T) agentrt.SessionStore {
				return newJSONLStore(t, &agentrt.JSONLOptions{Durability: d})
			})
		})
	}
}

// newJSONLStore returns a store on a new directory, closed at the end of
// the test; any warning fails the test unless opts sets OnWarning.
func newJSONLStore(t testing.TB, opts *agentrt.JSONLOptions) *agentrt.JSONLStore {
	t.Helper()
	o := agentrt.JSONLOptions{}
	if opts != nil {
		o = *opts
	}
	if o.OnWarning == nil {
		o.OnWarning = func(err error) { t.Errorf("unexpected store warning: %v", err) }
	}
	s, err := agentrt.NewJSONLStore(filepath.Join(t.TempDir(), "sessions"), &o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// allRecords returns the session's records, as the runtime loads them.
func allRecords(t *testing.T, s agentrt.RecordStore, id string) []agentrt.Record {
	t.Helper()
	recs, err := s.LoadRecords(t.Context(), id)
	require.NoError(t, err)
	return recs
}
