package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentrt/agentrt"
)

// Contains checks that the final answer contains each of subs.
func Contains(subs ...string) Check {
	return Check{Name: fmt.Sprintf("contains %q", subs), Fn: func(_ context.Context, r *Run) error {
		for _, s := range subs {
			if !strings.Contains(r.Done.FinalText, s) {
				return fmt.Errorf("final answer %q does not contain %q", clip(r.Done.FinalText), s)
			}
		}
		return nil
	}}
}

// Matches checks that the final answer matches the regular expression
// expr. It panics if expr does not compile.
func Matches(expr string) Check {
	re := regexp.MustCompile(expr)
	return Check{Name: "matches " + strconv.Quote(expr), Fn: func(_ context.Context, r *Run) error {
		if !re.MatchString(r.Done.FinalText) {
			return fmt.Errorf("final answer %q does not match %s", clip(r.Done.FinalText), expr)
		}
		return nil
	}}
}

// Decodes checks that the final answer is JSON that decodes into a T,
// strictly (a field T lacks fails), and that fn, when not nil, accepts it.
func Decodes[T any](fn func(T) error) Check {
	var zero T
	return Check{Name: fmt.Sprintf("decodes into %T", zero), Fn: func(_ context.Context, r *Run) error {
		var v T
		dec := json.NewDecoder(strings.NewReader(r.Done.FinalText))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("final answer %q does not decode into %T: %v", clip(r.Done.FinalText), v, err)
		}
		if fn != nil {
			return fn(v)
		}
		return nil
	}}
}

// MaxTurns checks that the run made at most n planner calls.
func MaxTurns(n int) Check {
	return Check{Name: fmt.Sprintf("at most %d turns", n), Fn: func(_ context.Context, r *Run) error {
		if r.Done.Turns > n {
			return fmt.Errorf("%d turns", r.Done.Turns)
		}
		return nil
	}}
}

// MaxTokens checks that the run used at most n tokens, input and output.
func MaxTokens(n int) Check {
	return Check{Name: fmt.Sprintf("at most %d tokens", n), Fn: func(_ context.Context, r *Run) error {
		if t := tokens(r.Done.Usage); t > n {
			return fmt.Errorf("%d tokens", t)
		}
		return nil
	}}
}

// MaxCost checks that the run cost at most usd at the runner's prices.
func MaxCost(usd float64) Check {
	return Check{Name: fmt.Sprintf("at most $%g", usd), Fn: func(_ context.Context, r *Run) error {
		if r.Cost > usd {
			return fmt.Errorf("cost $%.6f", r.Cost)
		}
		return nil
	}}
}

// Stop checks the run's stop reason and layer.
func Stop(reason agentrt.StopReason, layer agentrt.Layer) Check {
	return Check{Name: fmt.Sprintf("stops %s (layer %q)", reason, layer), Fn: func(_ context.Context, r *Run) error {
		if r.Done.Reason != reason || r.Done.Layer != layer {
			return fmt.Errorf("stopped %s (layer %q): %s", r.Done.Reason, r.Done.Layer, r.Done.Detail)
		}
		return nil
	}}
}

// Func is a check of your own: fn returns nil when r passes.
func Func(name string, fn func(ctx context.Context, r *Run) error) Check {
	return Check{Name: name, Fn: fn}
}

// Want is one expected tool call: a tool's name and, optionally, a test
// of its input. Build it with [Tool], [ToolWith] or [ToolInput].
type Want struct {
	Name string
	desc string
	test func(json.RawMessage) error
}

func (w Want) String() string {
	if w.desc == "" {
		return w.Name
	}
	return w.Name + "(" + w.desc + ")"
}

// matches reports whether c is a call w expects.
func (w Want) matches(c Call) bool {
	return c.Name == w.Name && (w.test == nil || w.test(c.Input) == nil)
}

// Tool expects a call of the tool name, whatever its input.
func Tool(name string) Want { return Want{Name: name} }

// ToolWith expects a call of the tool name whose input decodes into an
// In that pred accepts.
func ToolWith[In any](name string, pred func(In) bool) Want {
	var zero In
	return Want{Name: name, desc: fmt.Sprintf("%T accepted", zero), test: func(raw json.RawMessage) error {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return err
		}
		if !pred(in) {
			return errors.New("rejected")
		}
		return nil
	}}
}

