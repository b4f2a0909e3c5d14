package timeline_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/jsonl"
	"github.com/agentrt/agentrt/timeline"
)

// call is a model call of a synthetic session: a user message before it
// when input is set, then the assistant's reply and its turn record.
type call struct {
	input  string // a new run starts with it
	model  string
	prefix map[string]any // nil: none
}

// session builds the lines of a session of calls, one turn each, each
// answered with text; a call with an input starts a new run.
func session(calls []call) []jsonl.Line {
	var lines []jsonl.Line
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	seq := int64(0)
	add := func(kind string, msg, data any) {
		seq++
		l := jsonl.Line{Line: int(seq) + 1, Seq: seq, Kind: kind, Time: t0.Add(time.Duration(seq) * time.Millisecond)}
		if msg != nil {
			l.Message, _ = json.Marshal(msg)
		} else {
			l.Data, _ = json.Marshal(data)
		}
		lines = append(lines, l)
	}
	turn := 0
	for i, c := range calls {
		if c.input != "" {
			add("message", map[string]any{"role": "user", "content": c.input}, nil)
			turn = 0
		}
		turn++
		add("message", map[string]any{"role": "assistant", "blocks": []any{map[string]any{"type": "text", "text": fmt.Sprint("reply ", i)}}}, nil)
		mc := map[string]any{"start": t0.Format(time.RFC3339Nano), "duration_ms": 1, "provider": "p", "model": c.model}
		if c.prefix != nil {
			mc["prefix"] = c.prefix
		}
		add("turn", nil, map[string]any{"turn": turn, "model_call": mc})
	}
	return lines
}

func pfx(system, tools string, n, from int, hashes []string, extra ...any) map[string]any {
	p := map[string]any{"system": system, "tools": tools, "messages": n, "from": from, "hashes": hashes}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return p
}

