package agenttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/sessioncheck"
	"github.com/agentrt/agentrt/internal/textcut"
)

// TestStore must pass a correct store and fail each broken one, in the
// subtest that checks what is broken. Each store runs the suite in a child
// process (the test binary, running TestStoreSuiteChild), since a failing
// suite fails its test.
func TestTestStoreCatchesBrokenStores(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for fault, failing := range map[string][]string{
		"":                {},
		"no-lock":         {}, // Locker is optional: its subtest is skipped
		"reverse":         {"AppendLoad", "LoadIsSnapshot", "ConcurrentSessions", "ConcurrentAppendsOneSession", "RecordStore"},
		"lose-is-error":   {"AppendLoad", "HostileText"},
		"compact-input":   {},
		"reorder-input":   {"AppendLoad", "RecordStore"},
		"alias-load":      {"LoadIsSnapshot"},
		"missing-error":   {"LoadMissing", "List", "Delete"},
		"no-validation":   {"InvalidIDs"},
		"list-ascending":  {"List", "ListOrder"},
		"long-title":      {"List", "HostileText"},
		"strip-nul":       {"HostileText"},
		"exact-bad-utf8":  {"HostileText"},
		"no-size-limit":   {"LargestMessage"},
		"count-all":       {"RecordStore"},
		"records-lost":    {"RecordStore"},
		"delete-noop":     {"Delete"},
		"lock-never-busy": {"Locker"},
		"lock-no-release": {"Locker"},
		"lock-racy":       {"Locker"},
	} {
		t.Run("fault="+fault, func(t *testing.T) {
			t.Parallel()
			args := []string{"-test.run=^TestStoreSuiteChild$", "-test.count=1", "-test.v"}
			if fault != "" && fault != "no-size-limit" {
				args = append(args, "-test.short") // LargestMessage appends 64 MiB: twice is enough
			}
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "AGENTTEST_STORE_FAULT="+fault, "AGENTTEST_STORE_CHILD=1")
			out, err := cmd.CombinedOutput()
			var got []string
			for _, line := range strings.Split(string(out), "\n") {
				if name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: TestStoreSuiteChild/"); ok {
					got = append(got, strings.Fields(name)[0])
				}
			}
			slices.Sort(got)
			want := slices.Clone(failing)
			slices.Sort(want)
			assert.Equal(t, want, nilIfEmpty(got), "failing subtests; output:\n%s", out)
			if len(failing) == 0 {
				assert.NoError(t, err, "output:\n%s", out)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return s
}

// TestStoreSuiteChild runs TestStore on a store with the fault named in
// the environment; it does nothing in a normal run.
func TestStoreSuiteChild(t *testing.T) {
	if os.Getenv("AGENTTEST_STORE_CHILD") == "" {
		t.Skip("only run as a child process")
	}
	fault := os.Getenv("AGENTTEST_STORE_FAULT")
	agenttest.TestStore(t, func(*testing.T) agentrt.SessionStore {
		s := &faultyStore{fault: fault, sessions: map[string]*faultySession{}}
		if fault == "no-lock" {
			return struct{ agentrt.SessionStore }{s} // hides Lock and AppendRecord
		}
		return s
	})
}

// faultyStore is a small, correct SessionStore, Locker and RecordStore,
// but for the one fault it is told to have.
type faultyStore struct {
	fault    string
	mu       sync.Mutex
	sessions map[string]*faultySession
	locks    map[string]bool
}

type faultySession struct {
	msgs             []agentrt.Message
	records          []agentrt.Record
	created, updated time.Time
}

func (s *faultyStore) check(id string) error {
	if s.fault == "no-validation" {
		return nil
	}
	return agentrt.ValidateSessionID(id)
}

// jsonText is m with its text as its JSON carries it (each byte that is not
// UTF-8 replaced by U+FFFD) and its tool inputs as they are.
func jsonText(m agentrt.Message) agentrt.Message {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out agentrt.Message
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	for i := range out.Blocks {
		out.Blocks[i].Input = m.Blocks[i].Input
	}
	return out
}

func (s *faultyStore) Append(_ context.Context, id string, m agentrt.Message) error {
	if err := s.check(id); err != nil {
		return err
	}
	if b, err := json.Marshal(m); err != nil || len(b) > sessioncheck.MaxMessageSize && s.fault != "no-size-limit" {
		return fmt.Errorf("%w: %d bytes", agentrt.ErrLineTooLong, len(b))
	}
	if s.fault == "strip-nul" {
		m.Content = strings.ReplaceAll(m.Content, "\x00", "")
	}
	if s.fault != "exact-bad-utf8" {
		m = jsonText(m) // text that is not UTF-8 as its JSON carries it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		ss = &faultySession{created: time.Now()}
		if s.fault == "alias-load" {
			ss.msgs = make([]agentrt.Message, 0, 64)
		}
		s.sessions[id] = ss
	}
	for i, b := range m.Blocks {
		if b.Type == agentrt.BlockToolUse && len(b.Input) > 0 {
			m.Blocks = slices.Clone(m.Blocks)
			switch s.fault {
			case "compact-input": // fine: whitespace does not count
				var buf bytes.Buffer
				if err := json.Compact(&buf, b.Input); err != nil {
					return err
				}
				m.Blocks[i].Input = buf.Bytes()
			case "reorder-input": // not fine
				m.Blocks[i].Input = []byte(strings.Replace(strings.Replace(string(b.Input), `"a"`, `"X"`, 1), `"b"`, `"a"`, 1))
			}
		}
	}
	if s.fault == "lose-is-error" {
		m.IsError = false
	}
	ss.msgs = append(ss.msgs, m)
	ss.updated = time.Now()
	return nil
}

func (s *faultyStore) Load(_ context.Context, id string) ([]agentrt.Message, error) {
	if err := s.check(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	switch {
	case ss == nil && s.fault == "missing-error":
		return nil, fmt.Errorf("no session %q", id)
	case ss == nil:
		return nil, nil
	case s.fault == "alias-load":
		return ss.msgs, nil
	case s.fault == "reverse":
		r := slices.Clone(ss.msgs)
		slices.Reverse(r)
		return r, nil
	}
	return slices.Clone(ss.msgs), nil
}

func (s *faultyStore) List(context.Context) ([]agentrt.SessionInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var infos []agentrt.SessionInfo
	for id, ss := range s.sessions {
		info := agentrt.SessionInfo{ID: id, Created: ss.created, Updated: ss.updated, Messages: len(ss.msgs), Title: firstUserTitle(ss.msgs)}
		if s.fault == "count-all" {
			info.Messages += len(ss.records)
		}
		if s.fault == "long-title" {
			for _, m := range ss.msgs {
				if m.Role == agentrt.RoleUser {
					info.Title = m.Content
					break
				}
			}
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b agentrt.SessionInfo) int {
		c := b.Updated.Compare(a.Updated)
		if s.fault == "list-ascending" {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		return c
	})
	return infos, nil
}

func (s *faultyStore) Delete(_ context.Context, id string) error {
	if err := s.check(id); err != nil {
		return err
	}
	if s.fault == "delete-noop" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, id)
	return nil
}

func (s *faultyStore) Lock(_ context.Context, id string) (func(), error) {
	if err := s.check(id); err != nil {
		return nil, err
	}
	if s.fault == "lock-never-busy" {
		return func() {}, nil
	}
	if s.fault == "lock-racy" { // check, then set: two callers can both win
		s.mu.Lock()
		busy := s.locks[id]
		s.mu.Unlock()
		if busy {
			return nil, fmt.Errorf("%w: %s", agentrt.ErrSessionBusy, id)
		}
		time.Sleep(20 * time.Millisecond) // widen the window between check and set
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks[id] && s.fault != "lock-racy" {
		return nil, fmt.Errorf("%w: %s", agentrt.ErrSessionBusy, id)
	}
	if s.locks == nil {
		s.locks = map[string]bool{}
	}
	s.locks[id] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			if s.fault == "lock-no-release" {
				return
			}
			s.mu.Lock()
			delete(s.locks, id)
			s.mu.Unlock()
		})
	}, nil
}

func (s *faultyStore) AppendRecord(_ context.Context, id string, rec agentrt.Record) error {
	if err := s.check(id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		ss = &faultySession{created: time.Now(), updated: time.Now()}
		s.sessions[id] = ss
	}
	ss.records = append(ss.records, rec)
	return nil
}

func (s *faultyStore) LoadRecords(_ context.Context, id string) ([]agentrt.Record, error) {
	if err := s.check(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil || s.fault == "records-lost" {
		return []agentrt.Record{}, nil
	}
	return slices.Clone(ss.records), nil
}

func TestScriptIDsUniqueAcrossResume(t *testing.T) {
	t.Parallel()
	store := &agentrt.MemoryStore{}
	add := agentrt.NewTool("add", "Add.", func(_ context.Context, in struct {
		A int `json:"a"`
	}) (int, error) {
		return in.A, nil
	}, agentrt.ReadOnly())
	for i := range 2 {
		script := agenttest.Script(agenttest.CallTool("add", `{"a":1}`), agenttest.Reply("done"))
		ag := &agentrt.Agent{Tools: []agentrt.Tool{add}, Planner: script, Store: store}
		_, err := agenttest.Collect(ag.Run(context.Background(), "s", fmt.Sprintf("turn %d", i)))
		require.NoError(t, err)
	}
	msgs, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, u := range m.ToolUses() {
			require.False(t, seen[u.ID], "id %q used twice", u.ID)
			seen[u.ID] = true
		}
		if m.Role == agentrt.RoleTool {
			require.False(t, m.IsError, "a resumed script's call was refused: %s", m.Content)
		}
	}
	require.Len(t, seen, 2)
}

func firstUserTitle(msgs []agentrt.Message) string {
	for _, m := range msgs {
		if m.Role == agentrt.RoleUser {
			return textcut.Title(m.Content)
		}
	}
	return ""
}
