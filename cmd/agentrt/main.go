// Command agentrt shows what happened in agentrt sessions: the runs of a
// session file, turn by turn, with the model and tool calls, their
// durations, tokens and outcomes, the permission decisions, and the layer
// that stopped each run.
//
// Install it with
//
//	go install github.com/agentrt/agentrt/cmd/agentrt@latest
//
// Usage:
//
//	agentrt ls DIR                 sessions, most recent first
//	agentrt show SESSION           a terminal timeline
//	agentrt verify SESSION...      check format, invariants and records
//	agentrt html SESSION > run.html
//	agentrt tail -f SESSION        the timeline of a run as it grows
//
// SESSION is a session file (DIR/ID.jsonl) or DIR/ID.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentrt/agentrt/internal/termtext"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `agentrt shows what happened in agentrt sessions (JSONL files).

usage:
  agentrt ls [-json] [-price-in USD -price-out USD] DIR
  agentrt show [-full] [-run R] [-turn N] [-json] [-color auto|always|never] [-width N] SESSION
  agentrt verify [-json] [-max-line N] SESSION...
  agentrt html [-o FILE] SESSION
  agentrt tail [-f] [-interval D] SESSION

SESSION is a session file (DIR/ID.jsonl) or DIR/ID. Prices are in US
dollars per million tokens.
`

// run runs the command with args and returns its exit code: 0, 1 when
// verify found problems, 2 for a usage or read error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	code := 0
	switch args[0] {
	case "ls":
		err = cmdLs(ctx, args[1:], stdout, stderr)
	case "show":
		err = cmdShow(ctx, args[1:], stdout, stderr)
	case "verify":
		code, err = cmdVerify(ctx, args[1:], stdout, stderr)
	case "html":
		err = cmdHTML(ctx, args[1:], stdout, stderr)
	case "tail":
		err = cmdTail(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "agentrt: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if err != errUsage {
			// An error may quote a session file's content.
			fmt.Fprintln(stderr, "agentrt:", termtext.Safe(err.Error()))
		}
		return 2
	}
	return code
}
