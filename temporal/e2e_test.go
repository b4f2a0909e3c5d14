package temporal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// The end-to-end tests run against a real Temporal server whose address is
// in AGENTRT_TEMPORAL_ADDR (ci.sh starts one with `temporal server
// start-dev`). With AGENTRT_TEMPORAL_RECORD=1 the main test also writes the
// history of its run to testdata/, for the replay test.

func dialE2E(t *testing.T) client.Client {
	t.Helper()
	addr := os.Getenv("AGENTRT_TEMPORAL_ADDR")
	if addr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("AGENTRT_TEMPORAL_ADDR is not set but CI=true: run the end-to-end tests with temporal/ci.sh")
		}
		t.Skip("end-to-end test skipped: set AGENTRT_TEMPORAL_ADDR=host:port of a Temporal server (temporal/ci.sh starts one)")
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default", Logger: logger})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func uniqueName(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// e2eFixture is the seed's task plus a write tool, with a calculator whose
// first call blocks until its worker stops (as if the process died).
type e2eFixture struct {
	calcCalls   atomic.Int32
	calcStarted chan struct{}
	mu          sync.Mutex
	notes       []string
}

func (f *e2eFixture) agent(p agentrt.Planner) *agentrt.Agent {
	base := newFixture()
	tools := base.tools()[:1] // weather
	tools = append(tools,
		agentrt.NewTool("calculator", "Apply op to a and b.", func(ctx context.Context, in calcIn) (float64, error) {
			if f.calcCalls.Add(1) == 1 {
				close(f.calcStarted)
				<-ctx.Done() // the first worker is stopped while this runs
				return 0, ctx.Err()
			}
			return in.A + in.B, nil
		}, agentrt.ReadOnly()),
		agentrt.NewTool("save_note", "Save a note.", func(_ context.Context, in noteIn) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.notes = append(f.notes, in.Text)
			return "saved", nil
		}),
	)
	return &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools:        tools,
		Planner:      p,
		Permission: agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
			return agentrt.Decision{}, errors.New("not called on Temporal")
		}),
	}
}

func e2eScript() *agenttest.Planner {
	return agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("weather", `{"city":"Beijing"}`),
			agenttest.ToolUse("weather", `{"city":"Shanghai"}`),
		).WithUsage(agentrt.Usage{InputTokens: 100, OutputTokens: 20}),
		agenttest.CallTool("calculator", `{"op":"add","a":12,"b":17.5}`),
		agenttest.CallTool("save_note", `{"text":"sum of temperatures: 29.5"}`),
		agenttest.Reply("The sum is 29.5°C; I saved it in a note."),
	)
}

// e2eOptions are the worker options of the e2e agent; the replay test uses
// them too.
var e2eOptions = Options{Policy: PolicyAsk, HeartbeatTimeout: 2 * time.Second}

func startWorker(t *testing.T, c client.Client, tq string, ag *agentrt.Agent) worker.Worker {
	t.Helper()
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, ag, e2eOptions))
	require.NoError(t, w.Start())
	return w
}

