// Package sessioncheck holds what every session store of the module
// checks alike: the runtime's first invariant, and the size of the
// largest message.
package sessioncheck

import "fmt"

// MaxMessageSize is the largest message, as JSON, that every store takes
// (agentrt.ErrLineTooLong for a longer one): what a JSONL line of the
// default 64 MiB holds, less room for the line's other fields.
const MaxMessageSize = 64<<20 - 1024

// Msg is what the invariant looks at in a message.
type Msg struct {
	Role      string   // "user", "assistant", "tool"
	ToolUseID string   // of a tool result
	Uses      []string // the tool_use ids of an assistant message
}

// Check reports the first break of the runtime's first invariant: a
// tool_use id twice in one assistant message, a second result for one
// call, an orphaned result (its tool_use is not in the assistant message
// before it), or a result out of place (a call without a result before a
// message other than a result). Calls left without results at the end (a
// run in progress, a crash, calls waiting for approval) are allowed, and
// results may come in any order.
func Check(msgs []Msg) error {
	last := -1                 // the last assistant message
	calls := map[string]bool{} // its tool_use ids → answered
	for i, m := range msgs {
		if m.Role == "tool" {
			answered, ok := calls[m.ToolUseID]
			switch {
			case last < 0 || !ok:
				return fmt.Errorf("message %d: orphaned result: tool_use %q is not in the assistant message before it", i, m.ToolUseID)
			case answered:
				return fmt.Errorf("message %d: a second result for tool_use %q (message %d)", i, m.ToolUseID, last)
			}
			calls[m.ToolUseID] = true
			continue
		}
		for id, answered := range calls {
			if !answered {
				return fmt.Errorf("message %d: result out of place: tool_use %q of message %d has no result before this %s message", i, id, last, m.Role)
			}
		}
		clear(calls)
		if m.Role != "assistant" {
			last = -1
			continue
		}
		last = i
		for _, id := range m.Uses {
			if _, dup := calls[id]; dup {
				return fmt.Errorf("message %d: tool_use id %q twice in one message", i, id)
			}
			calls[id] = false
		}
	}
	return nil
}
