package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/agentrt/agentrt"
)

// caseJSON is one line of a JSONL dataset.
type caseJSON struct {
	Name    string            `json:"name"`
	Input   string            `json:"input"`
	Session []agentrt.Message `json:"session,omitempty"`
	Expect  struct {
		Contains []string `json:"contains,omitempty"`
		Matches  string   `json:"matches,omitempty"`
		Tools    *struct {
			Order Order      `json:"order"`
			Calls []callJSON `json:"calls"`
		} `json:"tools,omitempty"`
		Never     []callJSON         `json:"never,omitempty"`
		MaxTurns  int                `json:"max_turns,omitempty"`
		MaxTokens int                `json:"max_tokens,omitempty"`
		MaxCost   float64            `json:"max_cost,omitempty"`
		Stop      agentrt.StopReason `json:"stop,omitempty"`
		Layer     agentrt.Layer      `json:"layer,omitempty"`
	} `json:"expect"`
}

// callJSON is an expected call: a name and, optionally, fields its input
// must have.
type callJSON struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (c callJSON) want() Want {
	if len(c.Input) == 0 {
		return Tool(c.Name)
	}
	return ToolInput(c.Name, string(c.Input))
}

// ReadJSONL reads a dataset of one JSON case a line:
//
//	{"name": "add", "input": "What is 2+40?", "expect": {
//	  "contains": ["42"], "matches": "^[0-9]+$",
//	  "tools": {"order": "in_order", "calls": [{"name": "add", "input": {"a": 2}}]},
//	  "never": [{"name": "delete"}],
//	  "max_turns": 3, "max_tokens": 2000, "max_cost": 0.01,
//	  "stop": "complete", "layer": ""}}
//
// "session" may hold messages (agentrt's JSON form) to continue. An
// expected call's "input" lists fields the call's input must have, as
// [ToolInput]. "stop" checks the stop reason with "layer" ([Stop]).
// Blank lines are skipped. Add checks of your own to the returned cases'
// Expect.
func ReadJSONL(r io.Reader) ([]Case, error) {
	var cases []Case
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var cj caseJSON
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cj); err != nil {
			return nil, fmt.Errorf("eval: line %d: %w", line, err)
		}
		c, err := cj.toCase()
		if err != nil {
			return nil, fmt.Errorf("eval: line %d: %w", line, err)
		}
		cases = append(cases, c)
	}
	return cases, sc.Err()
}

// LoadJSONL reads the dataset in the file path with [ReadJSONL].
func LoadJSONL(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJSONL(f)
}

func (cj caseJSON) toCase() (Case, error) {
	if cj.Name == "" {
		return Case{}, fmt.Errorf("a case needs a name")
	}
	c := Case{Name: cj.Name, Input: cj.Input, Session: cj.Session}
	e := cj.Expect
	if len(e.Contains) > 0 {
		c.Expect = append(c.Expect, Contains(e.Contains...))
	}
	if e.Matches != "" {
		if _, err := regexp.Compile(e.Matches); err != nil {
			return Case{}, fmt.Errorf("%s: matches: %w", cj.Name, err)
		}
		c.Expect = append(c.Expect, Matches(e.Matches))
	}
	calls := e.Never
	if e.Tools != nil {
		calls = append(calls[:len(calls):len(calls)], e.Tools.Calls...)
	}
	for _, w := range calls {
		if len(w.Input) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(w.Input, &obj); err != nil {
				return Case{}, fmt.Errorf("%s: call %s: input must be a JSON object: %w", cj.Name, w.Name, err)
			}
		}
	}
	if e.Tools != nil {
		switch e.Tools.Order {
		case Exact, InOrder, AnyOrder, Subset, Superset:
		default:
			return Case{}, fmt.Errorf("%s: tools: unknown order %q", cj.Name, e.Tools.Order)
		}
		var want []Want
		for _, w := range e.Tools.Calls {
			want = append(want, w.want())
		}
		c.Expect = append(c.Expect, Tools(e.Tools.Order, want...))
	}
	if len(e.Never) > 0 {
		var never []Want
		for _, w := range e.Never {
			never = append(never, w.want())
		}
		c.Expect = append(c.Expect, Never(never...))
	}
	if e.MaxTurns > 0 {
		c.Expect = append(c.Expect, MaxTurns(e.MaxTurns))
	}
	if e.MaxTokens > 0 {
		c.Expect = append(c.Expect, MaxTokens(e.MaxTokens))
	}
	if e.MaxCost > 0 {
		c.Expect = append(c.Expect, MaxCost(e.MaxCost))
	}
	if e.Stop != "" {
		c.Expect = append(c.Expect, Stop(e.Stop, e.Layer))
	}
	return c, nil
}