func TestE2ESeedTaskWithWorkerRestartAndApproval(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tq := uniqueName(t)
	session := "e2e-" + uniqueName(t)

	f := &e2eFixture{calcStarted: make(chan struct{})}
	script := e2eScript()
	ag := f.agent(script)
	w1 := startWorker(t, c, tq, ag)

	// Kill the worker while the calculator runs; start another one.
	restarted := make(chan worker.Worker, 1)
	go func() {
		select {
		case <-f.calcStarted:
		case <-ctx.Done():
			restarted <- nil
			return
		}
		w1.Stop()
		w2 := worker.New(c, tq, worker.Options{})
		if err := Register(w2, ag, e2eOptions); err != nil || w2.Start() != nil {
			restarted <- nil
			return
		}
		restarted <- w2
	}()
	defer func() {
		if w2 := <-restarted; w2 != nil {
			w2.Stop()
		}
	}()

	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond}
	var events []agentrt.Event
	approved := false
	for ev, err := range rt.Run(ctx, session, seedQuestion) {
		require.NoError(t, err)
		events = append(events, ev)
		if tc, ok := ev.(agentrt.ToolCall); ok && tc.Tool.Name == "save_note" && !approved {
			// Approve from "another terminal": a plain signal.
			approved = true
			require.NoError(t, Approve(ctx, c, rt.Options.WorkflowID(session), agentrt.Decision{ToolUseID: tc.ToolUseID, Allow: true, Source: "e2e"}))
		}
	}
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
	assert.Equal(t, "The sum is 29.5°C; I saved it in a note.", done.FinalText)
	assert.Equal(t, 4, done.Turns)

	// The calculator ran twice (retried after its worker died), every
	// planner call happened once, the write tool once, after approval.
	assert.Equal(t, int32(2), f.calcCalls.Load())
	script.AssertDone(t)
	assert.Len(t, script.Requests(), 4)
	assert.Equal(t, []string{"sum of temperatures: 29.5"}, f.notes)
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 4)
	assert.Equal(t, "29.5", results[2].Message.Content)
	assert.Equal(t, "saved", results[3].Message.Content)
	decisions := agenttest.Filter[agentrt.PermissionDecision](events)
	require.Len(t, decisions, 4)
	assert.Equal(t, "e2e", decisions[3].Decision.Source)

	var res Result
	require.NoError(t, client.WorkflowRun(c.GetWorkflow(ctx, rt.Options.WorkflowID(session), "")).Get(ctx, &res))
	agenttest.AssertInvariants(t, res.Messages)
	assert.Len(t, res.Messages, 9)
	if os.Getenv("AGENTRT_TEMPORAL_RECORD") == "1" {
		recordHistory(t, c, rt.Options.WorkflowID(session))
	}

	// A second run on the same session continues it.
	script2 := agenttest.Script(agenttest.Reply("It was 29.5°C."))
	ag2 := f.agent(script2)
	ag2.Name = "followup"
	w3 := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w3, ag2, e2eOptions))
	require.NoError(t, w3.Start())
	defer w3.Stop()
	rt2 := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq, Agent: "followup"}, PollInterval: 50 * time.Millisecond}
	evs2, err := agenttest.Collect(rt2.Run(ctx, session, "What was the sum again?"))
	require.NoError(t, err)
	d2, _ := agenttest.Done(evs2)
	assert.Equal(t, "It was 29.5°C.", d2.FinalText)
	require.Len(t, script2.Requests(), 1)
	assert.Len(t, script2.Requests()[0].Messages, 10, "the second run saw the first run's messages")
}

// recordHistory writes the history of the workflow's latest run to
// testdata, for the replay test.
func recordHistory(t *testing.T, c client.Client, workflowID string) {
	t.Helper()
	ctx := context.Background()
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("testdata", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "seed_restart_approval.json"), b, 0o644))
}

func TestE2ECancelMidTool(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := uniqueName(t)
	f := newFixture()
	script := agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("slow", `{}`), agenttest.ToolUse("save_note", `{"text":"never"}`)),
		agenttest.Reply("unreachable"),
	)
	ag := newAgent(f, script)
	ag.Permission = agentrt.AllowAll()
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, ag, Options{HeartbeatTimeout: time.Second}))
	require.NoError(t, w.Start())
	defer w.Stop()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-f.slowStarted:
			stop()
		case <-ctx.Done():
		}
	}()
	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond}
	session := "e2e-" + uniqueName(t)
	events, err := agenttest.Collect(rt.Run(runCtx, session, "wait"))
	require.ErrorIs(t, err, context.Canceled)
	select {
	case err := <-f.slowErr:
		require.ErrorIs(t, err, context.Canceled, "the tool's context was cancelled through its heartbeat")
	case <-ctx.Done():
		t.Fatal("the tool never saw the cancellation")
	}
	done, ok := agenttest.Done(events)
	require.True(t, ok, "the Done event arrives before the error")
	assert.Equal(t, agentrt.StopCancelled, done.Reason)

	v, err := c.QueryWorkflow(ctx, session, "", QueryState)
	require.NoError(t, err)
	var st State
	require.NoError(t, v.Get(&st))
	agenttest.AssertInvariants(t, st.Messages)
	results := toolResults(st.Messages)
	require.Len(t, results, 2)
	assert.Contains(t, results[0].Content, `cancelled: the run was stopped while tool "slow" was running`)
	assert.Contains(t, results[1].Content, `cancelled: the run was stopped before tool "save_note" ran`)
	assert.Empty(t, f.savedNotes())

	desc, err := c.DescribeWorkflow(ctx, session, "")
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, desc.RawResponse.GetWorkflowExecutionInfo().GetStatus())
}

