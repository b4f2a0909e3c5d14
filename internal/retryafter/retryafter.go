// Package retryafter reads the wait an HTTP error response asks for, for
// the provider adapters of this module.
package retryafter

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads how long an HTTP error response asks the client to wait:
// Retry-After-Ms (milliseconds, as OpenAI and Anthropic send it) or
// Retry-After (seconds, or an HTTP date). ok is false when neither header
// holds a usable value. The provider adapters use it to fill
// agentrt.ProviderError.RetryAfter.
func Parse(h http.Header) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < math.MaxInt64/float64(time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s >= 0 && s < math.MaxInt64/float64(time.Second) {
			return time.Duration(s * float64(time.Second)), true
		}
		return 0, false
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}
