package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/agentrt/agentrt"
)

// Runner runs a dataset. Its fields are read by Run; a Runner may be used
// by one Run at a time.
type Runner struct {
	// Agent returns the agent for one run of a case (trial counts from
	// 0). It is called once per run, from several goroutines at a time,
	// and must return an agent of its own each time (a scripted planner
	// plays one run). A nil Store gets a fresh in-memory store; each run
	// has a session of its own ("eval-CASE-TRIAL", by the case's index)
	// in whatever store.
	Agent func(c *Case, trial int) *agentrt.Agent
	// K is how many times each case runs; 0 means 1.
	K int
	// Parallel is how many runs go at once; 0 means 1.
	Parallel int
	// Prices give the cost of a run's usage.
	Prices agentrt.Prices
	// MinPassRate is the share of a case's runs that must pass for
	// [Runner.Test] to pass it; 0 means all of them.
	MinPassRate float64
	// Name names the report (a model, a prompt version).
	Name string
}

// Run runs every case K times, at most Parallel runs at once, each on a
// fresh session, and returns the report. A run's error (a planner or store
// failure) fails that run; ctx ends the runs not yet done.
func (rn *Runner) Run(ctx context.Context, cases []Case) *Report {
	k := max(rn.K, 1)
	rep := &Report{Name: rn.Name, K: k, Cases: make([]CaseReport, len(cases))}
	sem := make(chan struct{}, max(rn.Parallel, 1))
	var wg sync.WaitGroup
	for i := range cases {
		rep.Cases[i] = CaseReport{Name: cases[i].Name, Trials: make([]Trial, k)}
		for trial := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				rep.Cases[i].Trials[trial] = rn.trial(ctx, &cases[i], i, trial)
			}()
		}
	}
	wg.Wait()
	for i := range rep.Cases {
		rep.Cases[i].summarize(rn.minPassRate())
	}
	return rep
}

func (rn *Runner) minPassRate() float64 {
	if rn.MinPassRate <= 0 {
		return 1
	}
	return rn.MinPassRate
}

// trial runs case c, the index-th, once and scores it.
func (rn *Runner) trial(ctx context.Context, c *Case, index, trial int) Trial {
	r := &Run{Case: c, Trial: trial}
	ag := rn.Agent(c, trial)
	if ag.Store == nil {
		ag.Store = &agentrt.MemoryStore{}
	}
	// An id of its own even in a store the agents share.
	id := fmt.Sprintf("eval-%d-%d", index, trial)
	for _, m := range c.Session {
		if err := ag.Store.Append(ctx, id, m); err != nil {
			r.Err = err
		}
	}
	if r.Err == nil {
		for ev, err := range ag.Run(ctx, id, c.Input) {
			if err != nil {
				r.Err = err
				continue
			}
			r.Events = append(r.Events, ev)
			switch e := ev.(type) {
			case agentrt.ToolCall:
				r.Calls = append(r.Calls, Call{Name: e.Tool.Name, Input: e.RawInput})
			case agentrt.Done:
				r.Done = e
			}
		}
		r.Session, _ = ag.Store.Load(ctx, id)
	}
	r.Cost = rn.Prices.Cost(r.Done.Usage)
	t := Trial{
		Pass: r.Err == nil, Turns: r.Done.Turns, Usage: r.Done.Usage, Cost: r.Cost,
		Stop: r.Done.Reason, Layer: r.Done.Layer, FinalText: r.Done.FinalText, Calls: r.Calls,
	}
	if r.Err != nil {
		t.Error = r.Err.Error()
	}
	for _, chk := range c.Expect {
		res := CheckResult{Name: chk.Name, Pass: true}
		if err := runCheck(ctx, chk, r); err != nil {
			var note *Note
			if errors.As(err, &note) {
				res.Detail = note.Text
			} else {
				res.Pass, res.Detail = false, err.Error()
				t.Pass = false
			}
		}
		t.Checks = append(t.Checks, res)
	}
	return t
}

// runCheck runs chk, turning a panic into a failure.
func runCheck(ctx context.Context, chk Check, r *Run) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("check panicked: %v", v)
		}
	}()
	return chk.Fn(ctx, r)
}

// Environment variables [Runner.Test] reads.
const (
	// EnvReport names a file Test writes the JSON report to.
	EnvReport = "AGENTRT_EVAL_REPORT"
	// EnvBaseline names a report Test compares the new one with, logging
	// the comparison.
	EnvBaseline = "AGENTRT_EVAL_BASELINE"
)

// Test runs the cases and reports each as a subtest of t named after it,
// failing the cases whose pass rate is below MinPassRate with the failed
// checks of each failed run. It logs the report's table, writes the
// report to the file named by AGENTRT_EVAL_REPORT when set, and logs its
// comparison with the report named by AGENTRT_EVAL_BASELINE when set.
func (rn *Runner) Test(t *testing.T, cases []Case) *Report {
	t.Helper()
	rep := rn.Run(t.Context(), cases)
	for _, c := range rep.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Pass {
				return
			}
			t.Errorf("passed %d of %d runs, want a pass rate of %g", c.Passes, len(c.Trials), rn.minPassRate())
			for i, tr := range c.Trials {
				if tr.Error != "" {
					t.Errorf("run %d: %s", i, tr.Error)
				}
				for _, ch := range tr.Checks {
					if !ch.Pass {
						t.Errorf("run %d: %s: %s", i, ch.Name, ch.Detail)
					}
				}
			}
		})
	}
	t.Logf("\n%s", rep.Table())
	if path := os.Getenv(EnvReport); path != "" {
		if err := rep.WriteFile(path); err != nil {
			t.Errorf("eval report: %v", err)
		}
	}
	if path := os.Getenv(EnvBaseline); path != "" {
		base, err := ReadReport(path)
		if err != nil {
			t.Errorf("eval baseline: %v", err)
		} else {
			t.Logf("compared with %s:\n%s", path, Compare(base, rep).Table())
		}
	}
	return rep
}
