// Command sessions keeps a conversation in a JSONL file and resumes it by
// id, as a second process (or the same one after a crash) would: run it
// twice with the same -dir and -id and the second run continues the first.
// It also lists the sessions and forks one.
//
// Offline by default: a scripted planner stands in for the model.
//
//	go run ./examples/sessions -dir /tmp/agentrt-sessions -id trip-42
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func main() {
	dir := flag.String("dir", "", "session directory (default: a new temporary directory)")
	id := flag.String("id", "trip-42", "session id")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "agentrt-sessions-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// Kept after the run, so that the files it names can be looked at.
		*dir = d
	}
	if err := run(context.Background(), *dir, *id, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

// run plays two runs on one session, each with its own store and agent, as
// two processes would.
func run(ctx context.Context, dir, id string, w io.Writer) error {
	fmt.Fprintln(w, "planner: scripted (offline; no model is called)")
	for i, input := range []string{"Plan a weekend in Lisbon.", "Make it three days."} {
		store, err := agentrt.NewJSONLStore(dir, nil) // a new "process" each time
		if err != nil {
			return err
		}
		planner := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			// The stand-in model reports how much of the conversation it sees.
			text := fmt.Sprintf("(run %d) I see %d messages; the first is %q.", i+1, len(req.Messages), req.Messages[0].Content)
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text))}, nil
		}))
		ag := &agentrt.Agent{Instructions: "You plan trips.", Planner: planner, Store: store}
		for ev, err := range ag.Run(ctx, id, input) {
			if err != nil {
				store.Close()
				return err
			}
			if d, ok := ev.(agentrt.Done); ok {
				fmt.Fprintf(w, "user: %s\nassistant: %s\n", input, d.FinalText)
			}
		}
		if err := store.Close(); err != nil {
			return err
		}
	}

	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	// Rewind: a new session with the first exchange only, to try another path.
	if err := store.Fork(ctx, id, id+"-alt", 2); err != nil {
		return err
	}
	sessions, err := store.List(ctx)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		fmt.Fprintf(w, "session %-12s %d messages  %q\n", s.ID, s.Messages, s.Title)
	}
	fmt.Fprintf(w, "files: %s/%s.jsonl (try: go run ./cmd/agentrt show %s/%s.jsonl)\n", dir, id, dir, id)
	return nil
}
