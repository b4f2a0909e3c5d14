package agentrt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// A checker of your own: read-only tools run, write_file runs outside
// /etc only. Check the tool before type-asserting its input: each tool has
// its own input type.
func ExamplePermissionFunc() {
	type WriteIn struct {
		Path string `json:"path"`
		Text string `json:"text,omitempty"`
	}
	write := agentrt.NewTool("write_file", "Write a file.",
		func(ctx context.Context, in WriteIn) (string, error) { return "wrote " + in.Path, nil })
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{write},
		Planner: agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"/etc/passwd"}`),
			agenttest.CallTool("write_file", `{"path":"notes.md"}`),
			agenttest.Reply("done"),
		),
		Permission: agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			if req.Tool.ReadOnly {
				return agentrt.Decision{Allow: true}, nil
			}
			in, ok := req.Input.(WriteIn)
			if !ok || strings.HasPrefix(in.Path, "/etc") {
				return agentrt.Decision{Reason: "only write_file outside /etc is allowed"}, nil
			}
			return agentrt.Decision{Allow: true}, nil
		}),
	}
	for ev := range ag.Run(context.Background(), "s", "Write two files.") {
		if r, ok := ev.(agentrt.ToolResult); ok {
			fmt.Println(r.Message.IsError, r.Message.Content)
		}
	}
	// Output:
	// true permission denied: the permission policy refused this call of "write_file": only write_file outside /etc is allowed
	// false wrote notes.md
}

// A typed final answer: the model's first answer does not match the type,
// so it is sent back with what was wrong.
func ExampleRunTyped() {
	type Trip struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	script := agenttest.Script(
		agenttest.Reply(`{"city":"Lisbon","days":"three"}`), // not a number
		agenttest.Reply(`{"city":"Lisbon","days":3}`),
	)
	ag := &agentrt.Agent{Planner: script}
	trip, err := agentrt.RunTyped[Trip](context.Background(), ag, "s", "Plan a trip.", nil)
	fmt.Println(trip, err)
	reqs := script.Requests()
	last := reqs[len(reqs)-1].Messages
	fmt.Println(last[len(last)-1].Content)
	// Output:
	// {Lisbon 3} <nil>
	// Your final answer is not valid: invalid input: field "days" must be an integer, got string. Reply again with only a JSON value that matches the schema given in the instructions, and nothing else.
}

// A coordinator delegates to a specialist agent with its own tools.
func ExampleAgentTool() {
	researcher := &agentrt.Agent{
		Name:         "researcher",
		Instructions: "Find facts.",
		Planner:      agenttest.Script(agenttest.Reply("Lisbon has 7 hills.")),
	}
	coordinator := &agentrt.Agent{
		Tools: []agentrt.Tool{agentrt.AgentTool(researcher, "research", "Ask the researcher.")},
		Planner: agenttest.Script(
			agenttest.CallTool("research", `{"task":"How many hills has Lisbon?"}`),
			agenttest.Reply("Seven."),
		),
	}
	for ev := range coordinator.Run(context.Background(), "trip", "Hills of Lisbon?") {
		switch e := ev.(type) {
		case agentrt.SubAgentEvent:
			if d, ok := e.Event.(agentrt.Done); ok {
				fmt.Println("child session", e.SessionID, "done:", d.FinalText)
			}
		case agentrt.Done:
			fmt.Println("done:", e.FinalText)
		}
	}
	// Output:
	// child session trip~research~call_1 done: Lisbon has 7 hills.
	// done: Seven.
}

// A BeforeTool hook blocks a call; the model sees the reason, and the
// block is reported like a permission denial.
func ExampleHooks() {
	type Empty struct{}
	drop := agentrt.NewTool("drop_table", "Drop a table.",
		func(context.Context, Empty) (string, error) { return "dropped", nil })
	ag := &agentrt.Agent{
		Tools:      []agentrt.Tool{drop},
		Permission: agentrt.AllowAll(),
		Planner:    agenttest.Script(agenttest.CallTool("drop_table", `{}`), agenttest.Reply("I could not.")),
		Hooks: []agentrt.Hooks{{
			BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
				if call.Tool.Name == "drop_table" {
					return ctx, errors.New("no schema changes on Fridays")
				}
				return ctx, nil
			},
		}},
	}
	for ev := range ag.Run(context.Background(), "s", "Drop it.") {
		switch e := ev.(type) {
		case agentrt.PermissionDecision:
			fmt.Printf("%s %v %q\n", e.Decision.Source, e.Decision.Allow, e.Decision.Reason)
		case agentrt.ToolResult:
			fmt.Println(e.Message.IsError, e.Message.Content)
		}
	}
	// Output:
	// policy true ""
	// hook false "no schema changes on Fridays"
	// true no schema changes on Fridays
}

// The Window compressor sends the planner the recent messages only; the
// session keeps them all.
func ExampleWindow() {
	script := agenttest.Script(agenttest.Reply("one"), agenttest.Reply("two"), agenttest.Reply("three"))
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: script, Store: store, Compressor: agentrt.Window{MaxMessages: 2}}
	for _, q := range []string{"a?", "b?", "c?"} {
		for range ag.Run(context.Background(), "s", q) {
		}
	}
	reqs := script.Requests()
	last := reqs[len(reqs)-1].Messages
	stored, _ := store.Load(context.Background(), "s")
	fmt.Println("stored:", len(stored), "sent:", len(last))
	fmt.Println(last[len(last)-1].Content)
	// Output:
	// stored: 6 sent: 3
	// c?
}

// The in-memory store, and what a session looks like.
func ExampleMemoryStore() {
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("Hello!")), Store: store}
	for range ag.Run(context.Background(), "greeting", "Hi") {
	}
	msgs, _ := store.Load(context.Background(), "greeting")
	for _, m := range msgs {
		fmt.Println(m)
	}
	infos, _ := store.List(context.Background())
	fmt.Println(infos[0].ID, infos[0].Messages, infos[0].Title)
	// Output:
	// user: Hi
	// assistant: Hello!
	// greeting 2 Hi
}

// An Agent's Planner is usually a provider adapter, such as
// openai.New(client, "gpt-4.1-mini", nil); here it is the scripted planner
// of agenttest, which records what it was asked.
func ExamplePlanner() {
	provider := agenttest.Script(agenttest.Reply("42"))
	ag := &agentrt.Agent{Instructions: "Be brief.", Planner: provider}
	for ev := range ag.Run(context.Background(), "s", "6*7?") {
		if d, ok := ev.(agentrt.Done); ok {
			fmt.Println(d.Reason, d.FinalText)
		}
	}
	req := provider.Requests()[0]
	fmt.Println(req.System, len(req.Messages))
	// Output:
	// complete 42
	// Be brief. 1
}

// A tracer of your own (agentotel does this for OpenTelemetry) hands the
// runtime its span ids; the session's trace records then carry them, so
// that a line of the session leads to its span.
func ExampleWithTraceSpan() {
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Tools:   []agentrt.Tool{agentrt.NewTool("now", "The time.", func(context.Context, struct{}) (string, error) { return "12:00", nil }, agentrt.ReadOnly())},
		Planner: agenttest.Script(agenttest.CallTool("now", `{}`), agenttest.Reply("It is noon.")),
		Store:   store,
		Hooks: []agentrt.Hooks{{
			BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
				return agentrt.WithTraceSpan(ctx, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"), nil
			},
		}},
	}
	if _, err := agenttest.Collect(ag.Run(context.Background(), "s1", "What time is it?")); err != nil {
		panic(err)
	}
	recs, _ := store.LoadRecords(context.Background(), "s1")
	for _, rec := range recs {
		if rec.Kind == agentrt.RecordTurn && strings.Contains(string(rec.Data), `"span_id":"00f067aa0ba902b7"`) {
			fmt.Println("the tool call's trace record names its span")
		}
	}
	// Output:
	// the tool call's trace record names its span
}
