package agentrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
)

// jsonlClock returns a clock that starts at 2026-01-02T03:04:05Z and moves
// one second per call.
func jsonlClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t.Add(-time.Second)
	}
}

// warnings collects what a store reports to OnWarning.
type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (w *warnings) add(err error) { w.mu.Lock(); w.errs = append(w.errs, err); w.mu.Unlock() }

func (w *warnings) take() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	errs := w.errs
	w.errs = nil
	return errs
}

// newWarnStore returns a store whose warnings are collected, not fatal.
func newWarnStore(t *testing.T, opts *agentrt.JSONLOptions) (*agentrt.JSONLStore, *warnings) {
	t.Helper()
	w := &warnings{}
	o := agentrt.JSONLOptions{}
	if opts != nil {
		o = *opts
	}
	o.OnWarning = w.add
	return newJSONLStore(t, &o), w
}

func sessionFile(s *agentrt.JSONLStore, id string) string {
	return filepath.Join(s.Dir(), id+".jsonl")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func appendAll(t *testing.T, s agentrt.SessionStore, id string, msgs ...agentrt.Message) {
	t.Helper()
	for _, m := range msgs {
		require.NoError(t, s.Append(context.Background(), id, m))
	}
}

func load(t *testing.T, s agentrt.SessionStore, id string) []agentrt.Message {
	t.Helper()
	msgs, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	return msgs
}

func TestJSONLFileFormat(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
	ctx := context.Background()
	appendAll(t, s, "s1",
		agentrt.NewUserMessage("What is 2+40? <ok> & \"fine\"\nbye"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me add."),
			agentrt.ToolUseBlock("call_1", "add", json.RawMessage("{\"a\": 2,\n \"b\": 40}"))))
	require.NoError(t, s.AppendRecord(ctx, "s1", agentrt.Record{Kind: agentrt.RecordPermission,
		Data: json.RawMessage(`{"tool_use_id": "call_1", "tool": "add", "allow": true, "source": "policy"}`)}))
	appendAll(t, s, "s1", agentrt.NewToolMessage("call_1", "42", false), agentrt.NewToolMessage("call_2", "no such tool", true))

	want := `{"kind":"header","version":1,"session_id":"s1","created":"2026-01-02T03:04:05Z"}
{"kind":"message","seq":1,"ts":"2026-01-02T03:04:06Z","message":{"role":"user","content":"What is 2+40? <ok> & \"fine\"\nbye"}}
{"kind":"message","seq":2,"ts":"2026-01-02T03:04:07Z","message":{"role":"assistant","blocks":[{"type":"text","text":"Let me add."},{"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":40}}]}}
{"kind":"permission","seq":3,"ts":"2026-01-02T03:04:08Z","data":{"tool_use_id":"call_1","tool":"add","allow":true,"source":"policy"}}
{"kind":"message","seq":4,"ts":"2026-01-02T03:04:09Z","message":{"role":"tool","content":"42","tool_use_id":"call_1"}}
{"kind":"message","seq":5,"ts":"2026-01-02T03:04:10Z","message":{"role":"tool","content":"no such tool","tool_use_id":"call_2","is_error":true}}
`
	assert.Equal(t, want, readFile(t, sessionFile(s, "s1")))

	// Every line is a JSON object, as jq needs.
	for i, line := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		assert.True(t, json.Valid([]byte(line)), "line %d", i+1)
	}
	// Every line is good, but call_2's result answers no call.
	require.ErrorIs(t, s.Verify(ctx, "s1"), agentrt.ErrBrokenSession)
}

func TestJSONLPermissions(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no Unix file modes")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "a", "sessions")
	s, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "new directory")

	appendAll(t, s, "p", agentrt.NewUserMessage("x"))
	fi, err = os.Stat(sessionFile(s, "p"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "session file")

	unlock, err := s.Lock(context.Background(), "p")
	require.NoError(t, err)
	if fi, err := os.Stat(filepath.Join(dir, "p.lock")); err == nil { // no lock file where the platform has none
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "lock file")
	}
	unlock()
	_, err = os.Stat(filepath.Join(dir, "p.lock"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the lock file is removed on unlock")

	require.NoError(t, s.Create(context.Background(), "c", json.RawMessage(`{"user":"ann"}`)))
	require.NoError(t, s.Fork(context.Background(), "p", "f", 1))
	for _, id := range []string{"c", "f"} {
		fi, err = os.Stat(sessionFile(s, id))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), id)
	}

	// An existing directory keeps its mode.
	existing := filepath.Join(base, "existing")
	require.NoError(t, os.Mkdir(existing, 0o750))
	s2, err := agentrt.NewJSONLStore(existing, nil)
	require.NoError(t, err)
	defer s2.Close()
	fi, err = os.Stat(existing)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o750), fi.Mode().Perm())
}

func TestJSONLInvalidIDsStayInDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := agentrt.NewJSONLStore(filepath.Join(base, "sessions"), nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	appendAll(t, s, "good", agentrt.NewUserMessage("x"))

	bad := []string{"", ".", "..", "../x", "../../x", "a/b", "/tmp/x", `a\b`, "a\x00b", "a\nb",
		".hidden", strings.Repeat("x", 129), "..\\..\\x", "c:x"}
	for _, id := range bad {
		errs := map[string]error{
			"Append":       s.Append(ctx, id, agentrt.NewUserMessage("x")),
			"AppendRecord": s.AppendRecord(ctx, id, agentrt.Record{Kind: "usage", Data: json.RawMessage(`{}`)}),
			"Delete":       s.Delete(ctx, id),
			"Sync":         s.Sync(ctx, id),
			"Verify":       s.Verify(ctx, id),
			"Create":       s.Create(ctx, id, nil),
			"Fork to":      s.Fork(ctx, "good", id, 0),
			"Fork from":    s.Fork(ctx, id, "new", 0),
		}
		_, errs["Load"] = s.Load(ctx, id)
		_, errs["Lock"] = s.Lock(ctx, id)
		for _, err := range s.Lines(ctx, id) {
			errs["Records"] = err
		}
		for op, err := range errs {
			assert.ErrorIs(t, err, agentrt.ErrInvalidSessionID, "%s(%q)", op, id)
		}
	}
	// Nothing was created outside the directory, nor inside it.
	ents, err := os.ReadDir(base)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	ents, err = os.ReadDir(s.Dir())
	require.NoError(t, err)
	require.Len(t, ents, 1)
	assert.Equal(t, "good.jsonl", ents[0].Name())
}

func TestJSONLSymlinkCannotEscape(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := agentrt.NewJSONLStore(filepath.Join(base, "sessions"), nil)
	require.NoError(t, err)
	defer s.Close()
	outside := filepath.Join(base, "outside.jsonl")
	writeFile(t, outside, "secret\n")
	if err := os.Symlink(outside, sessionFile(s, "evil")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	require.NoError(t, os.Symlink("../outside.jsonl", sessionFile(s, "evil2")))
	ctx := context.Background()
	for _, id := range []string{"evil", "evil2"} {
		assert.Error(t, s.Append(ctx, id, agentrt.NewUserMessage("x")), id)
		_, err := s.Load(ctx, id)
		assert.Error(t, err, id)
		assert.Error(t, s.Fork(ctx, id, id+"-copy", 0), id)
	}
	assert.Equal(t, "secret\n", readFile(t, outside))
}

func TestJSONLDamagedTail(t *testing.T) {
	t.Parallel()
	const header = `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z"}` + "\n"
	m1 := `{"kind":"message","seq":1,"ts":"2026-01-02T03:04:06Z","message":{"role":"user","content":"one"}}` + "\n"
	m2 := `{"kind":"message","seq":2,"ts":"2026-01-02T03:04:07Z","message":{"role":"assistant","blocks":[{"type":"text","text":"two"}]}}` + "\n"
	good := header + m1 + m2
	tests := []struct {
		name     string
		content  string
		keep     string // the good prefix
		msgs     int
		line     int
		newline  bool // the dropped line ended in '\n' (unparsable rather than cut)
		nextSeq  int
		errMatch string
	}{
		{name: "cut mid-message", content: good + m1[:40], keep: good, msgs: 2, line: 4, nextSeq: 3},
		{name: "cut just before the newline", content: good + strings.TrimSuffix(strings.ReplaceAll(m1, `"seq":1`, `"seq":3`), "\n"), keep: good, msgs: 2, line: 4, nextSeq: 3},
		{name: "zeros after a power loss", content: good + "\x00\x00\x00\x00", keep: good, msgs: 2, line: 4, nextSeq: 3},
		{name: "garbage line with newline", content: good + `{"kind":"mess` + "\n", keep: good, msgs: 2, line: 4, newline: true, nextSeq: 3},
		{name: "cut header", content: header[:30], keep: "", msgs: 0, line: 1, nextSeq: 1},
		{name: "header only, cut message", content: header + m1[:10], keep: header, msgs: 0, line: 2, nextSeq: 1},
		{name: "unparsable header alone", content: "{{{\n", keep: "", msgs: 0, line: 1, newline: true, nextSeq: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, w := newWarnStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
			path := sessionFile(s, "s")
			writeFile(t, path, tt.content)
			ctx := context.Background()

			msgs := load(t, s, "s")
			assert.Len(t, msgs, tt.msgs)
			warns := w.take()
			require.Len(t, warns, 1)
			var tail *jsonl.LineError
			require.ErrorAs(t, warns[0], &tail)
			assert.True(t, tail.Tail)
			assert.Equal(t, path, tail.File)
			assert.Equal(t, tt.line, tail.Line)
			assert.Equal(t, int64(len(tt.keep)), tail.Offset)
			assert.False(t, tail.Repaired)
			assert.Contains(t, tail.Error(), fmt.Sprintf("line %d", tt.line))

			// Verify reports the same, without a warning.
			err := s.Verify(ctx, "s")
			var vtail *jsonl.LineError
			require.ErrorAs(t, err, &vtail)
			assert.Equal(t, *tail, *vtail)
			assert.Empty(t, w.take())
			assert.Equal(t, tt.content, readFile(t, path), "reading never changes the file")

			// The next append removes the tail, reports it, then writes.
			appendAll(t, s, "s", agentrt.NewUserMessage("after"))
			warns = w.take()
			require.Len(t, warns, 1)
			require.ErrorAs(t, warns[0], &tail)
			assert.True(t, tail.Repaired)
			assert.Equal(t, tt.line, tail.Line)
			assert.Equal(t, int64(len(tt.keep)), tail.Offset)
			if !tt.newline {
				assert.Contains(t, tail.Error(), "newline")
			}
			got := readFile(t, path)
			require.True(t, strings.HasPrefix(got, tt.keep), "the good lines are kept as they were: %q", got)
			rest := strings.TrimPrefix(got, tt.keep)
			if tt.keep == "" {
				require.True(t, strings.HasPrefix(rest, `{"kind":"header","version":1,"session_id":"s"`), "a new header: %q", rest)
				rest = rest[strings.IndexByte(rest, '\n')+1:]
			}
			assert.Contains(t, rest, fmt.Sprintf(`{"kind":"message","seq":%d,`, tt.nextSeq))
			assert.Equal(t, 1, strings.Count(rest, "\n"), "one new line: %q", rest)
			require.NoError(t, s.Verify(ctx, "s"))
			msgs = load(t, s, "s")
			require.Len(t, msgs, tt.msgs+1)
			assert.Equal(t, "after", msgs[tt.msgs].Content)
			assert.Empty(t, w.take())
		})
	}
}