func TestE2EAskAndBusySession(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := uniqueName(t)
	f := newFixture()
	script := agenttest.Script(agenttest.CallTool("save_note", `{"text":"x"}`), agenttest.Reply("ok"))
	ag := newAgent(f, script)
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, ag, Options{Policy: PolicyAsk}))
	require.NoError(t, w.Start())
	defer w.Stop()

	session := "e2e-" + uniqueName(t)
	var asked []string
	rt := &Runtime{
		Client:       c,
		Options:      StartOptions{TaskQueue: tq},
		PollInterval: 50 * time.Millisecond,
	}
	rt.Ask = func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		asked = append(asked, req.ToolUseID+" "+req.Tool.Name+" "+string(req.RawInput))
		// While the run waits, the session is busy.
		_, err := Start(ctx, c, rt.Options, session, "again")
		assert.ErrorIs(t, err, agentrt.ErrSessionBusy)
		return agentrt.Decision{}, nil
	}
	events, err := agenttest.Collect(rt.Run(ctx, session, "save x"))
	require.NoError(t, err)
	assert.Equal(t, []string{`call_1 save_note {"text":"x"}`}, asked)
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 1)
	assert.True(t, results[0].Message.IsError)
	assert.Equal(t, `permission denied: the user refused this call of "save_note"`, results[0].Message.Content)
	assert.Empty(t, f.savedNotes())
}

func TestE2EBreakAndTerminate(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := uniqueName(t)
	f := newFixture()
	ag := newAgent(f, agenttest.Script(
		agenttest.CallTool("save_note", `{"text":"x"}`), // the first run, cancelled
		agenttest.CallTool("save_note", `{"text":"y"}`), // the second, terminated
		agenttest.Reply("resumed"),                      // the first session, continued
	))
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, ag, Options{Policy: PolicyAsk}))
	require.NoError(t, w.Start())
	defer w.Stop()
	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 20 * time.Millisecond}

	cancelled := "e2e-" + uniqueName(t)
	t.Run("break cancels the workflow", func(t *testing.T) {
		session := cancelled
		for ev, err := range rt.Run(ctx, session, "save x") {
			require.NoError(t, err)
			if _, ok := ev.(agentrt.ToolCall); ok {
				break // while the call waits for its approval
			}
		}
		err := c.GetWorkflow(ctx, session, "").Get(ctx, nil)
		require.Error(t, err)
		assert.True(t, isCanceled(err), "%v", err)
	})

	t.Run("a terminated workflow ends the stream", func(t *testing.T) {
		session := "e2e-" + uniqueName(t)
		var events []agentrt.Event
		var runErr error
		for ev, err := range rt.Run(ctx, session, "save y") {
			if err != nil {
				runErr = err
				break
			}
			events = append(events, ev)
			if _, ok := ev.(agentrt.ToolCall); ok {
				require.NoError(t, c.TerminateWorkflow(ctx, session, "", "operator stopped it"))
			}
		}
		require.Error(t, runErr)
		assert.Contains(t, runErr.Error(), "terminated")
		done, ok := agenttest.Done(events)
		require.True(t, ok)
		assert.Equal(t, agentrt.StopError, done.Reason)
	})

	t.Run("a cancelled session continues", func(t *testing.T) {
		events, err := agenttest.Collect(rt.Run(ctx, cancelled, ""))
		require.NoError(t, err)
		done, _ := agenttest.Done(events)
		assert.Equal(t, "resumed", done.FinalText)
		var res Result
		require.NoError(t, c.GetWorkflow(ctx, cancelled, "").Get(ctx, &res))
		agenttest.AssertInvariants(t, res.Messages)
		require.Len(t, res.Messages, 4)
		assert.Equal(t, "save x", res.Messages[0].Content)
		assert.True(t, res.Messages[2].IsError)
		assert.Contains(t, res.Messages[2].Content, "cancelled")
	})
	assert.Empty(t, f.savedNotes())
}

