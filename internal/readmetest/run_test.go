package readmetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// readmeRuns runs each function of blocks_test.go that holds a README
// block, offline, with what the block needs: a scripted model, tools, a
// directory. TestREADMEBlocksCompile checks that every block is in one of
// these functions. Each entry returns the block's own error, or an error
// of its own when the agent the block built misbehaved (a contained panic
// counts: see checkRun).
var readmeRuns = map[string]func(t *testing.T) error{
	"sixtySeconds": func(t *testing.T) error {
		model := agenttest.Script(agenttest.CallTool("add", `{"a":2,"b":40}`), agenttest.Reply("42"))
		if err := sixtySeconds(context.Background(), model); err != nil {
			return err
		}
		return scriptUsed(model)
	},
	"deferredApprovals": func(t *testing.T) error {
		var written []string
		store := &agentrt.MemoryStore{}
		model := agenttest.Script(
			agenttest.CallTool("write_file", `{"path":"report.txt","text":"all good"}`),
			agenttest.Reply("written"),
		)
		ag := &agentrt.Agent{Tools: []agentrt.Tool{readTool(), writeTool(&written)}, Planner: model, Store: store}
		if err := deferredApprovals(context.Background(), ag); err != nil {
			return err
		}
		if want := []string{"report.txt"}; !slices.Equal(written, want) {
			return fmt.Errorf("written %v, want %v: the approved call must run once, after Resume", written, want)
		}
		return scriptUsed(model)
	},
	"permissions": func(t *testing.T) error {
		var written []string
		ag := &agentrt.Agent{Tools: []agentrt.Tool{readTool(), writeTool(&written)}}
		permissions(ag)
		ag.Planner = agenttest.Script(
			agenttest.CallTools(
				agenttest.ToolUse("read_file", `{"path":"notes.txt"}`),
				agenttest.ToolUse("write_file", `{"path":"/etc/passwd","text":"x"}`),
			),
			agenttest.CallTool("write_file", `{"path":"notes.txt","text":"hello"}`),
			agenttest.Reply("done"),
		)
		events, err := checkRun(ag, "perm", "Write a note.")
		if err != nil {
			return err
		}
		var decisions []string
		for _, ev := range events {
			if d, ok := ev.(agentrt.PermissionDecision); ok {
				decisions = append(decisions, fmt.Sprintf("%s allow=%v %s", d.Tool, d.Decision.Allow, d.Decision.Reason))
			}
		}
		want := []string{
			"read_file allow=true ",
			"write_file allow=false only write_file outside /etc is allowed",
			"write_file allow=true ",
		}
		if !slices.Equal(decisions, want) || !slices.Equal(written, []string{"notes.txt"}) {
			return fmt.Errorf("the PermissionFunc decided %q and let write %q", decisions, written)
		}
		return nil
	},
	"sessions": func(t *testing.T) error {
		t.Chdir(t.TempDir()) // the block writes ./sessions
		model := agenttest.Script(agenttest.Reply("Two days in Lisbon: ..."), agenttest.Reply("Three days: ..."))
		if err := sessions(context.Background(), model, nil); err != nil {
			return err
		}
		if err := scriptUsed(model); err != nil {
			return err
		}
		store, err := agentrt.NewJSONLStore("sessions", nil)
		if err != nil {
			return err
		}
		defer store.Close()
		msgs, err := store.Load(context.Background(), "trip-42")
		if err != nil || len(msgs) != 4 {
			return fmt.Errorf("the session holds %d messages (%v), want 4", len(msgs), err)
		}
		return nil
	},
	"providers": func(t *testing.T) error {
		// The block builds the clients (no call goes out); the keys only
		// have to be there, as gemini.NewFromAPIKey wants one.
		t.Setenv("OPENAI_API_KEY", "test-key")
		t.Setenv("ANTHROPIC_API_KEY", "test-key")
		t.Setenv("GEMINI_API_KEY", "test-key")
		ag := &agentrt.Agent{}
		if err := providers(ag); err != nil {
			return err
		}
		if ag.Planner == nil {
			return errors.New("the block set no planner")
		}
		return nil
	},
	"limits": func(t *testing.T) error {
		ag := limits(agenttest.Script())
		ag.Planner = agenttest.Script(agenttest.Reply("ok"))
		_, err := checkRun(ag, "limits", "hi")
		return err
	},
	"hooks": func(t *testing.T) error {
		var deployed int
		deploy := agentrt.NewTool("deploy", "Deploy.", func(context.Context, struct{}) (string, error) {
			deployed++
			return "deployed", nil
		})
		ag := &agentrt.Agent{Tools: []agentrt.Tool{deploy}, Permission: agentrt.AllowAll()}
		hooks(ag)
		ag.Planner = agenttest.Script(agenttest.CallTool("deploy", `{}`), agenttest.Reply("ok"))
		events, err := checkRun(ag, "hooks", "Deploy.")
		if err != nil {
			return err
		}
		want := 1
		if isFriday() {
			want = 0
		}
		if deployed != want {
			return fmt.Errorf("deployed %d times, want %d (Friday: %v); events: %v", deployed, want, isFriday(), events)
		}
		return nil
	},
	"typed": func(t *testing.T) error {
		ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply(`{"label":"spam","confidence":0.97}`))}
		return typed(context.Background(), ag)
	},
	"subAgents": func(t *testing.T) error {
		child := agenttest.Script(agenttest.Reply("2.54 cm"))
		coordinator := &agentrt.Agent{Planner: agenttest.Script(
			agenttest.CallTool("units", `{"task":"1 inch in cm?"}`),
			agenttest.Reply("1 inch is 2.54 cm."),
		)}
		subAgents(coordinator, nil, child)
		if _, err := checkRun(coordinator, "coord", "How many cm in an inch?"); err != nil {
			return err
		}
		return scriptUsed(child)
	},
	"testingExample": func(t *testing.T) error {
		testingExample(t)
		return nil
	},
	"mcpClient": func(t *testing.T) error {
		// npx finds the reference server in mcptool/testdata/npm (npm ci
		// --prefix mcptool/testdata/npm), so no download is needed.
		npm, err := filepath.Abs("../../mcptool/testdata/npm")
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")); err != nil {
			needs(t, "the MCP reference servers: npm ci --prefix mcptool/testdata/npm")
		}
		t.Chdir(npm)
		return mcpClient(context.Background(), t.TempDir(), readTool(), agenttest.Script())
	},
	"mcpServer": func(t *testing.T) error {
		// Over stdio, with a client that hangs up at once: Run returns.
		// Then the block registers its handler on http.DefaultServeMux,
		// which allows that once per process.
		mcpServerOnce.Do(func() {
			mcpServerErr = withStdio(t, func() error {
				return mcpServer(context.Background(), readTool(), writeTool(new([]string)))
			})
		})
		return mcpServerErr
	},
}