func TestJSONLCorruptLines(t *testing.T) {
	t.Parallel()
	const header = `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z"}` + "\n"
	msg := func(seq int, text string) string {
		return fmt.Sprintf(`{"kind":"message","seq":%d,"ts":"2026-01-02T03:04:06Z","message":{"role":"user","content":%q}}`+"\n", seq, text)
	}
	tests := []struct {
		name    string
		content string
		line    int
		offset  int
		is      error
		match   string
	}{
		{name: "garbage in the middle", content: header + msg(1, "a") + "garbage\n" + msg(3, "c"), line: 3, offset: len(header + msg(1, "a")), match: "not valid JSON"},
		{name: "cut line in the middle", content: header + msg(1, "a")[:20] + "\n" + msg(2, "b"), line: 2, offset: len(header), match: "not valid JSON"},
		{name: "garbage then a partial line", content: header + "garbage\n" + msg(2, "b")[:10], line: 2, offset: len(header), match: "not valid JSON"},
		{name: "empty line in the middle", content: header + "\n" + msg(2, "b"), line: 2, offset: len(header)},
		{name: "no header", content: msg(1, "a") + msg(2, "b"), line: 1, match: "not a header"},
		{name: "newer version", content: `{"kind":"header","version":2,"session_id":"s"}` + "\n" + msg(1, "a"), line: 1, is: agentrt.ErrJSONLVersion},
		{name: "newer version alone", content: `{"kind":"header","version":2,"session_id":"s"}` + "\n", line: 1, is: agentrt.ErrJSONLVersion},
		{name: "second header", content: header + msg(1, "a") + header, line: 3, match: "second header"},
		{name: "record without kind", content: header + `{"seq":1,"data":{}}` + "\n", line: 2, match: "without a kind"},
		{name: "record without seq", content: header + `{"kind":"usage","data":{}}` + "\n" + msg(2, "b"), line: 2, match: "seq"},
		{name: "message without role", content: header + `{"kind":"message","seq":1,"message":{"content":"x"}}` + "\n", line: 2, match: "role"},
		{name: "message record without message", content: header + `{"kind":"message","seq":1,"data":{}}` + "\n", line: 2, match: "without a message"},
		{name: "not an object", content: header + `[1,2]` + "\n" + msg(2, "b"), line: 2, match: "not a record"},
		{name: "wrong field type", content: header + `{"kind":"message","seq":"1","message":{"role":"user"}}` + "\n", line: 2, match: "not a record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, w := newWarnStore(t, nil)
			path := sessionFile(s, "s")
			writeFile(t, path, tt.content)
			ctx := context.Background()
			check := func(err error) {
				t.Helper()
				var ce *jsonl.LineError
				require.ErrorAs(t, err, &ce)
				assert.False(t, ce.Tail)
				assert.Equal(t, path, ce.File)
				assert.Equal(t, tt.line, ce.Line)
				if tt.offset > 0 {
					assert.Equal(t, int64(tt.offset), ce.Offset)
				}
				if tt.is != nil {
					assert.ErrorIs(t, err, tt.is)
				}
				assert.Contains(t, err.Error(), path)
				assert.Contains(t, err.Error(), fmt.Sprintf("line %d", tt.line))
				if tt.match != "" {
					assert.Contains(t, err.Error(), tt.match)
				}
			}
			_, err := s.Load(ctx, "s")
			check(err)
			check(s.Verify(ctx, "s"))
			var rerr error
			for _, err := range s.Lines(ctx, "s") {
				rerr = err
			}
			check(rerr)
			check(s.Fork(ctx, "s", "copy", 100)) // a fork that must read the whole file
			assert.Empty(t, w.take(), "corruption is an error, not a warning")
			assert.Equal(t, tt.content, readFile(t, path))
		})
	}
}

