package agentrt

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f", "héllo 世界 🙂", "bad \xff\xfe utf8", "<&>", "\u2028"} {
		got := appendJSONString(nil, s)
		require.True(t, json.Valid(got), "%q → %s", s, got)
		var back, want string
		require.NoError(t, json.Unmarshal(got, &back))
		std, _ := json.Marshal(s)
		require.NoError(t, json.Unmarshal(std, &want))
		assert.Equal(t, want, back, "%q", s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a\"b\\c\x01\xff")
	f.Add("plain ascii then \xff")
	f.Add("é\"")
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString([]byte("x"), s)[1:]
		var back, want string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q → %s: %v", s, got, err)
		}
		std, _ := json.Marshal(s)
		_ = json.Unmarshal(std, &want)
		if back != want {
			t.Fatalf("%q → %q, want %q", s, back, want)
		}
	})
}

func TestAppendMS(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0", 999: "0", time.Microsecond: "0.001", 1500 * time.Microsecond: "1.500",
		2 * time.Second: "2000", 12*time.Millisecond + 34*time.Microsecond: "12.034",
	} {
		assert.Equal(t, want, string(appendMS(nil, d)), "%v", d)
	}
}

func TestAppendTime(t *testing.T) {
	t.Parallel()
	var tr tracer
	for _, tm := range []time.Time{
		time.Date(2026, 5, 1, 9, 30, 2, 469134000, time.UTC),
		time.Date(2026, 5, 1, 9, 30, 59, 0, time.UTC),
		time.Date(2026, 5, 1, 9, 31, 0, 1, time.FixedZone("x", 3600)),
		time.Date(2030, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1969, 1, 1, 0, 0, 0, 5, time.UTC),
		time.Now(),
	} {
		b := tr.appendTime(nil, tm)
		var s string
		require.NoError(t, json.Unmarshal(b, &s))
		got, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err, s)
		assert.True(t, got.Equal(tm), "%s != %v", s, tm)
		assert.Equal(t, tm.UTC().Format("2006-01-02T15:04:05.000000000Z"), s)
	}
	// Times in the same second, the next second and minutes apart, in
	// order and out of it, through the one-second cache.
	base := time.Date(2026, 12, 1, 8, 59, 58, 0, time.UTC).UnixNano()
	for i := range 5000 {
		tm := time.Unix(0, base+int64(i*i)*7919%(400*int64(time.Second))).UTC()
		b := tr.appendTime(nil, tm)
		require.Equal(t, `"`+tm.Format("2006-01-02T15:04:05.000000000Z")+`"`, string(b))
	}
	// A year of other than four digits is formatted whole, and the times
	// after it are right again.
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 7, time.UTC),
		time.Date(2026, 5, 1, 9, 30, 2, 1, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 123, time.UTC),
	} {
		b := tr.appendTime(nil, tm)
		require.Equal(t, `"`+tm.Format("2006-01-02T15:04:05.000000000Z")+`"`, string(b))
	}
}

// TestTraceTokensOfAWindowView checks the token estimate the turn records
// give for a Window's view, which is counted incrementally while the
// Window only appends to it: every turn's must equal a count of the whole
// view the planner was shown, through the Window's cuts.
func TestTraceTokensOfAWindowView(t *testing.T) {
	t.Parallel()
	const turns = 90
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := NewTool("add", "Add.", func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil })
	shown := map[int][2]int{} // turn → messages, tokens
	planner := PlannerFunc(func(_ context.Context, req *ModelRequest) (*ModelResponse, error) {
		shown[req.Turn] = [2]int{len(req.Messages), estimateTokens(req.Messages)}
		if req.Turn > turns {
			return &ModelResponse{Message: NewAssistantMessage(TextBlock("done"))}, nil
		}
		in := fmt.Sprintf(`{"a":%d,"b":%d}`, req.Turn, 1000*req.Turn)
		return &ModelResponse{Message: NewAssistantMessage(ToolUseBlock(fmt.Sprintf("c%d", req.Turn), "add", json.RawMessage(in)))}, nil
	})
	store := &MemoryStore{}
	ag := &Agent{Tools: []Tool{add}, Planner: planner, Store: store, MaxTurns: turns + 1, Compressor: Window{}, ContextTokens: 400}
	for _, err := range ag.Run(context.Background(), "s", "go") {
		require.NoError(t, err)
	}
	recs, err := store.LoadRecords(context.Background(), "s")
	require.NoError(t, err)
	cut, seen := false, 0
	for _, rec := range recs {
		var m struct {
			Turn      int `json:"turn"`
			ModelCall *struct {
				Messages int `json:"messages"`
				Tokens   int `json:"tokens"`
			} `json:"model_call"`
			LastTurn *struct {
				Turn      int `json:"turn"`
				ModelCall *struct {
					Messages int `json:"messages"`
					Tokens   int `json:"tokens"`
				} `json:"model_call"`
			} `json:"last_turn"`
		}
		require.NoError(t, json.Unmarshal(rec.Data, &m))
		turn, mc := m.Turn, m.ModelCall
		if m.LastTurn != nil {
			turn, mc = m.LastTurn.Turn, m.LastTurn.ModelCall
		}
		if mc == nil {
			continue
		}
		want := shown[turn]
		assert.Equal(t, want[0], mc.Messages, "turn %d: messages shown", turn)
		assert.Equal(t, want[1], mc.Tokens, "turn %d: tokens shown", turn)
		cut = cut || want[0] < 2*turn
		seen++
	}
	assert.Equal(t, turns+1, seen, "a model call record per turn")
	assert.True(t, cut, "the Window never cut: the test shows nothing")
}
