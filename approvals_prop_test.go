package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

type numIn struct {
	N    int    `json:"n"`
	Edit string `json:"edit,omitempty"`
}

// TestApprovalsRandomized runs random turns of read and write calls
// under a checker that allows, denies or defers each one, and answers the
// pending calls with random partial sets of decisions (approve, deny,
// edit), on a memory or a JSONL store. After every step the session keeps
// the invariants (every call before the open ones answered, in order);
// a pending run never calls the planner; every call runs at most once,
// and only when allowed by the checker or by a person.
func TestApprovalsRandomized(t *testing.T) {
	t.Parallel()
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	for seed := range seeds {
		approvalsRandomRun(t, uint64(seed))
	}
}

func approvalsRandomRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	var mu sync.Mutex
	ran := map[int]int{}     // n → runs
	edited := map[int]bool{} // n → ran with the person's edit
	exec := func(_ context.Context, in numIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		ran[in.N]++
		if in.Edit != "" {
			edited[in.N] = true
		}
		return fmt.Sprint("did ", in.N), nil
	}
	read := agentrt.NewTool("read", "Read.", exec, agentrt.ReadOnly())
	write := agentrt.NewTool("write", "Write.", exec)

	// The checker's answer for each n, fixed up front.
	const (
		allow = iota
		deny
		later
	)
	verdict := map[int]int{}
	var steps []agenttest.Step
	n := 0
	for range 1 + rng.IntN(3) {
		var uses []agenttest.Use
		for range 1 + rng.IntN(4) {
			n++
			name := "write"
			if rng.IntN(3) == 0 {
				name = "read"
			}
			uses = append(uses, agenttest.ToolUse(name, fmt.Sprintf(`{"n":%d}`, n)))
			verdict[n] = []int{allow, deny, later, later}[rng.IntN(4)]
		}
		steps = append(steps, agenttest.CallTools(uses...))
	}
	steps = append(steps, agenttest.Reply("done"))
	checker := agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		switch verdict[req.Input.(numIn).N] {
		case allow:
			return agentrt.Decision{Allow: true}, nil
		case deny:
			return agentrt.Decision{Reason: "no"}, nil
		}
		return agentrt.Decision{Pending: true}, nil
	})
	var store agentrt.SessionStore = &agentrt.MemoryStore{}
	if rng.IntN(2) == 0 {
		js, err := agentrt.NewJSONLStore(t.TempDir(), nil)
		require.NoError(t, err)
		defer js.Close()
		store = js
	}
	planner := agenttest.Script(steps...)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{read, write}, Planner: planner, Permission: checker, Store: store, MaxTurns: 10}
	approved := map[int]bool{} // n → a person allowed it
	what := fmt.Sprintf("seed %d", seed)

	evs, err := agenttest.Collect(ag.Run(ctx, "s", "go"))
	require.NoError(t, err, what)
	for step := 0; ; step++ {
		require.Less(t, step, 50, what)
		done, ok := agenttest.Done(evs)
		require.True(t, ok, what)
		msgs, err := store.Load(ctx, "s")
		require.NoError(t, err)
		var ps propProblems
		propCheckSession(&ps, what, msgs, done.Reason != agentrt.StopPending)
		for _, p := range ps {
			t.Fatalf("%s: %s: %s", what, p.key, p.detail)
		}
		if done.Reason != agentrt.StopPending {
			require.Equal(t, agentrt.StopComplete, done.Reason, "%s: %s", what, done.Detail)
			break
		}
		require.NotEmpty(t, done.Pending, what)
		open := propInterrupted(msgs)
		require.Equal(t, done.Pending[0].ToolUseID, open[0].ToolUseID, "%s: the first open call is pending", what)

		// Sometimes no decision: nothing runs, no planner call.
		if rng.IntN(4) == 0 {
			before := len(planner.Requests())
			evs2, err := agenttest.Collect(ag.Run(ctx, "s", ""))
			require.NoError(t, err, what)
			d2, _ := agenttest.Done(evs2)
			require.Equal(t, agentrt.StopPending, d2.Reason, what)
			require.Equal(t, pendingIDs(done), pendingIDs(d2), what)
			require.Len(t, planner.Requests(), before, what)
			require.Empty(t, agenttest.Filter[agentrt.ToolResult](evs2), what)
		}
		// A random non-empty subset of the pending calls, in random order.
		var as []agentrt.Decision
		for _, p := range done.Pending {
			if rng.IntN(2) == 0 && len(as) > 0 {
				continue
			}
			pn := p.Input.(numIn).N
			a := agentrt.Decision{ToolUseID: p.ToolUseID}
			switch rng.IntN(3) {
			case 0:
				a.Allow = true
			case 1:
				a.Allow = true
				a.Input = json.RawMessage(fmt.Sprintf(`{"n":%d,"edit":"x"}`, pn))
			}
			if a.Allow {
				approved[pn] = true
			}
			as = append(as, a)
		}
		rng.Shuffle(len(as), func(i, j int) { as[i], as[j] = as[j], as[i] })
		evs, err = agenttest.Collect(ag.Resume(ctx, "s", as...))
		require.NoError(t, err, what)
	}
	for k := 1; k <= n; k++ {
		want := 0
		if verdict[k] == allow || approved[k] {
			want = 1
		}
		require.Equal(t, want, ran[k], "%s: runs of call %d (verdict %d, approved %v)", what, k, verdict[k], approved[k])
	}
	for k := range edited {
		require.True(t, approved[k], what)
	}
}
