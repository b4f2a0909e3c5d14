package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/sessioncheck"
	"github.com/agentrt/agentrt/internal/textcut"
)

// maxSessionIDLen is the longest session id agentrt accepts (see
// agentrt.ValidateSessionID).
const maxSessionIDLen = 128

// TestStore checks that a [agentrt.SessionStore] keeps the contract the
// runtime relies on, in the spirit of testing/fstest and testing/slogtest.
// Run it from a test of your store:
//
//	func TestPostgresStore(t *testing.T) {
//		agenttest.TestStore(t, func(t *testing.T) agentrt.SessionStore {
//			return newTestStore(t) // empty, cleaned up with t.Cleanup
//		})
//	}
//
// newStore must return a new, empty store each time it is called (once per
// subtest; subtests do not run in parallel). TestStore checks:
//
//   - append and load: every kind of message comes back equal and in order
//     (tool inputs equal byte for byte modulo JSON whitespace: keep them as
//     text, not as a type that reorders keys, such as Postgres jsonb);
//   - a loaded slice is not changed by later appends;
//   - a session that does not exist loads as empty, without error, and is
//     not created by loading it;
//   - every id [agentrt.ValidateSessionID] refuses (path traversal
//     attempts, separators, NUL, control characters, too long) is refused
//     by every method with an error wrapping [agentrt.ErrInvalidSessionID],
//     so that sessions can move between stores; unusual valid ids work and
//     do not collide;
//   - List: one entry per session, with message count, title (as
//     [agentrt.SessionInfo.Title] says), created and updated times, most
//     recently updated first;
//   - Delete: the session is gone, deleting it again is not an error;
//   - appends from many goroutines, to different sessions and to one
//     session, lose nothing and keep each goroutine's order (run with -race);
//   - if the store implements [agentrt.Locker]: a second Lock of a held
//     session fails at once with [agentrt.ErrSessionBusy], other sessions
//     are not affected, unlock releases (and a second unlock call does
//     nothing), and of many concurrent Locks exactly one wins;
//   - if it implements [agentrt.RecordStore]: records are kept apart
//     from messages (Load and List do not see them), and LoadRecords
//     returns them in append order, unknown kinds included;
//   - if it implements [agentrt.Syncer]: Sync works on existing and missing
//     sessions;
//   - hostile text: NUL bytes, bytes that are not UTF-8, lone surrogates
//     (\ud800) in tool inputs, in every place a message holds text, come
//     back byte for byte, except that text (not a tool input) that is not
//     UTF-8 comes back as its JSON carries it, each bad byte replaced by
//     U+FFFD, as on every store of agentrt; and the title stays valid text;
//   - the largest message (unless testing.Short): one whose JSON is up to
//     64 MiB less 1 KiB is kept, a longer one is refused with an error
//     wrapping [agentrt.ErrLineTooLong], as by every store of agentrt (the
//     most a JSONL line holds, so that sessions move between stores);
//   - if it has a method Verify(ctx, sessionID) error: good, missing and
//     unfinished sessions (calls without results at the end) verify, and
//     a second result for one call, an orphaned result and a result out
//     of place are found, with an error wrapping [agentrt.ErrBrokenSession]
//     (as agentrt's stores do).
func TestStore(t *testing.T, newStore func(t *testing.T) agentrt.SessionStore) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s agentrt.SessionStore)
	}{
		{"AppendLoad", testAppendLoad},
		{"LoadIsSnapshot", testLoadIsSnapshot},
		{"LoadMissing", testLoadMissing},
		{"InvalidIDs", testInvalidIDs},
		{"ValidIDs", testValidIDs},
		{"List", testList},
		{"ListOrder", testListOrder},
		{"Delete", testDelete},
		{"ConcurrentSessions", testConcurrentSessions},
		{"ConcurrentAppendsOneSession", testConcurrentOneSession},
		{"Locker", testLocker},
		{"RecordStore", testRecordStore},
		{"Syncer", testSyncer},
		{"Verify", testVerify},
		{"HostileText", testHostileText},
		{"LargestMessage", testLargestMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			if s == nil {
				t.Fatal("newStore returned nil")
			}
			tt.fn(t, s)
		})
	}
}

