package agentotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentotel"
	"github.com/agentrt/agentrt/agenttest"
)

// Tracing a run: one span per run, turn, model call and tool call. A real
// program passes its own TracerProvider (an OTLP exporter, say).
func ExampleHooks() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	add := agentrt.NewTool("add", "Add.", func(_ context.Context, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	}, agentrt.ReadOnly())
	ag := &agentrt.Agent{
		Name:    "calc",
		Tools:   []agentrt.Tool{add},
		Planner: agenttest.Script(agenttest.CallTool("add", `{"a":1,"b":2}`), agenttest.Reply("3")),
		Hooks:   []agentrt.Hooks{agentotel.Hooks(tp)},
	}
	for range ag.Run(context.Background(), "s", "1+2?") {
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// chat
	// execute_tool add
	// agentrt.turn 1
	// chat
	// agentrt.turn 2
	// invoke_agent calc
}
