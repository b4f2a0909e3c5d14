package mcptool_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestStdioLargeCallToStoppedServer calls a tool with a 128 KiB request
// on a server that is not reading its stdin (it is SIGSTOPped): the write
// fills the pipe and blocks, yet the call returns at its deadline (the
// context's, or Agent.ToolTimeout), and Close returns too, both within
// 200 ms of the deadline. A call that is not stuck still works after a
// stuck one: it starts a new server.
func TestStdioLargeCallToStoppedServer(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	big := input(t, map[string]string{"text": strings.Repeat("x", 128<<10)})
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, echo agentrt.Tool) error
	}{
		{name: "context deadline", call: func(ctx context.Context, echo agentrt.Tool) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := echo.Execute(ctx, []byte(big))
			return err
		}},
		{name: "Agent.ToolTimeout", call: func(ctx context.Context, echo agentrt.Tool) error {
			ag := &agentrt.Agent{
				Tools:       []agentrt.Tool{echo},
				Planner:     agenttest.Script(agenttest.CallTool("echo", big), agenttest.Reply("done")),
				Permission:  agentrt.AllowAll(),
				ToolTimeout: timeout,
			}
			for ev, err := range ag.Run(ctx, "s1", "echo") {
				if err != nil {
					return err
				}
				if r, ok := ev.(agentrt.ToolResult); ok {
					return errors.New(r.Message.Content)
				}
			}
			return errors.New("no tool result")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dial, cmds := testServerCommand(t)
			c, err := mcptool.Connect(t.Context(), dial, nil)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			tools, err := c.Tools(t.Context())
			require.NoError(t, err)
			echo := toolsByName(t, tools)["echo"]
			proc := cmds()[0].Process
			require.NoError(t, proc.Signal(syscall.SIGSTOP))
			t.Cleanup(func() { proc.Signal(syscall.SIGCONT) })

			deadline := time.Now().Add(timeout)
			err = tc.call(t.Context(), echo)
			late := time.Since(deadline)
			t.Logf("the call returned %v after the deadline: %v", late, err)
			require.Error(t, err)
			assert.Regexp(t, "deadline exceeded|timed out", err.Error())
			assert.Less(t, late, 200*time.Millisecond, "the call returns within 200 ms of its deadline")

			out, err := call(t, echo, `{"text":"a new server"}`)
			require.NoError(t, err)
			assert.Equal(t, "a new server", out)
			assert.Len(t, cmds(), 2, "the stuck server was stopped, the next call started another")
			assert.NotNil(t, cmds()[0].ProcessState, "the stuck server is reaped")

			// Close with a call stuck in its write and no deadline.
			require.NoError(t, cmds()[1].Process.Signal(syscall.SIGSTOP))
			errc := make(chan error, 1)
			go func() {
				_, err := echo.Execute(context.Background(), []byte(big))
				errc <- err
			}()
			require.Eventually(t, func() bool { return pipeFull(t, cmds()[1].Process.Pid) }, 10*time.Second, time.Millisecond,
				"the request filled the server's stdin")
			start := time.Now()
			require.NoError(t, c.Close())
			took := time.Since(start)
			callErr := <-errc
			t.Logf("Close took %v; the call returned %v after Close began: %v", took, time.Since(start), callErr)
			assert.Less(t, took, 200*time.Millisecond, "Close returns within 200 ms")
			require.ErrorIs(t, callErr, mcptool.ErrClosed)
			assert.NotNil(t, cmds()[1].ProcessState, "the server is reaped")
		})
	}
}

// pipeFull reports whether the stdin of process pid, a pipe, holds 64 KiB
// or more that it has not read.
func pipeFull(t *testing.T, pid int) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd/0")
	require.NoError(t, err)
	defer f.Close()
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
	require.NoError(t, err)
	return n >= 64<<10
}