// sampleMessages returns one message of every kind and shape the runtime
// writes.
func sampleMessages() []agentrt.Message {
	return []agentrt.Message{
		agentrt.NewUserMessage("What is 2+40? <b>&amp;</b> \"quoted\" \\ back\nnew line\ttab ünïcødé 🙂 \u2028"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me think.")),
		agentrt.NewAssistantMessage(
			agentrt.TextBlock("I will add, then look up."),
			agentrt.ToolUseBlock("call_1", "add", json.RawMessage("{ \"a\": 2,\n  \"b\": 40 }")),
			agentrt.ToolUseBlock("call_2", "lookup", json.RawMessage(`{"q":"x <y> & z","nested":{"list":[1,2.5e3,"s",null,true,false],"empty":{}},"z":-0.1}`)),
		),
		agentrt.NewToolMessage("call_1", "42", false),
		agentrt.NewToolMessage("call_2", `unknown tool "lookup"`, true),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_3", "now", nil)),
		agentrt.NewToolMessage("call_3", "", false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("The answer is 42."), agentrt.TextBlock(" Second block.")),
		agentrt.NewUserMessage("thanks"),
	}
}

// diffMessage describes how got differs from want, or returns "".
func diffMessage(want, got agentrt.Message) string {
	var d []string
	if want.Role != got.Role {
		d = append(d, fmt.Sprintf("role %q, want %q", got.Role, want.Role))
	}
	if want.Content != got.Content {
		d = append(d, fmt.Sprintf("content %q, want %q", got.Content, want.Content))
	}
	if want.ToolUseID != got.ToolUseID {
		d = append(d, fmt.Sprintf("tool_use_id %q, want %q", got.ToolUseID, want.ToolUseID))
	}
	if want.IsError != got.IsError {
		d = append(d, fmt.Sprintf("is_error %v, want %v", got.IsError, want.IsError))
	}
	if len(want.Blocks) != len(got.Blocks) {
		d = append(d, fmt.Sprintf("%d blocks, want %d", len(got.Blocks), len(want.Blocks)))
	} else {
		for i, wb := range want.Blocks {
			gb := got.Blocks[i]
			if wb.Type != gb.Type || wb.Text != gb.Text || wb.ID != gb.ID || wb.Name != gb.Name {
				d = append(d, fmt.Sprintf("block %d is %+v, want %+v", i, gb, wb))
			}
			if !sameJSON(wb.Input, gb.Input) {
				d = append(d, fmt.Sprintf("block %d input %s, want %s (modulo whitespace)", i, gb.Input, wb.Input))
			}
		}
	}
	return strings.Join(d, "; ")
}

// sameJSON reports whether a and b are the same bytes once compacted; an
// empty and a missing input are the same.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func checkMessages(t *testing.T, what string, want, got []agentrt.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d messages, want %d:\n%s", what, len(got), len(want), dump(got))
		return
	}
	for i := range want {
		if d := diffMessage(want[i], got[i]); d != "" {
			t.Errorf("%s: message %d: %s", what, i, d)
		}
	}
}

func mustAppend(t *testing.T, s agentrt.SessionStore, id string, msgs ...agentrt.Message) {
	t.Helper()
	for _, m := range msgs {
		if err := s.Append(t.Context(), id, m); err != nil {
			t.Fatalf("Append(%q, %s): %v", id, m, err)
		}
	}
}

func mustLoad(t *testing.T, s agentrt.SessionStore, id string) []agentrt.Message {
	t.Helper()
	msgs, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return msgs
}

func mustList(t *testing.T, s agentrt.SessionStore) []agentrt.SessionInfo {
	t.Helper()
	infos, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return infos
}

