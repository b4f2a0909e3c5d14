package agenttest

import (
	"fmt"
	"iter"

	"github.com/agentrt/agentrt"
)

// Collect ranges over a run and returns its events and its error (nil if
// the run yielded none).
func Collect(seq iter.Seq2[agentrt.Event, error]) ([]agentrt.Event, error) {
	var events []agentrt.Event
	for ev, err := range seq {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// Filter returns the events of type T, in order:
//
//	results := agenttest.Filter[agentrt.ToolResult](events)
func Filter[T agentrt.Event](events []agentrt.Event) []T {
	var out []T
	for _, ev := range events {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

// Done returns the run's Done event, and false if there is none.
func Done(events []agentrt.Event) (agentrt.Done, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if d, ok := events[i].(agentrt.Done); ok {
			return d, true
		}
	}
	return agentrt.Done{}, false
}

// CheckInvariants reports the first violation of the runtime's invariants
// in a session's messages, or nil:
//
//  1. every tool_use id of an assistant message is non-empty and unique in
//     that message, and has exactly one tool result, appended right after
//     the message, in the order of the tool_uses;
//  2. no tool result answers a tool_use that is not right before it.
//
// (The second invariant, that failures become is_error results, shows in
// the first: a failure that broke the chain would leave a tool_use
// unanswered.)
func CheckInvariants(msgs []agentrt.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case agentrt.RoleTool:
			return fmt.Errorf("message %d: tool result %q does not follow the assistant message that called it", i, m.ToolUseID)
		case agentrt.RoleAssistant:
			uses := m.ToolUses()
			seen := map[string]bool{}
			for _, u := range uses {
				if u.ID == "" {
					return fmt.Errorf("message %d: tool_use %q has an empty id", i, u.Name)
				}
				if seen[u.ID] {
					return fmt.Errorf("message %d: duplicate tool_use id %q", i, u.ID)
				}
				seen[u.ID] = true
			}
			for k, u := range uses {
				j := i + 1 + k
				if j >= len(msgs) {
					return fmt.Errorf("message %d: tool_use %q (%s) has no result", i, u.ID, u.Name)
				}
				r := msgs[j]
				if r.Role != agentrt.RoleTool {
					return fmt.Errorf("message %d: tool_use %q (%s) has no result before message %d (%s)", i, u.ID, u.Name, j, r.Role)
				}
				if r.ToolUseID != u.ID {
					return fmt.Errorf("message %d: result for %q found where the result of tool_use %q (%s) was expected", j, r.ToolUseID, u.ID, u.Name)
				}
			}
			i += len(uses)
		}
	}
	return nil
}

// AssertInvariants fails the test if msgs break the invariants; see
// [CheckInvariants].
func AssertInvariants(t TB, msgs []agentrt.Message) {
	t.Helper()
	if err := CheckInvariants(msgs); err != nil {
		t.Errorf("agenttest: invariants broken: %v\nmessages:\n%s", err, dump(msgs))
	}
}

func dump(msgs []agentrt.Message) string {
	s := ""
	for i, m := range msgs {
		s += fmt.Sprintf("  %d  %s\n", i, m)
	}
	return s
}
