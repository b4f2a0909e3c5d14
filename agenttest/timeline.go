package agenttest

import (
	"context"
	"strconv"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/timeline"
)

// Timeline reads the timeline of a session kept by a JSONL store (see
// package timeline), failing the test if it cannot be read.
func Timeline(t TB, store *agentrt.JSONLStore, sessionID string) *timeline.Session {
	t.Helper()
	s, err := timeline.Load(context.Background(), store.Dir(), sessionID)
	if err != nil {
		t.Errorf("agenttest: read the timeline of session %q: %v", sessionID, err)
		t.FailNow()
	}
	return s
}

// AssertStoppedAt checks that the session's last run ended at layer, one
// of the timeline.Layer constants (timeline.LayerNone for a run that
// completed, timeline.LayerCrash for one cut short), and says what the
// timeline shows when it did not. A run still going stopped at no layer.
func AssertStoppedAt(t TB, s *timeline.Session, layer string) {
	t.Helper()
	r := s.LastRun()
	switch {
	case r == nil:
		t.Errorf("agenttest: session %q has no run; want one that stopped at the %s layer", s.ID, layer)
	case r.Layer == "" && r.Reason != string(agentrt.StopComplete):
		t.Errorf("agenttest: session %q: run %d has not ended (%s); want one that stopped at the %q layer", s.ID, r.Index, r.Status(), layer)
	case r.Layer != layer:
		t.Errorf("agenttest: session %q: run %d stopped at the %q layer (%s: %s); want %q", s.ID, r.Index, r.Layer, r.Reason, r.Error, layer)
	}
}

// AssertFailingLayer checks the layer to look at first in the session's
// last run ([timeline.Run.FailingLayer]): the layer a failed run stopped
// at, or the layer of the last problem of a run that completed despite
// it (a denied call: timeline.LayerPermission), or "" for a clean run.
func AssertFailingLayer(t TB, s *timeline.Session, layer string) {
	t.Helper()
	r := s.LastRun()
	if r == nil {
		t.Errorf("agenttest: session %q has no run", s.ID)
		return
	}
	if got := r.FailingLayer(); got != layer {
		var ps []string
		for _, p := range r.Problems() {
			ps = append(ps, "turn "+strconv.Itoa(p.Turn)+" "+p.Layer+": "+p.What)
		}
		t.Errorf("agenttest: session %q: failing layer %q, want %q; problems:\n%s", s.ID, got, layer, strings.Join(ps, "\n"))
	}
}

// AssertCallOutcome checks the outcome of the tool call with the given
// tool_use id (one of the timeline.Outcome constants).
func AssertCallOutcome(t TB, s *timeline.Session, toolUseID, outcome string) {
	t.Helper()
	for _, r := range s.Runs {
		for _, tu := range r.Turns {
			for _, c := range tu.Calls {
				if c.ID == toolUseID {
					if c.Outcome != outcome {
						t.Errorf("agenttest: session %q: call %q (%s) ended %q, want %q", s.ID, toolUseID, c.Tool, c.Outcome, outcome)
					}
					return
				}
			}
		}
	}
	t.Errorf("agenttest: session %q has no call %q", s.ID, toolUseID)
}