// Cases the hand-written files do not hold.
func TestCacheBreakCases(t *testing.T) {
	t.Parallel()
	tl := []map[string]string{{"name": "read", "hash": "00000001"}}
	for _, tc := range []struct {
		name  string
		calls []call
		want  map[int]string // cause by turn
	}{
		{"only the previous tail changed", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 2, 0, []string{"0000000a", "000000f1"}, "tail", 1, "tool_list", tl)},
			{model: "m", prefix: pfx("00000001", "00000002", 3, 1, []string{"0000000b", "000000f2"}, "tail", 1)},
		}, map[int]string{}},
		{"a message before the tail changed", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 3, 0, []string{"0000000a", "0000000c", "000000f1"}, "tail", 1, "tool_list", tl)},
			{model: "m", prefix: pfx("00000001", "00000002", 3, 1, []string{"0000000d", "000000f2"}, "tail", 1)},
		}, map[int]string{2: "history rewritten at message 1"}},
		{"the history shrank", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 3, 0, []string{"0000000a", "0000000b", "0000000c"}, "tool_list", tl)},
			{model: "m", prefix: pfx("00000001", "00000002", 2, 2, []string{})},
		}, map[int]string{2: "history rewritten at message 2"}},
		{"by the runtime", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl)},
			{model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000b"}, "changed", map[string]string{"messages": "runtime"})},
		}, map[int]string{2: "history rewritten at message 0 by runtime"}},
		{"the system prompt, and no hook", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl)},
			{model: "m", prefix: pfx("00000009", "00000002", 2, 1, []string{"0000000b"})},
		}, map[int]string{2: "system prompt changed"}},
		{"a hook's change that went away", []call{
			{input: "a", model: "m", prefix: pfx("00000009", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl, "changed", map[string]string{"system": "hook 2"})},
			{model: "m", prefix: pfx("00000001", "00000002", 2, 1, []string{"0000000b"})},
		}, map[int]string{2: "system prompt changed by hook 2"}},
		{"the tools, by a hook, without lists", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"})},
			{model: "m", prefix: pfx("00000001", "00000003", 2, 1, []string{"0000000b"}, "changed", map[string]string{"tools": "hook 0"})},
		}, map[int]string{2: "tool list changed by hook 0"}},
		{"the model before the system prompt", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl)},
			{model: "n", prefix: pfx("00000009", "00000002", 2, 1, []string{"0000000b"})},
		}, map[int]string{2: "model changed: m → n"}},
		{"a call without a prefix between", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl)},
			{model: "m"},
			{model: "m", prefix: pfx("00000009", "00000002", 3, 2, []string{"0000000c"})},
		}, map[int]string{}},
		{"across runs", []call{
			{input: "a", model: "m", prefix: pfx("00000001", "00000002", 1, 0, []string{"0000000a"}, "tool_list", tl)},
			{input: "b", model: "m", prefix: pfx("00000001", "00000002", 3, 0, []string{"0000000a", "000000aa", "0000000b"}, "tool_list", tl)},
			{input: "c", model: "m", prefix: pfx("00000001", "00000002", 5, 0, []string{"0000000a", "000000ab", "0000000b", "000000bb", "0000000c"}, "tool_list", tl)},
		}, map[int]string{3: "history rewritten at message 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := timeline.FromRecords("s", "s.jsonl", session(tc.calls))
			got := map[int]string{}
			n := 0
			for _, r := range s.Runs {
				for _, tu := range r.Turns {
					n++
					if tu.CacheBreak != nil {
						got[tu.N] = tu.CacheBreak.Cause
					}
				}
			}
			require.Equal(t, len(tc.calls), n)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Malformed fingerprints (Verify reports them) neither panic nor make up
// a break.
func TestCacheBreakMalformed(t *testing.T) {
	t.Parallel()
	first := call{input: "a", model: "m", prefix: pfx("00000001", "00000002", 2, 0, []string{"0000000a", "0000000b"})}
	for name, p := range map[string]map[string]any{
		"negative from":   pfx("00000001", "00000002", 3, -1, []string{"0000000c"}),
		"from past all":   pfx("00000001", "00000002", 3, 9, []string{"0000000c"}),
		"negative tail":   pfx("00000001", "00000002", 3, 2, []string{"0000000c"}, "tail", -5),
		"tail past all":   pfx("00000001", "00000002", 3, 2, []string{"0000000c"}, "tail", 99),
		"too few hashes":  pfx("00000001", "00000002", 9, 2, []string{}),
		"no hashes field": {"system": "00000001", "tools": "00000002", "from": 2},
	} {
		for _, calls := range [][]call{
			{first, {model: "m", prefix: p}},
			{first, {model: "m", prefix: p}, {model: "m", prefix: pfx("00000001", "00000002", 4, 3, []string{"0000000d"}, "tail", 1)}},
			{{input: "a", model: "m", prefix: p}, {model: "m", prefix: p}},
		} {
			require.NotPanics(t, func() { timeline.FromRecords("s", "s.jsonl", session(calls)) }, name)
		}
	}
}

// longSession is a session of n calls in one run that only append, with a
// recalled-memory tail, and a system prompt changed at call n/2.
func longSession(n int) []jsonl.Line {
	calls := make([]call, n)
	hash := func(i int) string { return fmt.Sprintf("%08x", i) }
	tl := []map[string]string{{"name": "read", "hash": "00000001"}}
	for i := range calls {
		system := "00000001"
		if i >= n/2 {
			system = "00000002"
		}
		if i == 0 {
			calls[i] = call{input: "go", model: "m", prefix: pfx(system, "00000002", 2, 0, []string{hash(0), "f0000000"}, "tail", 1, "tool_list", tl)}
			continue
		}
		// Call i sends messages 0 to 2i, then its tail.
		calls[i] = call{model: "m", prefix: pfx(system, "00000002", 2*i+2, 2*i-1, []string{hash(2*i - 1), hash(2 * i), fmt.Sprintf("f%07x", i)}, "tail", 1)}
	}
	return session(calls)
}

// A long session: one break, where the system prompt changed, and the
// memory per call stays flat: the whole message list is not copied for
// each call. Not parallel: it reads the process's allocation counter.
func TestCacheBreaksLongSession(t *testing.T) {
	s := timeline.FromRecords("s", "s.jsonl", longSession(2000))
	require.Equal(t, 2000, s.Turns())
	assert.Equal(t, 1, s.CacheBreaks())
	assert.Equal(t, "system prompt changed", s.Runs[0].Turns[1000].CacheBreak.Cause)

	perCall := func(n int) float64 {
		lines := longSession(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		timeline.FromRecords("s", "s.jsonl", lines)
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perCall(250), perCall(2000)
	assert.Less(t, large, 1.5*small, "a call of a 2000-call session allocates about what one of a 250-call session does: %.0f bytes against %.0f", large, small)
}

func benchBuild(b *testing.B, n int) {
	lines := longSession(n)
	b.ResetTimer()
	for range b.N {
		timeline.FromRecords("s", "s.jsonl", lines)
	}
}

func BenchmarkCacheBreaks(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchBuild(b, n) })
	}
}
