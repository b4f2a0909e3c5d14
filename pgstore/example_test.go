package pgstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/pgstore"
)

// The one line that puts an agent's sessions in PostgreSQL. (Not run: it
// needs a server; see examples/sessions-postgres.)
func ExampleOpen() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), &pgstore.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("hello")), Store: store}
	for ev, err := range ag.Run(ctx, "trip-42", "Plan a weekend in Lisbon.") {
		if err != nil {
			fmt.Println(err) // agentrt.ErrSessionBusy if another replica runs it
			return
		}
		_ = ev
	}
}