func TestE2ECancelledByAnotherClient(t *testing.T) {
	c := dialE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := uniqueName(t)
	f := newFixture()
	ag := newAgent(f, agenttest.Script(agenttest.CallTool("save_note", `{"text":"x"}`)))
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, ag, Options{Policy: PolicyAsk}))
	require.NoError(t, w.Start())
	defer w.Stop()
	rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 20 * time.Millisecond}
	session := "e2e-" + uniqueName(t)
	var events []agentrt.Event
	var runErr error
	for ev, err := range rt.Run(ctx, session, "save x") {
		if err != nil {
			runErr = err
			break
		}
		events = append(events, ev)
		if _, ok := ev.(agentrt.ToolCall); ok {
			// An operator cancels the run while it waits for an approval.
			require.NoError(t, c.CancelWorkflow(ctx, session, ""))
		}
	}
	require.Error(t, runErr)
	assert.ErrorIs(t, runErr, ErrCancelledElsewhere)
	assert.NotErrorIs(t, runErr, context.Canceled, "the caller's ctx was not cancelled")
	done, ok := agenttest.Done(events)
	require.True(t, ok)
	assert.Equal(t, agentrt.StopCancelled, done.Reason)
	assert.Empty(t, f.savedNotes())
}

func isCanceled(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce)
}

// statelessPlanner plays the seed's task plus a note, choosing the step
// from the session (as a model does), so that workers in different
// processes give the same answers. It records the turns it was asked.
type statelessPlanner struct {
	mu    sync.Mutex
	turns []int
}

func (p *statelessPlanner) Plan(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	p.mu.Lock()
	p.turns = append(p.turns, req.Turn)
	p.mu.Unlock()
	use := func(id, name, in string) agentrt.Block { return agentrt.ToolUseBlock(id, name, []byte(in)) }
	var msg agentrt.Message
	switch req.Turn {
	case 1:
		msg = agentrt.NewAssistantMessage(use("w1", "weather", `{"city":"Beijing"}`), use("w2", "weather", `{"city":"Shanghai"}`))
	case 2:
		msg = agentrt.NewAssistantMessage(use("c1", "calculator", `{"op":"add","a":12,"b":17.5}`))
	case 3:
		msg = agentrt.NewAssistantMessage(use("n1", "save_note", `{"text":"29.5"}`))
	default:
		msg = agentrt.NewAssistantMessage(agentrt.TextBlock("The sum is 29.5°C."))
	}
	return &agentrt.ModelResponse{Message: msg}, nil
}

func (p *statelessPlanner) seen() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.turns...)
}

// killTools are the tools of the killed-worker test. In the helper
// process, the tool named hang announces itself on stdout and hangs until
// the process is killed.
type killTools struct {
	hang     string
	calcRuns atomic.Int32
	mu       sync.Mutex
	notes    []string
}

func (k *killTools) hangHere(name string) {
	if k.hang == name {
		fmt.Println("HANGING " + name)
		select {} // until SIGKILL
	}
}

func (k *killTools) savedNotes() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.notes...)
}

func (k *killTools) agent(p agentrt.Planner) *agentrt.Agent {
	tools := newFixture().tools()[:1] // weather
	tools = append(tools,
		agentrt.NewTool("calculator", "Apply op to a and b.", func(ctx context.Context, in calcIn) (float64, error) {
			k.calcRuns.Add(1)
			k.hangHere("calculator")
			return in.A + in.B, nil
		}, agentrt.ReadOnly()),
		agentrt.NewTool("save_note", "Save a note.", func(_ context.Context, in noteIn) (string, error) {
			k.hangHere("save_note")
			k.mu.Lock()
			defer k.mu.Unlock()
			k.notes = append(k.notes, in.Text)
			return "saved", nil
		}),
	)
	return &agentrt.Agent{Instructions: "Be careful.", Tools: tools, Planner: p, Permission: agentrt.AskOnWrite(func(context.Context, *agentrt.ToolCall) (agentrt.Decision, error) {
		return agentrt.Decision{}, nil
	})}
}

