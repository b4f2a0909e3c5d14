// Command approvals leaves write calls to a person and takes the person's
// decisions in later processes, as a web server or a chat bot would between
// a person's clicks. Each command below is a process of its own; the
// session, in a JSONL file, is all they share.
//
//	go run ./examples/approvals -dir /tmp/approvals start
//	go run ./examples/approvals -dir /tmp/approvals approve
//	go run ./examples/approvals -dir /tmp/approvals deny "not that file"
//
// start asks the agent to write two notes: both calls wait for a person.
// approve allows the first call still waiting, and deny refuses it with a
// reason. Offline: a scripted planner stands in for the model, and
// agenttest.ScriptAfter lets each process play the script from where the
// stored session is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

const session = "notes"

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "agentrt-approvals"), "directory of the session and the notes")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *dir, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "approvals:", err)
		os.Exit(1)
	}
}

type noteIn struct {
	Path string `json:"path" validate:"required"`
	Text string `json:"text"`
}

// steps is what the model does, as a script: two writes, then an answer.
var steps = []agenttest.Step{
	agenttest.CallTools(
		agenttest.ToolUse("write_note", `{"path":"a.txt","text":"first"}`),
		agenttest.ToolUse("write_note", `{"path":"b.txt","text":"second"}`),
	),
	agenttest.Reply("Done: the notes you allowed are written."),
}

func run(ctx context.Context, out io.Writer, dir string, args []string) error {
	if len(args) == 0 {
		return errors.New("want a command: start, approve or deny REASON")
	}
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		return err
	}
	history, err := store.Load(ctx, session)
	if err != nil {
		return err
	}
	write := agentrt.NewTool("write_note", "Write a note.", func(_ context.Context, in noteIn) (string, error) {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(in.Path)), []byte(in.Text), 0o644); err != nil {
			return "", err
		}
		return "wrote " + in.Path, nil
	})
	ag := &agentrt.Agent{
		Tools:   []agentrt.Tool{write},
		Store:   store,
		Planner: agenttest.ScriptAfter(history, steps...),
		// Every write waits for a person; nothing runs until they decide.
		Permission: agentrt.PermissionFunc(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
			return agentrt.Decision{Pending: true}, nil
		}),
	}
	var events func(func(agentrt.Event, error) bool)
	switch args[0] {
	case "start":
		events = ag.Run(ctx, session, "Write the two notes.")
	case "approve", "deny":
		waiting, err := pending(ctx, ag)
		if err != nil {
			return err
		}
		d := agentrt.Decision{ToolUseID: waiting[0].ToolUseID, Allow: args[0] == "approve"}
		if !d.Allow && len(args) > 1 {
			d.Reason = args[1]
		}
		events = ag.Resume(ctx, session, d)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case agentrt.ToolResult:
			fmt.Fprintf(out, "result: %s\n", ev.Message.Content)
		case agentrt.Done:
			for _, p := range ev.Pending {
				fmt.Fprintf(out, "waiting: %s %s %s\n", p.ToolUseID, p.Tool.Name, p.RawInput)
			}
			fmt.Fprintf(out, "stop: %s %s\n", ev.Reason, ev.FinalText)
		}
	}
	return nil
}

// pending returns the calls of the session that wait for a person: a
// Resume without decisions changes nothing and lists them.
func pending(ctx context.Context, ag *agentrt.Agent) ([]*agentrt.ToolCall, error) {
	for ev, err := range ag.Resume(ctx, session) {
		if err != nil {
			return nil, err
		}
		if d, ok := ev.(agentrt.Done); ok && len(d.Pending) > 0 {
			return d.Pending, nil
		}
	}
	return nil, errors.New("no call is waiting for a decision")
}