func testAppendLoad(t *testing.T, s agentrt.SessionStore) {
	want := sampleMessages()
	mustAppend(t, s, "roundtrip", want...)
	checkMessages(t, "Load", want, mustLoad(t, s, "roundtrip"))
	// Loading again gives the same.
	checkMessages(t, "second Load", want, mustLoad(t, s, "roundtrip"))
}

func testLoadIsSnapshot(t *testing.T, s agentrt.SessionStore) {
	first := sampleMessages()[:2]
	mustAppend(t, s, "snap", first...)
	got := mustLoad(t, s, "snap")
	kept := append([]agentrt.Message(nil), got...)
	// The runtime appends to the loaded slice; that must not reach the
	// store, nor be overwritten by the store's next append.
	local := append(got, agentrt.NewUserMessage("local only"))
	later := agentrt.NewUserMessage("later")
	mustAppend(t, s, "snap", later)
	checkMessages(t, "loaded slice after a later append", kept, got)
	checkMessages(t, "caller's extended slice after a later append", append(kept, agentrt.NewUserMessage("local only")), local)
	checkMessages(t, "Load", append(first, later), mustLoad(t, s, "snap"))
}

func testLoadMissing(t *testing.T, s agentrt.SessionStore) {
	msgs, err := s.Load(t.Context(), "never-written")
	if err != nil {
		t.Fatalf("Load of a missing session: %v", err)
	}
	if len(msgs) != 0 {
		t.Fatalf("Load of a missing session returned %d messages", len(msgs))
	}
	for _, info := range mustList(t, s) {
		if info.ID == "never-written" {
			t.Errorf("loading a missing session created it: %+v", info)
		}
	}
}

// invalidIDs are refused by agentrt.ValidateSessionID.
var invalidIDs = []string{
	"", ".", "..", "../x", "../../etc/passwd", "a/b", "/abs", `a\b`, `..\x`, "c:x",
	"a\x00b", "line\nbreak", "tab\there", "del\x7f", ".hidden",
	strings.Repeat("x", maxSessionIDLen+1), "bad-utf8-\xff",
}

