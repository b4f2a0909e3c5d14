package mcptool_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverArg, followed by a mode, makes the test binary run as a stdio MCP
// server (see runTestServer) instead of running tests. It is an argument,
// not an environment variable, so that the server runs in the environment
// mcptool gives it.
const serverArg = "-mcptool.testserver="

func TestMain(m *testing.M) {
	for _, arg := range os.Args[1:] {
		if mode, ok := strings.CutPrefix(arg, serverArg); ok {
			if err := runTestServer(mode); err != nil {
				fmt.Fprintln(os.Stderr, "test server:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	goleak.VerifyTestMain(m)
}

// runTestServer runs the test server in one of two modes:
//   - "serve" serves, over stdio, tools that let a test observe and break
//     the server process: pid, env, crash, spawn (a grandchild process),
//     stuck, stubborn and echo.
//   - "mute" says so on stderr, then reads its stdin and never answers,
//     not even after the end of its input.
func runTestServer(mode string) error {
	switch mode {
	case "serve":
	case "mute":
		fmt.Fprintln(os.Stderr, "mute test server: reading stdin, answering nothing")
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	type empty struct{}
	type echoIn struct {
		Text string `json:"text"`
	}
	type pathIn struct {
		Path string `json:"path"`
	}
	tools := []agentrt.Tool{
		agentrt.NewTool("pid", "Return the server's process id.",
			func(context.Context, empty) (string, error) { return strconv.Itoa(os.Getpid()), nil },
			agentrt.ReadOnly()),
		agentrt.NewTool("env", "Return the value of an environment variable, or (unset).",
			func(_ context.Context, in struct {
				Name string `json:"name"`
			}) (string, error) {
				if v, ok := os.LookupEnv(in.Name); ok {
					return v, nil
				}
				return "(unset)", nil
			},
			agentrt.ReadOnly()),
		agentrt.NewTool("crash", "Say why on stderr and exit the server process at once.",
			func(context.Context, empty) (string, error) {
				fmt.Fprintln(os.Stderr, "test server: crashing on purpose")
				os.Exit(3)
				return "", nil
			}),
		agentrt.NewTool("spawn", "Start a long-lived child process and return its pid.",
			func(context.Context, empty) (string, error) {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					return "", err
				}
				return strconv.Itoa(cmd.Process.Pid), nil
			}),
		agentrt.NewTool("stuck", "Create the file at path, then block forever, ignoring cancellation.",
			func(_ context.Context, in pathIn) (string, error) {
				if err := os.WriteFile(in.Path, nil, 0o644); err != nil {
					return "", err
				}
				select {}
			}),
		agentrt.NewTool("stubborn", "Ignore SIGTERM, create the file at path, then block forever.",
			func(_ context.Context, in pathIn) (string, error) {
				signal.Ignore(syscall.SIGTERM)
				if err := os.WriteFile(in.Path, nil, 0o644); err != nil {
					return "", err
				}
				select {}
			}),
		agentrt.NewTool("echo", "Echo the text.",
			func(_ context.Context, in echoIn) (string, error) { return in.Text, nil },
			agentrt.ReadOnly()),
	}
	srv := mcptool.NewServer(tools, &mcptool.ServerOptions{Name: "test-server", Permission: agentrt.AllowAll()})
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

// testServer returns the command line that runs the test binary as a
// stdio MCP server in mode (see runTestServer).
func testServer(t *testing.T, mode string) (string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, []string{"-test.run=^$", serverArg + mode}
}

// testServerCommand returns a Dialer that runs the test binary as a stdio
// MCP server, with the environment and stderr handling mcptool gives it
// by default (what it says on stderr is in the errors), and a function
// returning the commands it started so far.
func testServerCommand(t *testing.T) (mcptool.Dialer, func() []*exec.Cmd) {
	t.Helper()
	exe, args := testServer(t, "serve")
	var mu sync.Mutex
	var cmds []*exec.Cmd
	dial := mcptool.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, args...)
		mu.Lock()
		cmds = append(cmds, cmd)
		mu.Unlock()
		return cmd
	})
	return dial, func() []*exec.Cmd {
		mu.Lock()
		defer mu.Unlock()
		return append([]*exec.Cmd(nil), cmds...)
	}
}

// processGone reports whether the process pid no longer runs: it does not
// exist, or it is a zombie waiting for a parent that does not reap it.
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
