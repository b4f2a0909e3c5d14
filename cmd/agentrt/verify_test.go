package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/timeline"
)

// The denial session, as recorded, has these lines:
//
//	1 header  2 user  3 assistant (call_1 read_file, call_2 delete_file)
//	4 turn (model call)  5 result call_1  6 permission call_2
//	7 result call_2  8 turn (tool calls)  9 assistant  10 run
func denialLines(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "denial.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 10)
	require.Contains(t, lines[5], `"kind":"permission"`)
	return lines
}

var seqRE = regexp.MustCompile(`"seq":\d+`)

// renumber gives the records gapless seq numbers again, so that a test of
// another rule does not also break that one.
func renumber(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		if i > 0 {
			out[i] = seqRE.ReplaceAllString(l, fmt.Sprintf(`"seq":%d`, i))
		}
	}
	return out
}

func replaceLine(lines []string, n int, old, new string) []string {
	out := append([]string(nil), lines...)
	out[n-1] = strings.Replace(out[n-1], old, new, 1)
	return out
}

func deleteLine(lines []string, n int) []string {
	out := append([]string(nil), lines[:n-1]...)
	return append(out, lines[n:]...)
}

func insertLine(lines []string, n int, l string) []string {
	out := append([]string(nil), lines[:n-1]...)
	out = append(out, l)
	return append(out, lines[n-1:]...)
}

func moveLine(lines []string, from, to int) []string {
	l := lines[from-1]
	return insertLine(deleteLine(lines, from), to, l)
}

