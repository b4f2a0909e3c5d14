package mcptool_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverEnv makes the test binary run as a stdio MCP server (see
// runTestServer) instead of running tests.
const serverEnv = "MCPTOOL_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := runTestServer(); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// runTestServer serves, over stdio, tools that let a test observe and
// break the server process: pid, crash, spawn (a grandchild process),
// stuck and echo.
func runTestServer() error {
	type empty struct{}
	type echoIn struct {
		Text string `json:"text"`
	}
	tools := []agentrt.Tool{
		agentrt.NewTool("pid", "Return the server's process id.",
			func(context.Context, empty) (string, error) { return strconv.Itoa(os.Getpid()), nil },
			agentrt.ReadOnly()),
		agentrt.NewTool("crash", "Exit the server process at once.",
			func(context.Context, empty) (string, error) { os.Exit(3); return "", nil }),
		agentrt.NewTool("spawn", "Start a long-lived child process and return its pid.",
			func(context.Context, empty) (string, error) {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					return "", err
				}
				return strconv.Itoa(cmd.Process.Pid), nil
			}),
		agentrt.NewTool("stuck", "Create the file at path, then block forever, ignoring cancellation.",
			func(_ context.Context, in struct {
				Path string `json:"path"`
			}) (string, error) {
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

// testServerCommand returns a Dialer that runs the test binary as a stdio
// MCP server, and a function returning the commands it started so far.
func testServerCommand(t *testing.T) (mcptool.Dialer, func() []*exec.Cmd) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd // the Client dials under its own lock, one at a time
	dial := mcptool.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), serverEnv+"=1")
		cmd.Stderr = os.Stderr
		cmds = append(cmds, cmd)
		return cmd
	})
	return dial, func() []*exec.Cmd { return cmds }
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
