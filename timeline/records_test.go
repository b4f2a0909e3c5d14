package timeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt/timeline"
)

// testdata/multirun holds one session in both forms of the run record:
// old ("layer":"success" for a completed run, a pending stop's detail
// under "error") and new (no layer, "detail"). Both read the same.
func TestMultiRunBothRecordForms(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"old", "new"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			s, err := timeline.Load(context.Background(), filepath.Join("testdata", "multirun", form), "multi")
			require.NoError(t, err)
			require.Len(t, s.Runs, 3)
			wait := "The run is waiting for a person's decision on 1 tool call(s); resume it with Agent.Resume."
			for i, want := range []struct {
				layer, status, detail string
				dur, waited           time.Duration
				turns                 []int
				resumed               []string
			}{
				{"permission", "pending at permission", wait, 10 * time.Millisecond, 0, []int{1}, nil},
				{"permission", "pending at permission", wait, 10 * time.Millisecond, 1700 * time.Millisecond, []int{2}, []string{"call_1"}},
				{timeline.LayerNone, "completed", "", 20 * time.Millisecond, 3280 * time.Millisecond, []int{3}, []string{"call_2"}},
			} {
				r := s.Runs[i]
				assert.Equal(t, want.layer, r.Layer, "run %d", r.Index)
				assert.Equal(t, want.status, r.Status(), "run %d", r.Index)
				assert.Equal(t, want.detail, r.Detail, "run %d", r.Index)
				assert.Empty(t, r.Error, "run %d: a pending stop is not an error", r.Index)
				assert.Equal(t, want.dur, r.Duration(), "run %d", r.Index)
				assert.Equal(t, want.waited, r.Waited, "run %d", r.Index)
				var turns []int
				for _, tu := range r.Turns {
					turns = append(turns, tu.N)
				}
				assert.Equal(t, want.turns, turns, "run %d: turn numbers count on across runs", r.Index)
				var resumed []string
				for _, c := range r.Resumed {
					resumed = append(resumed, c.ID)
					assert.Equal(t, r.Index, c.ResumedIn)
				}
				assert.Equal(t, want.resumed, resumed, "run %d", r.Index)
			}
			work, waited := s.Work()
			assert.Equal(t, 40*time.Millisecond, work)
			assert.Equal(t, 4980*time.Millisecond, waited)

			denied := s.Runs[1].Turns[0].Calls[0]
			assert.Equal(t, timeline.OutcomeDenied, denied.Outcome)
			assert.True(t, denied.DeniedByPerson())
			assert.Equal(t, timeline.LayerPermission, denied.Layer(), "an outcome of the permission layer")
			assert.Empty(t, s.FailingLayer(), "a person's denial is not a failing layer")
			layer, verdict := s.Verdict()
			assert.Equal(t, timeline.LayerNone, layer)
			assert.Equal(t, "COMPLETED: run 3 completed; a person denied 1 call", verdict)

			fs, err := timeline.Verify(context.Background(), filepath.Join("testdata", "multirun", form), "multi", nil)
			require.NoError(t, err)
			assert.Empty(t, fs)
		})
	}
}

// A run record's layer and its human text, in both forms: "success" and
// no layer are the same completed state, and "error" of an old record
// whose stop is not a failure is its detail.
func TestRunRecordForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data                   string
		layer, status, errText, text string
	}{
		{"complete old", `"reason":"complete","layer":"success"`, "", "completed", "", ""},
		{"complete new", `"reason":"complete"`, "", "completed", "", ""},
		{"pending old", `"reason":"pending","layer":"permission","error":"wait"`, "permission", "pending at permission", "", "wait"},
		{"pending new", `"reason":"pending","layer":"permission","detail":"wait"`, "permission", "pending at permission", "", "wait"},
		{"max turns old", `"reason":"max_turns","layer":"limit","error":"10 turns"`, "limit", "max_turns at limit", "", "10 turns"},
		{"loop old", `"reason":"loop_detected","layer":"limit","error":"same call"`, "limit", "loop_detected at limit", "", "same call"},
		{"budget new", `"reason":"budget_exceeded","layer":"limit","detail":"1000 tokens"`, "limit", "budget_exceeded at limit", "", "1000 tokens"},
		{"error", `"reason":"error","layer":"provider","error":"overloaded"`, "provider", "error at provider", "overloaded", ""},
		{"cancelled", `"reason":"cancelled","layer":"cancellation","error":"context canceled"`, "cancellation", "cancelled at cancellation", "context canceled", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := `{"kind":"header","version":1,"session_id":"s","created":"2026-05-01T09:00:00Z"}
{"kind":"message","seq":1,"ts":"2026-05-01T09:00:00.001Z","message":{"role":"user","content":"hi"}}
{"kind":"message","seq":2,"ts":"2026-05-01T09:00:00.002Z","message":{"role":"assistant","content":"hello"}}
{"kind":"run","seq":3,"ts":"2026-05-01T09:00:00.003Z","data":{"start":"2026-05-01T09:00:00Z","end":"2026-05-01T09:00:00.003Z","turns":1,` + tc.data + `}}
`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(file), 0o600))
			s, err := timeline.Load(context.Background(), dir, "s")
			require.NoError(t, err)
			r := s.LastRun()
			assert.Equal(t, tc.layer, r.Layer)
			assert.Equal(t, tc.status, r.Status())
			assert.Equal(t, tc.errText, r.Error)
			assert.Equal(t, tc.text, r.Detail)
			assert.Equal(t, tc.errText+tc.text, r.Why())
		})
	}
}
