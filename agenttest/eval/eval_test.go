package eval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/agenttest/eval"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type refundIn struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

// agent returns an agent with the tools add and refund on a script of
// steps.
func agent(steps ...agenttest.Step) *agentrt.Agent {
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	refund := agentrt.NewTool("refund", "Refund an order.",
		func(_ context.Context, in refundIn) (string, error) { return "refunded", nil })
	return &agentrt.Agent{Tools: []agentrt.Tool{add, refund}, Planner: agenttest.Script(steps...), Permission: agentrt.AllowAll()}
}

// runOnce runs one case, once, on a script and returns its trial.
func runOnce(t *testing.T, c eval.Case, steps ...agenttest.Step) eval.Trial {
	t.Helper()
	rn := &eval.Runner{Agent: func(*eval.Case, int) *agentrt.Agent { return agent(steps...) },
		Prices: agentrt.Prices{Input: 1, Output: 2}}
	rep := rn.Run(context.Background(), []eval.Case{c})
	require.Len(t, rep.Cases, 1)
	require.Len(t, rep.Cases[0].Trials, 1)
	return rep.Cases[0].Trials[0]
}

var (
	callAdd    = agenttest.CallTool("add", `{"a":2,"b":40}`)
	callRefund = func(amount int) agenttest.Step {
		return agenttest.CallTool("refund", fmt.Sprintf(`{"order":"A1","amount":%d}`, amount))
	}
	reply42 = agenttest.Reply("42")
)