var (
	mcpServerOnce sync.Once
	mcpServerErr  error
)

// TestREADMEBlocksRun runs every README block (see readmeRuns).
func TestREADMEBlocksRun(t *testing.T) {
	names := make([]string, 0, len(readmeRuns))
	for name := range readmeRuns {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if err := runBlock(t, readmeRuns[name]); err != nil {
				t.Errorf("README block in %s: %v", name, err)
			}
		})
	}
}

// runBlock runs one block and returns its error, or the panic it raised.
func runBlock(t *testing.T, block func(t *testing.T) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panicked: %v", v)
		}
	}()
	return block(t)
}

func TestRunBlockCatchesPanics(t *testing.T) {
	err := runBlock(t, func(*testing.T) error {
		var in any = "not a WriteIn"
		_ = in.(WriteIn) // what the README's PermissionFunc once did
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panicked: interface conversion")

	// A panic the runtime contains (here in a permission checker) is
	// caught by checkRun.
	ag := &agentrt.Agent{
		Tools: []agentrt.Tool{readTool()},
		Permission: agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
			in := req.Input.(WriteIn)
			_ = in
			return agentrt.Decision{Allow: true}, nil
		}),
		Planner: agenttest.Script(agenttest.CallTool("read_file", `{"path":"a"}`), agenttest.Reply("ok")),
	}
	_, err = checkRun(ag, "s", "hi")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panic")
}

// checkRun runs ag and returns its events, or an error if the run failed or
// any callback panicked (the runtime contains such panics: a tool's or a
// checker's becomes an is_error result or a denial, a hook's a HookFailed
// event; a README block must not rely on that).
func checkRun(ag *agentrt.Agent, id, input string) ([]agentrt.Event, error) {
	events, err := agenttest.Collect(ag.Run(context.Background(), id, input))
	if err != nil {
		return events, err
	}
	var check func(ev agentrt.Event) error
	check = func(ev agentrt.Event) error {
		var pe *agentrt.PanicError
		switch e := ev.(type) {
		case agentrt.ToolResult:
			if errors.As(e.Err, &pe) {
				return fmt.Errorf("tool %s panicked: %v", e.Tool, pe.Value)
			}
		case agentrt.PermissionDecision:
			if strings.Contains(e.Decision.Reason, "panic") {
				return fmt.Errorf("the permission checker panicked on %s: %s", e.Tool, e.Decision.Reason)
			}
		case agentrt.HookFailed:
			return fmt.Errorf("a hook failed: %v", e.Err)
		case agentrt.SubAgentEvent:
			return check(e.Event)
		}
		return nil
	}
	for _, ev := range events {
		if err := check(ev); err != nil {
			return events, err
		}
	}
	done, ok := agenttest.Done(events)
	if !ok || done.Reason != agentrt.StopComplete {
		return events, fmt.Errorf("the run did not complete: %+v", done)
	}
	return events, nil
}

// scriptUsed says whether every scripted step was played.
func scriptUsed(p *agenttest.Planner) error {
	if n := p.Remaining(); n > 0 {
		return fmt.Errorf("%d scripted steps were not played", n)
	}
	return nil
}

func readTool() agentrt.Tool {
	type ReadIn struct {
		Path string `json:"path"`
	}
	return agentrt.NewTool("read_file", "Read a file.", func(_ context.Context, in ReadIn) (string, error) {
		return "contents of " + in.Path, nil
	}, agentrt.ReadOnly())
}

func writeTool(written *[]string) agentrt.Tool {
	return agentrt.NewTool("write_file", "Write a file.", func(_ context.Context, in WriteIn) (string, error) {
		*written = append(*written, in.Path)
		return "written", nil
	})
}

// withStdio runs fn with os.Stdin at end of file and os.Stdout discarded.
func withStdio(t *testing.T, fn func() error) error {
	stdin, stdout := os.Stdin, os.Stdout
	defer func() { os.Stdin, os.Stdout = stdin, stdout }()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	w.Close()
	defer r.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	os.Stdin, os.Stdout = r, devnull
	return fn()
}

// needs skips the test for want, or fails it under CI (CI set and not
// "false"), where nothing may be skipped silently.
func needs(t *testing.T, want string) {
	t.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal("CI: needs " + want)
	}
	t.Skip("needs " + want)
}
