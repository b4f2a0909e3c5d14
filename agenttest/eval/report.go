package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/agentrt/agentrt"
)

// Report is the result of a [Runner.Run], in a JSON form meant to be kept
// and compared ([Compare]).
type Report struct {
	Name  string       `json:"name,omitempty"`
	K     int          `json:"k"`
	Cases []CaseReport `json:"cases"`
}

// CaseReport is the result of one case's runs.
type CaseReport struct {
	Name   string  `json:"name"`
	Trials []Trial `json:"trials"`
	// Passes counts the runs that passed; PassRate is Passes over the
	// runs, and PassAtK says that at least one of the K runs passed.
	Passes   int     `json:"passes"`
	PassRate float64 `json:"pass_rate"`
	PassAtK  bool    `json:"pass_at_k"`
	// Pass says the pass rate reached the runner's MinPassRate.
	Pass bool `json:"pass"`
	// Turns, Tokens and Cost are means over the runs.
	Turns  float64 `json:"turns"`
	Tokens float64 `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Trial is one run of a case.
type Trial struct {
	Pass      bool               `json:"pass"`
	Checks    []CheckResult      `json:"checks"`
	Error     string             `json:"error,omitempty"`
	Stop      agentrt.StopReason `json:"stop"`
	Layer     agentrt.Layer      `json:"layer,omitempty"`
	FinalText string             `json:"final_text"`
	Calls     []Call             `json:"calls,omitempty"`
	Turns     int                `json:"turns"`
	Usage     agentrt.Usage      `json:"usage"`
	Cost      float64            `json:"cost"`
}

// CheckResult is one check of a run: whether it passed, and why not (or
// a judge's reasoning).
type CheckResult struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// summarize fills the case's counts and means.
func (c *CaseReport) summarize(minRate float64) {
	n := float64(len(c.Trials))
	c.Passes, c.Turns, c.Tokens, c.Cost = 0, 0, 0, 0
	for _, t := range c.Trials {
		if t.Pass {
			c.Passes++
		}
		c.Turns += float64(t.Turns) / n
		c.Tokens += float64(tokens(t.Usage)) / n
		c.Cost += t.Cost / n
	}
	c.PassRate = float64(c.Passes) / n
	c.PassAtK = c.Passes > 0
	c.Pass = c.PassRate >= minRate
}

// Passed counts the cases that passed.
func (r *Report) Passed() int {
	n := 0
	for _, c := range r.Cases {
		if c.Pass {
			n++
		}
	}
	return n
}

// Table returns the report as a text table: one line per case with its
// passes, pass@k, mean turns, tokens and cost, and the first failure.
func (r *Report) Table() string {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "case\tpass\tpass@%d\tturns\ttokens\tcost\tfirst failure\n", r.K)
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%s\t%d/%d\t%s\t%.1f\t%.0f\t$%.6f\t%s\n", c.Name, c.Passes, len(c.Trials), yes(c.PassAtK), c.Turns, c.Tokens, c.Cost, firstFailure(c))
	}
	fmt.Fprintf(w, "passed %d of %d cases\n", r.Passed(), len(r.Cases))
	_ = w.Flush()
	return buf.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func firstFailure(c CaseReport) string {
	for _, t := range c.Trials {
		if t.Error != "" {
			return clip(t.Error)
		}
		for _, ch := range t.Checks {
			if !ch.Pass {
				return clip(ch.Name + ": " + ch.Detail)
			}
		}
	}
	return ""
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ") // plain data always encodes
	return append(b, '\n')
}

// WriteFile writes the report as JSON to path.
func (r *Report) WriteFile(path string) error { return os.WriteFile(path, r.JSON(), 0o644) }

// ReadReport reads a report written by [Report.WriteFile].
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Change says how a case differs between two reports.
type Change string

const (
	Better  Change = "better"  // a higher pass rate
	Worse   Change = "worse"   // a lower pass rate
	Same    Change = "same"    // the same pass rate
	Added   Change = "added"   // only in the new report
	Removed Change = "removed" // only in the old report
)

// CaseDiff is one case compared between two reports: the pass rates and
// the change in mean turns, tokens and cost (new minus old).
type CaseDiff struct {
	Name   string  `json:"name"`
	Change Change  `json:"change"`
	Before float64 `json:"before"` // pass rate
	After  float64 `json:"after"`  // pass rate
	Turns  float64 `json:"turns"`
	Tokens float64 `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Comparison is two reports compared case by case, in the new report's
// order, then the removed cases.
type Comparison struct {
	Cases []CaseDiff `json:"cases"`
}

// Compare compares the report before with the report after.
func Compare(before, after *Report) Comparison {
	old := map[string]CaseReport{}
	for _, c := range before.Cases {
		old[c.Name] = c
	}
	var cmp Comparison
	seen := map[string]bool{}
	for _, a := range after.Cases {
		seen[a.Name] = true
		b, ok := old[a.Name]
		if !ok {
			cmp.Cases = append(cmp.Cases, CaseDiff{Name: a.Name, Change: Added, After: a.PassRate, Turns: a.Turns, Tokens: a.Tokens, Cost: a.Cost})
			continue
		}
		d := CaseDiff{Name: a.Name, Change: Same, Before: b.PassRate, After: a.PassRate,
			Turns: a.Turns - b.Turns, Tokens: a.Tokens - b.Tokens, Cost: a.Cost - b.Cost}
		switch {
		case a.PassRate > b.PassRate:
			d.Change = Better
		case a.PassRate < b.PassRate:
			d.Change = Worse
		}
		cmp.Cases = append(cmp.Cases, d)
	}
	for _, b := range before.Cases {
		if !seen[b.Name] {
			cmp.Cases = append(cmp.Cases, CaseDiff{Name: b.Name, Change: Removed, Before: b.PassRate, Turns: -b.Turns, Tokens: -b.Tokens, Cost: -b.Cost})
		}
	}
	return cmp
}

// Count returns how many cases changed as ch.
func (c Comparison) Count(ch Change) int {
	n := 0
	for _, d := range c.Cases {
		if d.Change == ch {
			n++
		}
	}
	return n
}

// Table returns the comparison as a text table.
func (c Comparison) Table() string {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tchange\tpass rate\tΔturns\tΔtokens\tΔcost")
	for _, d := range c.Cases {
		fmt.Fprintf(w, "%s\t%s\t%.2f → %.2f\t%+.1f\t%+.0f\t%+.6f\n", d.Name, d.Change, d.Before, d.After, d.Turns, d.Tokens, d.Cost)
	}
	fmt.Fprintf(w, "%d better, %d worse, %d same, %d added, %d removed\n", c.Count(Better), c.Count(Worse), c.Count(Same), c.Count(Added), c.Count(Removed))
	_ = w.Flush()
	return buf.String()
}