func testInvalidIDs(t *testing.T, s agentrt.SessionStore) {
	ctx := t.Context()
	for _, id := range invalidIDs {
		if agentrt.ValidateSessionID(id) == nil {
			t.Fatalf("test bug: %q is a valid id", id)
		}
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, agentrt.ErrInvalidSessionID) {
				t.Errorf("%s(%q) = %v, want an error wrapping ErrInvalidSessionID", op, id, err)
			}
		}
		check("Append", s.Append(ctx, id, agentrt.NewUserMessage("x")))
		_, err := s.Load(ctx, id)
		check("Load", err)
		check("Delete", s.Delete(ctx, id))
		if l, ok := s.(agentrt.Locker); ok {
			unlock, err := l.Lock(ctx, id)
			check("Lock", err)
			if unlock != nil {
				unlock()
			}
		}
		if ra, ok := s.(agentrt.RecordStore); ok {
			check("AppendRecord", ra.AppendRecord(ctx, id, agentrt.Record{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{}`)}))
		}
		if sy, ok := s.(agentrt.Syncer); ok {
			check("Sync", sy.Sync(ctx, id))
		}
	}
	if infos := mustList(t, s); len(infos) != 0 {
		t.Errorf("refused ids left sessions behind: %+v", infos)
	}
}

func testValidIDs(t *testing.T, s agentrt.SessionStore) {
	ids := []string{
		"a", "session-1", "A_b.c", "with space", "x.jsonl", "x.lock", "a..b", "trailing.",
		"ünïcødé", "emoji-🙂", "semi;colon", strings.Repeat("x", maxSessionIDLen),
	}
	for _, id := range ids {
		if err := agentrt.ValidateSessionID(id); err != nil {
			t.Fatalf("test bug: %v", err)
		}
		mustAppend(t, s, id, agentrt.NewUserMessage("id="+id))
	}
	for _, id := range ids {
		checkMessages(t, fmt.Sprintf("Load(%q)", id), []agentrt.Message{agentrt.NewUserMessage("id=" + id)}, mustLoad(t, s, id))
	}
	got := map[string]bool{}
	for _, info := range mustList(t, s) {
		got[info.ID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("List does not include %q", id)
		}
	}
	if len(got) != len(ids) {
		t.Errorf("List has %d sessions, want %d", len(got), len(ids))
	}
}

func testList(t *testing.T, s agentrt.SessionStore) {
	if infos := mustList(t, s); len(infos) != 0 {
		t.Fatalf("List of a new store: %+v", infos)
	}
	sessions := map[string][]agentrt.Message{
		"alpha": {
			agentrt.NewUserMessage("  Hello   world\n\tagain  "),
			agentrt.NewAssistantMessage(agentrt.TextBlock("hi")),
		},
		"beta": { // no user message first: the title is the first user message
			agentrt.NewAssistantMessage(agentrt.TextBlock("I start.")),
			agentrt.NewUserMessage("second"),
			agentrt.NewUserMessage("third"),
		},
		"gamma": {
			agentrt.NewUserMessage(strings.Repeat("long title é ", 20)),
		},
		"delta": { // no user message at all
			agentrt.NewAssistantMessage(agentrt.TextBlock("alone")),
		},
	}
	for id, msgs := range sessions {
		mustAppend(t, s, id, msgs...)
	}
	if _, err := s.Load(t.Context(), "ghost"); err != nil {
		t.Fatal(err)
	}
	infos := mustList(t, s)
	if len(infos) != len(sessions) {
		t.Fatalf("List has %d sessions, want %d: %+v", len(infos), len(sessions), infos)
	}
	checkSorted(t, infos)
	for _, info := range infos {
		msgs, ok := sessions[info.ID]
		if !ok {
			t.Errorf("List has unknown session %q", info.ID)
			continue
		}
		if info.Messages != len(msgs) {
			t.Errorf("%s: Messages = %d, want %d", info.ID, info.Messages, len(msgs))
		}
		if want := sessionTitle(msgs); info.Title != want {
			t.Errorf("%s: Title = %q, want %q", info.ID, info.Title, want)
		}
		if info.Created.IsZero() || info.Updated.IsZero() {
			t.Errorf("%s: zero Created or Updated: %+v", info.ID, info)
		}
		if info.Updated.Before(info.Created) {
			t.Errorf("%s: Updated %v before Created %v", info.ID, info.Updated, info.Created)
		}
	}
}

func checkSorted(t *testing.T, infos []agentrt.SessionInfo) {
	t.Helper()
	for i := 1; i < len(infos); i++ {
		if infos[i].Updated.After(infos[i-1].Updated) {
			t.Errorf("List is not sorted by Updated, most recent first: %s (%v) before %s (%v)",
				infos[i-1].ID, infos[i-1].Updated, infos[i].ID, infos[i].Updated)
		}
	}
}

func findInfo(infos []agentrt.SessionInfo, id string) (agentrt.SessionInfo, bool) {
	for _, info := range infos {
		if info.ID == id {
			return info, true
		}
	}
	return agentrt.SessionInfo{}, false
}

func testListOrder(t *testing.T, s agentrt.SessionStore) {
	for _, id := range []string{"s1", "s2", "s3"} {
		mustAppend(t, s, id, agentrt.NewUserMessage(id))
	}
	before := mustList(t, s)
	checkSorted(t, before)
	s1, ok := findInfo(before, "s1")
	if !ok {
		t.Fatalf("s1 missing from List: %+v", before)
	}
	mustAppend(t, s, "s1", agentrt.NewAssistantMessage(agentrt.TextBlock("again")))
	after := mustList(t, s)
	checkSorted(t, after)
	s1b, _ := findInfo(after, "s1")
	if s1b.Updated.Before(s1.Updated) {
		t.Errorf("s1: Updated went back after an append: %v, then %v", s1.Updated, s1b.Updated)
	}
	if s1b.Messages != 2 {
		t.Errorf("s1: Messages = %d after a second append, want 2", s1b.Messages)
	}
	if !s1b.Created.Equal(s1.Created) {
		t.Errorf("s1: Created changed on append: %v, then %v", s1.Created, s1b.Created)
	}
	// s1 is the most recently updated (or tied with it, on a coarse clock).
	if after[0].Updated.After(s1b.Updated) {
		t.Errorf("after appending to s1, %s (%v) is listed as more recent than s1 (%v)", after[0].ID, after[0].Updated, s1b.Updated)
	}
}

func testDelete(t *testing.T, s agentrt.SessionStore) {
	ctx := t.Context()
	mustAppend(t, s, "a", sampleMessages()...)
	mustAppend(t, s, "b", agentrt.NewUserMessage("b"))
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if msgs := mustLoad(t, s, "a"); len(msgs) != 0 {
		t.Errorf("Load after Delete: %d messages", len(msgs))
	}
	infos := mustList(t, s)
	if _, ok := findInfo(infos, "a"); ok || len(infos) != 1 {
		t.Errorf("List after Delete: %+v", infos)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Errorf("Delete of a missing session: %v", err)
	}
	mustAppend(t, s, "a", agentrt.NewUserMessage("fresh"))
	checkMessages(t, "Load after Delete and Append", []agentrt.Message{agentrt.NewUserMessage("fresh")}, mustLoad(t, s, "a"))
	checkMessages(t, "other session", []agentrt.Message{agentrt.NewUserMessage("b")}, mustLoad(t, s, "b"))
}

func testConcurrentSessions(t *testing.T, s agentrt.SessionStore) {
	const sessions, each = 8, 40
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("par-%d", g)
			for i := range each {
				if err := s.Append(ctx, id, agentrt.NewUserMessage(fmt.Sprintf("%d/%d", g, i))); err != nil {
					t.Errorf("Append(%s): %v", id, err)
					return
				}
				if i%10 == 0 {
					if _, err := s.Load(ctx, id); err != nil {
						t.Errorf("Load(%s): %v", id, err)
						return
					}
				}
			}
		})
	}
	wg.Go(func() { // readers of everything, meanwhile
		for range 5 {
			if _, err := s.List(ctx); err != nil {
				t.Errorf("List: %v", err)
				return
			}
		}
	})
	wg.Wait()
	for g := range sessions {
		var want []agentrt.Message
		for i := range each {
			want = append(want, agentrt.NewUserMessage(fmt.Sprintf("%d/%d", g, i)))
		}
		checkMessages(t, fmt.Sprintf("par-%d", g), want, mustLoad(t, s, fmt.Sprintf("par-%d", g)))
	}
	if n := len(mustList(t, s)); n != sessions {
		t.Errorf("List has %d sessions, want %d", n, sessions)
	}
}

func testConcurrentOneSession(t *testing.T, s agentrt.SessionStore) {
	const writers, each = 4, 25
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Append(ctx, "shared", agentrt.NewUserMessage(fmt.Sprintf("%d/%d", g, i))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	msgs := mustLoad(t, s, "shared")
	if len(msgs) != writers*each {
		t.Fatalf("%d messages after %d concurrent appends", len(msgs), writers*each)
	}
	next := make([]int, writers)
	for _, m := range msgs {
		var g, i int
		if _, err := fmt.Sscanf(m.Content, "%d/%d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("unexpected message %q", m.Content)
		}
		if i != next[g] {
			t.Fatalf("writer %d: message %d came before message %d", g, i, next[g])
		}
		next[g]++
	}
}

func testLocker(t *testing.T, s agentrt.SessionStore) {
	l, ok := s.(agentrt.Locker)
	if !ok {
		t.Skip("the store does not implement agentrt.Locker")
	}
	ctx := t.Context()
	busy := func(id string) {
		t.Helper()
		unlock, err := l.Lock(ctx, id)
		if !errors.Is(err, agentrt.ErrSessionBusy) {
			t.Errorf("Lock(%q) of a held session = %v, want an error wrapping ErrSessionBusy", id, err)
		}
		if unlock != nil {
			unlock()
		}
	}
	lock := func(id string) func() {
		t.Helper()
		unlock, err := l.Lock(ctx, id)
		if err != nil {
			t.Fatalf("Lock(%q): %v", id, err)
		}
		if unlock == nil {
			t.Fatalf("Lock(%q) returned a nil unlock func", id)
		}
		return unlock
	}

	unlockA := lock("a")
	busy("a")
	unlockB := lock("b") // another session is not affected
	// The holder can use the session.
	mustAppend(t, s, "a", agentrt.NewUserMessage("held"))
	if n := len(mustLoad(t, s, "a")); n != 1 {
		t.Errorf("Load of a held session: %d messages, want 1", n)
	}
	unlockA()
	unlockA2 := lock("a") // released
	unlockA()             // a second call of the first unlock does nothing...
	busy("a")             // ...so the second lock still holds
	unlockA2()
	unlockB()
	lock("b")() // released too

	// Of many concurrent Locks, exactly one wins.
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		won     int
		unlocks []func()
	)
	for range n {
		wg.Go(func() {
			unlock, err := l.Lock(ctx, "contended")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
				unlocks = append(unlocks, unlock)
			case !errors.Is(err, agentrt.ErrSessionBusy):
				t.Errorf("concurrent Lock: %v, want nil or ErrSessionBusy", err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of %d concurrent Locks won, want exactly 1", won, n)
	}
	for _, u := range unlocks {
		u()
	}
	lock("contended")()
}

func testRecordStore(t *testing.T, s agentrt.SessionStore) {
	ra, ok := s.(agentrt.RecordStore)
	if !ok {
		t.Skip("the store does not implement agentrt.RecordStore")
	}
	ctx := t.Context()
	msgs := sampleMessages()[:4]
	mustAppend(t, s, "rec", msgs[:3]...)
	recs := []agentrt.Record{
		{Kind: agentrt.RecordPermission, Data: json.RawMessage(`{"tool_use_id":"call_1","tool":"add","allow":true,"source":"policy"}`)},
		{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{"turn":1,"usage":{"input_tokens":10,"output_tokens":5}}`)},
		{Kind: "x-future-kind", Data: json.RawMessage(`{"anything":[1,2,3]}`)},
	}
	for _, rec := range recs {
		if err := ra.AppendRecord(ctx, "rec", rec); err != nil {
			t.Fatalf("AppendRecord(%s): %v", rec.Kind, err)
		}
	}
	mustAppend(t, s, "rec", msgs[3])
	checkMessages(t, "Load with records", msgs, mustLoad(t, s, "rec"))
	got, err := ra.LoadRecords(ctx, "rec")
	if err != nil {
		t.Fatalf("LoadRecords: %v", err)
	}
	if len(got) != len(recs) {
		t.Fatalf("LoadRecords returned %d records, want the %d appended", len(got), len(recs))
	}
	for i, rec := range recs {
		if got[i].Kind != rec.Kind || !sameJSON(got[i].Data, rec.Data) {
			t.Errorf("LoadRecords[%d] = %s %s, want %s %s (records in append order, unknown kinds kept)", i, got[i].Kind, got[i].Data, rec.Kind, rec.Data)
		}
	}
	if missing, err := ra.LoadRecords(ctx, "no-records"); err != nil || len(missing) != 0 {
		t.Errorf("LoadRecords of a missing session = %v, %v; want no records and no error", missing, err)
	}
	// A session with only records is allowed, and has no messages.
	if err := ra.AppendRecord(ctx, "records-only", agentrt.Record{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("AppendRecord: %v", err)
	}
	if n := len(mustLoad(t, s, "records-only")); n != 0 {
		t.Errorf("Load of a session with only records: %d messages", n)
	}
	info, ok := findInfo(mustList(t, s), "rec")
	if !ok || info.Messages != len(msgs) {
		t.Errorf("List counts records as messages: %+v", info)
	}
}

func testSyncer(t *testing.T, s agentrt.SessionStore) {
	sy, ok := s.(agentrt.Syncer)
	if !ok {
		t.Skip("the store does not implement agentrt.Syncer")
	}
	ctx := t.Context()
	mustAppend(t, s, "synced", agentrt.NewUserMessage("x"))
	if err := sy.Sync(ctx, "synced"); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if err := sy.Sync(ctx, "synced"); err != nil {
		t.Errorf("second Sync: %v", err)
	}
	if err := sy.Sync(ctx, "missing"); err != nil {
		t.Errorf("Sync of a missing session: %v", err)
	}
	checkMessages(t, "Load after Sync", []agentrt.Message{agentrt.NewUserMessage("x")}, mustLoad(t, s, "synced"))
}

// verifier is a store that checks a session.
type verifier interface {
	Verify(ctx context.Context, sessionID string) error
}

// brokenSessions are sessions that break the runtime's first invariant.
func brokenSessions() map[string][]agentrt.Message {
	call := func(ids ...string) agentrt.Message {
		var bs []agentrt.Block
		for _, id := range ids {
			bs = append(bs, agentrt.ToolUseBlock(id, "t", json.RawMessage(`{}`)))
		}
		return agentrt.NewAssistantMessage(bs...)
	}
	res := func(id string) agentrt.Message { return agentrt.NewToolMessage(id, "r", false) }
	user := agentrt.NewUserMessage("q")
	text := agentrt.NewAssistantMessage(agentrt.TextBlock("a"))
	return map[string][]agentrt.Message{
		"two-results":     {user, call("c1"), res("c1"), res("c1")},
		"late-second":     {user, call("c1", "c2"), res("c2"), res("c1"), res("c2")},
		"orphan":          {user, call("c1"), res("c1"), text, res("c1")},
		"orphan-no-call":  {user, res("c9")},
		"orphan-other-id": {user, call("c1"), res("c2")},
		"out-of-place":    {user, call("c1"), user, res("c1")},
		"unanswered":      {user, call("c1", "c2"), res("c1"), text},
		"duplicate-id":    {user, call("c1", "c1"), res("c1")},
	}
}

func testVerify(t *testing.T, s agentrt.SessionStore) {
	v, ok := s.(verifier)
	if !ok {
		t.Skip("the store has no Verify method")
	}
	ctx := t.Context()
	good := sampleMessages()
	mustAppend(t, s, "good", good...)
	open := good[:3:3] // a call without results at the end
	mustAppend(t, s, "open", open...)
	for _, id := range []string{"good", "open", "missing"} {
		if err := v.Verify(ctx, id); err != nil {
			t.Errorf("Verify(%q) of a good session: %v", id, err)
		}
	}
	for id, msgs := range brokenSessions() {
		mustAppend(t, s, id, msgs...)
		err := v.Verify(ctx, id)
		if !errors.Is(err, agentrt.ErrBrokenSession) {
			t.Errorf("Verify(%q) = %v, want an error wrapping agentrt.ErrBrokenSession:\n%s", id, err, dump(msgs))
		}
	}
}

// sessionTitle is the title SessionInfo.Title documents: the first user
// message's Content on one line, cut to 60 characters.
func sessionTitle(msgs []agentrt.Message) string {
	for _, m := range msgs {
		if m.Role == agentrt.RoleUser {
			return textcut.Title(m.Content)
		}
	}
	return ""
}

// HostileMessages are messages with text that stores trip on: NUL bytes,
// bytes that are not UTF-8, lone surrogates in tool inputs. agentrt's
// stores keep them all (see [TestStore]).
func HostileMessages() map[string]agentrt.Message {
	use := func(input string) agentrt.Message {
		return agentrt.NewAssistantMessage(agentrt.TextBlock("t\x00"), agentrt.ToolUseBlock("c1", "t", json.RawMessage(input)))
	}
	return map[string]agentrt.Message{
		"nul-title":        agentrt.NewUserMessage("a\x00b"),
		"nul-late":         agentrt.NewUserMessage(strings.Repeat("long ", 20) + "\x00 end"),
		"not-utf8-title":   agentrt.NewUserMessage("caf\xe9 \xff\xfe ok"),
		"surrogate-title":  agentrt.NewUserMessage("\xed\xa0\x80 cesu"),
		"nul-input":        use(`{"k":"a\u0000b","n":"\u0000"}`),
		"surrogate-input":  use(`{"hi":"\ud800","lo":"x\udc00","pair":"\ud83d\ude00"}`),
		"not-utf8-input":   use("{\"k\":\"\xff\xfe\"}"),
		"nul-result":       agentrt.NewToolMessage("c\x00", "out\x00put", true),
		"not-utf8-result":  agentrt.NewToolMessage("c1", "bin \x80\x81", false),
		"escapes-everyway": agentrt.NewUserMessage("\\u0000 \\ud800 \u2028\u2029 \x7f \x01"),
	}
}

// jsonForm is msg as its JSON carries it.
func jsonForm(msg agentrt.Message) agentrt.Message {
	b, err := json.Marshal(msg)
	if err != nil {
		return msg
	}
	var m agentrt.Message
	if json.Unmarshal(b, &m) != nil {
		return msg
	}
	return m
}

// sameBytes is diffMessage with tool inputs compared byte for byte.
func sameBytes(want, got agentrt.Message) bool {
	if diffMessage(want, got) != "" {
		return false
	}
	for i := range want.Blocks {
		if !bytes.Equal(want.Blocks[i].Input, got.Blocks[i].Input) {
			return false
		}
	}
	return true
}

func testHostileText(t *testing.T, s agentrt.SessionStore) {
	for name, msg := range HostileMessages() {
		id := "hostile-" + name
		mustAppend(t, s, id, msg)
		got := mustLoad(t, s, id)
		if len(got) != 1 {
			t.Errorf("%s: Load returned %d messages, want 1", name, len(got))
			continue
		}
		if want := jsonForm(msg); !sameBytes(want, got[0]) {
			t.Errorf("%s: Load returned %s, want %s (text that is not UTF-8 as its JSON carries it)", name, got[0], want)
		}
		info, ok := findInfo(mustList(t, s), id)
		switch {
		case !ok:
			t.Errorf("%s: not listed", name)
		case !utf8.ValidString(info.Title) || strings.ContainsRune(info.Title, 0):
			t.Errorf("%s: title %q is not valid text", name, info.Title)
		case info.Title != sessionTitle(got):
			t.Errorf("%s: title %q, want %q", name, info.Title, sessionTitle(got))
		}
	}
}

func testLargestMessage(t *testing.T, s agentrt.SessionStore) {
	if testing.Short() {
		t.Skip("appends messages of 64 MiB")
	}
	envelope := len(`{"role":"user","content":""}`)
	largest := agentrt.NewUserMessage(strings.Repeat("x", sessioncheck.MaxMessageSize-envelope))
	if b, _ := json.Marshal(largest); len(b) != sessioncheck.MaxMessageSize {
		t.Fatalf("the largest message is %d bytes of JSON, want %d", len(b), sessioncheck.MaxMessageSize)
	}
	mustAppend(t, s, "largest", largest)
	if got := mustLoad(t, s, "largest"); len(got) != 1 || got[0].Content != largest.Content {
		t.Errorf("the largest message did not come back")
	}
	over := agentrt.NewUserMessage(largest.Content + "x")
	if err := s.Append(t.Context(), "largest", over); !errors.Is(err, agentrt.ErrLineTooLong) {
		t.Errorf("Append of a message of MaxMessageSize+1 bytes of JSON: %v, want an error wrapping agentrt.ErrLineTooLong", err)
	}
	if got := mustLoad(t, s, "largest"); len(got) != 1 {
		t.Errorf("after a refused append the session has %d messages, want 1", len(got))
	}
}
