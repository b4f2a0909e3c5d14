package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// The crash scenario runs an agent in a child process (this test binary,
// selected by crashDirEnv) whose tool announces that it started and then
// blocks; the parent kills the child there, as a crash would, and resumes
// the session with a second run.
const (
	crashDirEnv = "AGENTRT_TEST_CRASH_DIR"
	crashIDEnv  = "AGENTRT_TEST_CRASH_ID"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir, os.Getenv(crashIDEnv))
		return
	}
	os.Exit(m.Run())
}

type deployIn struct {
	Env string `json:"env" validate:"required"`
}

func crashChild(dir, id string) {
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	deploy := agentrt.NewTool("deploy", "Deploy the service.", func(ctx context.Context, in deployIn) (string, error) {
		fmt.Println("started")
		select {} // killed here
	})
	ag := &agentrt.Agent{Tools: []agentrt.Tool{deploy}, Store: store, Permission: agentrt.AllowAll(),
		Planner: agenttest.Script(agenttest.CallTool("deploy", `{"env":"prod"}`))}
	for _, err := range ag.Run(context.Background(), id, "Deploy to prod.") {
		if err != nil {
			fmt.Println("error:", err)
		}
	}
	os.Exit(1)
}

func recordCrash(t *testing.T, store *agentrt.JSONLStore, id string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+store.Dir(), crashIDEnv+"="+id)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	ag := &agentrt.Agent{Store: store, Planner: agenttest.Script(agenttest.Reply("The deploy was interrupted; I will not run it again by myself."))}
	runAgent(t, ag, id, "Did the deploy finish?")
}
