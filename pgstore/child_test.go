//go:build linux

package pgstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file re-execute the test binary as a child process
// (a second "replica"), selected by these environment variables.
const (
	childEnv   = "AGENTRT_PGSTORE_CHILD" // the child's mode
	childURL   = "AGENTRT_PGSTORE_URL"
	childIDEnv = "AGENTRT_PGSTORE_ID"
	childLease = "AGENTRT_PGSTORE_LEASE" // Options.Lease, if set
)

// runChild runs the child process's work when the environment selects it,
// and exits; it returns false in a normal test run.
func runChild() bool {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return false
	}
	if err := child(mode, os.Getenv(childURL), os.Getenv(childIDEnv)); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	os.Exit(0)
	return true
}

// waitTool reports "tool" on stdout when it runs and blocks until stdin
// is closed: a tool that is running when the parent decides what happens.
func waitTool() agentrt.Tool {
	return agentrt.NewTool("wait", "Wait for the operator.", func(ctx context.Context, _ struct{}) (string, error) {
		fmt.Println("tool")
		_, err := io.Copy(io.Discard, os.Stdin)
		return "waited", err
	})
}

// child runs one agent run on the session: the scripted model calls wait,
// then answers. It prints "busy" if another runner holds the session.
func child(mode, url, id string) (err error) {
	ctx := context.Background()
	opts := &Options{}
	if l := os.Getenv(childLease); l != "" {
		if opts.Lease, err = time.ParseDuration(l); err != nil {
			return err
		}
	}
	store, err := Open(ctx, url, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	switch mode {
	case "hold":
		// Lock the session, say so, and append when told to: a runner
		// that the parent freezes in between.
		if _, err := store.Lock(ctx, id); err != nil {
			return err
		}
		fmt.Println("locked")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		err := store.Append(ctx, id, agentrt.NewUserMessage("thawed"))
		switch {
		case errors.Is(err, ErrLockLost):
			fmt.Println("lost")
		case err != nil:
			return err
		default:
			fmt.Println("appended")
		}
		return nil
	case "run":
		// Start when the parent says so, so that the racers start together.
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil || line != "go\n" {
			return fmt.Errorf("want go, read %q, %v", line, err)
		}
		ag := &agentrt.Agent{
			Planner: agenttest.Script(agenttest.CallTool("wait", `{}`), agenttest.Reply("done waiting")),
			Tools:   []agentrt.Tool{waitTool()}, Permission: agentrt.AllowAll(),
			Store: store,
		}
		for _, err := range ag.Run(ctx, id, "wait for me") {
			if errors.Is(err, agentrt.ErrSessionBusy) {
				fmt.Println("busy")
				return nil
			}
			if err != nil {
				return err
			}
		}
		fmt.Println("done")
		return nil
	}
	return fmt.Errorf("unknown mode %q", mode)
}

type childProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // stdout, line by line; closed at EOF
}

func startChild(t *testing.T, mode, url, id string, env ...string) *childProc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childURL+"="+url, childIDEnv+"="+id)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &childProc{cmd: cmd, stdin: stdin, lines: make(chan string)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return c
}

// next returns the child's next line of output, or fails after a minute.
func (c *childProc) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatalf("child exited: %v", c.cmd.Wait())
		}
		return l
	case <-time.After(time.Minute):
		t.Fatal("child said nothing for a minute")
		return ""
	}
}

func TestTwoProcessesRaceForOneSession(t *testing.T) {
	url := newStore(t, nil).pool.Config().ConnString()
	const id = "contended"
	a, b := startChild(t, "run", url, id), startChild(t, "run", url, id)
	for _, c := range []*childProc{a, b} {
		_, err := io.WriteString(c.stdin, "go\n")
		require.NoError(t, err)
	}
	// Each says "tool" (it holds the session and its tool is running) or
	// "busy"; the winner's tool waits until both have spoken.
	sa, sb := a.next(t), b.next(t)
	outcomes := []string{sa, sb}
	require.ElementsMatch(t, []string{"tool", "busy"}, outcomes, "exactly one runner wins")
	winner := a
	if sb == "tool" {
		winner = b
	}
	require.NoError(t, winner.stdin.Close())
	assert.Equal(t, "done", winner.next(t))
	require.NoError(t, a.cmd.Wait())
	require.NoError(t, b.cmd.Wait())

	s := newStoreAt(t, url)
	msgs, err := s.Load(t.Context(), id)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 4, "one run: user, tool call, result, answer")
	assert.Equal(t, "waited", msgs[2].Content)
}