func TestJSONLAppendRefusesToHideCorruption(t *testing.T) {
	t.Parallel()
	// The line before a cut tail is bad: removing the tail would turn a
	// corrupt file into one that loads, so the append must fail instead.
	s, w := newWarnStore(t, nil)
	path := sessionFile(s, "s")
	content := `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z"}` + "\n" + "garbage\n" + `{"kind":"mess`
	writeFile(t, path, content)
	err := s.Append(context.Background(), "s", agentrt.NewUserMessage("x"))
	var ce *jsonl.LineError
	require.ErrorAs(t, err, &ce)
	assert.False(t, ce.Tail)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, content, readFile(t, path))
	assert.Empty(t, w.take())

	// The same with a newer version's header: never cut away.
	newer := `{"kind":"header","version":2,"session_id":"s"}` + "\n"
	writeFile(t, path, newer)
	require.ErrorIs(t, s.Append(context.Background(), "s", agentrt.NewUserMessage("x")), agentrt.ErrJSONLVersion)
	assert.Equal(t, newer, readFile(t, path))
}

func TestJSONLUnknownKindsAndRecords(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, "s", json.RawMessage(`{"user": "ann", "project": "x"}`)))
	appendAll(t, s, "s", agentrt.NewUserMessage("hi"))
	require.NoError(t, s.AppendRecord(ctx, "s", agentrt.Record{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{"turn":1,"usage":{"input_tokens":3,"output_tokens":4}}`)}))
	// A line from a newer version, with a kind and fields this one does not know.
	f, err := os.OpenFile(sessionFile(s, "s"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	future := `{"kind":"compaction","seq":3,"ts":"2027-01-01T00:00:00Z","data":{"summary":"…","replaces":[1,2]},"extra":true}`
	_, err = f.WriteString(future + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	appendAll(t, s, "s", agentrt.NewAssistantMessage(agentrt.TextBlock("hello")))

	msgs := load(t, s, "s")
	require.Len(t, msgs, 2, "unknown kinds are ignored by Load")
	assert.Equal(t, "hello", msgs[1].Text())

	var recs []jsonl.Line
	for r, err := range s.Lines(ctx, "s") {
		require.NoError(t, err)
		recs = append(recs, r)
	}
	require.Len(t, recs, 5)
	lines := strings.Split(strings.TrimSuffix(readFile(t, sessionFile(s, "s")), "\n"), "\n")
	for i, r := range recs {
		assert.Equal(t, lines[i], string(r.Raw), "Raw is the line as stored")
		assert.Equal(t, i+1, r.Line)
		assert.Equal(t, int64(i), r.Seq)
	}
	assert.Equal(t, jsonl.KindHeader, recs[0].Kind)
	assert.JSONEq(t, `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z","metadata":{"user":"ann","project":"x"}}`, string(recs[0].Raw))
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), recs[0].Time)
	assert.Equal(t, jsonl.KindMessage, recs[1].Kind)
	var hi agentrt.Message
	require.NoError(t, json.Unmarshal(recs[1].Message, &hi))
	assert.Equal(t, agentrt.NewUserMessage("hi"), hi)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), recs[1].Time)
	assert.Equal(t, string(agentrt.RecordUsage), recs[2].Kind)
	assert.JSONEq(t, `{"turn":1,"usage":{"input_tokens":3,"output_tokens":4}}`, string(recs[2].Data))
	assert.Equal(t, string(agentrt.RecordCompaction), recs[3].Kind)
	assert.JSONEq(t, `{"summary":"…","replaces":[1,2]}`, string(recs[3].Data))
	assert.Equal(t, future, string(recs[3].Raw))
	assert.Equal(t, int64(4), recs[4].Seq, "seq continues after a record written by someone else")

	// Breaking out of the iteration early is fine.
	n := 0
	for range s.Lines(ctx, "s") {
		n++
		break
	}
	assert.Equal(t, 1, n)

	// Fork keeps unknown records byte for byte.
	require.NoError(t, s.Fork(ctx, "s", "f", 2))
	forked := strings.Split(strings.TrimSuffix(readFile(t, sessionFile(s, "f")), "\n"), "\n")
	assert.Equal(t, lines[1:], forked[1:])

	// Records refused.
	for _, kind := range []agentrt.RecordKind{"", "header", "message"} {
		assert.Error(t, s.AppendRecord(ctx, "s", agentrt.Record{Kind: kind, Data: json.RawMessage(`{}`)}), string(kind))
	}
	assert.Error(t, s.AppendRecord(ctx, "s", agentrt.Record{Kind: "usage", Data: json.RawMessage(`{bad`)}))
	assert.Error(t, s.Append(ctx, "s", agentrt.Message{Content: "no role"}))
	assert.Len(t, load(t, s, "s"), 2, "refused records wrote nothing")
}

