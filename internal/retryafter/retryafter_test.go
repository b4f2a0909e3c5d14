package retryafter_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentrt/agentrt/internal/retryafter"
)

func TestParse(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		header   http.Header
		min, max time.Duration
	}{
		{http.Header{}, 0, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-1"}}, 0, 0},
		{http.Header{"Retry-After": {"soon"}}, 0, 0},
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond, 250 * time.Millisecond},
		{http.Header{"Retry-After": {future}}, 80 * time.Second, 90 * time.Second},
		{http.Header{"Retry-After": {" 2 "}}, 2 * time.Second, 2 * time.Second},
		{http.Header{"Retry-After-Ms": {"1e300"}}, 0, 0},
	}
	for _, tt := range tests {
		got, _ := retryafter.Parse(tt.header)
		assert.GreaterOrEqual(t, got, tt.min, "%v", tt.header)
		assert.LessOrEqual(t, got, tt.max, "%v", tt.header)
	}
	_, ok := retryafter.Parse(http.Header{"Retry-After": {"0"}})
	assert.True(t, ok, "Retry-After: 0 is a usable value: retry now")
	_, ok = retryafter.Parse(nil)
	assert.False(t, ok)
}
