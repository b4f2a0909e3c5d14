package agentrt

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// floorIn is the benchmarks' AddIn (package agentrt_test), here for the
// internal benchmark.
type floorIn struct {
	A int `json:"a" jsonschema:"description=first addend" validate:"required"`
	B int `json:"b" validate:"required"`
}

// BenchmarkRunFloors splits BenchmarkRunToolTurn's Run into the parts a
// Run must do beyond the bare loop's work, each measured alone with
// nothing else around it (so at its cheapest):
//
//   - contain: the worker coroutine that contains a callback's
//     runtime.Goexit (contain.go): started, three jobs (two planner calls
//     and a tool call) switched to and back, stopped;
//   - trace: the run's trace records (traceRun, traced minus untraced);
//   - store: lock, load, four appends (user, tool_use, result, answer)
//     and unlock on the memory store, on a new session;
//   - validate: the typed tool's Decode (validate tags and the schema's
//     checks) minus the bare loop's json.Unmarshal;
//   - events: the events a Run yields, boxed into Event, to a consumer.
//
// It reports each in ns per Run; floor/bare is the bare loop plus their
// sum, over the bare loop: the least a Run with these parts can cost, as
// a multiple of the bare loop, with no other work at all. It also
// reports what the trace costs a whole Run (trace/untraced-run), and
// trace-floor/untraced-run: the trace's clock reads, arena and record
// appends alone, before it formats a byte.
//
// Each part runs in batches of 32, the parts in turn, so that a shared
// machine's noise hits all alike and each pays for the garbage
// collection its own allocations cause. That is why run/bare here is
// higher than BenchmarkRunVsBare's, which alternates single runs: there
// the bare loop is timed while collections that Run's garbage started
// are still running.
func BenchmarkRunFloors(b *testing.B) {
	ctx := context.Background()
	call := &ModelResponse{
		Message: NewAssistantMessage(ToolUseBlock("call_1", "add", json.RawMessage(`{"a":2,"b":40}`))),
		Finish:  FinishToolUse,
	}
	reply := &ModelResponse{Message: NewAssistantMessage(TextBlock("42")), Finish: FinishStop}
	planner := PlannerFunc(func(_ context.Context, req *ModelRequest) (*ModelResponse, error) {
		if req.Messages[len(req.Messages)-1].Role == RoleUser {
			return call, nil
		}
		return reply, nil
	})
	add := NewTool("add", "Add two integers.",
		func(_ context.Context, in floorIn) (int, error) { return in.A + in.B, nil }, ReadOnly())
	tools := map[string]func(context.Context, json.RawMessage) (string, error){
		"add": func(_ context.Context, raw json.RawMessage) (string, error) {
			var in floorIn
			if err := json.Unmarshal(raw, &in); err != nil {
				return "", err
			}
			return strconv.Itoa(in.A + in.B), nil
		},
	}
	bare := func() {
		msgs := []Message{NewUserMessage("What is 2+40?")}
		for {
			resp, _ := planner.Plan(ctx, &ModelRequest{Messages: msgs})
			msgs = append(msgs, resp.Message)
			if !resp.Message.HasToolUse() {
				break
			}
			for _, u := range resp.Message.Blocks {
				out, err := tools[u.Name](ctx, u.Input)
				msgs = append(msgs, NewToolResult(u.ID, out, err != nil))
			}
		}
	}

	runStore := &MemoryStore{}
	ag := &Agent{Tools: []Tool{add}, Planner: planner, Store: runStore}
	var events []Event
	for ev, err := range ag.Run(ctx, "s", "What is 2+40?") {
		if err != nil {
			b.Fatal(err)
		}
		events = append(events, ev)
	}
	whole := func() {
		_ = runStore.Delete(ctx, "s")
		for _, err := range ag.Run(ctx, "s", "What is 2+40?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}

	// contain: a run's worker, as Run starts and stops it.
	cr := &run{}
	cr.rctx.init(ctx)
	cr.ctx = &cr.rctx
	nop := func() {}
	contain := func() {
		cr.rctx.err = nil
		for range 3 {
			if perr := cr.doFunc(nop); perr != nil {
				b.Fatal(perr)
			}
		}
		cr.stopWorker()
	}

	user, answer := NewUserMessage("What is 2+40?"), reply.Message
	result := NewToolResult("call_1", "42", false)

	// trace: see BenchmarkTraceRun.
	trStore := &MemoryStore{}
	trAgent := &Agent{Planner: planner, Store: trStore}
	p := trAgent.prepare()
	final := reply

	// The same Run on the memory store without its records: no trace.
	plainStore := &MemoryStore{}
	plain := &Agent{Tools: []Tool{add}, Planner: planner, Store: floorNoRecords{plainStore}}
	untraced := func() {
		_ = plainStore.Delete(ctx, "s")
		for _, err := range plain.Run(ctx, "s", "What is 2+40?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	// trace-floor: what the trace of that Run costs before it formats a
	// byte: its clock reads (the run's start, each planner call's start
	// and end, the run's end), its arena and its two record appends, of
	// the records the Run wrote.
	records, err := runStore.LoadRecords(ctx, "s")
	if err != nil || len(records) != 2 {
		b.Fatalf("the run wrote %d records (%v), want 2", len(records), err)
	}
	// Both start a session afresh; the difference is the floor.
	recStore := &MemoryStore{}
	newSession := func() {
		_ = recStore.Delete(ctx, "s")
		if err := recStore.Append(ctx, "s", user); err != nil {
			b.Fatal(err)
		}
	}
	traceFloor := func() {
		newSession()
		start := time.Now()
		var d time.Duration
		for range 6 {
			d += time.Since(start)
		}
		arena := make([]byte, 0, 768)
		for _, rec := range records {
			n := len(arena)
			arena = append(arena, rec.Data...)
			rec.Data = arena[n:len(arena):len(arena)]
			if err := recStore.AppendRecord(ctx, "s", rec); err != nil {
				b.Fatal(err)
			}
		}
		floorDur += d
	}

	store := &MemoryStore{}
	storeWork := func() {
		_ = store.Delete(ctx, "s")
		unlock, err := store.Lock(ctx, "s")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.Load(ctx, "s"); err != nil {
			b.Fatal(err)
		}
		for _, m := range []Message{user, call.Message, result, answer} {
			if err := store.Append(ctx, "s", m); err != nil {
				b.Fatal(err)
			}
		}
		unlock()
	}

	raw := call.Message.Blocks[0].Input
	decode := func() {
		if _, err := add.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
	unmarshal := func() {
		var in floorIn
		if err := json.Unmarshal(raw, &in); err != nil {
			b.Fatal(err)
		}
	}

	consume := func(ev Event, err error) bool {
		floorSink = ev
		return ev != nil && err == nil
	}
	box := func() {
		for _, ev := range events {
			var e Event
			switch ev := ev.(type) {
			case AssistantMessage:
				e = ev
			case ToolCall:
				e = ev
			case PermissionDecision:
				e = ev
			case ToolResult:
				e = ev
			case Done:
				e = ev
			default:
				b.Fatalf("event %T not boxed", ev)
			}
			if !consume(e, nil) {
				b.Fatal("no event")
			}
		}
	}

	// Each part is timed over a batch, so that the clock reads around it
	// cost little next to it.
	const batch = 32
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		for range batch {
			f()
		}
		return time.Since(t0)
	}
	parts := []struct {
		name string
		f    func()
		sum  time.Duration
	}{
		{name: "bare", f: bare},
		{name: "run", f: whole},
		{name: "untraced-run", f: untraced},
		{name: "trace-floor", f: traceFloor},
		{name: "new-session", f: newSession},
		{name: "contain", f: contain},
		{name: "traced", f: func() { traceRun(trStore, trAgent, p, call, final, true) }},
		{name: "untraced", f: func() { traceRun(trStore, trAgent, p, call, final, false) }},
		{name: "store", f: storeWork},
		{name: "decode", f: decode},
		{name: "unmarshal", f: unmarshal},
		{name: "events", f: box},
	}
	for i := 0; b.Loop(); i++ {
		// A different first part each time, so that none always runs on
		// another's garbage.
		for j := range parts {
			k := (i + j) % len(parts)
			parts[k].sum += timed(parts[k].f)
		}
	}
	ns := map[string]float64{}
	for _, pt := range parts {
		ns[pt.name] = float64(pt.sum.Nanoseconds()) / float64(b.N*batch)
	}
	trace := ns["traced"] - ns["untraced"]
	validate := ns["decode"] - ns["unmarshal"]
	b.ReportMetric(ns["bare"], "bare-ns")
	b.ReportMetric(ns["run"], "run-ns")
	b.ReportMetric(ns["contain"], "contain-ns")
	b.ReportMetric(trace, "trace-ns")
	b.ReportMetric(ns["store"], "store-ns")
	b.ReportMetric(validate, "validate-ns")
	b.ReportMetric(ns["events"], "events-ns")
	b.ReportMetric(ns["run"]/ns["bare"], "run/bare")
	b.ReportMetric(trace/ns["untraced-run"], "trace/untraced-run")
	b.ReportMetric((ns["trace-floor"]-ns["new-session"])/ns["untraced-run"], "trace-floor/untraced-run")
	b.ReportMetric((ns["bare"]+ns["contain"]+trace+ns["store"]+validate+ns["events"])/ns["bare"], "floor/bare")
}

// floorNoRecords is a memory store without its records.
type floorNoRecords struct{ *MemoryStore }

func (s floorNoRecords) AppendRecord() {} // hides MemoryStore's: no RecordStore

// floorDur keeps the trace floor's clock reads from being optimized away.
var floorDur time.Duration

// floorSink keeps the boxed events escaping, as Run's do.
var floorSink Event
