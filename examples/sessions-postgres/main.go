// Command sessions-postgres is examples/sessions on PostgreSQL: the
// sessions live in a database that every replica of a service shares. Two
// runs on one session, each with its own store (as two replicas would),
// continue one conversation; a second runner on a session in use gets
// agentrt.ErrSessionBusy; an operator lists the sessions with SQL.
//
// The switch from the JSONL store is one line:
//
//	store, err := pgstore.Open(ctx, url, &pgstore.Options{Migrate: true})
//
// With -pg (or DATABASE_URL) it uses that database; without, it starts a
// throwaway PostgreSQL server (Debian's postgresql package must be
// installed) and removes it at the end. Offline: a scripted planner
// stands in for the model.
//
//	go -C examples/sessions-postgres run .
//	go -C examples/sessions-postgres run . -pg postgres://localhost/agentrt -id trip-42
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/pgstore"
	"github.com/agentrt/agentrt/pgstore/pgtest"
)

func main() {
	url := flag.String("pg", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL, else a throwaway server)")
	id := flag.String("id", "trip-42", "session id")
	flag.Parse()
	ctx := context.Background()
	if *url == "" {
		srv, err := pgtest.Start(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sessions-postgres:", err)
			os.Exit(1)
		}
		defer srv.Close()
		*url = srv.URL("postgres")
		fmt.Println("started a throwaway PostgreSQL server on port", srv.Port())
	}
	if err := run(ctx, *url, *id, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sessions-postgres:", err)
		os.Exit(1)
	}
}

// run plays two runs on one session, each with its own store and agent, as
// two replicas would.
func run(ctx context.Context, url, id string, w io.Writer) error {
	fmt.Fprintln(w, "planner: scripted (offline; no model is called)")
	for i, input := range []string{"Plan a weekend in Lisbon.", "Make it three days."} {
		store, err := pgstore.Open(ctx, url, &pgstore.Options{Migrate: true}) // a new "replica" each time
		if err != nil {
			return err
		}
		planner := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
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
		store.Close()
	}

	store, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		return err
	}
	defer store.Close()

	// One replica holds the session; another cannot run it meanwhile.
	unlock, err := store.Lock(ctx, id)
	if err != nil {
		return err
	}
	other, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		unlock()
		return err
	}
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("never")), Store: other}
	_, err = agenttest.Collect(ag.Run(ctx, id, "Add a day trip to Sintra."))
	other.Close()
	unlock()
	if !errors.Is(err, agentrt.ErrSessionBusy) {
		return fmt.Errorf("a second runner got %v, want ErrSessionBusy", err)
	}
	fmt.Fprintln(w, "second replica while the first holds the session:", err)

	// Rewind: a new session with the first exchange only.
	if err := store.Fork(ctx, id, id+"-alt", 2); err != nil {
		return err
	}
	// What an operator sees with SQL (see pgstore/README.md for the schema).
	rows, err := store.Pool().Query(ctx, `SELECT id, messages, coalesce(title, ''), coalesce(forked_from, '')
		FROM agentrt_sessions ORDER BY updated DESC`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintln(w, "SELECT id, messages, title, forked_from FROM agentrt_sessions:")
	for rows.Next() {
		var sid, title, from string
		var n int
		if err := rows.Scan(&sid, &n, &title, &from); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-12s %d  %q  %s\n", sid, n, title, from)
	}
	return rows.Err()
}
