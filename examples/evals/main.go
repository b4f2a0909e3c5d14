// Command evals runs the evals of a small support agent (agent.go): ten
// cases in testdata/dataset.jsonl, each run k times, scored and printed as
// a table.
//
// With ANTHROPIC_API_KEY set it runs on Claude; without, on a scripted
// stand-in for the model (scripted.go). Its test, evals_test.go, runs the
// same dataset offline on the answers recorded in cassettes, through the
// Anthropic adapter (the committed cassettes hold the stand-in's answers
// in Anthropic's wire format; recorded with a key they hold Claude's).
//
//	go run ./examples/evals
//	ANTHROPIC_API_KEY=... go run ./examples/evals -k 3 -report new.json -baseline old.json
package main

import (
	"bytes"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest/eval"
	"github.com/agentrt/agentrt/provider/anthropic"
)

// Model is the model the evals run on, and its prices in USD per million
// tokens.
const Model = "claude-haiku-4-5"

var prices = agentrt.Prices{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}

//go:embed testdata/dataset.jsonl
var dataset []byte

// Dataset returns the cases of testdata/dataset.jsonl, each with the
// checks every case has.
func Dataset() ([]eval.Case, error) {
	cases, err := eval.ReadJSONL(bytes.NewReader(dataset))
	if err != nil {
		return nil, err
	}
	for i := range cases {
		cases[i].Expect = append(cases[i].Expect,
			eval.Never(eval.ToolWith("refund", func(in RefundIn) bool { return in.Amount > 500 })),
			eval.MaxTurns(4),
			eval.Stop(agentrt.StopComplete, agentrt.LayerNone),
		)
	}
	return cases, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:], os.Getenv("ANTHROPIC_API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "evals:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, args []string, key string) error {
	fs := flag.NewFlagSet("evals", flag.ContinueOnError)
	k := fs.Int("k", 1, "runs per case")
	report := fs.String("report", "", "write the JSON report to this file")
	baseline := fs.String("baseline", "", "compare with this earlier report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cases, err := Dataset()
	if err != nil {
		return err
	}
	rn := &eval.Runner{Name: "scripted", K: *k, Parallel: 2, Prices: prices}
	if key != "" {
		rn.Name = Model
		claude := anthropic.NewFromAPIKey(key, Model, nil)
		rn.Agent = func(*eval.Case, int) *agentrt.Agent { return NewAgent(claude) }
	} else {
		fmt.Fprintln(w, "ANTHROPIC_API_KEY is not set: a scripted stand-in plays the model.")
		rn.Agent = func(c *eval.Case, _ int) *agentrt.Agent { return NewAgent(script(c.Name)) }
	}
	rep := rn.Run(ctx, cases)
	fmt.Fprint(w, rep.Table())
	if *report != "" {
		if err := rep.WriteFile(*report); err != nil {
			return err
		}
	}
	if *baseline != "" {
		base, err := eval.ReadReport(*baseline)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\ncompared with %s:\n%s", *baseline, eval.Compare(base, rep).Table())
	}
	return nil
}
