package pgstore

import (
	"io/fs"
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

func TestDeleteAndForkOfHeldSession(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, nil)
	require.NoError(t, s.Append(ctx, "held", agentrt.NewUserMessage("hi")))
	require.NoError(t, s.Append(ctx, "src", agentrt.NewUserMessage("hello")))
	unlock, err := s.Lock(ctx, "held")
	require.NoError(t, err)
	require.ErrorIs(t, s.Delete(ctx, "held"), agentrt.ErrSessionBusy)
	require.ErrorIs(t, s.Fork(ctx, "src", "held", 1), agentrt.ErrSessionBusy)
	unlock()
	require.ErrorIs(t, s.Fork(ctx, "src", "held", 1), agentrt.ErrSessionExists)
	require.NoError(t, s.Delete(ctx, "held"))
	msgs, err := s.Load(ctx, "held")
	require.NoError(t, err)
	require.Empty(t, msgs)
}

func TestFork(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, nil)
	msgs := []agentrt.Message{
		agentrt.NewAssistantMessage(agentrt.TextBlock("I start.")),
		agentrt.NewUserMessage("  The   first question  "),
		agentrt.NewAssistantMessage(agentrt.TextBlock("answer")),
		agentrt.NewUserMessage("second"),
	}
	for i, m := range msgs {
		require.NoError(t, s.Append(ctx, "src", m))
		require.NoError(t, s.AppendRecord(ctx, "src", agentrt.Record{Kind: "note", Data: []byte(`{"after":` + string(rune('0'+i)) + `}`)}))
	}
	require.NoError(t, s.Fork(ctx, "src", "dst", 3))
	got, err := s.Load(ctx, "dst")
	require.NoError(t, err)
	require.Equal(t, msgs[:3], got)
	recs, err := s.LoadRecords(ctx, "dst")
	require.NoError(t, err)
	require.Len(t, recs, 3, "the records up to message 3 come along")
	require.Equal(t, `{"after":2}`, string(recs[2].Data))
	require.NoError(t, s.Verify(ctx, "dst"))
	infos, err := s.List(ctx)
	require.NoError(t, err)
	for _, info := range infos {
		if info.ID == "dst" {
			require.Equal(t, 3, info.Messages)
			require.Equal(t, "The first question", info.Title)
		}
	}
	// The fork appends after its copy.
	require.NoError(t, s.Append(ctx, "dst", agentrt.NewUserMessage("branch")))
	require.NoError(t, s.Verify(ctx, "dst"))

	require.NoError(t, s.Fork(ctx, "src", "empty", 0))
	got, err = s.Load(ctx, "empty")
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, s.Fork(ctx, "src", "all", 4))
	recs, err = s.LoadRecords(ctx, "all")
	require.NoError(t, err)
	require.Len(t, recs, 4, "upTo = count copies the trailing records too")

	require.ErrorIs(t, s.Fork(ctx, "missing", "x", 0), fs.ErrNotExist)
	require.Error(t, s.Fork(ctx, "src", "x", 5))
	require.Error(t, s.Fork(ctx, "src", "x", -1))
	require.ErrorIs(t, s.Fork(ctx, "src", "src", 1), agentrt.ErrSessionExists)
}

func TestSchemaVersion(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	_, err := Open(ctx, url, nil)
	require.ErrorIs(t, err, ErrSchema, "no schema and no Migrate")
	s, err := Open(ctx, url, &Options{Migrate: true})
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, `INSERT INTO agentrt_schema (version) VALUES (99)`)
	require.NoError(t, err)
	s.Close()
	_, err = Open(ctx, url, &Options{Migrate: true})
	require.ErrorIs(t, err, ErrSchema, "a newer schema than this package knows")
}

func TestRecordKinds(t *testing.T) {
	s := newStore(t, nil)
	require.Error(t, s.AppendRecord(t.Context(), "r", agentrt.Record{Kind: "message", Data: []byte(`{}`)}))
	require.Error(t, s.AppendRecord(t.Context(), "r", agentrt.Record{Kind: "", Data: []byte(`{}`)}))
	require.Error(t, s.AppendRecord(t.Context(), "r", agentrt.Record{Kind: "x", Data: []byte(`{`)}))
}
