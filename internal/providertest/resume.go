package providertest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// The resume tests re-execute the test binary as a child process, which
// runs TestResumeChild with these environment variables set.
const (
	ResumeDirEnv = "AGENTRT_RESUME_DIR" // the JSONL store's directory
	ResumeURLEnv = "AGENTRT_RESUME_URL" // the replay server's URL
)

// ResumeInChild runs TestResumeChild in a new process of the test binary,
// on the session "resume" of the JSONL store in dir and the replay server
// at url, and returns what it printed; the test fails if the child does.
func ResumeInChild(t *testing.T, dir, url string) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestResumeChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ResumeDirEnv+"="+dir, ResumeURLEnv+"="+url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "child:\n%s", out.String())
	return out.String()
}

// ResumeChild is TestResumeChild's body: outside a child process it skips
// the test; in one, it continues the session "resume" with the Agent that
// newAgent makes (on an HTTP client whose connections it closes, and the
// replay server's URL) until it completes, and prints its final answer
// after "child answer: ".
func ResumeChild(t *testing.T, newAgent func(hc *http.Client, url string, store agentrt.SessionStore) *agentrt.Agent) {
	dir := os.Getenv(ResumeDirEnv)
	if dir == "" {
		t.Skip("only run as a child process")
	}
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections() // no connection goroutine outlives the test (goleak)
	events, err := agenttest.Collect(newAgent(hc, os.Getenv(ResumeURLEnv), store).Run(context.Background(), "resume", ""))
	require.NoError(t, err)
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	require.Equal(t, agentrt.StopComplete, done.Reason, done.Detail)
	fmt.Println("child answer:", done.FinalText)
}

// ResumeAgent returns the agent of the resume tests on planner p and store:
// the recorded weather tool, one turn, no final answer. p is called
// without streaming, since the recorded pair of bodies is not streamed.
func ResumeAgent(p agentrt.Planner, store agentrt.SessionStore) *agentrt.Agent {
	weather := agentrt.NewTool("weather", "Get weather information for a location",
		func(_ context.Context, in struct {
			Location string `json:"location" jsonschema:"description=the city"`
		}) (string, error) {
			return "40 C", nil
		}, agentrt.ReadOnly())
	plain := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		r := *req
		r.OnText = nil
		return p.Plan(ctx, &r)
	})
	return &agentrt.Agent{
		Instructions:  "You are a helpful assistant",
		Tools:         []agentrt.Tool{weather},
		Planner:       plain,
		Store:         store,
		MaxTurns:      1,
		NoFinalAnswer: true,
	}
}
