package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentslog"
)

// benchPlanner answers a user message with a call of add, and a tool
// result with a text answer, from responses built once: the fake model
// costs (almost) nothing, so the benchmark measures the runtime.
func benchPlanner() agentrt.Planner {
	call := &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_1", "add", json.RawMessage(`{"a":2,"b":40}`))),
		Finish:  agentrt.FinishToolUse,
	}
	reply := &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("42")), Finish: agentrt.FinishStop}
	return agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		if req.Messages[len(req.Messages)-1].Role == agentrt.RoleUser {
			return call, nil
		}
		return reply, nil
	})
}

// BenchmarkRunToolTurn is one whole Run: user input, a tool call (decoded,
// validated, permission-checked, executed), its result and the final
// answer, on the in-memory store.
func BenchmarkRunToolTurn(b *testing.B) {
	ctx := context.Background()
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: benchPlanner(), Store: store}
	b.ReportAllocs()
	for b.Loop() {
		_ = store.Delete(ctx, "s")
		for _, err := range ag.Run(ctx, "s", "What is 2+40?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkBareLoop is the floor for BenchmarkRunToolTurn: the same work
// written by hand with a slice of messages, a map of tools and
// json.Unmarshal of the input, and nothing else.
func BenchmarkBareLoop(b *testing.B) {
	ctx := context.Background()
	planner := benchPlanner()
	b.ReportAllocs()
	for b.Loop() {
		if err := bareLoop(ctx, planner); err != nil {
			b.Fatal(err)
		}
	}
}

// bareTools are the bare loop's tools: add, decoded with json.Unmarshal.
var bareTools = map[string]func(context.Context, json.RawMessage) (string, error){
	"add": func(_ context.Context, raw json.RawMessage) (string, error) {
		var in AddIn
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		return strconv.Itoa(in.A + in.B), nil
	},
}

// bareLoop is what Run does written by hand, and nothing else: a slice
// of messages, the planner, and the tools it asks for, until it answers.
func bareLoop(ctx context.Context, planner agentrt.Planner) error {
	msgs := []agentrt.Message{agentrt.NewUserMessage("What is 2+40?")}
	for turn := 1; ; turn++ {
		resp, err := planner.Plan(ctx, &agentrt.ModelRequest{Turn: turn, Messages: msgs})
		if err != nil {
			return err
		}
		msgs = append(msgs, resp.Message)
		if !resp.Message.HasToolUse() {
			return nil
		}
		for _, u := range resp.Message.Blocks {
			if u.Type != agentrt.BlockToolUse {
				continue
			}
			out, err := bareTools[u.Name](ctx, u.Input)
			msgs = append(msgs, agentrt.NewToolMessage(u.ID, out, err != nil))
		}
	}
}

// turnPlanner answers turns 1..turns with a call of add, each with an
// id of its own (a reused id would be replaced), and then with a text.
func turnPlanner(turns int) agentrt.Planner {
	calls := make([]*agentrt.ModelResponse, turns+1)
	for i := range calls {
		calls[i] = &agentrt.ModelResponse{
			Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock(fmt.Sprintf("call_%d", i), "add", json.RawMessage(fmt.Sprintf(`{"a":%d,"b":40}`, i)))),
			Finish:  agentrt.FinishToolUse,
		}
	}
	reply := &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("42")), Finish: agentrt.FinishStop}
	return agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		if req.Turn > turns {
			return reply, nil
		}
		return calls[req.Turn], nil
	})
}

// checkToolTurns runs ag once on a new session and fails b unless it
// made turns tool calls that all ran and succeeded, and then answered:
// the benchmarks measure tool turns, not refusals.
func checkToolTurns(b *testing.B, ag *agentrt.Agent, turns int) {
	b.Helper()
	ctx := context.Background()
	ok := 0
	for ev, err := range ag.Run(ctx, "check", "go") {
		if err != nil {
			b.Fatal(err)
		}
		switch ev := ev.(type) {
		case agentrt.ToolResult:
			if ev.Message.IsError {
				b.Fatalf("a tool call failed: %s", ev.Message.Content)
			}
			ok++
		case agentrt.Done:
			if ev.Reason != agentrt.StopComplete || ev.Turns != turns+1 {
				b.Fatalf("ran %d turns (%s), want %d", ev.Turns, ev.Reason, turns+1)
			}
		}
	}
	if ok != turns {
		b.Fatalf("%d tool calls ran, want %d", ok, turns)
	}
	_ = ag.Store.(interface {
		Delete(context.Context, string) error
	}).Delete(ctx, "check")
}

// BenchmarkRunLongSession runs sessions of N tool turns in one Run and
// reports the cost per turn: it must not grow with N.
func BenchmarkRunLongSession(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			ctx := context.Background()
			store := &agentrt.MemoryStore{}
			ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: turnPlanner(turns), Store: store, MaxTurns: turns + 1}
			checkToolTurns(b, ag, turns)
			b.ReportAllocs()
			for b.Loop() {
				_ = store.Delete(ctx, "s")
				for ev, err := range ag.Run(ctx, "s", "go") {
					if err != nil {
						b.Fatal(err)
					}
					if d, ok := ev.(agentrt.Done); ok && d.Turns != turns+1 {
						b.Fatalf("ran %d turns, want %d (%s)", d.Turns, turns+1, d.Reason)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
		})
	}
}

