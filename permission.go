package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
)

// Decision is a permission checker's answer, a plain value:
//
//	agentrt.Decision{Allow: true}                   // the call runs
//	agentrt.Decision{Allow: true, Input: fixed}     // it runs on another input
//	agentrt.Decision{Reason: "not on Fridays"}      // it is refused; the model sees why
//	agentrt.Decision{Pending: true}                 // a person decides later
//
// The zero value denies, with no reason. An Input it carries goes to the
// tool as it is: do not modify it afterwards.
type Decision struct {
	// ToolUseID names the call a person decides on, in [Agent.Resume]
	// (Done.Pending[i].ToolUseID). A checker leaves it empty.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Allow lets the call run.
	Allow bool `json:"allow"`
	// Reason explains a denial; the model sees it, after a standard text
	// that says who refused the call.
	Reason string `json:"reason,omitempty"`
	// Input, when non-nil on an allowed call, replaces the input: a value of
	// the tool's decoded input type, or a json.RawMessage (or []byte) that
	// is decoded and validated again. The checker is then asked once more,
	// with the new input and [ToolCall.EditedBy] set, and may refuse it.
	// Decoded from JSON, it is a json.RawMessage.
	Input any `json:"input,omitempty"`
	// Source says who decided: "policy", "user", "remembered", "hook" or
	// a name of the checker's choosing; a checker that leaves it empty
	// reports "policy", a decision given to Resume "user". It is reported
	// in events and the session's audit records.
	Source string `json:"source,omitempty"`
	// Pending neither allows nor denies the call: it leaves it to a
	// person, who answers later, possibly from another process. The run
	// records the call as pending in the session, stops with
	// [StopPending] (its Done lists the pending calls) and releases the
	// session; [Agent.Resume] continues it with the person's decisions.
	// Allow, Reason and Input are then ignored. A store that cannot keep
	// records (no [RecordStore]) cannot hold a pending call: the call is
	// then denied, saying so. Resume refuses a pending decision.
	Pending bool `json:"pending,omitempty"`
	// Always remembers a person's decision for the rest of the session,
	// for later calls of the same tool (of every tool with AnyTool) whose
	// input matches Pattern: the runtime applies it, with Source
	// "remembered", to such a call the checker defers ([Decision.Pending]), and
	// passes it to the checker as ToolCall.Remembered
	// ([AskOnWrite] answers with it instead of asking). The rule is
	// recorded in the session's permission record, so it holds on every
	// later run of the session, in any process. A store that keeps no
	// records (no [RecordStore]) keeps no rules: the
	// decision then holds for the rest of the run only.
	Always bool `json:"always,omitempty"`
	// AnyTool widens an Always rule to every tool.
	AnyTool bool `json:"any_tool,omitempty"`
	// Pattern, when not empty, narrows an Always rule to calls whose
	// input, as compact JSON, matches this regular expression (package
	// regexp), such as `"path":"notes/`. An invalid pattern remembers
	// nothing.
	Pattern string `json:"pattern,omitempty"`
}

// MarshalJSON encodes a decision; an Input given as json.RawMessage or
// []byte goes as the JSON it holds (not as a base64 string).
func (d Decision) MarshalJSON() ([]byte, error) {
	type plain Decision
	v := struct {
		plain
		Input json.RawMessage `json:"input,omitempty"`
	}{plain: plain(d)}
	if raw, ok := rawJSON(d.Input); ok {
		v.Input = raw
	} else if d.Input != nil {
		b, err := json.Marshal(d.Input)
		if err != nil {
			return nil, err
		}
		v.Input = b
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes a decision, keeping Input as a json.RawMessage for
// the tool to decode and validate. It also reads "by", the older name of
// "source".
func (d *Decision) UnmarshalJSON(b []byte) error {
	type plain Decision
	var v struct {
		plain
		Input json.RawMessage `json:"input"`
		By    string          `json:"by"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*d = Decision(v.plain)
	if len(v.Input) > 0 && string(v.Input) != "null" {
		d.Input = v.Input
	}
	if d.Source == "" {
		d.Source = v.By
	}
	return nil
}

// PermissionChecker decides whether a tool call may run. It is called once
// per tool call, after the input was decoded and validated, and never
// concurrently within one run (calls of different runs may overlap, so a
// checker shared by agents must be safe for concurrent use).
//
// An error from Check denies the call; the model sees the error's text.
type PermissionChecker interface {
	Check(ctx context.Context, req *ToolCall) (Decision, error)
}

// PermissionFunc adapts a function to a [PermissionChecker].
type PermissionFunc func(ctx context.Context, req *ToolCall) (Decision, error)

// Check calls f(ctx, req).
func (f PermissionFunc) Check(ctx context.Context, req *ToolCall) (Decision, error) {
	return f(ctx, req)
}

// AllowReadOnly returns the default policy: read-only tools run, write
// tools are denied with a reason that tells the model (and the programmer
// reading the session) how to allow them. An Agent without a Permission
// uses it: safe by default.
func AllowReadOnly() PermissionChecker { return allowReadOnly{} }

type allowReadOnly struct{}

func (allowReadOnly) Check(_ context.Context, req *ToolCall) (Decision, error) {
	if req.Tool.ReadOnly {
		return Decision{Allow: true, Source: "policy"}, nil
	}
	return Decision{
		Reason: fmt.Sprintf("permission denied: %q is a write tool and this agent only allows read-only tools (the program must set a permission checker to allow it)", req.Tool.Name),
		Source: "policy",
	}, nil
}

// AllowAll returns a policy that lets every call run. Use it only where
// every tool is trusted with every input the model may choose.
func AllowAll() PermissionChecker { return allowAll{} }

type allowAll struct{}

func (allowAll) Check(context.Context, *ToolCall) (Decision, error) {
	return Decision{Allow: true, Source: "policy"}, nil
}

// AskOnWrite returns a policy that allows read-only tools and asks ask
// about each write tool call, unless the person already answered "always"
// for such a call in this session ([ToolCall.Remembered]): then
// that decision is returned without asking. ask returns the person's
// decision; a Source left empty is reported as "user". An allowing
// decision with Always set is remembered by the runtime for the rest of
// the session, in the session itself, so a later run of the session, in
// this process or another, does not ask again (with a store that keeps
// records; otherwise for the rest of the run: see [Decision.Always]).
//
// The checker is safe for concurrent use if ask is.
func AskOnWrite(ask PermissionFunc) PermissionChecker {
	if ask == nil {
		panic("agentrt: AskOnWrite: nil ask")
	}
	return askOnWrite{ask: ask}
}

type askOnWrite struct{ ask PermissionFunc }

func (a askOnWrite) Check(ctx context.Context, req *ToolCall) (Decision, error) {
	if req.Tool.ReadOnly {
		return Decision{Allow: true, Source: "policy"}, nil
	}
	if m := req.Remembered; m != nil {
		return *m, nil
	}
	if req.EditedBy != "" { // a person's edit: they decided already
		return Decision{Allow: true, Source: "policy"}, nil
	}
	d, err := a.ask(ctx, req)
	if err != nil {
		return Decision{}, err
	}
	if d.Source == "" {
		d.Source = "user"
	}
	if !d.Allow && !d.Pending && d.Reason == "" {
		d.Reason = fmt.Sprintf("permission denied: the user refused this call of %q", req.Tool.Name)
	}
	return d, nil
}
