package agentrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonl"
)

// A session kept in a JSONL store outlives the process: a new store on the
// same directory (after a restart, say) resumes it by id.
func ExampleNewJSONLStore() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// First process: a run on session "trip".
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	ag := &agentrt.Agent{
		Planner: agenttest.Script(agenttest.Reply("Lisbon in May is warm and sunny.")),
		Store:   store,
	}
	for _, err := range ag.Run(ctx, "trip", "What is Lisbon like in May?") {
		if err != nil {
			log.Fatal(err)
		}
	}
	store.Close()

	// Later, a new process: the same id continues the conversation.
	store, err = agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	planner := agenttest.Script(agenttest.Reply("Pack a light jacket for the evenings."))
	ag = &agentrt.Agent{Planner: planner, Store: store}
	for _, err := range ag.Run(ctx, "trip", "And what should I pack?") {
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("the model saw", len(planner.Requests()[0].Messages), "messages")

	msgs, err := store.Load(ctx, "trip")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(m)
	}
	infos, err := store.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d messages, %q\n", infos[0].ID, infos[0].Messages, infos[0].Title)
	// Output:
	// the model saw 3 messages
	// user: What is Lisbon like in May?
	// assistant: Lisbon in May is warm and sunny.
	// user: And what should I pack?
	// assistant: Pack a light jacket for the evenings.
	// trip: 4 messages, "What is Lisbon like in May?"
}

// The file of a session is one JSON object per line: a header, then the
// messages and other records, each with its sequence number and time.
func ExampleJSONLStore_Append() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	clock := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	store, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{
		Now: func() time.Time { clock = clock.Add(time.Second); return clock },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()

	store.Append(ctx, "s1", agentrt.NewUserMessage("What is 2+40?"))
	store.Append(ctx, "s1", agentrt.NewAssistantMessage(
		agentrt.ToolUseBlock("call_1", "add", json.RawMessage(`{"a": 2, "b": 40}`))))
	store.AppendRecord(ctx, "s1", agentrt.Record{Kind: agentrt.RecordPermission,
		Data: json.RawMessage(`{"tool_use_id":"call_1","tool":"add","allow":true,"source":"user"}`)})
	store.Append(ctx, "s1", agentrt.NewToolMessage("call_1", "42", false))

	b, err := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output:
	// {"kind":"header","version":1,"session_id":"s1","created":"2026-05-01T09:00:01Z"}
	// {"kind":"message","seq":1,"ts":"2026-05-01T09:00:02Z","message":{"role":"user","content":"What is 2+40?"}}
	// {"kind":"message","seq":2,"ts":"2026-05-01T09:00:03Z","message":{"role":"assistant","blocks":[{"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":40}}]}}
	// {"kind":"permission","seq":3,"ts":"2026-05-01T09:00:04Z","data":{"tool_use_id":"call_1","tool":"add","allow":true,"source":"user"}}
	// {"kind":"message","seq":4,"ts":"2026-05-01T09:00:05Z","message":{"role":"tool","content":"42","tool_use_id":"call_1"}}
}

// Fork rewinds a conversation into a new session, leaving the original as
// it was: here, back to before the second question, to ask another one.
func ExampleJSONLStore_Fork() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	for _, m := range []agentrt.Message{
		agentrt.NewUserMessage("Name a prime."),
		agentrt.NewAssistantMessage(agentrt.TextBlock("7")),
		agentrt.NewUserMessage("Another?"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("11")),
	} {
		if err := store.Append(ctx, "main", m); err != nil {
			log.Fatal(err)
		}
	}

	// Keep messages [0, 2), then go another way.
	if err := store.Fork(ctx, "main", "retry", 2); err != nil {
		log.Fatal(err)
	}
	store.Append(ctx, "retry", agentrt.NewUserMessage("A larger one?"))

	for _, id := range []string{"main", "retry"} {
		msgs, _ := store.Load(ctx, id)
		fmt.Printf("%s: %q\n", id, msgs[len(msgs)-1].Text())
	}
	for r, err := range store.Lines(ctx, "retry") {
		if err != nil {
			log.Fatal(err)
		}
		if r.Kind == jsonl.KindHeader {
			var h struct {
				ForkedFrom struct {
					SessionID string `json:"session_id"`
					Messages  int    `json:"messages"`
				} `json:"forked_from"`
			}
			if err := json.Unmarshal(r.Raw, &h); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("retry was forked from %q at message %d\n", h.ForkedFrom.SessionID, h.ForkedFrom.Messages)
		}
	}
	// Output:
	// main: "11"
	// retry: "A larger one?"
	// retry was forked from "main" at message 2
}

// Lines reads every line of a session, for audits and tools: here, who
// allowed which tool call.
func ExampleJSONLStore_Lines() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()

	remove := agentrt.NewTool("remove", "Remove a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		return "removed " + in.Path, nil
	})
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{remove},
		Planner: agenttest.Script(
			agenttest.CallTools(agenttest.ToolUse("remove", `{"path":"a.txt"}`), agenttest.ToolUse("remove", `{"path":"/etc"}`)),
			agenttest.Reply("Removed a.txt; /etc was refused.")),
		Permission: agentrt.PermissionFunc(func(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			if string(req.RawInput) == `{"path":"/etc"}` {
				return agentrt.Decision{Reason: "not under the project", Source: "hook"}, nil
			}
			return agentrt.Decision{Allow: true, Source: "hook"}, nil
		}),
		Store: store,
	}
	for _, err := range ag.Run(ctx, "audit", "Clean up.") {
		if err != nil {
			log.Fatal(err)
		}
	}

	for r, err := range store.Lines(ctx, "audit") {
		if err != nil {
			log.Fatal(err)
		}
		if agentrt.RecordKind(r.Kind) == agentrt.RecordPermission {
			var p struct {
				ToolUseID string `json:"tool_use_id"`
				Allow     bool   `json:"allow"`
				Reason    string `json:"reason"`
				Source    string `json:"source"`
			}
			if err := json.Unmarshal(r.Data, &p); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("line %d: %s allow=%v by %s", r.Line, p.ToolUseID, p.Allow, p.Source)
			if p.Reason != "" {
				fmt.Printf(": %s", p.Reason)
			}
			fmt.Println()
		}
	}
	// Output:
	// line 5: call_1 allow=true by hook
	// line 7: call_2 allow=false by hook: not under the project
}