func TestChecks(t *testing.T) {
	t.Parallel()
	addsTo42 := eval.ToolWith("add", func(in addIn) bool { return in.A+in.B == 42 })
	bigRefund := eval.ToolWith("refund", func(in refundIn) bool { return in.Amount > 500 })
	usage := agentrt.Usage{InputTokens: 100, OutputTokens: 20}
	tests := []struct {
		name   string
		check  eval.Check
		steps  []agenttest.Step
		pass   bool
		detail string // in the failure
	}{
		{"contains", eval.Contains("42"), []agenttest.Step{reply42}, true, ""},
		{"contains fails", eval.Contains("43"), []agenttest.Step{reply42}, false, `final answer "42" does not contain "43"`},
		{"matches", eval.Matches(`^\d+$`), []agenttest.Step{reply42}, true, ""},
		{"matches fails", eval.Matches(`^\d+$`), []agenttest.Step{agenttest.Reply("forty-two")}, false, `does not match ^\d+$`},
		{"decodes", eval.Decodes(func(v addIn) error {
			if v.A+v.B != 42 {
				return errors.New("wrong sum")
			}
			return nil
		}), []agenttest.Step{agenttest.Reply(`{"a":2,"b":40}`)}, true, ""},
		{"decodes fails on its func", eval.Decodes(func(v addIn) error { return errors.New("wrong sum") }),
			[]agenttest.Step{agenttest.Reply(`{"a":2,"b":41}`)}, false, "wrong sum"},
		{"decodes fails on the type", eval.Decodes[addIn](nil), []agenttest.Step{reply42}, false, "does not decode into eval_test.addIn"},

		{"exact", eval.Tools(eval.Exact, addsTo42, eval.Tool("refund")), []agenttest.Step{callAdd, callRefund(5), reply42}, true, ""},
		{"exact fails on order", eval.Tools(eval.Exact, eval.Tool("refund"), eval.Tool("add")), []agenttest.Step{callAdd, callRefund(5), reply42}, false, "want exact [refund add]"},
		{"exact fails on input", eval.Tools(eval.Exact, eval.ToolInput("add", `{"a":3}`)), []agenttest.Step{callAdd, reply42}, false, `want exact [add({"a":3})]`},
		{"in order", eval.Tools(eval.InOrder, eval.Tool("add"), eval.Tool("refund")), []agenttest.Step{callAdd, callAdd, callRefund(5), reply42}, true, ""},
		{"in order fails", eval.Tools(eval.InOrder, eval.Tool("refund"), eval.Tool("add")), []agenttest.Step{callAdd, callRefund(5), reply42}, false, "want in_order"},
		{"any order", eval.Tools(eval.AnyOrder, eval.Tool("refund"), eval.ToolInput("add", `{"a":2}`)), []agenttest.Step{callAdd, callRefund(5), reply42}, true, ""},
		{"any order fails on a count", eval.Tools(eval.AnyOrder, eval.Tool("refund"), eval.Tool("add")), []agenttest.Step{callAdd, callAdd, callRefund(5), reply42}, false, "want any_order"},
		{"subset", eval.Tools(eval.Subset, eval.Tool("add"), eval.Tool("refund")), []agenttest.Step{callAdd, reply42}, true, ""},
		{"subset fails", eval.Tools(eval.Subset, eval.Tool("add")), []agenttest.Step{callAdd, callRefund(5), reply42}, false, "want subset [add]"},
		{"superset", eval.Tools(eval.Superset, eval.Tool("add")), []agenttest.Step{callAdd, callRefund(5), reply42}, true, ""},
		{"superset fails", eval.Tools(eval.Superset, eval.Tool("add"), eval.Tool("add")), []agenttest.Step{callAdd, callRefund(5), reply42}, false, "want superset [add add]"},

		{"never", eval.Never(bigRefund), []agenttest.Step{callRefund(500), reply42}, true, ""},
		{"never fails", eval.Never(bigRefund), []agenttest.Step{callRefund(501), reply42}, false, `called refund({"order":"A1","amount":501})`},

		{"max turns", eval.MaxTurns(2), []agenttest.Step{callAdd, reply42}, true, ""},
		{"max turns fails", eval.MaxTurns(1), []agenttest.Step{callAdd, reply42}, false, "2 turns"},
		{"max tokens", eval.MaxTokens(240), []agenttest.Step{callAdd.WithUsage(usage), reply42.WithUsage(usage)}, true, ""},
		{"max tokens fails", eval.MaxTokens(239), []agenttest.Step{callAdd.WithUsage(usage), reply42.WithUsage(usage)}, false, "240 tokens"},
		// 200 input tokens at $1 and 40 output at $2 a million: $0.00028.
		{"max cost", eval.MaxCost(0.00028), []agenttest.Step{callAdd.WithUsage(usage), reply42.WithUsage(usage)}, true, ""},
		{"max cost fails", eval.MaxCost(0.00027), []agenttest.Step{callAdd.WithUsage(usage), reply42.WithUsage(usage)}, false, "cost $0.000280"},
		{"stop", eval.Stop(agentrt.StopComplete, agentrt.LayerNone), []agenttest.Step{reply42}, true, ""},
		{"stop fails", eval.Stop(agentrt.StopComplete, agentrt.LayerNone), []agenttest.Step{agenttest.Fail(errors.New("boom"))}, false, "stopped error (layer \"planner\")"},

		{"func", eval.Func("answer is short", func(_ context.Context, r *eval.Run) error { return nil }), []agenttest.Step{reply42}, true, ""},
		{"func fails", eval.Func("answer is long", func(_ context.Context, r *eval.Run) error {
			if len(r.Done.FinalText) < 10 {
				return fmt.Errorf("only %d bytes", len(r.Done.FinalText))
			}
			return nil
		}), []agenttest.Step{reply42}, false, "only 2 bytes"},
		{"func panics", eval.Func("panics", func(context.Context, *eval.Run) error { panic("oops") }), []agenttest.Step{reply42}, false, "check panicked: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := runOnce(t, eval.Case{Name: tt.name, Input: "What is 2+40?", Expect: []eval.Check{tt.check}}, tt.steps...)
			require.Len(t, tr.Checks, 1)
			assert.Equal(t, tt.pass, tr.Checks[0].Pass, "detail: %s", tr.Checks[0].Detail)
			if tt.name != "stop fails" {
				assert.Equal(t, tt.pass, tr.Pass)
			}
			assert.Contains(t, tr.Checks[0].Detail, tt.detail)
		})
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply string
		pass        bool
		detail      string
	}{
		{"pass", `{"reasoning":"42 is the sum.","pass":true}`, true, "42 is the sum."},
		{"fail", `{"reasoning":"It did not add.","pass":false}`, false, "It did not add."},
		{"no verdict", `I think it is fine.`, false, `judge: no verdict in "I think it is fine."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			judge := agenttest.Script(agenttest.Reply(tt.reply))
			c := eval.Case{Name: "judged", Input: "What is 2+40?", Expect: []eval.Check{eval.Judge(judge, "The answer is the correct sum.")}}
			tr := runOnce(t, c, callAdd, reply42)
			require.Len(t, tr.Checks, 1)
			assert.Equal(t, tt.pass, tr.Checks[0].Pass)
			assert.Equal(t, tt.detail, tr.Checks[0].Detail, "the judge's reasoning is kept")

			reqs := judge.Requests()
			require.Len(t, reqs, 1)
			assert.Contains(t, reqs[0].System, "The answer is the correct sum.")
			asked := reqs[0].Messages[0].Content
			for _, s := range []string{"What is 2+40?", `add({"a":2,"b":40})`, "Final answer:\n42"} {
				assert.Contains(t, asked, s)
			}
		})
	}
}

func TestPassAtKOverFlakyAnswers(t *testing.T) {
	t.Parallel()
	// Trials 0 and 3 of "flaky" answer 41; the others 42. "never" always
	// answers 41; "always" always 42.
	rn := &eval.Runner{K: 5, Parallel: 3, MinPassRate: 0.6, Agent: func(c *eval.Case, trial int) *agentrt.Agent {
		answer := "42"
		if c.Name == "never" || (c.Name == "flaky" && (trial == 0 || trial == 3)) {
			answer = "41"
		}
		return agent(callAdd, agenttest.Reply(answer))
	}}
	cases := []eval.Case{
		{Name: "flaky", Input: "2+40?", Expect: []eval.Check{eval.Contains("42")}},
		{Name: "never", Input: "2+40?", Expect: []eval.Check{eval.Contains("42")}},
		{Name: "always", Input: "2+40?", Expect: []eval.Check{eval.Contains("42")}},
	}
	rep := rn.Run(context.Background(), cases)
	byName := map[string]eval.CaseReport{}
	for _, c := range rep.Cases {
		byName[c.Name] = c
		assert.Len(t, c.Trials, 5)
	}
	flaky := byName["flaky"]
	assert.Equal(t, 3, flaky.Passes)
	assert.InDelta(t, 0.6, flaky.PassRate, 1e-9)
	assert.True(t, flaky.PassAtK)
	assert.True(t, flaky.Pass, "3 of 5 reaches MinPassRate 0.6")
	assert.False(t, flaky.Trials[0].Pass)
	assert.True(t, flaky.Trials[1].Pass)
	assert.False(t, flaky.Trials[3].Pass)

	assert.Equal(t, 0, byName["never"].Passes)
	assert.False(t, byName["never"].PassAtK)
	assert.False(t, byName["never"].Pass)
	assert.Equal(t, 5, byName["always"].Passes)
	assert.InDelta(t, 1, byName["always"].PassRate, 1e-9)
	assert.Equal(t, 2, rep.Passed())
}

func TestEachRunHasAFreshSession(t *testing.T) {
	t.Parallel()
	history := []agentrt.Message{agentrt.NewUserMessage("My order is A1."), agentrt.NewAssistantMessage(agentrt.TextBlock("Noted."))}
	var (
		mu   sync.Mutex
		lens []int
	)
	shared := &agentrt.MemoryStore{} // one store for every run: each has its own session
	rn := &eval.Runner{K: 3, Parallel: 3, Agent: func(*eval.Case, int) *agentrt.Agent {
		return withStore(shared, agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			mu.Lock()
			lens = append(lens, len(req.Messages))
			mu.Unlock()
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("ok")), Finish: agentrt.FinishStop}, nil
		}))
	}}
	rep := rn.Run(context.Background(), []eval.Case{
		{Name: "continue", Input: "Refund it.", Session: history},
		{Name: "again", Input: "Refund it.", Session: history},
	})
	assert.Equal(t, 3, rep.Cases[0].Passes)
	assert.Equal(t, 3, rep.Cases[1].Passes)
	assert.Equal(t, []int{3, 3, 3, 3, 3, 3}, lens, "the two messages given and the input, in every run")
	infos, err := shared.List(context.Background())
	require.NoError(t, err)
	assert.Len(t, infos, 6)
}

func withStore(store agentrt.SessionStore, steps ...agenttest.Step) *agentrt.Agent {
	a := agent(steps...)
	a.Store = store
	return a
}

// TestFailingCaseShowsByName runs Runner.Test in a child go test process
// (TestRunnerTestChild) and checks that go test names the failing case.
func TestFailingCaseShowsByName(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerTestChild$", "-test.v")
	cmd.Env = append(os.Environ(), "EVAL_TEST_CHILD=1", eval.EnvReport+"=", eval.EnvBaseline+"=")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child fails:\n%s", out)
	assert.Contains(t, string(out), "--- FAIL: TestRunnerTestChild/bad")
	assert.Contains(t, string(out), "--- PASS: TestRunnerTestChild/good")
	assert.Contains(t, string(out), `run 0: contains ["42"]: final answer "41" does not contain "42"`)
	assert.Contains(t, string(out), "passed 1 of 2 cases", "the table is logged")
}

func TestRunnerTestChild(t *testing.T) {
	if os.Getenv("EVAL_TEST_CHILD") == "" {
		t.Skip("run by TestFailingCaseShowsByName")
	}
	rn := &eval.Runner{Agent: func(c *eval.Case, _ int) *agentrt.Agent {
		if c.Name == "bad" {
			return agent(agenttest.Reply("41"))
		}
		return agent(reply42)
	}}
	rn.Test(t, []eval.Case{
		{Name: "good", Input: "2+40?", Expect: []eval.Check{eval.Contains("42")}},
		{Name: "bad", Input: "2+40?", Expect: []eval.Check{eval.Contains("42")}},
	})
}