// BenchmarkRunGuarded is BenchmarkRunLongSession with the window
// compressor and the loop guard on, to show what they add per turn.
func BenchmarkRunGuarded(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		for _, guarded := range []bool{false, true} {
			b.Run(fmt.Sprintf("turns=%d/guarded=%v", turns, guarded), func(b *testing.B) {
				ctx := context.Background()
				store := &agentrt.MemoryStore{}
				ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: turnPlanner(turns), Store: store, MaxTurns: turns + 1}
				ag.LoopGuard.Disabled = !guarded
				if guarded {
					ag.Compressor = agentrt.Window{}
					ag.ContextTokens = 4000
				}
				checkToolTurns(b, ag, turns)
				b.ReportAllocs()
				for b.Loop() {
					_ = store.Delete(ctx, "s")
					for ev, err := range ag.Run(ctx, "s", "go") {
						if err != nil {
							b.Fatal(err)
						}
						if d, ok := ev.(agentrt.Done); ok && d.Turns != turns+1 {
							b.Fatalf("ran %d turns, want %d (%s)", d.Turns, turns+1, d.Reason)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
			})
		}
	}
}

// BenchmarkRunToolTurnLogged is BenchmarkRunToolTurn with the slog hooks
// on a handler that discards everything, to measure the hooks' overhead.
func BenchmarkRunToolTurnLogged(b *testing.B) {
	ctx := context.Background()
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: benchPlanner(), Store: store,
		Hooks: []agentrt.Hooks{agentslog.Hooks(slog.New(slog.DiscardHandler))}}
	b.ReportAllocs()
	for b.Loop() {
		_ = store.Delete(ctx, "s")
		for _, err := range ag.Run(ctx, "s", "What is 2+40?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRunVsBare interleaves one Run of N tool turns (the model calls
// add N times, then answers) and the same work in a bare hand-written loop
// (as in BenchmarkBareLoop) in every iteration, and reports the ratio of
// their times, so that the noise of a shared machine hits both alike, and
// Run's allocations per turn. The target is a ratio of at most 3 and at
// most 13 allocations per tool turn, flat to N=1000. The ratio flatters
// Run a little: part of the garbage collection its allocations start runs
// while the bare loop is timed.
func BenchmarkRunVsBare(b *testing.B) {
	for _, turns := range []int{1, 10, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			ctx := context.Background()
			store := &agentrt.MemoryStore{}
			planner := turnPlanner(turns)
			ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store, MaxTurns: turns + 1}
			checkToolTurns(b, ag, turns)
			var runTime, bareTime time.Duration
			var runAllocs uint64
			var ms runtime.MemStats
			for b.Loop() {
				_ = store.Delete(ctx, "s")
				runtime.ReadMemStats(&ms)
				m0 := ms.Mallocs
				t0 := time.Now()
				for _, err := range ag.Run(ctx, "s", "What is 2+40?") {
					if err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				runtime.ReadMemStats(&ms)
				runAllocs += ms.Mallocs - m0
				t2 := time.Now()
				if err := bareLoop(ctx, planner); err != nil {
					b.Fatal(err)
				}
				bareTime += time.Since(t2)
				runTime += t1.Sub(t0)
			}
			n := float64(b.N * turns)
			b.ReportMetric(float64(runTime)/float64(bareTime), "run/bare")
			b.ReportMetric(float64(runTime.Nanoseconds())/n, "run-ns/turn")
			b.ReportMetric(float64(bareTime.Nanoseconds())/n, "bare-ns/turn")
			b.ReportMetric(float64(runAllocs)/n, "run-allocs/turn")
		})
	}
}

// untracedStore is the memory store without its records: the runtime
// writes no trace records to it.
type untracedStore struct{ m *agentrt.MemoryStore }

func (s untracedStore) Append(ctx context.Context, id string, msg agentrt.Message) error {
	return s.m.Append(ctx, id, msg)
}
func (s untracedStore) Load(ctx context.Context, id string) ([]agentrt.Message, error) {
	return s.m.Load(ctx, id)
}
func (s untracedStore) List(ctx context.Context) ([]agentrt.SessionInfo, error) { return s.m.List(ctx) }
func (s untracedStore) Delete(ctx context.Context, id string) error             { return s.m.Delete(ctx, id) }
func (s untracedStore) Lock(ctx context.Context, id string) (func(), error)     { return s.m.Lock(ctx, id) }

// tracedStore is untracedStore with the records: the same indirection,
// so that the two differ only in the trace records.
type tracedStore struct{ untracedStore }

func (s tracedStore) AppendRecord(ctx context.Context, id string, rec agentrt.Record) error {
	return s.m.AppendRecord(ctx, id, rec)
}
func (s tracedStore) LoadRecords(ctx context.Context, id string) ([]agentrt.Record, error) {
	return s.m.LoadRecords(ctx, id)
}

// BenchmarkTraceCost interleaves a Run on a store that keeps records
// (so the runtime writes its trace records) and one on the same store
// without them, per tool turn: turns=1 is BenchmarkRunToolTurn's whole
// Run, turns=1000 the cost per turn of a long session. It reports the
// ratio of their times; the target is at most 1.10.
func BenchmarkTraceCost(b *testing.B) {
	for _, turns := range []int{1, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			ctx := context.Background()
			planner := turnPlanner(turns)
			mem := &agentrt.MemoryStore{}
			plain := untracedStore{mem}
			traced := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: tracedStore{plain}, MaxTurns: turns + 1}
			untraced := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: plain, MaxTurns: turns + 1}
			checkToolTurns(b, traced, turns)
			checkToolTurns(b, untraced, turns)
			run := func(ag *agentrt.Agent) time.Duration {
				_ = mem.Delete(ctx, "s")
				t0 := time.Now()
				for _, err := range ag.Run(ctx, "s", "What is 2+40?") {
					if err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(t0)
			}
			run(traced)
			if recs, _ := mem.LoadRecords(ctx, "s"); len(recs) == 0 {
				b.Fatal("the traced run wrote no records")
			}
			run(untraced)
			if recs, _ := mem.LoadRecords(ctx, "s"); len(recs) != 0 {
				b.Fatalf("the untraced run wrote %d records", len(recs))
			}
			var withT, withoutT time.Duration
			for i := 0; b.Loop(); i++ {
				// Alternate which goes first, so that neither always runs
				// on the other's garbage.
				if i%2 == 0 {
					withT += run(traced)
					withoutT += run(untraced)
				} else {
					withoutT += run(untraced)
					withT += run(traced)
				}
			}
			b.ReportMetric(float64(withT)/float64(withoutT), "traced/untraced")
			b.ReportMetric(float64(withT.Nanoseconds())/float64(b.N*turns), "traced-ns/turn")
			b.ReportMetric(float64(withoutT.Nanoseconds())/float64(b.N*turns), "untraced-ns/turn")
		})
	}
}

