package agentrt

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONLDurabilityModes counts the fsyncs of a session file under each
// Durability: SyncEveryAppend syncs the new file and then every line, and
// Sync adds nothing; SyncEveryTurn syncs the new file, then only when Sync
// is called or the session is unlocked with lines not yet synced;
// SyncNever never syncs.
func TestJSONLDurabilityModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode Durability
		// fsyncs after: the first append (which creates the file), two
		// more appends, Sync, Sync again with nothing new, one more
		// append, and unlock.
		want []int
	}{
		{SyncEveryAppend, []int{2, 4, 4, 4, 5, 5}},
		{SyncEveryTurn, []int{1, 1, 2, 2, 2, 3}},
		{SyncNever, []int{0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := NewJSONLStore(t.TempDir(), &JSONLOptions{Durability: tc.mode})
			require.NoError(t, err)
			defer s.Close()
			var mu sync.Mutex
			n := 0
			s.fsync = func(f *os.File) error {
				mu.Lock()
				n++
				mu.Unlock()
				return f.Sync()
			}
			count := func() int {
				mu.Lock()
				defer mu.Unlock()
				return n
			}
			unlock, err := s.Lock(ctx, "s")
			require.NoError(t, err)
			var got []int
			require.NoError(t, s.Append(ctx, "s", NewUserMessage("one")))
			got = append(got, count())
			require.NoError(t, s.Append(ctx, "s", NewUserMessage("two")))
			require.NoError(t, s.Append(ctx, "s", NewUserMessage("three")))
			got = append(got, count())
			require.NoError(t, s.Sync(ctx, "s"))
			got = append(got, count())
			require.NoError(t, s.Sync(ctx, "s"))
			got = append(got, count())
			require.NoError(t, s.Append(ctx, "s", NewUserMessage("four")))
			got = append(got, count())
			unlock()
			got = append(got, count())
			assert.Equal(t, tc.want, got)
		})
	}
}