func TestKilledRunnerIsResumedWithInterruptedResults(t *testing.T) {
	url := newStore(t, nil).pool.Config().ConnString()
	const id = "killed"
	c := startChild(t, "run", url, id)
	_, err := io.WriteString(c.stdin, "go\n")
	require.NoError(t, err)
	require.Equal(t, "tool", c.next(t))
	// Killed mid-tool: the tool call is stored (write-ahead), its result not.
	require.NoError(t, c.cmd.Process.Kill())
	c.cmd.Wait()

	s := newStoreAt(t, url)
	// The dead runner's connection closes and the server drops its lock;
	// the server notices within moments.
	unlock := lockSoon(t, s, id)
	unlock()

	planner := agenttest.Script(agenttest.Reply("resumed"))
	ag := &agentrt.Agent{Planner: planner, Tools: []agentrt.Tool{waitTool()}, Store: s}
	events, err := agenttest.Collect(ag.Run(t.Context(), id, "are you there?"))
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, "resumed", done.FinalText)

	msgs, err := s.Load(t.Context(), id)
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	require.Len(t, msgs, 5, "user, tool call, interrupted result, user, answer")
	assert.Equal(t, "wait for me", msgs[0].Content, "no message lost")
	require.True(t, msgs[1].HasToolUse())
	assert.Equal(t, agentrt.RoleTool, msgs[2].Role)
	assert.True(t, msgs[2].IsError)
	assert.True(t, strings.HasPrefix(msgs[2].Content, "interrupted"), msgs[2].Content)
	assert.Equal(t, "are you there?", msgs[3].Content)
	require.NoError(t, s.Verify(t.Context(), id))
}

// lockSoon locks the session, retrying while it is busy for up to a
// minute (a killed process's lock goes when the server sees its
// connection close).
func lockSoon(t *testing.T, s *Store, id string) func() {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		unlock, err := s.Lock(t.Context(), id)
		if err == nil {
			return unlock
		}
		if !errors.Is(err, agentrt.ErrSessionBusy) || time.Now().After(deadline) {
			t.Fatalf("Lock after the holder died: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newStoreAt(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(t.Context(), url, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A runner frozen (SIGSTOP) while it holds a session loses it within its
// lease: the server closes its idle lock connection, another store locks
// the session, and the frozen runner's append, once it thaws, is refused.
func TestLeaseFreesFrozenRunner(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	s := newStore(t, &Options{Lease: lease})
	url := s.pool.Config().ConnString()
	const id = "frozen"
	require.NoError(t, s.Append(t.Context(), id, agentrt.NewUserMessage("start")))
	c := startChild(t, "hold", url, id, childLease+"="+lease.String())
	require.Equal(t, "locked", c.next(t))
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGSTOP))
	frozen := time.Now()
	_, err := s.Lock(t.Context(), id)
	require.ErrorIs(t, err, agentrt.ErrSessionBusy, "held right after the freeze")
	unlock := lockSoon(t, s, id)
	freed := time.Since(frozen)
	t.Logf("a runner frozen with a lease of %v lost the session after %v", lease, freed)
	assert.Less(t, freed, 3*lease, "freed within the lease (and the server's check)")
	require.NoError(t, s.Append(t.Context(), id, agentrt.NewUserMessage("new holder")))

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGCONT))
	_, err = io.WriteString(c.stdin, "append\n")
	require.NoError(t, err)
	assert.Equal(t, "lost", c.next(t), "the thawed runner's append is refused")
	unlock()
	msgs, err := s.Load(t.Context(), id)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "new holder", msgs[1].Content)
}
