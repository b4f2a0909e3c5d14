package agentrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// The tests in this file run a session's steps in separate processes: the
// test binary re-executed, running TestApprovalChild in the mode named by
// these variables.
const (
	approvalModeEnv = "AGENTRT_APPROVAL_CHILD"
	approvalDirEnv  = "AGENTRT_APPROVAL_DIR"
	approvalIDEnv   = "AGENTRT_APPROVAL_CALL"
)

// crashCode is the exit status of a child that "crashed" on purpose.
const crashCode = 7

// fileNoteTool is a write tool that appends the path of each call to
// dir/ran.log (synced), so that runs can be counted across processes; it
// exits the process right after when crash is set.
func fileNoteTool(dir string, crash bool) agentrt.Tool {
	return agentrt.NewTool("write_note", "Write a note.", func(_ context.Context, in noteIn) (string, error) {
		f, err := os.OpenFile(filepath.Join(dir, "ran.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, in.Path); err != nil {
			return "", err
		}
		if err := f.Sync(); err != nil {
			return "", err
		}
		if crash {
			os.Exit(crashCode)
		}
		return "wrote " + in.Path, nil
	})
}

func ranLog(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ran.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// crashAfterDecision is a JSONL store that exits the process when it
// syncs a person's decision: after the decision is durable, before the
// tool runs.
type crashAfterDecision struct {
	*agentrt.JSONLStore
	decided bool
}

func (s *crashAfterDecision) AppendRecord(ctx context.Context, id string, rec agentrt.Record) error {
	if err := s.JSONLStore.AppendRecord(ctx, id, rec); err != nil {
		return err
	}
	s.decided = s.decided || (rec.Kind == agentrt.RecordPermission && bytes.Contains(rec.Data, []byte(`"source":"user"`)))
	return nil
}

func (s *crashAfterDecision) Sync(ctx context.Context, id string) error {
	if err := s.JSONLStore.Sync(ctx, id); err != nil {
		return err
	}
	if s.decided {
		os.Exit(crashCode)
	}
	return nil
}

// TestApprovalChild is the child process of the tests below; it does
// nothing in a normal run.
func TestApprovalChild(t *testing.T) {
	mode := os.Getenv(approvalModeEnv)
	if mode == "" {
		t.Skip("only run as a child process")
	}
	if err := approvalChild(mode, os.Getenv(approvalDirEnv), os.Getenv(approvalIDEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
}

func approvalChild(mode, dir, callID string) error {
	js, err := agentrt.NewJSONLStore(filepath.Join(dir, "sessions"), nil)
	if err != nil {
		return err
	}
	defer js.Close()
	ctx := context.Background()
	ag := &agentrt.Agent{Tools: []agentrt.Tool{fileNoteTool(dir, mode == "crash-in-tool")}, Permission: askLater, Store: js,
		Planner: agenttest.Script(agenttest.CallTool("write_note", `{"path":"a.txt"}`))}
	var seq func(func(agentrt.Event, error) bool)
	switch mode {
	case "start":
		seq = ag.Run(ctx, "s", "write a.txt")
	case "crash-before-run":
		ag.Store = &crashAfterDecision{JSONLStore: js}
		seq = ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: callID, Allow: true})
	case "crash-in-tool":
		seq = ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: callID, Allow: true})
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	evs, err := agenttest.Collect(seq)
	if err != nil {
		return err
	}
	done, _ := agenttest.Done(evs)
	if done.Reason != agentrt.StopPending {
		return fmt.Errorf("stopped with %s: %s", done.Reason, done.Detail)
	}
	return json.NewEncoder(os.Stdout).Encode(pendingIDs(done))
}

// runApprovalChild runs a child and returns its stdout and exit code.
func runApprovalChild(t *testing.T, mode, dir, callID string) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestApprovalChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), approvalModeEnv+"="+mode, approvalDirEnv+"="+dir, approvalIDEnv+"="+callID)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() != crashCode {
			t.Fatalf("child %s: %v\n%s%s", mode, err, stdout.String(), stderr.String())
		}
		return stdout.String(), exit.ExitCode()
	}
	require.NoError(t, err, stderr.String())
	return stdout.String(), 0
}

