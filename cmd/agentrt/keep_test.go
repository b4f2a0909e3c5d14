package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestKeepSessions copies the recorded sessions to $AGENTRT_KEEP_SESSIONS,
// for looking at them by hand.
func TestKeepSessions(t *testing.T) {
	dst := os.Getenv("AGENTRT_KEEP_SESSIONS")
	if dst == "" {
		t.Skip("AGENTRT_KEEP_SESSIONS is not set")
	}
	dir, _ := recordAll(t)
	if out, err := exec.Command("cp", "-r", dir+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}
