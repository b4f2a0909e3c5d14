package agentrt_test

import (
	"context"
	"strings"
	"sync"

	"github.com/agentrt/agentrt"
)

// claimStore is a MemoryStore that logs every call the runtime makes to
// it, with the abilities of a JSONLStore: Locker, RecordStore and Syncer.
// Others (tools, planners) may add their own entries to the same log with
// note, so that the order of store writes and callbacks can be checked.
type claimStore struct {
	mem *agentrt.MemoryStore
	mu  sync.Mutex
	log []string
}

var _ interface {
	agentrt.SessionStore
	agentrt.Locker
	agentrt.RecordStore
	agentrt.Syncer
} = (*claimStore)(nil)

func newClaimStore() *claimStore { return &claimStore{mem: &agentrt.MemoryStore{}} }

// note appends an entry to the log.
func (s *claimStore) note(entry string) {
	s.mu.Lock()
	s.log = append(s.log, entry)
	s.mu.Unlock()
}

// entries returns a copy of the log.
func (s *claimStore) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// claimDescribe names a message in the log: "user", "assistant",
// "assistant[call_1,call_2]" for one that calls tools, "result:call_1".
func claimDescribe(m agentrt.Message) string {
	switch {
	case m.Role == agentrt.RoleTool:
		return "result:" + m.ToolUseID
	case m.HasToolUse():
		var ids []string
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse {
				ids = append(ids, b.ID)
			}
		}
		return string(m.Role) + "[" + strings.Join(ids, ",") + "]"
	}
	return string(m.Role)
}

func (s *claimStore) Append(ctx context.Context, id string, m agentrt.Message) error {
	s.note("append:" + claimDescribe(m))
	return s.mem.Append(ctx, id, m)
}

func (s *claimStore) Load(ctx context.Context, id string) ([]agentrt.Message, error) {
	s.note("load")
	return s.mem.Load(ctx, id)
}

func (s *claimStore) List(ctx context.Context) ([]agentrt.SessionInfo, error) {
	s.note("list")
	return s.mem.List(ctx)
}

func (s *claimStore) Delete(ctx context.Context, id string) error {
	s.note("delete")
	return s.mem.Delete(ctx, id)
}

func (s *claimStore) Lock(ctx context.Context, id string) (func(), error) {
	s.note("lock")
	unlock, err := s.mem.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	return func() { s.note("unlock"); unlock() }, nil
}

func (s *claimStore) AppendRecord(ctx context.Context, id string, rec agentrt.Record) error {
	s.note("record:" + string(rec.Kind))
	return s.mem.AppendRecord(ctx, id, rec)
}

func (s *claimStore) LoadRecords(ctx context.Context, id string) ([]agentrt.Record, error) {
	s.note("load-records")
	return s.mem.LoadRecords(ctx, id)
}

func (s *claimStore) Sync(context.Context, string) error {
	s.note("sync")
	return nil
}

// claimOpen returns the tool_use ids of msgs that have no tool result
// after them, in order.
func claimOpen(msgs []agentrt.Message) []string {
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == agentrt.RoleTool {
			answered[m.ToolUseID] = true
		}
	}
	var open []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse && !answered[b.ID] {
				open = append(open, b.ID)
			}
		}
	}
	return open
}