// BenchmarkRunsInFlight starts runs at once, each 5 turns of a fake model
// that answers after 50 ms (four tool calls, then a text), and measures
// them while every run waits in its third planner call: goroutines, stack
// and live heap per run in flight, beside the bare loop doing the same.
// Targets: one goroutine per run, at most 3 KB of live heap per run.
// AGENTRT_INFLIGHT sets the number of runs (default 10,000).
func BenchmarkRunsInFlight(b *testing.B) {
	n := 10_000
	if s := os.Getenv("AGENTRT_INFLIGHT"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for _, kind := range []string{"run", "bare"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				m := measureInFlight(b, n, kind == "run")
				b.ReportMetric(m.goroutines, "goroutines/run")
				b.ReportMetric(m.stack, "stack-B/run")
				b.ReportMetric(m.heap, "heap-B/run")
			}
		})
	}
}

type inFlight struct{ goroutines, stack, heap float64 }

// measureInFlight runs n runs (or bare loops) at once and measures them
// while all of them wait in their third planner call.
func measureInFlight(b *testing.B, n int, useRun bool) inFlight {
	b.Helper()
	const turns = 5
	arrived := make(chan struct{}, n)
	gate := make(chan struct{})
	calls := make([]*agentrt.ModelResponse, turns)
	for i := range calls {
		calls[i] = &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock(fmt.Sprintf("call_%d", i), "add", json.RawMessage(`{"a":2,"b":40}`))), Finish: agentrt.FinishToolUse}
	}
	reply := &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("42")), Finish: agentrt.FinishStop}
	planner := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		turn := (len(req.Messages) + 1) / 2 // user, then a call and its result per turn
		if turn == 3 {
			arrived <- struct{}{}
			<-gate
		}
		t := time.NewTimer(50 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if turn >= turns {
			return reply, nil
		}
		return calls[turn], nil
	})
	ctx := context.Background()
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Tools: []agentrt.Tool{addTool()}, Planner: planner, Store: store}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if useRun {
				done := false
				for ev, err := range ag.Run(ctx, "s"+strconv.Itoa(i), "What is 2+40?") {
					if err != nil {
						errs <- err
						return
					}
					if d, ok := ev.(agentrt.Done); ok {
						done = d.Reason == agentrt.StopComplete && d.Turns == turns
					}
				}
				if !done {
					errs <- fmt.Errorf("run %d did not complete in %d turns", i, turns)
				}
				return
			}
			if err := bareLoop(ctx, planner); err != nil {
				errs <- err
			}
		}()
	}
	for range n {
		<-arrived
	}
	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	g1 := runtime.NumGoroutine()
	if path := os.Getenv("AGENTRT_INFLIGHT_HEAP"); path != "" && useRun {
		// A heap profile of the runs in flight, for go tool pprof.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(f)
		_ = f.Close()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return inFlight{
		goroutines: float64(g1-g0) / float64(n),
		stack:      float64(during.StackInuse-before.StackInuse) / float64(n),
		heap:       float64(during.HeapAlloc-before.HeapAlloc) / float64(n),
	}
}
