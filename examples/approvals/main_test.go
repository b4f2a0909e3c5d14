package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs main instead of the tests when the test binary is started
// as the example, so that each step below is a process of its own.
func TestMain(m *testing.M) {
	if os.Getenv("APPROVALS_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func process(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "APPROVALS_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	return string(out)
}

// Pending, then approve, then deny, each in a process of its own.
func TestApprovalsAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	out := process(t, dir, "start")
	assert.Contains(t, out, `waiting: call_1 write_note {"path":"a.txt","text":"first"}`)
	assert.Contains(t, out, `waiting: call_2 write_note {"path":"b.txt","text":"second"}`)
	assert.Contains(t, out, "stop: pending")
	assert.NoFileExists(t, filepath.Join(dir, "a.txt"), "nothing ran")

	out = process(t, dir, "approve")
	assert.Equal(t, "result: wrote a.txt\nwaiting: call_2 write_note {\"path\":\"b.txt\",\"text\":\"second\"}\nstop: pending \n", out)
	assert.FileExists(t, filepath.Join(dir, "a.txt"))

	out = process(t, dir, "deny", "not that file")
	assert.Equal(t, "result: permission denied: the user refused this call of \"write_note\": not that file\n"+
		"stop: complete Done: the notes you allowed are written.\n", out)
	assert.NoFileExists(t, filepath.Join(dir, "b.txt"))

	// Nothing waits any more.
	cmd := exec.Command(os.Args[0], "-dir", dir, "approve")
	cmd.Env = append(os.Environ(), "APPROVALS_AS_MAIN=1")
	msg, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(msg), "has no call waiting for a decision")
}
