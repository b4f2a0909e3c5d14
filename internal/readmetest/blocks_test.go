package readmetest

// Each function below holds one or more ```go blocks of README.md verbatim
// (modulo whitespace), so that the README's code is compiled and vetted
// with the tests, and run: readmeRuns (run_test.go) calls each function
// offline. TestREADMEBlocksCompile checks that every block is in a function
// that readmeRuns runs.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentotel"
	"github.com/agentrt/agentrt/agentslog"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/agentrt/agentrt/provider/anthropic"
	"github.com/agentrt/agentrt/provider/gemini"
	"github.com/agentrt/agentrt/provider/openai"
	"github.com/agentrt/agentrt/summarize"
	"github.com/agentrt/agentrt/terminal"
)

type WriteIn struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

func isFriday() bool { return time.Now().Weekday() == time.Friday }

func sixtySeconds(ctx context.Context, provider agentrt.Planner) error {
	type AddIn struct {
		A int `json:"a" jsonschema:"description=first addend" validate:"required"`
		B int `json:"b" validate:"required"`
	}

	add := agentrt.NewTool("add", "Add two integers.",
		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())

	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant.",
		Tools:        []agentrt.Tool{add},
		Planner:      provider, // e.g. openai.New(client, "gpt-4.1-mini", nil)
		Permission:   agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout)),
		MaxTurns:     20,
	}
	for ev, err := range ag.Run(ctx, "session-1", "What is 2+40?") {
		if err != nil {
			return err // planner or store failure, or ctx cancelled; the session is still valid
		}
		switch e := ev.(type) {
		case agentrt.ToolResult:
			log.Printf("%s -> %s", e.Tool, e.Message.Content)
		case agentrt.Done:
			fmt.Println(e.FinalText) // the model's answer (streamed as TextDelta events too, by providers that stream)
			log.Println(e.Reason, e.Layer, e.Usage.Total(), "tokens")
		}
	}
	return nil
}

func permissions(ag *agentrt.Agent) {
	ag.Permission = agentrt.AllowReadOnly()                                 // the default: write tools are denied
	ag.Permission = agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout)) // y / n / always
	ag.Permission = agentrt.AllowAll()                                      // trusted setups only
	ag.Permission = agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if req.Tool.ReadOnly {
			return agentrt.Decision{Allow: true}, nil
		}
		in, ok := req.Input.(WriteIn) // the decoded, validated input of write_file
		if !ok || strings.HasPrefix(in.Path, "/etc") {
			return agentrt.Decision{Reason: "only write_file outside /etc is allowed"}, nil
		}
		return agentrt.Decision{Allow: true}, nil
	})
}

func deferredApprovals(ctx context.Context, ag *agentrt.Agent) error {
	ag.Permission = agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if req.Tool.ReadOnly {
			return agentrt.Decision{Allow: true}, nil
		}
		return agentrt.Decision{Pending: true}, nil // a person decides, in a browser, maybe tomorrow
	})
	var pending []*agentrt.ToolCall
	for ev, err := range ag.Run(ctx, "s1", "Write the report.") {
		if err != nil {
			return err
		}
		if d, ok := ev.(agentrt.Done); ok && d.Reason == agentrt.StopPending {
			pending = d.Pending // show these; nothing runs until someone decides
		}
	}
	// ... later, when the person clicked Approve:
	for _, err := range ag.Resume(ctx, "s1", agentrt.Decision{ToolUseID: pending[0].ToolUseID, Allow: true}) {
		if err != nil {
			return err
		}
	}
	return nil
}

func limits(cheapModel agentrt.Planner) *agentrt.Agent {
	_ = &summarize.Compressor{Planner: cheapModel}
	ag := &agentrt.Agent{
		// ...
		MaxTurns:      20,                                  // default 20
		ToolTimeout:   30 * time.Second,                    // per call; a tool's WithTimeout wins
		MaxToolOutput: 64 << 10,                            // longer results are cut with a note; ToolResult.FullOutput keeps it all
		LoopGuard:     agentrt.LoopGuard{Warn: 3, Stop: 5}, // on by default
		Retry:         agentrt.RetryPolicy{MaxAttempts: 3}, // transient planner errors, with backoff
		Budget: agentrt.Budget{
			MaxTokens:   200_000,
			MaxCost:     0.50,
			Prices:      agentrt.Prices{Input: 3, Output: 15}, // per million tokens
			MaxDuration: 10 * time.Minute,
		},
		Compressor:    agentrt.Window{}, // or &summarize.Compressor{Planner: cheapModel}
		ContextTokens: 100_000,
	}
	return ag
}

func hooks(ag *agentrt.Agent) {
	ag.Hooks = []agentrt.Hooks{
		agentslog.Hooks(slog.Default()),           // one record per planner call, tool call and run
		agentotel.Hooks(otel.GetTracerProvider()), // GenAI-convention spans: invoke_agent, chat, execute_tool
		{
			BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
				if call.Tool.Name == "deploy" && isFriday() {
					return ctx, errors.New("no deploys on Fridays") // the model sees the reason
				}
				return ctx, nil
			},
		},
	}
}