// ToolInput expects a call of the tool name whose input has the fields of
// the JSON object fields with their values (other fields may be there).
// It panics if fields is not a JSON object.
func ToolInput(name, fields string) Want {
	var want map[string]any
	if err := json.Unmarshal([]byte(fields), &want); err != nil {
		panic(fmt.Sprintf("eval.ToolInput(%q, %q): %v", name, fields, err))
	}
	var desc bytes.Buffer
	_ = json.Compact(&desc, []byte(fields)) // valid: it decoded
	return Want{Name: name, desc: desc.String(), test: func(raw json.RawMessage) error {
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			return err
		}
		if !hasFields(got, want) {
			return errors.New("fields differ")
		}
		return nil
	}}
}

// hasFields reports whether got has every field of want with its value,
// objects compared the same way.
func hasFields(got, want map[string]any) bool {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		wm, wok := w.(map[string]any)
		gm, gok := g.(map[string]any)
		if wok && gok {
			if !hasFields(gm, wm) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

// Order says how a run's tool calls must compare with the expected ones.
type Order string

const (
	// Exact: the same calls in the same order, no more, no fewer.
	Exact Order = "exact"
	// InOrder: the expected calls in their order, others between them
	// allowed.
	InOrder Order = "in_order"
	// AnyOrder: the same calls in any order, no more, no fewer.
	AnyOrder Order = "any_order"
	// Subset: every call made is one of the expected (each expected call
	// stands for one call); some may be missing.
	Subset Order = "subset"
	// Superset: every expected call is made (each by a call of its own);
	// others may be made too.
	Superset Order = "superset"
)

// Tools checks the run's tool trajectory against want, compared as order
// says.
func Tools(order Order, want ...Want) Check {
	return Check{Name: fmt.Sprintf("tools %s %v", order, want), Fn: func(_ context.Context, r *Run) error {
		ok := false
		switch order {
		case Exact:
			ok = len(r.Calls) == len(want)
			for i := 0; ok && i < len(want); i++ {
				ok = want[i].matches(r.Calls[i])
			}
		case InOrder:
			i := 0
			for _, c := range r.Calls {
				if i < len(want) && want[i].matches(c) {
					i++
				}
			}
			ok = i == len(want)
		case AnyOrder:
			ok = len(r.Calls) == len(want) && matching(r.Calls, want) == len(want)
		case Subset:
			ok = matching(r.Calls, want) == len(r.Calls)
		case Superset:
			ok = matching(r.Calls, want) == len(want)
		default:
			return fmt.Errorf("unknown order %q", order)
		}
		if !ok {
			return fmt.Errorf("calls %v, want %s %v", r.Calls, order, want)
		}
		return nil
	}}
}

// matching returns the size of a largest matching of calls to the wants
// that accept them, each used once (augmenting paths; both lists are
// short).
func matching(calls []Call, want []Want) int {
	owner := make([]int, len(want)) // the call matched to each want, or -1
	for i := range owner {
		owner[i] = -1
	}
	var try func(c int, seen []bool) bool
	try = func(c int, seen []bool) bool {
		for w := range want {
			if seen[w] || !want[w].matches(calls[c]) {
				continue
			}
			seen[w] = true
			if owner[w] < 0 || try(owner[w], seen) {
				owner[w] = c
				return true
			}
		}
		return false
	}
	n := 0
	for c := range calls {
		if try(c, make([]bool, len(want))) {
			n++
		}
	}
	return n
}

// Never checks that no call of the run is one of these: Never(ToolWith(
// "refund", func(in RefundIn) bool { return in.Amount > 500 })).
func Never(calls ...Want) Check {
	return Check{Name: fmt.Sprintf("never %v", calls), Fn: func(_ context.Context, r *Run) error {
		for _, c := range r.Calls {
			for _, w := range calls {
				if w.matches(c) {
					return fmt.Errorf("called %v", c)
				}
			}
		}
		return nil
	}}
}

func tokens(u agentrt.Usage) int { return u.InputTokens + u.OutputTokens }

// clip shortens s for a message.
func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}
