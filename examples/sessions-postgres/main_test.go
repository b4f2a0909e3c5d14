package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/pgstore/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestResumeAcrossReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var out strings.Builder
	require.NoError(t, run(context.Background(), url, "trip-42", &out))
	s := out.String()
	assert.Contains(t, s, `(run 1) I see 1 messages; the first is "Plan a weekend in Lisbon."`)
	assert.Contains(t, s, `(run 2) I see 3 messages; the first is "Plan a weekend in Lisbon."`, "the second replica resumed the session")
	assert.Contains(t, s, "second replica while the first holds the session: ")
	assert.Contains(t, s, "session is busy with another run")
	assert.Contains(t, s, `  trip-42-alt  2  "Plan a weekend in Lisbon."  trip-42`)
	assert.Contains(t, s, `  trip-42      4  "Plan a weekend in Lisbon."`)
}
