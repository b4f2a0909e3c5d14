package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// chanWriter sends what is written to it on a channel.
type chanWriter chan string

func (w chanWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// waitFor reads from out until what was read contains want.
func waitFor(t *testing.T, out chanWriter, seen *strings.Builder, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for !strings.Contains(seen.String(), want) {
		select {
		case s := <-out:
			seen.WriteString(s)
		case <-timeout:
			t.Fatalf("tail did not print %q; it printed:\n%s", want, seen.String())
		}
	}
}

type waitIn struct {
	For string `json:"for" validate:"required"`
}

// TestTailFollowsARun follows a session while a run writes it: the run in
// progress, its tool call, then its end.
func TestTailFollowsARun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	started, release := make(chan struct{}), make(chan struct{})
	wait := agentrt.NewTool("wait", "Waits.", func(ctx context.Context, in waitIn) (string, error) {
		close(started)
		<-release
		return "waited for " + in.For, nil
	}, agentrt.ReadOnly())
	ag := &agentrt.Agent{Tools: []agentrt.Tool{wait}, Store: store, Planner: agenttest.Script(
		agenttest.CallTool("wait", `{"for":"the build"}`),
		agenttest.Reply("The build is done."),
	)}
	done := make(chan error, 1)
	go func() {
		_, err := agenttest.Collect(ag.Run(context.Background(), "live", "Wait for the build."))
		done <- err
	}()
	<-started

	ctx, cancel := context.WithCancel(context.Background())
	out := make(chanWriter, 100)
	tailed := make(chan error, 1)
	go func() {
		tailed <- tail(ctx, dir+"/live", true, 2*time.Millisecond, textOptions{width: 200}, out)
	}()
	var seen strings.Builder
	waitFor(t, out, &seen, "RUNNING: run 1 is in progress")
	waitFor(t, out, &seen, "wait call_1 pending")

	close(release)
	require.NoError(t, <-done)
	waitFor(t, out, &seen, "« The build is done.")
	waitFor(t, out, &seen, "■ end: completed")
	waitFor(t, out, &seen, "COMPLETED: run 1 completed")
	cancel()
	require.NoError(t, <-tailed)
	require.Equal(t, 1, strings.Count(seen.String(), "› user: Wait for the build."), "lines already shown are not printed again:\n%s", seen.String())
	t.Logf("tail printed:\n%s", seen.String())
}
