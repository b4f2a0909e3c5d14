package agentrt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// timedPlanner is a planner that notes the (virtual) time of each call
// and answers with the next of errs, then with "ok".
type timedPlanner struct {
	mu    sync.Mutex
	errs  []error
	calls []time.Time
}

func (p *timedPlanner) Plan(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.calls)
	p.calls = append(p.calls, time.Now())
	if n < len(p.errs) {
		return nil, p.errs[n]
	}
	return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("ok"))}, nil
}

// waits returns the time between consecutive calls.
func (p *timedPlanner) waits() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var w []time.Duration
	for i := 1; i < len(p.calls); i++ {
		w = append(w, p.calls[i].Sub(p.calls[i-1]))
	}
	return w
}

// TestRetryBackoff shows RetryPolicy's "Its zero value means 3
// attempts with delays from 500ms doubling up to 10s, with jitter": the
// wait between attempts, measured on synctest's virtual clock, is the
// PlannerRetry event's Delay, and that is the nominal delay (BaseDelay,
// doubling, capped at MaxDelay) with jitter in [nominal/2, nominal], as
// retry.go's delay computes it.
//
// RetryPolicy's doc: the wait before attempt n+1 is in [d/2, d], d being
// BaseDelay doubled n-1 times, at most MaxDelay.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name    string
		policy  agentrt.RetryPolicy
		nominal []time.Duration // the delay before attempts 2, 3, ...
	}{
		{"zero value: 3 attempts", agentrt.RetryPolicy{}, []time.Duration{500 * ms, time.Second}},
		{"doubling up to 10s", agentrt.RetryPolicy{MaxAttempts: 8},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
		{"own BaseDelay and MaxDelay", agentrt.RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * ms, MaxDelay: 300 * ms},
			[]time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms}},
		{"MaxAttempts 1: no retry", agentrt.RetryPolicy{MaxAttempts: 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				attempts := len(tc.nominal) + 1
				firstWaits := map[time.Duration]bool{}
				const runs = 20 // to see the jitter
				for run := range runs {
					errs := make([]error, attempts) // every attempt fails
					for i := range errs {
						errs[i] = &agentrt.ProviderError{Provider: "fake", StatusCode: 529, Kind: agentrt.ErrOverloaded}
					}
					planner := &timedPlanner{errs: errs}
					ag := &agentrt.Agent{Planner: planner, Retry: tc.policy}
					events, err := agenttest.Collect(ag.Run(t.Context(), fmt.Sprint("s", run), "go"))
					require.ErrorIs(t, err, agentrt.ErrOverloaded, "the last attempt's error ends the run")
					done, _ := agenttest.Done(events)
					assert.Equal(t, agentrt.StopError, done.Reason)
					assert.Equal(t, agentrt.LayerProvider, done.Layer)
					require.Len(t, planner.calls, attempts, "attempts")
					retries := agenttest.Filter[agentrt.PlannerRetry](events)
					require.Len(t, retries, attempts-1)
					waits := planner.waits()
					for i, nominal := range tc.nominal {
						assert.Equal(t, i+1, retries[i].Attempt)
						assert.Equal(t, retries[i].Delay, waits[i], "the wait is the event's Delay")
						assert.GreaterOrEqual(t, waits[i], nominal/2, "wait %d", i+1)
						assert.LessOrEqual(t, waits[i], nominal, "wait %d", i+1)
						assert.Zero(t, retries[i].Asked)
					}
					if len(waits) > 0 {
						firstWaits[waits[0]] = true
					}
				}
				if len(tc.nominal) > 0 {
					assert.Greater(t, len(firstWaits), 1, "jitter: the waits differ from run to run")
				}
			})
		})
	}
}

// TestRetryAfterIsHonoured shows RetryPolicy's "a Retry-After from the
// provider is honoured up to MaxDelay (a longer one is cut to MaxDelay, and
// the event says so)": the wait is exactly what the server asked for, with
// no jitter and no doubling, or MaxDelay (10s by default) with
// PlannerRetry.Asked set; and the default of 3 attempts still holds.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	limited := func(after time.Duration) error {
		return &agentrt.ProviderError{Provider: "fake", StatusCode: 429, Kind: agentrt.ErrRateLimited, RetryAfter: after}
	}
	tests := []struct {
		name      string
		errs      []error
		policy    agentrt.RetryPolicy
		waits     []time.Duration
		asked     []time.Duration
		wantError bool
	}{
		{"as asked, then success", []error{limited(3 * time.Second), limited(7 * time.Second)}, agentrt.RetryPolicy{},
			[]time.Duration{3 * time.Second, 7 * time.Second}, []time.Duration{0, 0}, false},
		{"as asked, shorter than the backoff", []error{limited(time.Millisecond)}, agentrt.RetryPolicy{},
			[]time.Duration{time.Millisecond}, []time.Duration{0}, false},
		{"cut to the default MaxDelay", []error{limited(time.Minute)}, agentrt.RetryPolicy{},
			[]time.Duration{10 * time.Second}, []time.Duration{time.Minute}, false},
		{"cut to MaxDelay", []error{limited(time.Minute)}, agentrt.RetryPolicy{MaxDelay: 2 * time.Second},
			[]time.Duration{2 * time.Second}, []time.Duration{time.Minute}, false},
		{"three attempts by default", []error{limited(time.Second), limited(time.Second), limited(time.Second)}, agentrt.RetryPolicy{},
			[]time.Duration{time.Second, time.Second}, []time.Duration{0, 0}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				planner := &timedPlanner{errs: tc.errs}
				ag := &agentrt.Agent{Planner: planner, Retry: tc.policy}
				events, err := agenttest.Collect(ag.Run(t.Context(), "s", "go"))
				if tc.wantError {
					require.ErrorIs(t, err, agentrt.ErrRateLimited)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tc.waits, planner.waits())
				var delays, asked []time.Duration
				for _, r := range agenttest.Filter[agentrt.PlannerRetry](events) {
					delays, asked = append(delays, r.Delay), append(asked, r.Asked)
				}
				assert.Equal(t, tc.waits, delays)
				assert.Equal(t, tc.asked, asked)
			})
		})
	}
}
