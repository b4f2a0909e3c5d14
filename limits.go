package agentrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// More reasons a run ends, in [Done.Reason].
const (
	// StopLoopDetected: the model kept repeating the same tool calls with
	// the same results after it was told so.
	StopLoopDetected StopReason = "loop_detected"
	// StopBudgetExceeded: the run reached its token, cost or time budget.
	StopBudgetExceeded StopReason = "budget_exceeded"
)

var (
	// ErrLoopDetected is what [Done.Err] returns for StopLoopDetected.
	ErrLoopDetected = errors.New("agentrt: loop detected")
	// ErrBudgetExceeded is what [Done.Err] returns for StopBudgetExceeded.
	ErrBudgetExceeded = errors.New("agentrt: budget exceeded")
)

// LoopGuard detects a model that calls the same tool with the same input
// and gets the same result again and again, alone or alternating with
// another such call (ping-pong). Calls whose results differ never count as
// repeats. Its zero value is on, with the defaults below.
type LoopGuard struct {
	// Disabled turns the guard off.
	Disabled bool
	// Warn is the number of identical calls (same tool, same canonical
	// input, same result) after which the result tells the model that it
	// repeats itself; 0 means 3.
	Warn int
	// Stop is the number of identical calls after which the run ends with
	// StopLoopDetected; 0 means 5.
	Stop int
}

func (g LoopGuard) limits() (warn, stop int) {
	warn, stop = g.Warn, g.Stop
	if warn <= 0 {
		warn = 3
	}
	if stop <= 0 {
		stop = 5
	}
	return warn, stop
}

// loopWindow is how many recent calls the guard remembers.
const loopWindow = 16

// loopState is the guard's memory for one run: hashes of recent calls.
type loopState struct {
	ring [loopWindow]uint64
	n    int
}

// observe records a finished call and returns how many times it has been
// seen among the recent calls, itself included.
func (s *loopState) observe(name string, input json.RawMessage, result Message) int {
	h := fnvString(fnvOffset, name)
	h = fnvByte(h, 0)
	h = fnvCompactJSON(h, input)
	h = fnvByte(h, 0)
	if result.IsError {
		h = fnvByte(h, 1)
	}
	sig := fnvString(h, result.Content)
	count := 1
	for i := 0; i < s.n && i < loopWindow; i++ {
		if s.ring[i] == sig {
			count++
		}
	}
	s.ring[s.n%loopWindow] = sig
	s.n++
	return count
}

// FNV-1a, inline so that hashing does not allocate.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// fnvCompactJSON hashes JSON text without the whitespace between tokens,
// so that {"a": 1} and {"a":1} are the same call.
func fnvCompactJSON(h uint64, p []byte) uint64 {
	inStr, esc := false, false
	for _, b := range p {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			continue
		}
		h = (h ^ uint64(b)) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func loopNote(count int) string {
	return fmt.Sprintf("\n\n[agentrt: this is the %s identical call of this tool with this input, with the same result. Do not call it again: try something else, or answer with what you have.]", ordinal(count))
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// DefaultMaxToolOutput is the cap on a tool result's size, in bytes, when
// Agent.MaxToolOutput is 0.
const DefaultMaxToolOutput = 64 << 10

// TruncateOutput cuts a tool's output to at most max bytes (without
// splitting a rune) and appends a note saying how much was cut, as Run does
// with Agent.MaxToolOutput; ok reports whether it cut. A negative max means
// no limit.
func TruncateOutput(content string, max int) (_ string, ok bool) {
	if max < 0 || len(content) <= max {
		return content, false
	}
	cut := cutUTF8(content, max)
	return cut + fmt.Sprintf("\n[agentrt: output truncated: showing the first %d of %d bytes]", len(cut), len(content)), true
}

// RetryPolicy says how the runtime retries a planner call that failed with
// a transient error (a [*ProviderError] whose Retryable is true: rate
// limits, overload, broken streams). Its zero value means 3 attempts with
// delays from 500ms doubling up to 10s, with jitter; a Retry-After from the
// provider is honoured. Each retry is reported as a [PlannerRetry] event.
type RetryPolicy struct {
	// MaxAttempts counts the first call; 0 means 3, 1 disables retries.
	MaxAttempts int
	// BaseDelay is the first delay; 0 means 500ms.
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

// delay returns the wait before attempt n+1 (n counts from 1).
func (p RetryPolicy) delay(n int, err error) time.Duration {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		return pe.RetryAfter
	}
	base, max := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	d := base << (n - 1)
	if d > max || d <= 0 {
		d = max
	}
	// Full jitter in [d/2, d].
	return d/2 + rand.N(d/2+1)
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

// Budget limits what one run may spend. Its zero value sets no limit. When
// a limit is reached the run ends with StopBudgetExceeded; for the token
// and cost limits the runtime first makes one last planner call asking for
// a final answer without tools (see Agent.NoFinalAnswer).
type Budget struct {
	// MaxTokens caps input plus output tokens over the run's planner calls.
	MaxTokens int
	// MaxCost caps the run's cost, computed with Prices.
	MaxCost float64
	// Prices gives the cost per million tokens; needed for MaxCost.
	Prices Prices
	// MaxDuration caps the run's wall-clock time. When it expires the
	// run's context is cancelled (tools see it) and the run ends.
	MaxDuration time.Duration
}

// Prices is a price table, in any currency, per million tokens.
type Prices struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Cost returns the cost of u at prices p. Cached input tokens are priced
// at CacheRead and CacheWrite, the rest of the input at Input.
func (p Prices) Cost(u Usage) float64 {
	uncached := max(0, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens)
	return (float64(uncached)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// exceeded says which limit of b usage u has reached, or "".
func (b Budget) exceeded(u Usage) string {
	if b.MaxTokens > 0 && u.Total() >= b.MaxTokens {
		return fmt.Sprintf("its token budget (%d of %d tokens used)", u.Total(), b.MaxTokens)
	}
	if b.MaxCost > 0 {
		if c := b.Prices.Cost(u); c >= b.MaxCost {
			return fmt.Sprintf("its cost budget (%.4f of %.4f spent)", c, b.MaxCost)
		}
	}
	return ""
}

// PlannerRetry reports a transient planner failure that the runtime is
// about to retry after Delay.
type PlannerRetry struct {
	Turn    int
	Attempt int // the attempt that failed, from 1
	Delay   time.Duration
	Err     error
}

func (PlannerRetry) isEvent() {}
