package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// FuzzRun drives Run with planner scripts made from random bytes: random
// tool names, ids and inputs, tools that fail, panic or block, planner
// errors, cancellations and early breaks. After every run the session must
// satisfy both invariants and the events must end properly.
func FuzzRun(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 3, 3, 0})
	f.Add([]byte{9, 200, 17, 4, 1})
	f.Add([]byte("{\"a\":1}\x05\x07"))
	inputs := []string{`{"a":1,"b":2}`, `{"a":"1","b":"2"}`, `{}`, `null`, `{"a":1,`, `[1]`, `"{\"a\":1,\"b\":1}"`, `{"a":1,"b":2,"c":3}`, ``}
	names := []string{"add", "fail", "boom", "hang", "write", "nope", ""}
	ids := []string{"x", "y", "", "x"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			data = data[:64]
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		breakAfter := -1
		var steps []agenttest.Step
		for len(data) > 0 {
			switch op := next() % 10; op {
			case 0:
				steps = append(steps, agenttest.Reply("done"))
			case 1, 2, 3:
				n := int(next()%3) + 1
				blocks := make([]agentrt.Block, n)
				for i := range blocks {
					blocks[i] = agentrt.ToolUseBlock(
						fmt.Sprintf("%s%d", ids[int(next())%len(ids)], next()%2),
						names[int(next())%len(names)],
						json.RawMessage(inputs[int(next())%len(inputs)]))
				}
				steps = append(steps, agenttest.Respond(agentrt.NewAssistantMessage(blocks...)))
			case 4:
				steps = append(steps, agenttest.Fail(errors.New("planner failed")))
			case 5:
				steps = append(steps, agenttest.Func(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
					cancel()
					return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c", "hang", nil))}, nil
				}))
			case 6:
				breakAfter = int(next() % 16)
			case 7:
				steps = append(steps, agenttest.StreamReply("a", "b"))
			default:
				steps = append(steps, agenttest.CallTool(names[int(next())%len(names)], inputs[int(next())%len(inputs)]))
			}
		}
		tools := []agentrt.Tool{
			addTool(),
			agentrt.NewTool("fail", "", func(context.Context, struct{}) (string, error) { return "", errors.New("failed") }, agentrt.ReadOnly()),
			agentrt.NewTool("boom", "", func(context.Context, struct{}) (string, error) { panic("boom") }, agentrt.ReadOnly()),
			agentrt.NewTool("hang", "", func(ctx context.Context, _ struct{}) (string, error) {
				cancel()
				<-ctx.Done()
				return "", ctx.Err()
			}, agentrt.ReadOnly()),
			agentrt.NewTool("write", "", func(context.Context, WriteIn) (string, error) { return "ok", nil }),
		}
		store := &agentrt.MemoryStore{}
		ag := &agentrt.Agent{Tools: tools, Planner: agenttest.Script(steps...), Store: store, MaxTurns: 8}
		n, sawDone, sawErr := 0, false, false
		for ev, err := range ag.Run(ctx, "fz", "go") {
			if sawErr {
				t.Fatal("a value was yielded after the error")
			}
			if err != nil {
				if ev != nil {
					t.Fatal("an event was yielded with an error")
				}
				sawErr = true
				continue
			}
			if sawDone {
				t.Fatalf("event %T after Done", ev)
			}
			if _, ok := ev.(agentrt.Done); ok {
				sawDone = true
			}
			n++
			if n == breakAfter {
				break
			}
		}
		msgs, err := store.Load(context.Background(), "fz")
		if err != nil {
			t.Fatal(err)
		}
		if err := agenttest.CheckInvariants(msgs); err != nil {
			t.Fatalf("invariants broken: %v\n%v", err, msgs)
		}
		if n != breakAfter && !sawDone {
			t.Fatal("the run ended without a Done event")
		}
	})
}
