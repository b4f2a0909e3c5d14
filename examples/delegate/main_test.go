package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	t.Setenv("AGENTRT_PROVIDER", "scripted")
	var out strings.Builder
	require.NoError(t, run(context.Background(), &out, "", ""))
	s := out.String()
	assert.Contains(t, s, "[units] -> to_fahrenheit {\"celsius\":29.5}")
	assert.Contains(t, s, "[units] <- 85.1")
	assert.Contains(t, s, "answer: The sum of today's temperatures, 29.5°C, is 85.1°F.")
	assert.Contains(t, s, "stored session trip~units~call_1: 4 messages")
	assert.Contains(t, s, "stored session trip: 4 messages")
}