// TestE2EHelperWorker is not a test: it is the worker process that
// TestE2EWorkerKilled starts and kills.
func TestE2EHelperWorker(t *testing.T) {
	tq := os.Getenv("AGENTRT_E2E_HELPER_TASK_QUEUE")
	if tq == "" {
		t.Skip("helper process of TestE2EWorkerKilled")
	}
	c := dialE2E(t)
	k := &killTools{hang: os.Getenv("AGENTRT_E2E_HELPER_HANG")}
	w := worker.New(c, tq, worker.Options{})
	require.NoError(t, Register(w, k.agent(&statelessPlanner{}), e2eOptions))
	require.NoError(t, w.Start())
	select {} // until SIGKILL
}

// TestE2EWorkerKilled kills a worker process with SIGKILL while a tool
// runs, and lets a worker in this process finish the run.
func TestE2EWorkerKilled(t *testing.T) {
	tests := []struct {
		hang string
		// turns are the planner calls the second worker makes.
		turns []int
		notes []string
		// calc and note are the results of the calculator and save_note.
		calc, note string
		noteError  bool
	}{
		// A read-only tool is run again on the new worker.
		{hang: "calculator", turns: []int{3, 4}, notes: []string{"29.5"}, calc: "29.5", note: "saved"},
		// A write tool is not: the model is told it was interrupted.
		{hang: "save_note", turns: []int{4}, calc: "29.5",
			note: `interrupted: tool "save_note" did not finish (Heartbeat): the worker running it may have stopped; it may or may not have taken effect`, noteError: true},
	}
	for _, tt := range tests {
		t.Run(tt.hang, func(t *testing.T) {
			t.Parallel()
			c := dialE2E(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tq := uniqueName(t)

			// Worker 1 is another process, killed with SIGKILL mid-tool.
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestE2EHelperWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AGENTRT_E2E_HELPER_TASK_QUEUE="+tq, "AGENTRT_E2E_HELPER_HANG="+tt.hang)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			killed := make(chan struct{})
			go func() {
				defer close(killed)
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if sc.Text() == "HANGING "+tt.hang {
						_ = cmd.Process.Kill()
						break
					}
				}
				_ = cmd.Wait()
			}()
			defer func() {
				_ = cmd.Process.Kill()
				<-killed
			}()

			// Worker 2 starts in this process once worker 1 is dead. (Not on
			// an event: events come from queries, which need a live worker.)
			planner := &statelessPlanner{}
			k := &killTools{}
			w2 := worker.New(c, tq, worker.Options{})
			require.NoError(t, Register(w2, k.agent(planner), e2eOptions))
			started := make(chan error, 1)
			go func() {
				<-killed
				started <- w2.Start()
			}()
			defer func() {
				if err := <-started; err == nil {
					w2.Stop()
				}
			}()

			rt := &Runtime{Client: c, Options: StartOptions{TaskQueue: tq}, PollInterval: 50 * time.Millisecond}
			session := "e2e-" + uniqueName(t)
			var events []agentrt.Event
			for ev, err := range rt.Run(ctx, session, seedQuestion) {
				require.NoError(t, err)
				events = append(events, ev)
				if tc, ok := ev.(agentrt.ToolCall); ok && tc.Tool.Name == "save_note" {
					require.NoError(t, Approve(ctx, c, session, agentrt.Decision{ToolUseID: tc.ToolUseID, Allow: true}))
				}
			}
			select {
			case <-killed:
			default:
				t.Fatal("worker 1 was not killed")
			}
			done, ok := agenttest.Done(events)
			require.True(t, ok)
			assert.Equal(t, agentrt.StopComplete, done.Reason)
			assert.Equal(t, "The sum is 29.5°C.", done.FinalText)
			// Worker 2 made only the planner calls worker 1 had not made.
			assert.Equal(t, tt.turns, planner.seen())
			assert.Equal(t, tt.notes, k.savedNotes())
			results := agenttest.Filter[agentrt.ToolResult](events)
			require.Len(t, results, 4)
			assert.Equal(t, tt.calc, results[2].Message.Content)
			assert.Equal(t, tt.note, results[3].Message.Content)
			assert.Equal(t, tt.noteError, results[3].Message.IsError)

			var res Result
			require.NoError(t, c.GetWorkflow(ctx, session, "").Get(ctx, &res))
			agenttest.AssertInvariants(t, res.Messages)
			require.Len(t, res.Messages, 9)
		})
	}
}
