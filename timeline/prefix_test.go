package timeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/timeline"
)

// testdata/cache holds sessions written by hand with the request
// fingerprints of the model_call records ("prefix"), one per cause of a
// cache break, and one that only appends.
func TestCacheBreaks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id     string
		breaks map[int]timeline.CacheBreak // by turn
	}{
		{"hook-system", map[int]timeline.CacheBreak{
			2: {Part: timeline.PartSystem, Cause: "system prompt changed by hook 1", By: "hook 1"},
			3: {Part: timeline.PartSystem, Cause: "system prompt changed by hook 1", By: "hook 1"},
		}},
		{"tool-list", map[int]timeline.CacheBreak{
			2: {Part: timeline.PartTools, Cause: "tool list changed: write_file", Tool: "write_file"},
		}},
		{"compaction", map[int]timeline.CacheBreak{
			4: {Part: timeline.PartMessages, Cause: "history rewritten at message 1 by compaction", Message: 1, By: "compaction"},
		}},
		{"hook-history", map[int]timeline.CacheBreak{
			3: {Part: timeline.PartMessages, Cause: "history rewritten at message 2 by hook 0", Message: 2, By: "hook 0"},
		}},
		{"model-change", map[int]timeline.CacheBreak{
			3: {Part: timeline.PartModel, Cause: "model changed: claude-sonnet-4-5 → claude-haiku-4-5"},
		}},
		{"stable", map[int]timeline.CacheBreak{}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "cache")
			s, err := timeline.Load(context.Background(), dir, tc.id)
			require.NoError(t, err)
			got := map[int]timeline.CacheBreak{}
			for _, r := range s.Runs {
				for _, tu := range r.Turns {
					require.NotNil(t, tu.Model.Prefix, "turn %d", tu.N)
					if tu.CacheBreak != nil {
						got[tu.N] = *tu.CacheBreak
					}
				}
			}
			assert.Equal(t, tc.breaks, got)
			assert.Equal(t, len(tc.breaks), s.CacheBreaks())
			fs, err := timeline.Verify(context.Background(), dir, tc.id, nil)
			require.NoError(t, err)
			assert.Empty(t, fs)
		})
	}
}

// A file without fingerprints shows no break and verifies as before.
func TestNoPrefixNoBreaks(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"testdata", filepath.Join("testdata", "multirun", "old"), filepath.Join("testdata", "multirun", "new")} {
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if !ok {
				continue
			}
			s, err := timeline.Load(context.Background(), dir, id)
			require.NoError(t, err)
			require.NotEmpty(t, s.Runs, id)
			assert.Zero(t, s.CacheBreaks(), id)
			_, priced := s.Cost()
			assert.False(t, priced, id)
		}
	}
}

// Each turn's input splits into uncached, cache read and cache write
// tokens; the cost is the records' when they have one.
func TestTokensAndCost(t *testing.T) {
	t.Parallel()
	s, err := timeline.Load(context.Background(), filepath.Join("testdata", "cache"), "model-change")
	require.NoError(t, err)
	m := s.Runs[0].Turns[1].Model
	assert.Equal(t, 700, m.Usage.InputTokens)
	assert.Equal(t, 580, m.Usage.CacheReadTokens)
	assert.Equal(t, 100, m.Usage.CacheWriteTokens)
	assert.Equal(t, 20, m.Uncached())
	require.NotNil(t, m.Cost)
	assert.InDelta(t, 0.0006, *m.Cost, 1e-12)
	cost, priced := s.Cost()
	assert.True(t, priced)
	assert.InDelta(t, 0.0037, cost, 1e-12)
	share, ok := s.CacheReadShare()
	assert.True(t, ok)
	assert.InDelta(t, 580.0/2050, share, 1e-12)

	s, err = timeline.Load(context.Background(), filepath.Join("testdata", "cache"), "compaction")
	require.NoError(t, err)
	_, priced = s.Cost()
	assert.False(t, priced, "no cost in its records: no Prices")
}

// Verify accepts the fingerprints and rejects malformed ones.
func TestVerifyPrefix(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile(filepath.Join("testdata", "cache", "tool-list.jsonl"))
	require.NoError(t, err)
	// The second model call's prefix, as the file has it.
	const second = `"prefix":{"system":"c0ffee01","tools":"feedbeef","tool_list":[{"name":"read_file","hash":"1a2b3c4d"},{"name":"write_file","hash":"5e6f7a8b"}],"messages":4,"from":1,"hashes":["000000b2","000000b3","00000bf2"],"tail":1}`
	require.Contains(t, string(orig), second)
	for _, tc := range []struct{ name, prefix, want string }{
		{"system not hex", strings.Replace(second, `"c0ffee01"`, `"c0ffeeXY"`, 1), `system hash "c0ffeeXY"`},
		{"upper case", strings.Replace(second, `"feedbeef"`, `"FEEDBEEF"`, 1), `tools hash "FEEDBEEF"`},
		{"short hash", strings.Replace(second, `"000000b3"`, `"b3"`, 1), `hashes[1] "b3"`},
		{"tool hash", strings.Replace(second, `"5e6f7a8b"`, `"5e6f7a8"`, 1), `tool_list[1]`},
		{"from past messages", strings.Replace(second, `"from":1`, `"from":5`, 1), "from 5 is outside its 4 messages"},
		{"hash count", strings.Replace(second, `"messages":4`, `"messages":5`, 1), "3 hashes for messages 1 to 5 (want 4)"},
		{"from past the previous call", strings.Replace(strings.Replace(second, `"from":1`, `"from":3`, 1), `"hashes":["000000b2","000000b3",`, `"hashes":[`, 1), "from 3 is past the 2 messages of the previous call"},
		{"tail", strings.Replace(second, `"tail":1`, `"tail":9`, 1), "tail 9 is outside"},
		{"changed value", strings.Replace(second, `"tail":1`, `"changed":{"tools":"hook one"}`, 1), `changed tools is "hook one"`},
		{"changed part", strings.Replace(second, `"tail":1`, `"changed":{"model":"runtime"}`, 1), `changed names part "model"`},
		{"negative cost", strings.Replace(second, `"prefix"`, `"cost":-1,"prefix"`, 1), "negative cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bad := strings.Replace(string(orig), second, tc.prefix, 1)
			require.NotEqual(t, string(orig), bad)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(bad), 0o600))
			fs, err := timeline.Verify(context.Background(), dir, "s", nil)
			require.NoError(t, err)
			require.Len(t, fs, 1, "%v", fs)
			assert.Equal(t, "record", fs[0].Rule)
			assert.Equal(t, 8, fs[0].Line)
			assert.Contains(t, fs[0].Message, tc.want)
			// The timeline still reads it.
			_, err = timeline.Load(context.Background(), dir, "s")
			require.NoError(t, err)
		})
	}
}