func TestJSONLCreate(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, "c", json.RawMessage(`{"a": [1, 2]}`)))
	assert.Equal(t, `{"kind":"header","version":1,"session_id":"c","created":"2026-01-02T03:04:05Z","metadata":{"a":[1,2]}}`+"\n",
		readFile(t, sessionFile(s, "c")))
	assert.Empty(t, load(t, s, "c"))
	assert.ErrorIs(t, s.Create(ctx, "c", nil), agentrt.ErrSessionExists)
	appendAll(t, s, "c", agentrt.NewUserMessage("x"))
	assert.Contains(t, readFile(t, sessionFile(s, "c")), `"seq":1,`)
	assert.ErrorIs(t, s.Create(ctx, "c", nil), agentrt.ErrSessionExists)
	assert.Error(t, s.Create(ctx, "d", json.RawMessage(`[1]`)), "metadata must be an object")
	assert.Error(t, s.Create(ctx, "d", json.RawMessage(`{bad`)))
	require.NoError(t, s.Create(ctx, "d", nil))
	infos, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 2)
	entries, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left")
}

func TestJSONLFork(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, "src", json.RawMessage(`{"owner":"ann"}`)))
	msgs := []agentrt.Message{
		agentrt.NewUserMessage("first question"),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("call_1", "add", json.RawMessage(`{"a":1,"b":2}`))),
		agentrt.NewToolMessage("call_1", "3", false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("3")),
		agentrt.NewUserMessage("second question"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("sure")),
	}
	appendAll(t, s, "src", msgs[:2]...)
	require.NoError(t, s.AppendRecord(ctx, "src", agentrt.Record{Kind: agentrt.RecordPermission, Data: json.RawMessage(`{"tool_use_id":"call_1","allow":true}`)}))
	appendAll(t, s, "src", msgs[2:4]...)
	require.NoError(t, s.AppendRecord(ctx, "src", agentrt.Record{Kind: agentrt.RecordUsage, Data: json.RawMessage(`{"turn":2}`)}))
	appendAll(t, s, "src", msgs[4:]...)
	srcBefore := readFile(t, sessionFile(s, "src"))
	srcLines := strings.Split(strings.TrimSuffix(srcBefore, "\n"), "\n")
	// srcLines: 0 header, 1 m0, 2 m1, 3 permission, 4 m2, 5 m3, 6 usage, 7 m4, 8 m5

	tests := []struct {
		upTo  int
		lines []int // the src lines copied after the new header
	}{
		{0, nil},
		{1, []int{1}},
		{2, []int{1, 2, 3}}, // the permission record after message 1 comes along
		{4, []int{1, 2, 3, 4, 5, 6}},
		{6, []int{1, 2, 3, 4, 5, 6, 7, 8}}, // everything
	}
	for _, tt := range tests {
		dst := fmt.Sprintf("fork-%d", tt.upTo)
		require.NoError(t, s.Fork(ctx, "src", dst, tt.upTo))
		got := load(t, s, dst)
		assert.Equal(t, nilIfEmpty(msgs[:tt.upTo]), nilIfEmpty(got), dst)
		lines := strings.Split(strings.TrimSuffix(readFile(t, sessionFile(s, dst)), "\n"), "\n")
		var hdr struct {
			Kind       string          `json:"kind"`
			Version    int             `json:"version"`
			SessionID  string          `json:"session_id"`
			Metadata   json.RawMessage `json:"metadata"`
			ForkedFrom struct {
				SessionID string `json:"session_id"`
				Messages  int    `json:"messages"`
			} `json:"forked_from"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &hdr))
		assert.Equal(t, "header", hdr.Kind)
		assert.Equal(t, dst, hdr.SessionID)
		assert.JSONEq(t, `{"owner":"ann"}`, string(hdr.Metadata))
		assert.Equal(t, "src", hdr.ForkedFrom.SessionID)
		assert.Equal(t, tt.upTo, hdr.ForkedFrom.Messages)
		var want []string
		for _, i := range tt.lines {
			want = append(want, srcLines[i])
		}
		assert.Equal(t, want, nilIfEmpty(lines[1:]), "lines copied byte for byte, seq included")
	}
	assert.Equal(t, srcBefore, readFile(t, sessionFile(s, "src")), "Fork does not touch src")

	// The fork is a session of its own: appends continue its seq.
	appendAll(t, s, "fork-4", agentrt.NewUserMessage("another path"))
	assert.Contains(t, readFile(t, sessionFile(s, "fork-4")), `{"kind":"message","seq":7,`)
	got := load(t, s, "fork-4")
	assert.Equal(t, "another path", got[4].Content)
	assert.Len(t, load(t, s, "src"), 6)
	// A fork of a fork.
	require.NoError(t, s.Fork(ctx, "fork-4", "fork-4b", 5))
	assert.Equal(t, got, load(t, s, "fork-4b"))

	// Refusals.
	assert.ErrorIs(t, s.Fork(ctx, "src", "fork-1", 1), agentrt.ErrSessionExists)
	assert.ErrorIs(t, s.Fork(ctx, "src", "src", 1), agentrt.ErrSessionExists)
	assert.ErrorIs(t, s.Fork(ctx, "missing", "x", 0), fs.ErrNotExist)
	assert.ErrorContains(t, s.Fork(ctx, "src", "x", 7), "fewer than 7")
	assert.Error(t, s.Fork(ctx, "src", "x", -1))
	unlock, err := s.Lock(ctx, "locked-dst")
	require.NoError(t, err)
	assert.ErrorIs(t, s.Fork(ctx, "src", "locked-dst", 1), agentrt.ErrSessionBusy)
	unlock()
	_, err = os.Stat(sessionFile(s, "x"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a refused fork leaves nothing")
	entries, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, strings.HasSuffix(e.Name(), ".jsonl"), "left behind: %s", e.Name())
	}

	// A fork of a locked src works (it reads what is there).
	unlock, err = s.Lock(ctx, "src")
	require.NoError(t, err)
	require.NoError(t, s.Fork(ctx, "src", "while-locked", 6))
	unlock()
	assert.Equal(t, msgs, load(t, s, "while-locked"))
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestJSONLList(t *testing.T) {
	t.Parallel()
	s, w := newWarnStore(t, &agentrt.JSONLOptions{Now: jsonlClock()})
	ctx := context.Background()
	list := func() map[string]agentrt.SessionInfo {
		t.Helper()
		infos, err := s.List(ctx)
		require.NoError(t, err)
		m := map[string]agentrt.SessionInfo{}
		for _, i := range infos {
			m[i.ID] = i
		}
		require.Len(t, m, len(infos))
		return m
	}
	at := func(sec int) time.Time { return time.Date(2026, 1, 2, 3, 4, 5+sec, 0, time.UTC) }

	appendAll(t, s, "a", agentrt.NewUserMessage("hello"))                         // header 0, msg 1
	appendAll(t, s, "b", agentrt.NewAssistantMessage(agentrt.TextBlock("first"))) // header 2, msg 3
	require.NoError(t, s.Create(ctx, "empty", nil))                               // header 4
	got := list()
	assert.Equal(t, agentrt.SessionInfo{ID: "a", Created: at(0), Updated: at(1), Messages: 1, Title: "hello"}, got["a"])
	assert.Equal(t, agentrt.SessionInfo{ID: "b", Created: at(2), Updated: at(3), Messages: 1}, got["b"])
	assert.Equal(t, agentrt.SessionInfo{ID: "empty", Created: at(4), Updated: at(4)}, got["empty"])

	// Appends after a List are picked up (the scan resumes where it stopped).
	long := strings.Repeat("word ", 30000) // a first user message longer than the read buffer
	appendAll(t, s, "b", agentrt.NewUserMessage(long), agentrt.NewToolMessage("x", strings.Repeat("y", 200000), false))
	require.NoError(t, s.AppendRecord(ctx, "b", agentrt.Record{Kind: "usage", Data: json.RawMessage(`{}`)}))
	got = list()
	assert.Equal(t, agentrt.SessionInfo{ID: "b", Created: at(2), Updated: at(7), Messages: 3,
		Title: strings.Repeat("word ", 11) + "word…"}, got["b"])
	infos, err := s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "empty", "a"}, []string{infos[0].ID, infos[1].ID, infos[2].ID})

	// A line written by another tool, with its keys in another order, still counts.
	f, err := os.OpenFile(sessionFile(s, "a"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"message":{"content":"x","role":"user"},"ts":"2026-01-02T03:05:00Z","kind":"message"}` + "\n" +
		`{"seq":3,"kind":"usage","data":{}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, 2, list()["a"].Messages)

	// A damaged tail is not counted, and is counted again once repaired and rewritten.
	f, err = os.OpenFile(sessionFile(s, "a"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"message","seq":4,"ts":"2026-01-02T03:06:00Z","message":{"role":"us`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, 2, list()["a"].Messages)
	appendAll(t, s, "a", agentrt.NewAssistantMessage(agentrt.TextBlock("after the crash, a longer line than the partial one")))
	require.Len(t, w.take(), 1) // the repair
	a := list()["a"]
	assert.Equal(t, 3, a.Messages)
	assert.Equal(t, "hello", a.Title)
	assert.Equal(t, 3, len(load(t, s, "a")))

	// Other files are ignored; deleted sessions go.
	writeFile(t, filepath.Join(s.Dir(), "notes.txt"), "x")
	writeFile(t, filepath.Join(s.Dir(), ".hidden.jsonl"), "x")
	require.NoError(t, os.Mkdir(filepath.Join(s.Dir(), "dir.jsonl"), 0o700))
	unlock, err := s.Lock(ctx, "a")
	require.NoError(t, err)
	assert.Len(t, list(), 3, "lock files are not sessions")
	unlock()
	require.NoError(t, s.Delete(ctx, "empty"))
	got = list()
	assert.Len(t, got, 2)
	assert.NotContains(t, got, "empty")
	assert.Empty(t, w.take())

	// A file rewritten under the same name (deleted and recreated) is scanned anew.
	require.NoError(t, s.Delete(ctx, "b"))
	appendAll(t, s, "b", agentrt.NewUserMessage("new b"))
	assert.Equal(t, 1, list()["b"].Messages)
	assert.Equal(t, "new b", list()["b"].Title)
}

func TestJSONLLockAcrossStores(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	s1, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	s2, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer s2.Close()
	ctx := context.Background()

	unlock, err := s1.Lock(ctx, "s")
	require.NoError(t, err)
	_, err = s2.Lock(ctx, "s")
	require.ErrorIs(t, err, agentrt.ErrSessionBusy, "another store (as another process would) sees the lock")
	assert.ErrorIs(t, s2.Delete(ctx, "s"), agentrt.ErrSessionBusy)
	assert.ErrorIs(t, s1.Delete(ctx, "s"), agentrt.ErrSessionBusy)
	appendAll(t, s2, "x", agentrt.NewUserMessage("x"))
	assert.ErrorIs(t, s2.Fork(ctx, "x", "s", 0), agentrt.ErrSessionBusy)
	u2, err := s2.Lock(ctx, "other")
	require.NoError(t, err, "other sessions are free")
	u2()
	appendAll(t, s1, "s", agentrt.NewUserMessage("one"))
	unlock()
	u2, err = s2.Lock(ctx, "s")
	require.NoError(t, err)
	appendAll(t, s2, "s", agentrt.NewUserMessage("two"))
	u2()
	assert.Len(t, load(t, s1, "s"), 2)

	// Close releases the locks it holds; their unlock funcs become no-ops.
	unlock, err = s1.Lock(ctx, "s")
	require.NoError(t, err)
	appendAll(t, s1, "s", agentrt.NewUserMessage("three"))
	require.NoError(t, s1.Close())
	u2, err = s2.Lock(ctx, "s")
	require.NoError(t, err)
	unlock() // s1's: must not release s2's lock
	_, err = s1.Lock(ctx, "s")
	assert.ErrorIs(t, err, os.ErrClosed)
	s3, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer s3.Close()
	_, err = s3.Lock(ctx, "s")
	assert.ErrorIs(t, err, agentrt.ErrSessionBusy, "s2 still holds it")
	u2()
	assert.Len(t, load(t, s3, "s"), 3)
}

func TestJSONLClosed(t *testing.T) {
	t.Parallel()
	s, err := agentrt.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	appendAll(t, s, "s", agentrt.NewUserMessage("x"))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	ctx := context.Background()
	assert.ErrorIs(t, s.Append(ctx, "s", agentrt.NewUserMessage("y")), os.ErrClosed)
	_, err = s.Load(ctx, "s")
	assert.ErrorIs(t, err, os.ErrClosed)
	_, err = s.List(ctx)
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.ErrorIs(t, s.Sync(ctx, "s"), os.ErrClosed)
	_, err = agentrt.NewJSONLStore("", nil)
	assert.Error(t, err)
}

func TestJSONLLockedSessionsInParallel(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, nil)
	ctx := context.Background()
	const sessions, each = 12, 150
	var wg sync.WaitGroup
	for g := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", g)
			unlock, err := s.Lock(ctx, id)
			if !assert.NoError(t, err) {
				return
			}
			defer unlock()
			for i := range each {
				if i%3 == 0 {
					if !assert.NoError(t, s.AppendRecord(ctx, id, agentrt.Record{Kind: "usage", Data: json.RawMessage(`{}`)})) {
						return
					}
				}
				if !assert.NoError(t, s.Append(ctx, id, agentrt.NewUserMessage(fmt.Sprint(i)))) {
					return
				}
				if i%50 == 0 {
					assert.NoError(t, s.Sync(ctx, id))
				}
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			_, err := s.List(ctx)
			assert.NoError(t, err)
		}
	})
	wg.Wait()
	infos, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, sessions)
	for g := range sessions {
		id := fmt.Sprintf("s%d", g)
		msgs := load(t, s, id)
		require.Len(t, msgs, each)
		for i, m := range msgs {
			require.Equal(t, fmt.Sprint(i), m.Content)
		}
		var seq int64
		for r, err := range s.Lines(ctx, id) {
			require.NoError(t, err)
			require.Equal(t, seq, r.Seq, "seq counts records from 1, without gaps")
			seq++
		}
		require.NoError(t, s.Verify(ctx, id))
	}
}

