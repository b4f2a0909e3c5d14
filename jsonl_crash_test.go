//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package agentrt_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonl"
)

// The tests in this file re-execute the test binary as a child process,
// selected by these environment variables, running TestJSONLChild.
const (
	childModeEnv = "AGENTRT_JSONL_CHILD"
	childDirEnv  = "AGENTRT_JSONL_CHILD_DIR"
	childIDEnv   = "AGENTRT_JSONL_CHILD_ID"
)

// crashMessage is message i of the session the crash child writes: a
// user question, an assistant tool call, its result (of 128 KB every tenth
// message, so that a kill can land in the middle of its write), an answer.
func crashMessage(i int) agentrt.Message {
	switch i % 4 {
	case 0:
		return agentrt.NewUserMessage(fmt.Sprintf("question %d", i))
	case 1:
		return agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprintf("calling %d", i)),
			agentrt.ToolUseBlock(fmt.Sprintf("call_%d", i), "work", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))))
	case 2:
		content := fmt.Sprintf("result %d", i)
		if crashBig(i) {
			content += strings.Repeat(fmt.Sprintf(" %d", i), 128<<10/(len(strconv.Itoa(i))+1))
		}
		return agentrt.NewToolMessage(fmt.Sprintf("call_%d", i-1), content, i%8 == 6)
	default:
		return agentrt.NewAssistantMessage(agentrt.TextBlock(fmt.Sprintf("answer %d", i)))
	}
}

func crashBig(i int) bool { return i%10 == 2 }

