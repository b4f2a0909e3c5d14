package eval_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/agenttest/eval"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// dataset is three cases; answers says, per case, what the scripted model
// answers, and each step reports usage u.
func report(t *testing.T, name string, answers map[string]string, u agentrt.Usage) *eval.Report {
	t.Helper()
	cases := []eval.Case{
		{Name: "add", Input: "What is 2+40?", Expect: []eval.Check{eval.Contains("42"), eval.Tools(eval.Exact, eval.Tool("add"))}},
		{Name: "refund", Input: "Refund order A1.", Expect: []eval.Check{eval.Never(eval.ToolWith("refund", func(in refundIn) bool { return in.Amount > 500 }))}},
		{Name: "short", Input: "Say 42.", Expect: []eval.Check{eval.Matches(`^\d+$`), eval.MaxTurns(1)}},
	}
	rn := &eval.Runner{Name: name, K: 2, Parallel: 2, Prices: agentrt.Prices{Input: 1, Output: 2}, Agent: func(c *eval.Case, _ int) *agentrt.Agent {
		switch c.Name {
		case "add":
			return agent(callAdd.WithUsage(u), agenttest.Reply(answers["add"]).WithUsage(u))
		case "refund":
			return agent(callRefund(600).WithUsage(u), agenttest.Reply(answers["refund"]).WithUsage(u))
		}
		return agent(agenttest.Reply(answers["short"]).WithUsage(u))
	}}
	return rn.Run(context.Background(), cases)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "go test -run %s -update rewrites %s", t.Name(), path)
}

func TestReportJSONGolden(t *testing.T) {
	t.Parallel()
	rep := report(t, "v1", map[string]string{"add": "42", "refund": "Refunded.", "short": "42"}, agentrt.Usage{InputTokens: 100, OutputTokens: 10})
	golden(t, "report.golden.json", rep.JSON())

	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, rep.WriteFile(path))
	back, err := eval.ReadReport(path)
	require.NoError(t, err)
	assert.Equal(t, string(rep.JSON()), string(back.JSON()), "a report reads back as written")
}

func TestReportTable(t *testing.T) {
	t.Parallel()
	rep := report(t, "v1", map[string]string{"add": "41", "refund": "Refunded.", "short": "42"}, agentrt.Usage{InputTokens: 100, OutputTokens: 10})
	golden(t, "report.golden.txt", []byte(rep.Table()))
}

func TestCompare(t *testing.T) {
	t.Parallel()
	before := report(t, "v1", map[string]string{"add": "41", "refund": "Refunded.", "short": "42"}, agentrt.Usage{InputTokens: 100, OutputTokens: 10})
	after := report(t, "v2", map[string]string{"add": "42", "refund": "Refunded.", "short": "forty-two"}, agentrt.Usage{InputTokens: 150, OutputTokens: 10})
	after.Cases = append(after.Cases, eval.CaseReport{Name: "new", PassRate: 1, Pass: true})
	before.Cases = append(before.Cases, eval.CaseReport{Name: "gone", PassRate: 0.5, Turns: 2})

	cmp := eval.Compare(before, after)
	changes := map[string]eval.CaseDiff{}
	for _, d := range cmp.Cases {
		changes[d.Name] = d
	}
	assert.Equal(t, eval.Better, changes["add"].Change)
	assert.Equal(t, 0.0, changes["add"].Before)
	assert.Equal(t, 1.0, changes["add"].After)
	assert.Equal(t, 100.0, changes["add"].Tokens, "two turns of 50 more input tokens")
	assert.InDelta(t, 0.0001, changes["add"].Cost, 1e-12, "100 input tokens at $1 a million")
	assert.Equal(t, 0.0, changes["add"].Turns)
	assert.Equal(t, eval.Same, changes["refund"].Change)
	assert.Equal(t, eval.Worse, changes["short"].Change)
	assert.Equal(t, eval.Added, changes["new"].Change)
	assert.Equal(t, eval.Removed, changes["gone"].Change)
	assert.Equal(t, -2.0, changes["gone"].Turns)
	assert.Equal(t, []string{"add", "refund", "short", "new", "gone"}, names(cmp))

	table := cmp.Table()
	assert.Contains(t, table, "1 better, 1 worse, 1 same, 1 added, 1 removed")
	golden(t, "compare.golden.txt", []byte(table))
}

func names(c eval.Comparison) []string {
	var out []string
	for _, d := range c.Cases {
		out = append(out, d.Name)
	}
	return out
}

func TestReadJSONL(t *testing.T) {
	t.Parallel()
	cases, err := eval.LoadJSONL(filepath.Join("testdata", "dataset.jsonl"))
	require.NoError(t, err)
	require.Len(t, cases, 3)
	assert.Equal(t, "add", cases[0].Name)
	assert.Len(t, cases[1].Session, 2)

	rn := &eval.Runner{Agent: func(c *eval.Case, _ int) *agentrt.Agent {
		switch c.Name {
		case "add":
			return agent(callAdd, reply42)
		case "refund":
			return agent(callRefund(900), agenttest.Reply("Refunded."))
		}
		return agent(reply42)
	}}
	rep := rn.Run(context.Background(), cases)
	var got []string
	for _, c := range rep.Cases {
		for _, ch := range c.Trials[0].Checks {
			got = append(got, c.Name+": "+ch.Name+": "+map[bool]string{true: "pass", false: "fail"}[ch.Pass])
		}
	}
	assert.Equal(t, []string{
		`add: contains ["42"]: pass`,
		`add: matches "^[0-9]+$": pass`,
		`add: tools in_order [add({"a":2})]: pass`,
		`add: at most 3 turns: pass`,
		`add: at most 2000 tokens: pass`,
		`add: at most $0.01: pass`,
		`add: stops complete (layer ""): pass`,
		`refund: never [refund({"amount":900})]: fail`,
		`limit: stops max_turns (layer "limit"): fail`,
	}, got)
}

func TestReadJSONLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, want string }{
		{`{"input":"x"}`, "line 2: a case needs a name"},
		{`{"name":"a","expect":{"tools":{"order":"sideways"}}}`, `unknown order "sideways"`},
		{`{"name":"a","expect":{"matches":"("}}`, "matches: error parsing regexp"},
		{`{"name":"a","expect":{"never":[{"name":"x","input":[1]}]}}`, "input must be a JSON object"},
		{`{"name":"a","expect":{"contain":["x"]}}`, `unknown field "contain"`},
	}
	for _, tt := range tests {
		_, err := eval.ReadJSONL(strings.NewReader("\n" + tt.line))
		require.Error(t, err, tt.line)
		assert.Contains(t, err.Error(), tt.want)
	}
}
