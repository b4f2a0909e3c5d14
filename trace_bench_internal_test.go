package agentrt

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkTraceTurn is the trace work of one tool turn alone, on the
// memory store: the planner call's start and end, one tool call and the
// turn's record (see BenchmarkTraceCost for its share of a whole turn).
func BenchmarkTraceTurn(b *testing.B) {
	store := &MemoryStore{}
	ag := &Agent{Planner: PlannerFunc(func(context.Context, *ModelRequest) (*ModelResponse, error) { return nil, nil }), Store: store}
	p := ag.prepare()
	r := &run{agent: ag, p: p, sessionID: "s", sctx: context.Background()}
	r.rctx.init(context.Background())
	r.ctx = &r.rctx
	r.l = &r.loop
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
		r.traceModelCall(resp, nil, "")
		c.start = r.now() // as execute does
		r.traceToolCall(c)
		hist = append(hist, resp.Message, NewToolResult("call_1", "42", false))
		if r.l.turn%1000 == 0 {
			_ = store.Delete(context.Background(), "s")
		}
	}
}
