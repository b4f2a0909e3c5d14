package agentrt

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how the runtime retries a planner call that failed with
// a transient error (a [*ProviderError] whose Retryable is true: rate
// limits, overload, broken streams). Its zero value means 3 attempts; the
// wait before attempt n+1 is drawn at random from [d/2, d], where d is
// 500ms doubled n-1 times and at most 10s; a Retry-After from the
// provider is honoured up to MaxDelay (a longer one is cut to MaxDelay, and
// the event says so). Each retry is reported as a [PlannerRetry] event.
type RetryPolicy struct {
	// MaxAttempts counts the first call; 0 means 3, 1 disables retries.
	MaxAttempts int
	// BaseDelay is d for the first retry (the wait is in [d/2, d]); 0
	// means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps a delay; 0 means 10s.
	MaxDelay time.Duration
}

func (p RetryPolicy) attempts() int {
	if p.MaxAttempts <= 0 {
		return 3
	}
	return p.MaxAttempts
}

// delay returns the wait before attempt n+1 (n counts from 1), and the
// wait the server asked for when MaxDelay cut it (0 otherwise).
func (p RetryPolicy) delay(n int, err error) (d, asked time.Duration) {
	base, max := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	var pe *ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		if pe.RetryAfter > max {
			return max, pe.RetryAfter
		}
		return pe.RetryAfter, 0
	}
	d = base << (n - 1)
	if d > max || d <= 0 {
		d = max
	}
	// Jitter: anywhere in [d/2, d].
	return d/2 + rand.N(d/2+1), 0
}

// retryable reports whether a planner error may go away on its own.
func retryable(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Retryable()
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
