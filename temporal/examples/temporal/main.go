// Command temporal runs the quickstart's agent durably on Temporal: the
// weather in Beijing and Shanghai, their sum, and a note saved to a file,
// which is a write tool that waits for a human's approval.
//
// It needs a Temporal server (temporal server start-dev). Each subcommand
// is one process:
//
//	go run ./examples/temporal worker               # runs the agent's workflows and activities
//	go run ./examples/temporal run -session s1      # starts a run and streams its events
//	go run ./examples/temporal state -session s1    # messages and pending approvals
//	go run ./examples/temporal approve -session s1 -id call_3_0 [-deny -reason "..."]
//
// The planner is scripted and stateless (each step is chosen from the
// session so far), so it needs no network and gives the same answers
// after a worker restart. See README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	agenttemporal "github.com/agentrt/agentrt/temporal"
	"github.com/agentrt/agentrt/terminal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

const taskQueue = "agentrt-example"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	address := fs.String("address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal server host:port")
	session := fs.String("session", "s1", "session id (the workflow id)")
	var err error
	switch cmd {
	case "worker":
		dir := fs.String("dir", "notes", "directory where save_note writes")
		delay := fs.Duration("tool-delay", 5*time.Second, "how long each weather call takes (time to kill the worker)")
		fs.Parse(args)
		err = runWorker(*address, *dir, *delay)
	case "run":
		ask := fs.Bool("ask", false, "answer approvals in this terminal instead of with the approve command")
		fs.Parse(args)
		q := strings.Join(fs.Args(), " ")
		if q == "" {
			q = "What is the sum of today's temperatures in Beijing and Shanghai? Save it in a note."
		}
		err = run(*address, *session, q, *ask)
	case "state":
		fs.Parse(args)
		err = state(*address, *session)
	case "approve":
		id := fs.String("id", "", "tool_use id of the pending call (see state)")
		deny := fs.Bool("deny", false, "deny the call")
		reason := fs.String("reason", "", "reason for a denial, shown to the model")
		fs.Parse(args)
		err = approve(*address, *session, agentrt.Decision{ToolUseID: *id, Allow: !*deny, Reason: *reason})
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporal example:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: temporal worker|run|state|approve [flags]")
	os.Exit(2)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func dial(address string) (client.Client, error) {
	// The SDK's default logger prints debug lines; keep info and above.
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	return client.Dial(client.Options{HostPort: address, Logger: logger})
}

// The agent: the same definition would run in-process with ag.Run.

type WeatherIn struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Beijing" validate:"required"`
}

type Weather struct {
	City        string  `json:"city"`
	TempCelsius float64 `json:"temp_celsius"`
	Sky         string  `json:"sky"`
}