// startPending runs the first step in a child process: a run that stops
// with one call pending. It returns the call's id.
func startPending(t *testing.T, dir string) string {
	t.Helper()
	out, code := runApprovalChild(t, "start", dir, "")
	require.Zero(t, code)
	var ids []string
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(lastLine(out))), &ids), out)
	require.Len(t, ids, 1)
	return ids[0]
}

// lastLine returns the JSON line a child printed (the test binary prints
// its own lines after it).
func lastLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[") {
			return l
		}
	}
	return out
}

// TestApprovalAcrossProcesses: a run stops pending in one process; this
// one, after it exited, approves the call, which runs here, once.
func TestApprovalAcrossProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	id := startPending(t, dir)
	assert.Empty(t, ranLog(t, dir), "nothing ran in the first process")

	js, err := agentrt.NewJSONLStore(filepath.Join(dir, "sessions"), nil)
	require.NoError(t, err)
	defer js.Close()
	ctx := context.Background()
	checkOpen(t, js, "s", id)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{fileNoteTool(dir, false)}, Permission: askLater, Store: js,
		Planner: agenttest.Script(agenttest.Reply("done"))}
	_, done := collect(t, ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: id, Allow: true}))
	assert.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	assert.Equal(t, []string{"a.txt"}, ranLog(t, dir))
	msgs := checkOpen(t, js, "s")
	require.Len(t, msgs, 4)
	assert.Equal(t, agentrt.NewToolMessage(id, "wrote a.txt", false), msgs[2])
	require.NoError(t, js.Verify(ctx, "s"))
}

// TestApprovalCrashBetweenDecisionAndRun: the process that applies a
// decision dies after recording it, before or while the tool runs; the
// next run answers the call "interrupted" and never runs it again.
func TestApprovalCrashBetweenDecisionAndRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tt := range []struct {
		mode string
		ran  []string
	}{
		{"crash-before-run", nil},
		{"crash-in-tool", []string{"a.txt"}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			id := startPending(t, dir)
			_, code := runApprovalChild(t, tt.mode, dir, id)
			require.Equal(t, crashCode, code, "the child crashed")
			assert.Equal(t, tt.ran, ranLog(t, dir))

			js, err := agentrt.NewJSONLStore(filepath.Join(dir, "sessions"), nil)
			require.NoError(t, err)
			defer js.Close()
			ctx := context.Background()
			checkOpen(t, js, "s", id)
			perm := records(t, js, "s", agentrt.RecordPermission)
			require.Len(t, perm, 1, "the decision was recorded before the tool ran")
			assert.Equal(t, "user", perm[0]["source"])

			// The decision stands: the call is not pending any more.
			ag := &agentrt.Agent{Tools: []agentrt.Tool{fileNoteTool(dir, false)}, Permission: askLater, Store: js,
				Planner: agenttest.Script(agenttest.Reply("done"))}
			_, err = agenttest.Collect(ag.Resume(ctx, "s", agentrt.Decision{ToolUseID: id, Allow: true}))
			require.ErrorIs(t, err, agentrt.ErrNotPending)

			evs, done := collect(t, ag.Run(ctx, "s", ""))
			assert.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
			assert.Empty(t, agenttest.Filter[agentrt.ToolCall](evs), "nothing runs")
			assert.Equal(t, tt.ran, ranLog(t, dir), "at most once")
			msgs := checkOpen(t, js, "s")
			require.Len(t, msgs, 4)
			assert.True(t, msgs[2].IsError)
			assert.Contains(t, msgs[2].Content, "interrupted")
		})
	}
}