func typed(ctx context.Context, ag *agentrt.Agent) error {
	type Verdict struct {
		Label      string  `json:"label" jsonschema:"enum=spam,enum=ham" validate:"oneof=spam ham"`
		Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
	}
	v, err := agentrt.RunTyped[Verdict](ctx, ag, "s1", "Classify: WIN A PRIZE", nil)
	// an invalid answer is sent back with what was wrong (twice by default);
	// then err is an *agentrt.OutputError holding the last raw answer
	_ = v
	return err
}

func subAgents(coordinator *agentrt.Agent, unitTools []agentrt.Tool, planner agentrt.Planner) {
	units := &agentrt.Agent{Name: "units", Instructions: "You convert units.", Tools: unitTools, Planner: planner}
	coordinator.Tools = append(coordinator.Tools,
		agentrt.AgentTool(units, "units", "Ask the units specialist."))
	// the child runs in session "<parent>~units~<tool_use_id>", linked from the parent;
	// its events arrive as agentrt.SubAgentEvent; the parent's permission checker decides its calls
}

// testingExample is the README's test example; readmeRuns runs it as a test.
func testingExample(t *testing.T) {
	type AddIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	ctx := context.Background()
	ag := &agentrt.Agent{Tools: []agentrt.Tool{agentrt.NewTool("add", "Add.",
		func(_ context.Context, in AddIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())}}
	fake := agenttest.Script(
		agenttest.CallTool("add", `{"a":2,"b":40}`),
		agenttest.Reply("42"),
	)
	ag.Planner = fake
	events, err := agenttest.Collect(ag.Run(ctx, "s1", "2+40?"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "42", done.FinalText)
	fake.AssertDone(t)                   // every step was used
	shown := fake.Requests()[1].Messages // what the model was shown
	agenttest.AssertInvariants(t, shown) // a well-formed session
}

func mcpClient(ctx context.Context, dir string, add agentrt.Tool, planner agentrt.Planner) error {
	c, err := mcptool.Connect(ctx,
		mcptool.Stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", dir),
		&mcptool.Options{Prefix: "fs_"}) // fs_read_text_file, fs_write_file, ...
	if err != nil {
		return err
	}
	defer c.Close() // stops the server process
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	ag := &agentrt.Agent{
		Tools:      append(tools, add),
		Planner:    planner,
		Permission: agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout)), // fs_write_file asks
	}
	_ = ag
	return nil
}

func mcpServer(ctx context.Context, add, writeFile agentrt.Tool) error {
	srv := mcptool.NewServer([]agentrt.Tool{add, writeFile}, &mcptool.ServerOptions{
		Name:       "my-tools",
		Permission: agentrt.AllowReadOnly(), // the default: MCP clients may not run write tools
	})

	// Over stdio, for Claude Desktop, an IDE or another agent:
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil {
		return err
	}

	// Or over Streamable HTTP:
	http.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	return nil
}

func callMyServer(context.Context, string, []agentrt.Message) (string, error) { return "", nil }

func providers(ag *agentrt.Agent) error {
	gpt := openai.New(oai.NewClient(option.WithMaxRetries(0)), "gpt-4.1-mini", nil) // reads OPENAI_API_KEY; the Agent retries
	claude := anthropic.NewFromAPIKey(os.Getenv("ANTHROPIC_API_KEY"), "claude-sonnet-4-5", nil)
	gem, err := gemini.NewFromAPIKey(os.Getenv("GEMINI_API_KEY"), "gemini-2.5-flash", nil)
	if err != nil {
		return err
	}
	llama := openai.NewCompatible("http://localhost:11434/v1", "ollama", "llama3.2", nil) // Ollama, vLLM, llama.cpp, LM Studio, DeepSeek...

	ag.Planner = claude // or gpt, gem, llama
	_ = []agentrt.Planner{gpt, claude, gem, llama}

	var inHouse agentrt.Planner = agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		text, err := callMyServer(ctx, req.System, req.Messages)
		if err != nil {
			return nil, err
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)), Finish: agentrt.FinishStop}, nil
	})
	_ = inHouse
	return nil
}

func sessions(ctx context.Context, planner agentrt.Planner, tools []agentrt.Tool) error {
	store, err := agentrt.NewJSONLStore("sessions", nil) // dir created 0700, files 0600
	if err != nil {
		return err
	}
	defer store.Close()
	ag := &agentrt.Agent{Planner: planner, Tools: tools, Store: store}

	for ev, err := range ag.Run(ctx, "trip-42", "Plan a weekend in Lisbon.") {
		_, _ = ev, err // ...
	}
	// Later (another process, after a crash or a reboot) the same id resumes:
	for ev, err := range ag.Run(ctx, "trip-42", "Make it three days.") {
		_, _ = ev, err // ...
	}
	return nil
}

var _ = []any{sessions, providers, sixtySeconds, permissions, limits, hooks, typed, subAgents, mcpClient, mcpServer}
