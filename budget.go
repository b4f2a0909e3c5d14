package agentrt

import (
	"fmt"
	"time"
)

// Budget limits what one run may spend. Its zero value sets no limit. When
// a limit is reached the run ends with StopBudgetExceeded; for the token
// and cost limits the runtime first makes one last planner call asking for
// a final answer without tools (see Agent.NoFinalAnswer).
type Budget struct {
	// MaxTokens caps input plus output tokens over the run's planner calls.
	MaxTokens int
	// MaxCost caps the run's cost, computed with Prices; without Prices it
	// is refused ([ErrInvalidAgent]), since no cost could be counted.
	MaxCost float64
	// Prices gives the cost per million tokens; needed for MaxCost.
	Prices Prices
	// MaxDuration caps the run's wall-clock time, counted from when the
	// session is locked and loaded. When it expires the run's context is
	// cancelled (tools see it) and the run ends.
	MaxDuration time.Duration
}

// Prices is a price table, in any currency, per million tokens.
type Prices struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Cost returns the cost of u at prices p. Cached input tokens are priced
// at CacheRead and CacheWrite, the rest of the input at Input; output
// tokens, reasoning tokens included (vendors bill them as output), at
// Output.
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