// TestVerifyFindsDamage writes damaged copies of a recorded session and
// checks that verify finds each one, at the right line, exits 1 and says
// so in JSON too: every kind of damage JSONLStore.Verify finds (which it
// must also find), and invariant and record breaks written by hand.
func TestVerifyFindsDamage(t *testing.T) {
	t.Parallel()
	dir, _ := recordAll(t)
	good := denialLines(t, dir)
	join := func(lines []string) string { return strings.Join(lines, "\n") + "\n" }

	for _, tc := range []struct {
		name  string
		file  string // the damaged file
		line  int
		rule  string
		text  string // in the finding's message
		store bool   // JSONLStore.Verify finds it too
	}{
		// What JSONLStore.Verify finds.
		{name: "tail cut short", file: join(good)[:len(join(good))-40], line: 10, rule: "tail", text: "newline", store: true},
		{name: "tail garbage", file: join(good[:9]) + "{\"kind\":\"mess\x00\x00\n", line: 10, rule: "tail", text: "not valid JSON", store: true},
		{name: "bad JSON before the end", file: join(replaceLine(good, 5, `{"kind"`, `{kind`)), line: 5, rule: "format", text: "not valid JSON", store: true},
		{name: "no header", file: join(good[1:]), line: 1, rule: "format", text: "not a header", store: true},
		{name: "second header", file: join(insertLine(good, 3, good[0])), line: 3, rule: "format", text: "second header", store: true},
		{name: "record without a kind", file: join(replaceLine(good, 6, `"kind":"permission",`, "")), line: 6, rule: "format", text: "without a kind", store: true},
		{name: "record without seq", file: join(replaceLine(good, 6, `"seq":5,`, "")), line: 6, rule: "format", text: "seq", store: true},
		{name: "message without a role", file: join(replaceLine(good, 2, `"role":"user",`, "")), line: 2, rule: "format", text: "role", store: true},
		{name: "field of the wrong type", file: join(replaceLine(good, 6, `"seq":5`, `"seq":"5"`)), line: 6, rule: "format", text: "not a record", store: true},
		{name: "unknown version", file: join(replaceLine(good, 1, `"version":1`, `"version":2`)), line: 1, rule: "format", text: "version", store: true},
		{name: "line too long", file: join(insertLine(good, 9, `{"kind":"note","seq":8,"ts":"2026-05-01T09:00:28Z","data":"`+strings.Repeat("x", 5000)+`"}`)), line: 9, rule: "format", text: "longer than", store: true},

		// Breaks of the format's rules that a store reads past.
		{name: "seq gap", file: join(replaceLine(good, 6, `"seq":5`, `"seq":50`)), line: 6, rule: "seq", text: "seq 50 follows 4"},
		{name: "record without a time", file: join(replaceLine(good, 6, `"ts":"2026-05-01T`, `"ts":"yesterday`)), line: 6, rule: "format", text: `"ts"`},

		// Invariants of the message chain.
		{name: "result without a call", file: join(renumber(replaceLine(good, 5, `"tool_use_id":"call_1"`, `"tool_use_id":"call_9"`))), line: 5, rule: "invariant", text: `"call_9", which no tool_use has`},
		{name: "second result", file: join(renumber(insertLine(good, 6, good[4]))), line: 6, rule: "invariant", text: `a second result for "call_1"`},
		{name: "call without a result", file: join(renumber(deleteLine(good, 7))), line: 8, rule: "invariant", text: `"call_2" (line 3) has no result`},
		{name: "duplicate tool_use id", file: join(renumber(insertLine(good, 9, good[2]))), line: 9, rule: "invariant", text: `"call_1" is used again`},
		{name: "result after a later message", file: join(renumber(moveLine(good, 7, 10))), line: 10, rule: "invariant", text: `does not follow its assistant message`},

		// Records that do not agree with the messages.
		{name: "decision on an unknown call", file: join(renumber(replaceLine(good, 6, `"tool_use_id":"call_2"`, `"tool_use_id":"call_7"`))), line: 6, rule: "record", text: `names tool_use "call_7"`},
		{name: "decision after its result", file: join(renumber(moveLine(good, 6, 8))), line: 8, rule: "record", text: "comes after its result"},
		{name: "decision names another tool", file: join(renumber(replaceLine(good, 6, `"tool":"delete_file"`, `"tool":"read_file"`))), line: 6, rule: "record", text: `names tool "read_file" for "call_2"`},
		{name: "trace of a call before its result", file: join(renumber(moveLine(good, 8, 5))), line: 5, rule: "record", text: "before its result"},
		{name: "unknown outcome", file: join(renumber(replaceLine(good, 8, `"outcome":"denied"`, `"outcome":"meh"`))), line: 8, rule: "record", text: `outcome "meh"`},
		{name: "run at an unknown layer", file: join(renumber(replaceLine(good, 10, `"reason":"complete"`, `"reason":"complete","layer":"moon"`))), line: 10, rule: "record", text: `unknown layer "moon"`},
		{name: "run that ends before it starts", file: join(renumber(replaceLine(good, 10, `"end":"`, `"end":"2001-01-01T00:00:00Z","x":"`))), line: 10, rule: "record", text: "before it starts"},
		{name: "turn of the wrong type", file: join(renumber(replaceLine(good, 4, `"turn":1`, `"turn":"one"`))), line: 4, rule: "record", text: "does not decode"},
		{name: "usage of turn 0", file: join(renumber(insertLine(good, 5, `{"kind":"usage","seq":4,"ts":"2026-05-01T09:00:24Z","data":{"turn":0,"usage":{"input_tokens":1,"output_tokens":1}}}`))), line: 5, rule: "record", text: "turn 0"},
		{name: "compaction beyond the messages", file: join(renumber(insertLine(good, 5, `{"kind":"compaction","seq":4,"ts":"2026-05-01T09:00:24Z","data":{"up_to":99,"summary":"s"}}`))), line: 5, rule: "record", text: "up_to 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(d, "x.jsonl"), []byte(tc.file), 0o600))
			var out, errb strings.Builder
			code := run(context.Background(), []string{"verify", "-max-line", "4096", filepath.Join(d, "x.jsonl")}, &out, &errb)
			require.Equal(t, 1, code, "exit code; output:\n%s%s", out.String(), errb.String())
			want := fmt.Sprintf("%s:%d: %s: ", filepath.Join(d, "x.jsonl"), tc.line, tc.rule)
			require.Contains(t, out.String(), want, "file:line: rule")
			require.Contains(t, out.String(), tc.text)

			out.Reset()
			require.Equal(t, 1, run(context.Background(), []string{"verify", "-json", "-max-line", "4096", filepath.Join(d, "x")}, &out, &errb))
			var fs []timeline.Finding
			require.NoError(t, json.Unmarshal([]byte(out.String()), &fs))
			found := false
			for _, f := range fs {
				found = found || f.Line == tc.line && f.Rule == tc.rule && strings.Contains(f.Message, tc.text)
			}
			require.True(t, found, "%+v", fs)

			if tc.store {
				store, err := agentrt.NewJSONLStore(d, &agentrt.JSONLOptions{MaxLineSize: 4096})
				require.NoError(t, err)
				defer store.Close()
				require.Error(t, store.Verify(context.Background(), "x"), "JSONLStore.Verify finds it too")
			}
		})
	}

	// The undamaged file passes.
	d := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(d, "x.jsonl"), []byte(join(good)), 0o600))
	var out, errb strings.Builder
	require.Equal(t, 0, run(context.Background(), []string{"verify", filepath.Join(d, "x.jsonl")}, &out, &errb), out.String())
	require.Equal(t, "ok: 1 session(s)\n", out.String())
}