type CalcIn struct {
	Op string  `json:"op" jsonschema:"enum=add,enum=sub,enum=mul,enum=div" validate:"oneof=add sub mul div"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

type NoteIn struct {
	Name string `json:"name" jsonschema:"description=file name, e.g. sum.txt" validate:"required"`
	Text string `json:"text" validate:"required"`
}

func newAgent(dir string, delay time.Duration) (*agentrt.Agent, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	today := map[string]Weather{
		"beijing":  {City: "Beijing", TempCelsius: 12, Sky: "clear"},
		"shanghai": {City: "Shanghai", TempCelsius: 17.5, Sky: "cloudy"},
	}
	weather := func(ctx context.Context, in WeatherIn) (Weather, error) {
		fmt.Printf("weather %s: working for %v...\n", in.City, delay)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			fmt.Printf("weather %s: stopped: %v\n", in.City, ctx.Err())
			return Weather{}, ctx.Err()
		}
		w, ok := today[strings.ToLower(in.City)]
		if !ok {
			return Weather{}, fmt.Errorf("no weather data for %q", in.City)
		}
		return w, nil
	}
	calculate := func(_ context.Context, in CalcIn) (float64, error) {
		switch in.Op {
		case "add":
			return in.A + in.B, nil
		case "sub":
			return in.A - in.B, nil
		case "mul":
			return in.A * in.B, nil
		}
		if in.B == 0 {
			return 0, errors.New("division by zero")
		}
		return in.A / in.B, nil
	}
	saveNote := func(_ context.Context, in NoteIn) (string, error) {
		if err := root.WriteFile(in.Name, []byte(in.Text+"\n"), 0o644); err != nil {
			return "", err
		}
		fmt.Printf("save_note: wrote %s\n", in.Name)
		return "saved " + in.Name, nil
	}
	return &agentrt.Agent{
		Name:         "weather",
		Instructions: "You are a careful assistant. Use the tools for facts and arithmetic.",
		Tools: []agentrt.Tool{
			agentrt.NewTool("weather", "Today's weather in a city.", weather, agentrt.ReadOnly()),
			agentrt.NewTool("calculator", "Apply op to a and b.", calculate, agentrt.ReadOnly()),
			agentrt.NewTool("save_note", "Save a text note to a file.", saveNote),
		},
		Planner: agentrt.PlannerFunc(scriptedPlanner),
		// In-process, write tools ask on the terminal. On Temporal the
		// worker registers with PolicyAsk: a signal answers instead.
		Permission: agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout)),
	}, nil
}

// scriptedPlanner plays what a model would do, choosing the step from the
// number of assistant messages so far: it keeps no state, so it answers
// the same after a worker restart.
func scriptedPlanner(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	step := 0
	for _, m := range req.Messages {
		if m.Role == agentrt.RoleAssistant {
			step++
		}
	}
	id := func(i int) string { return fmt.Sprintf("call_%d_%d", step+1, i) }
	var msg agentrt.Message
	switch step {
	case 0:
		msg = agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock(id(0), "weather", json.RawMessage(`{"city":"Beijing"}`)),
			agentrt.ToolUseBlock(id(1), "weather", json.RawMessage(`{"city":"Shanghai"}`)))
	case 1:
		msg = agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id(0), "calculator", json.RawMessage(`{"op":"add","a":12,"b":17.5}`)))
	case 2:
		msg = agentrt.NewAssistantMessage(agentrt.TextBlock("Saving the result."),
			agentrt.ToolUseBlock(id(0), "save_note", json.RawMessage(`{"name":"sum.txt","text":"Beijing 12°C + Shanghai 17.5°C = 29.5°C"}`)))
	default:
		last := req.Messages[len(req.Messages)-1]
		text := "Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C."
		if last.IsError {
			text += " I could not save the note: " + last.Content
		} else {
			text += " I saved it in sum.txt."
		}
		msg = agentrt.NewAssistantMessage(agentrt.TextBlock(text))
	}
	return &agentrt.ModelResponse{Message: msg, Usage: agentrt.Usage{InputTokens: 100, OutputTokens: 20}}, nil
}

func runWorker(address, dir string, delay time.Duration) error {
	c, err := dial(address)
	if err != nil {
		return err
	}
	defer c.Close()
	ag, err := newAgent(dir, delay)
	if err != nil {
		return err
	}
	w := worker.New(c, taskQueue, worker.Options{})
	// A dead worker is noticed within HeartbeatTimeout; the weather calls
	// it was running are retried on another worker (they are read-only).
	// Write tools wait for an approval sent as a signal (PolicyAsk).
	opts := agenttemporal.Options{Policy: agenttemporal.PolicyAsk, HeartbeatTimeout: 3 * time.Second}
	if err := agenttemporal.Register(w, ag, opts); err != nil {
		return err
	}
	fmt.Printf("worker: agent %q on task queue %q at %s; Ctrl-C to stop\n", ag.Name, taskQueue, address)
	return w.Run(worker.InterruptCh())
}

func run(address, session, question string, ask bool) error {
	c, err := dial(address)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rt agentrt.Runtime = &agenttemporal.Runtime{
		Client:  c,
		Options: agenttemporal.StartOptions{TaskQueue: taskQueue, Agent: "weather"},
		Ask:     askFunc(ask),
	}
	fmt.Println("user:", question)
	for ev, err := range rt.Run(ctx, session, question) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.AssistantMessage:
			if t := e.Message.Text(); t != "" {
				fmt.Println("assistant:", t)
			}
		case agentrt.ToolCall:
			fmt.Printf("  -> %s %s %s\n", e.ToolUseID, e.Tool.Name, e.RawInput)
			if !e.Tool.ReadOnly && !ask {
				fmt.Printf("     (a write tool: approve it from another terminal with\n"+
					"      go run ./examples/temporal approve -session %s -id %s)\n", session, e.ToolUseID)
			}
		case agentrt.ToolResult:
			fmt.Printf("  <- %s\n", e.Message.Content)
		case agentrt.Done:
			fmt.Printf("\n[%s after %d turns, %d tokens]\n", e.Reason, e.Turns, e.Usage.Total())
		}
	}
	return nil
}

func askFunc(ask bool) agentrt.PermissionFunc {
	if !ask {
		return nil
	}
	return terminal.Asker(os.Stdin, os.Stdout)
}

func state(address, session string) error {
	c, err := dial(address)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.QueryWorkflow(context.Background(), session, "", agenttemporal.QueryState)
	if err != nil {
		return err
	}
	var st agenttemporal.State
	if err := v.Get(&st); err != nil {
		return err
	}
	for _, m := range st.Messages {
		fmt.Println(m)
	}
	for _, p := range st.Pending {
		fmt.Printf("pending approval: %s %s %s\n", p.ToolUseID, p.Tool, p.Input)
	}
	if st.Done != nil {
		fmt.Printf("done: %s\n", st.Done.Reason)
	}
	return nil
}

func approve(address, session string, a agentrt.Decision) error {
	if a.ToolUseID == "" {
		return errors.New("approve: -id is required (see the state command)")
	}
	c, err := dial(address)
	if err != nil {
		return err
	}
	defer c.Close()
	return agenttemporal.Approve(context.Background(), c, session, a)
}