func TestJSONLLongLines(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, nil)
	ctx := context.Background()
	big := strings.Repeat("0123456789abcdef\n\"\\", 5<<20/19+1) // > 5 MB, with characters to escape
	require.Greater(t, len(big), 5<<20)
	msgs := []agentrt.Message{
		agentrt.NewUserMessage("read the big file"),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "read", json.RawMessage(`{"path":"big"}`))),
		agentrt.NewToolMessage("c1", big, false),
		agentrt.NewAssistantMessage(agentrt.TextBlock("done")),
	}
	unlock, err := s.Lock(ctx, "big")
	require.NoError(t, err)
	appendAll(t, s, "big", msgs[:3]...)
	unlock()
	// Appending after a 5 MB last line: reopening the file reads that line.
	appendAll(t, s, "big", msgs[3])

	got := load(t, s, "big")
	require.Len(t, got, len(msgs))
	for i := range msgs {
		require.Equal(t, msgs[i], got[i], "message %d", i)
	}
	infos, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, 4, infos[0].Messages)
	assert.Equal(t, "read the big file", infos[0].Title)

	// A store with a small limit refuses what it could not read back...
	small := newJSONLStore(t, &agentrt.JSONLOptions{MaxLineSize: 1024})
	err = small.Append(ctx, "s", agentrt.NewToolMessage("c", strings.Repeat("x", 2000), false))
	require.ErrorIs(t, err, agentrt.ErrLineTooLong)
	assert.Empty(t, load(t, small, "s"))
	// ...and reports a longer line in the middle of a file as corrupt.
	hdr := `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z"}` + "\n"
	line := fmt.Sprintf(`{"kind":"message","seq":1,"ts":"2026-01-02T03:04:06Z","message":{"role":"user","content":%q}}`, strings.Repeat("x", 200000))
	writeFile(t, sessionFile(small, "s"), hdr+line+"\n"+line+"\n")
	_, err = small.Load(ctx, "s")
	var ce *jsonl.LineError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, agentrt.ErrLineTooLong)
	assert.Equal(t, 2, ce.Line)
	// A long incomplete last line is a damaged tail like any other.
	w := &warnings{}
	small2 := newJSONLStore(t, &agentrt.JSONLOptions{MaxLineSize: 1024, OnWarning: w.add})
	writeFile(t, sessionFile(small2, "s"), hdr+line[:100000])
	assert.Empty(t, load(t, small2, "s"))
	require.Len(t, w.take(), 1)
}

