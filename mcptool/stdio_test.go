package mcptool_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/mcptool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prompt is the generous bound the tests below put on what must take at
// most 200 ms (on an idle machine it takes a few ms, or 100 to 150 ms
// when a server must be signalled): a loaded CI machine must not make
// them flaky. The times measured are logged.
const prompt = time.Second

// TestStdioCloseDuringCall closes a Client while its stdio server is stuck
// in a call that ignores cancellation and the end of its stdin: Close
// returns nil (a shutdown it caused is not an error) within a fraction of
// a second, the call fails at once with ErrClosed, and the server process
// is reaped. "stuck" exits on SIGTERM; "stubborn" ignores it and is killed.
func TestStdioCloseDuringCall(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"stuck", "stubborn"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			dial, cmds := testServerCommand(t)
			c, err := mcptool.Connect(t.Context(), dial, nil)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			tools, err := c.Tools(t.Context())
			require.NoError(t, err)
			pid := cmds()[0].Process.Pid
			marker := filepath.Join(t.TempDir(), "started")
			type result struct {
				err         error
				at          time.Time
				serverAlive bool // when the call returned
			}
			done := make(chan result, 1)
			go func() {
				_, err := call(t, toolsByName(t, tools)[tool], input(t, map[string]string{"path": marker}))
				done <- result{err, time.Now(), !processGone(pid)}
			}()
			require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, 5*time.Millisecond,
				"the server received the call")

			start := time.Now()
			err = c.Close()
			closeTook := time.Since(start)
			res := <-done
			callTook := res.at.Sub(start)
			t.Logf("Close took %v (error %v); the call returned %v after Close began: %v", closeTook, err, callTook, res.err)

			require.NoError(t, err, "a shutdown Close caused is not an error")
			assert.Less(t, closeTook, prompt, "Close returns promptly")
			require.ErrorIs(t, res.err, mcptool.ErrClosed)
			assert.Less(t, callTook, prompt, "the call in progress returns promptly")
			if tool == "stubborn" && runtime.GOOS == "linux" {
				// The server ignores its stdin and SIGTERM: stopping it
				// takes 150 ms, which the call must not wait for.
				assert.True(t, res.serverAlive, "the call returned without waiting for the server to be stopped")
			}
			cmd := cmds()[0]
			require.NotNil(t, cmd.ProcessState, "Close returns once the server is reaped")
			assert.False(t, cmd.ProcessState.Success(), "the server was stopped, not left to finish")
			if runtime.GOOS == "linux" {
				assert.True(t, processGone(cmd.Process.Pid))
			}
		})
	}
}

