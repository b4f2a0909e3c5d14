package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTraceTurn is the trace work of one tool turn alone, on the
// memory store: the planner call's start and end, one tool call and the
// turn's record, without and with the request's fingerprint (issue 27's
// budget is their difference; see BenchmarkTraceCost for the trace's
// share of a whole turn).
func BenchmarkTraceTurn(b *testing.B) {
	for _, fingerprint := range []bool{false, true} {
		b.Run(fmt.Sprintf("fingerprint=%v", fingerprint), func(b *testing.B) {
			store := &MemoryStore{}
			ag := &Agent{Planner: PlannerFunc(func(context.Context, *ModelRequest) (*ModelResponse, error) { return nil, nil }), Store: store}
			p := ag.prepare()
			r := &run{p: p, sessionID: "s", ctx: context.Background(), sctx: context.Background()}
			r.l.init(p, "s", nil)
			r.traceStart()
			hist := []Message{NewUserMessage("go")}
			resp := &ModelResponse{Message: NewAssistantMessage(ToolUseBlock("call_1", "add", json.RawMessage(`{"a":2,"b":40}`))), Finish: FinishToolUse}
			c := &call{use: resp.Message.Blocks[0], ran: true, start: time.Now(), dur: time.Microsecond}
			b.ReportAllocs()
			for b.Loop() {
				r.l.turn++
				if len(hist) > 64 {
					hist = hist[:1]
				}
				r.tracePlan(hist, hist)
				if fingerprint { // as planAttempt does
					r.tr.fp.take(&ModelRequest{System: "Be brief.", Tools: p.specs, Messages: hist}, hist, p.toolPrint)
				}
				r.traceModelCall(resp, nil, "")
				c.start = r.now() // as execute does
				r.traceToolCall(c)
				hist = append(hist, resp.Message, NewToolMessage("call_1", "42", false))
				if r.l.turn%1000 == 0 {
					_ = store.Delete(context.Background(), "s")
				}
			}
		})
	}
}

// BenchmarkTraceRun is the trace work of a whole one-tool-turn Run alone
// (BenchmarkRunToolTurn's): the run's start, two planner calls, one tool
// call and the run's record, on a new run each time; traced=false is the
// new run alone, to subtract.
func BenchmarkTraceRun(b *testing.B) {
	store := &MemoryStore{}
	ag := &Agent{Planner: PlannerFunc(func(context.Context, *ModelRequest) (*ModelResponse, error) { return nil, nil }), Store: store}
	p := ag.prepare()
	resp := &ModelResponse{Message: NewAssistantMessage(ToolUseBlock("call_1", "add", json.RawMessage(`{"a":2,"b":40}`))), Finish: FinishToolUse}
	final := &ModelResponse{Message: NewAssistantMessage(TextBlock("42")), Finish: FinishStop}
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("traced=%v", traced), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				traceRun(store, ag, p, resp, final, traced)
			}
		})
	}
}

func traceRun(store *MemoryStore, _ *Agent, p *prepared, resp, final *ModelResponse, traced bool) {
	ctx := context.Background()
	_ = store.Delete(ctx, "s")
	r := &run{p: p, sessionID: "s", ctx: ctx, sctx: ctx}
	r.l.init(p, "s", nil)
	hist := []Message{NewUserMessage("go")}
	_ = store.Append(ctx, "s", hist[0])
	if traced {
		r.traceStart()
	}
	r.l.turn = 1
	if traced {
		r.tracePlan(hist, hist)
		r.tr.fp.take(&ModelRequest{System: "Be brief.", Tools: p.specs, Messages: hist}, hist, p.toolPrint)
		r.traceModelCall(resp, nil, "")
	}
	c := &call{use: resp.Message.Blocks[0], ran: true, start: r.now(), dur: time.Microsecond}
	if traced {
		r.traceToolCall(c)
	}
	hist = append(hist, resp.Message, NewToolMessage("call_1", "42", false))
	r.l.turn = 2
	if traced {
		r.tracePlan(hist, hist)
		r.traceModelCall(final, nil, "")
		o := outcome{stop: true, reason: StopComplete}
		done := Done{Reason: StopComplete, Turns: 2}
		r.traceRun(&o, &done)
	}
}