func TestJSONLLoadCancelled(t *testing.T) {
	t.Parallel()
	s := newJSONLStore(t, &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
	ctx := context.Background()
	unlock, err := s.Lock(ctx, "s")
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, s.Append(ctx, "s", agentrt.NewUserMessage(fmt.Sprint(i))))
	}
	unlock()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Load(cctx, "s")
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, s.Append(cctx, "s", agentrt.NewUserMessage("x")), context.Canceled)
	assert.ErrorIs(t, s.Fork(cctx, "s", "f", 1), context.Canceled)
	assert.Len(t, load(t, s, "s"), 10)
}

// TestJSONLRefusesOptionsThatCannotHold: an unknown Durability or a
// negative MaxLineSize is an error from NewJSONLStore, not a default.
func TestJSONLRefusesOptionsThatCannotHold(t *testing.T) {
	t.Parallel()
	_, err := agentrt.NewJSONLStore(t.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.Durability(7)})
	assert.ErrorContains(t, err, "unknown durability")
	_, err = agentrt.NewJSONLStore(t.TempDir(), &agentrt.JSONLOptions{MaxLineSize: -1})
	assert.ErrorContains(t, err, "negative MaxLineSize -1")
}

func TestJSONLDurabilityString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "every-turn", agentrt.SyncEveryTurn.String())
	assert.Equal(t, "every-append", agentrt.SyncEveryAppend.String())
	assert.Equal(t, "never", agentrt.SyncNever.String())
	assert.Equal(t, "Durability(7)", agentrt.Durability(7).String())
	assert.Equal(t, agentrt.SyncEveryTurn, agentrt.JSONLOptions{}.Durability, "the zero value is the default")
}

func TestJSONLErrorsMessages(t *testing.T) {
	t.Parallel()
	tail := &jsonl.LineError{File: "/d/s.jsonl", Line: 7, Offset: 420, Tail: true, Err: errors.New("boom")}
	assert.Equal(t, "agentrt: /d/s.jsonl: line 7 (byte 420): incomplete last line ignored: boom", tail.Error())
	tail.Repaired = true
	assert.Contains(t, tail.Error(), "removed")
	ce := &jsonl.LineError{File: "/d/s.jsonl", Line: 3, Offset: 99, Err: errors.New("bad")}
	assert.Equal(t, "agentrt: /d/s.jsonl: line 3 (byte 99): bad", ce.Error())
	assert.Equal(t, "bad", errors.Unwrap(ce).Error())
}