// TestStdioCloseDuringReconnect closes a Client while a call waits for a
// new server process (the first one crashed) that never answers: the call
// fails with ErrClosed, and Close returns nil once that process is gone.
func TestStdioCloseDuringReconnect(t *testing.T) {
	t.Parallel()
	exe, serve := testServer(t, "serve")
	_, mute := testServer(t, "mute")
	muteStarted := make(chan struct{})
	var cmds []*exec.Cmd // the Client dials under its lock, one at a time
	dial := mcptool.Command(func() *exec.Cmd {
		if len(cmds) == 0 {
			cmds = append(cmds, exec.Command(exe, serve...))
		} else {
			cmd := exec.Command(exe, mute...)
			cmd.Stderr = writerFunc(func(p []byte) (int, error) {
				close(muteStarted) // it writes one line, once
				return len(p), nil
			})
			cmds = append(cmds, cmd)
		}
		return cmds[len(cmds)-1]
	})
	c, err := mcptool.Connect(t.Context(), dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)
	_, err = call(t, byName["crash"], `{}`)
	require.ErrorIs(t, err, mcptool.ErrDisconnected)

	errc := make(chan error, 1)
	go func() {
		_, err := call(t, byName["echo"], `{"text":"x"}`)
		errc <- err
	}()
	<-muteStarted
	start := time.Now()
	err = c.Close()
	took := time.Since(start)
	callErr := <-errc
	t.Logf("Close took %v (error %v); the call: %v", took, err, callErr)
	require.NoError(t, err)
	assert.Less(t, took, prompt)
	require.ErrorIs(t, callErr, mcptool.ErrClosed)
	require.Len(t, cmds, 2)
	assert.NotNil(t, cmds[1].ProcessState, "Close returns once the new server is reaped")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestStdioCallDeadline calls a tool that never answers with a deadline:
// the call returns as soon as the deadline passes, and the connection stays
// up for the next call.
func TestStdioCallDeadline(t *testing.T) {
	t.Parallel()
	dial, cmds := testServerCommand(t)
	c, err := mcptool.Connect(t.Context(), dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tools, err := c.Tools(t.Context())
	require.NoError(t, err)
	byName := toolsByName(t, tools)

	for _, how := range []string{"expired", "cancelled"} {
		deadline := time.Now().Add(100 * time.Millisecond)
		var ctx context.Context
		var cancel context.CancelFunc
		if how == "expired" {
			ctx, cancel = context.WithDeadline(t.Context(), deadline)
		} else {
			ctx, cancel = context.WithCancel(t.Context())
			time.AfterFunc(time.Until(deadline), cancel)
		}
		marker := filepath.Join(t.TempDir(), "started")
		_, err = byName["stuck"].Execute(ctx, []byte(input(t, map[string]string{"path": marker})))
		late := time.Since(deadline)
		cancel()
		t.Logf("%s call returned %v after the deadline: %v", how, late, err)
		if how == "expired" {
			require.ErrorIs(t, err, context.DeadlineExceeded)
		} else {
			require.ErrorIs(t, err, context.Canceled)
		}
		assert.NotErrorIs(t, err, mcptool.ErrDisconnected)
		assert.Less(t, late, prompt, "the call returns promptly")
	}

	out, err := call(t, byName["echo"], `{"text":"still here"}`)
	require.NoError(t, err)
	assert.Equal(t, "still here", out)
	assert.Len(t, cmds(), 1, "a cancelled call does not restart the server")
}

// TestStdioConnectDeadline connects, with a deadline, to a server that
// never answers: Connect returns promptly after the deadline, with what
// the server said on stderr, which is also copied to the Cmd's Stderr; the
// server is reaped.
func TestStdioConnectDeadline(t *testing.T) {
	t.Parallel()
	exe, args := testServer(t, "mute")
	var stderr bytes.Buffer // written by the Client until Connect returns
	var cmd *exec.Cmd
	dial := mcptool.Command(func() *exec.Cmd {
		cmd = exec.Command(exe, args...)
		cmd.Stderr = &stderr
		return cmd
	})
	deadline := time.Now().Add(500 * time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	_, err := mcptool.Connect(ctx, dial, nil)
	late := time.Since(deadline)
	t.Logf("Connect returned %v after the deadline: %v", late, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, late, prompt, "Connect returns promptly")
	assert.ErrorContains(t, err, "the server's stderr ends with:\nmute test server: reading stdin, answering nothing")
	assert.NotContains(t, err.Error(), "signal", "mcptool stopped the server: its exit status is no news")
	assert.Equal(t, "mute test server: reading stdin, answering nothing\n", stderr.String(), "stderr is copied to Cmd.Stderr")
	require.NotNil(t, cmd.ProcessState, "the server is reaped")
}

// TestStdioEnvironment checks that a stdio server gets only DefaultEnv
// unless the Cmd's Env says otherwise: a secret in the host's environment
// does not reach it.
func TestStdioEnvironment(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("AGENTRT_SECRET_TEST", "xyz")
	exe, args := testServer(t, "serve")
	tests := []struct {
		name string
		env  []string // the Cmd's Env
		want string   // AGENTRT_SECRET_TEST as the server sees it
	}{
		{name: "default", env: nil, want: "(unset)"},
		{name: "DefaultEnv plus the secret", env: append(mcptool.DefaultEnv(), "AGENTRT_SECRET_TEST=given"), want: "given"},
		{name: "whole environment", env: os.Environ(), want: "xyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := mcptool.Connect(t.Context(), mcptool.Command(func() *exec.Cmd {
				cmd := exec.Command(exe, args...)
				cmd.Env = tt.env
				return cmd
			}), nil)
			require.NoError(t, err)
			defer c.Close()
			tools, err := c.Tools(t.Context())
			require.NoError(t, err)
			env := toolsByName(t, tools)["env"]
			out, err := call(t, env, `{"name":"AGENTRT_SECRET_TEST"}`)
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
			out, err = call(t, env, `{"name":"PATH"}`)
			require.NoError(t, err)
			assert.Equal(t, os.Getenv("PATH"), out, "PATH is passed")
			require.NoError(t, c.Close())
		})
	}
}

func TestDefaultEnv(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("AGENTRT_SECRET_TEST", "xyz")
	t.Setenv("LC_AGENTRT_TEST", "C")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TERM", "() { :; }") // an exported shell function
	env := mcptool.DefaultEnv()
	assert.Contains(t, env, "PATH="+os.Getenv("PATH"))
	if runtime.GOOS == "windows" {
		return
	}
	assert.Contains(t, env, "LC_AGENTRT_TEST=C")
	assert.Contains(t, env, "LANG=C.UTF-8")
	assert.False(t, slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "AGENTRT_SECRET_TEST=") || strings.HasPrefix(kv, "TERM=")
	}), "neither a secret nor a function: %q", env)
}