// TestJSONLChild is the child process of the tests below; it does nothing
// in a normal run.
func TestJSONLChild(t *testing.T) {
	mode := os.Getenv(childModeEnv)
	if mode == "" {
		t.Skip("only run as a child process")
	}
	if err := runChild(mode, os.Getenv(childDirEnv), os.Getenv(childIDEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
}

func runChild(mode, dir, id string) error {
	s, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	unlock, err := s.Lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	switch mode {
	case "crash":
		// Append the session's next messages until killed, reporting each
		// one before ("w i") and after Append.
		msgs, err := s.Load(ctx, id)
		if err != nil {
			return err
		}
		deadline := time.Now().Add(time.Minute) // in case the parent is gone
		for i := len(msgs); time.Now().Before(deadline); i++ {
			m := crashMessage(i)
			if _, err := fmt.Fprintf(os.Stdout, "w %d\n", i); err != nil {
				return err
			}
			if err := s.Append(ctx, id, m); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(os.Stdout, "%d\n", i); err != nil {
				return err
			}
		}
		return errors.New("never killed")
	case "lock":
		// Hold the lock until stdin is closed.
		fmt.Fprintln(os.Stdout, "locked")
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func childCommand(t *testing.T, mode, dir, id string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestJSONLChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childModeEnv+"="+mode, childDirEnv+"="+dir, childIDEnv+"="+id)
	return cmd
}

// TestJSONLCrashSIGKILL kills a child process that appends to a session
// with SIGKILL at random moments, many times. After each kill the session
// loads without error, holds every message whose Append returned, in
// order, and at most the one in flight besides; the next child resumes the
// session (removing a partial line if the kill left one); and a run of an
// Agent on the session, cut after a tool call, repairs the call's missing
// result.
func TestJSONLCrashSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "sessions")
	const id = "crash"
	kills := 16
	if raceEnabled {
		kills = 6 // every child is slower
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	w := &warnings{}
	s, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{OnWarning: w.add})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()

	reported := 0 // messages whose Append returned in a child
	tails, inFlight := 0, 0
	for kill := range kills {
		cmd := childCommand(t, "crash", dir, id)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		type report struct {
			n       int
			writing bool // "w n": about to append message n
		}
		lines := make(chan report, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				w, writing := strings.CutPrefix(sc.Text(), "w ")
				if n, err := strconv.Atoi(w); err == nil {
					lines <- report{n, writing}
				}
			}
		}()

		// Let it append a random number of messages, then kill it at a
		// random moment: half the time soon after it starts to write a
		// large message (so the kill may cut the line), otherwise at
		// once.
		want := 1 + rng.IntN(15)
		big := rng.IntN(2) == 0
		got := 0
		timeout := time.After(20 * time.Second)
	wait:
		for {
			select {
			case r, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("the child died by itself: %s", stderr.String())
				}
				if r.writing {
					if got >= want && (!big || crashBig(r.n)) {
						break wait
					}
					continue
				}
				require.Equal(t, reported, r.n, "the child appends message %d next", reported)
				reported++
				got++
			case <-timeout:
				t.Fatal("the child is too slow")
			}
		}
		if big {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		for r := range lines { // what it reported before dying
			if !r.writing {
				require.Equal(t, reported, r.n)
				reported++
			}
		}
		werr := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, werr, &ee, "stderr: %s", stderr.String())
		require.False(t, ee.Exited(), "the child stopped by itself (stderr: %s)", stderr.String())

		// The session holds every reported message in order, and at most
		// the one in flight besides.
		msgs, err := s.Load(ctx, id)
		require.NoError(t, err, "after kill %d", kill)
		require.GreaterOrEqual(t, len(msgs), reported, "after kill %d: a message whose Append returned is lost", kill)
		require.LessOrEqual(t, len(msgs), reported+1, "after kill %d", kill)
		if len(msgs) == reported+1 {
			inFlight++
		}
		for i, m := range msgs {
			require.Equal(t, crashMessage(i), m, "message %d after kill %d", i, kill)
		}
		reported = len(msgs) // the next child goes on from there

		// What Load reported: at most a damaged tail.
		for _, warning := range w.take() {
			var tail *jsonl.LineError
			require.ErrorAs(t, warning, &tail)
			require.True(t, tail.Tail, "only a damaged tail: %v", tail)
			require.False(t, tail.Repaired, "reading never repairs")
			tails++
		}
	}
	t.Logf("%d kills: %d left a partial last line, %d landed between a write and its report", kills, tails, inFlight)

	// Every seq from 1, without gaps or repeats, despite the repairs.
	var seq int64
	for r, err := range s.Lines(ctx, id) {
		require.NoError(t, err)
		require.Equal(t, seq, r.Seq)
		seq++
	}
	require.Equal(t, int64(reported+1), seq)

	// A resumed Run repairs a dangling tool_use left by a crash: cut the
	// crashed session right after its last tool call, as a kill between
	// the call and its result leaves it, and run an Agent on it.
	require.Greater(t, reported, 2)
	last := reported - 1
	for last%4 != 1 {
		last--
	}
	require.NoError(t, s.Fork(ctx, id, "resumed", last+1))
	script := agenttest.Script(agenttest.Reply("resumed"))
	ag := &agentrt.Agent{Planner: script, Store: s, Permission: agentrt.AllowAll()}
	_, err = agenttest.Collect(ag.Run(ctx, "resumed", ""))
	require.NoError(t, err)
	msgs, err := s.Load(ctx, "resumed")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, last+3)
	repaired := msgs[last+1]
	assert.Equal(t, agentrt.RoleTool, repaired.Role)
	assert.Equal(t, fmt.Sprintf("call_%d", last), repaired.ToolUseID)
	assert.True(t, repaired.IsError)
	assert.Contains(t, repaired.Content, "interrupted")
	assert.Equal(t, "resumed", msgs[last+2].Text())
	require.Len(t, script.Requests(), 1)
	agenttest.AssertInvariants(t, script.Requests()[0].Messages)
}

// TestJSONLLockAcrossProcesses: a session locked by another process is
// busy here until that process lets it go.
func TestJSONLLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := filepath.Join(t.TempDir(), "sessions")
	s, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	cmd := childCommand(t, "lock", dir, "held")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := new(syncBuffer) // read while the child may still write to it
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "locked\n", line)

	ctx := context.Background()
	_, err = s.Lock(ctx, "held")
	require.ErrorIs(t, err, agentrt.ErrSessionBusy)
	assert.Contains(t, err.Error(), "another process (pid "+strconv.Itoa(cmd.Process.Pid)+")")
	pid, err := os.ReadFile(filepath.Join(dir, "held.lock"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(cmd.Process.Pid)+"\n", string(pid), "the lock file names its holder")
	unlock, err := s.Lock(ctx, "free")
	require.NoError(t, err)
	unlock()

	require.NoError(t, in.Close()) // the child unlocks and exits
	_, err = io.Copy(io.Discard, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	unlock, err = s.Lock(ctx, "held")
	require.NoError(t, err)
	unlock()
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
