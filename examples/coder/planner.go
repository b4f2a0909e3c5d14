package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/provider/anthropic"
	"github.com/agentrt/agentrt/provider/gemini"
	"github.com/agentrt/agentrt/provider/openai"
)

// demoLabel is shown wherever the scripted planner is in use, so that no
// one mistakes its canned answers for a model's.
const demoLabel = "scripted demo planner: no model is called"

// Default models, per provider; -model replaces them.
var defaultModels = map[string]string{
	"openai":    "gpt-4.1-mini",
	"anthropic": "claude-sonnet-4-5",
	"gemini":    "gemini-2.5-flash",
	"ollama":    "llama3.2",
}

// choosePlanner returns the planner named by provider, or else by
// AGENTRT_PROVIDER ("auto" picks from the environment: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
// OLLAMA_HOST, in that order, and the scripted demo planner when none is
// set), with the model named by model, AGENTRT_MODEL or a default, and a
// description of it for the banner. Building a provider makes
// no network call.
func choosePlanner(provider, model string, getenv func(string) string) (agentrt.Planner, string, error) {
	if path := getenv(scriptEnv); path != "" {
		sp, err := loadScript(path)
		if err != nil {
			return nil, "", err
		}
		return sp, "test script " + path + ": no model is called", nil
	}
	if provider == "" || provider == "auto" {
		provider = getenv("AGENTRT_PROVIDER")
	}
	if model == "" {
		model = getenv("AGENTRT_MODEL")
	}
	if provider == "" || provider == "auto" {
		provider = "scripted"
		for _, c := range []struct{ env, name string }{
			{"OPENAI_API_KEY", "openai"},
			{"ANTHROPIC_API_KEY", "anthropic"},
			{"GEMINI_API_KEY", "gemini"},
			{"OLLAMA_HOST", "ollama"},
		} {
			if getenv(c.env) != "" {
				provider = c.name
				break
			}
		}
	}
	if provider == "scripted" {
		return &demoPlanner{}, demoLabel, nil
	}
	if model == "" {
		model = defaultModels[provider]
	}
	var p agentrt.Planner
	switch provider {
	case "openai":
		key := getenv("OPENAI_API_KEY")
		if key == "" {
			return nil, "", fmt.Errorf("-provider openai needs OPENAI_API_KEY")
		}
		p = openai.New(oai.NewClient(option.WithAPIKey(key), option.WithMaxRetries(0)), model, nil) // the Agent retries
	case "anthropic":
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, "", fmt.Errorf("-provider anthropic needs ANTHROPIC_API_KEY")
		}
		p = anthropic.NewFromAPIKey(key, model, nil)
	case "gemini":
		key := getenv("GEMINI_API_KEY")
		if key == "" {
			return nil, "", fmt.Errorf("-provider gemini needs GEMINI_API_KEY")
		}
		gp, err := gemini.NewFromAPIKey(key, model, nil)
		if err != nil {
			return nil, "", err
		}
		p = gp
	case "ollama":
		p = openai.NewCompatible(ollamaURL(getenv("OLLAMA_HOST")), "ollama", model, nil)
	default:
		return nil, "", fmt.Errorf("unknown -provider %q (want auto, scripted, openai, anthropic, gemini or ollama)", provider)
	}
	return p, provider + " " + model, nil
}

// ollamaURL turns OLLAMA_HOST ("host:port", "http://host:port" or empty)
// into the base URL of Ollama's OpenAI-compatible API.
func ollamaURL(host string) string {
	if host == "" {
		host = "127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return strings.TrimSuffix(host, "/") + "/v1"
}

// demoPlanner stands in for a model when none is configured. For every
// user message it plays a fresh agenttest script that does what a model
// might do with any task: list the root, read a file, write NOTES.md (a
// write, so the permission policy is asked), then reply. Its replies say
// that they are scripted.
//
// It is safe for concurrent use, though one run at a time is what it is
// meant for.
type demoPlanner struct {
	mu     sync.Mutex
	script *agenttest.Planner
}

// Plan starts a new script when the conversation ends with a user message
// (a new task) and plays the current script's next step.
func (d *demoPlanner) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	d.mu.Lock()
	n := len(req.Messages)
	if d.script == nil || d.script.Remaining() == 0 || n > 0 && req.Messages[n-1].Role == agentrt.RoleUser {
		d.script = demoScript()
	}
	s := d.script
	d.mu.Unlock()
	return s.Plan(ctx, req)
}

// Describe names the planner in logs.
func (d *demoPlanner) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: "scripted", Model: "demo"}
}

// demoScript is one task's worth of scripted steps.
func demoScript() *agenttest.Planner {
	return agenttest.Script(
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return callTool(req, "list_dir", ListDirIn{Path: "."}), nil
		}),
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			if f := pickFile(lastResult(req)); f != "" {
				return callTool(req, "read_file", ReadFileIn{Path: f}), nil
			}
			return callTool(req, "list_dir", ListDirIn{Path: "."}), nil
		}),
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return callTool(req, "write_file", WriteFileIn{Path: "NOTES.md", Content: demoNotes(req)}), nil
		}),
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return demoReply(req), nil
		}),
	)
}

// callTool answers with one tool call. Its id is unique in the session:
// the session only grows.
func callTool(req *agentrt.ModelRequest, name string, in any) *agentrt.ModelResponse {
	b, _ := json.Marshal(in)
	id := fmt.Sprintf("demo_%d", len(req.Messages))
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id, name, b)),
		Finish:  agentrt.FinishToolUse,
	}
}

// task returns the last user message and the number of messages before it.
func task(req *agentrt.ModelRequest) (string, int) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agentrt.RoleUser {
			return req.Messages[i].Content, i
		}
	}
	return "", 0
}

// lastResult returns the last message if it is a tool result.
func lastResult(req *agentrt.ModelRequest) agentrt.Message {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == agentrt.RoleTool {
		return req.Messages[n-1]
	}
	return agentrt.Message{}
}

// resultOf returns the result of the tool call named tool in this task.
func resultOf(req *agentrt.ModelRequest, tool string) (agentrt.Message, bool) {
	_, start := task(req)
	ids := map[string]bool{}
	for _, m := range req.Messages[start:] {
		for _, u := range m.ToolUses() {
			if u.Name == tool {
				ids[u.ID] = true
			}
		}
		if m.Role == agentrt.RoleTool && ids[m.ToolUseID] {
			return m, true
		}
	}
	return agentrt.Message{}, false
}

// pickFile chooses a file from a list_dir result: README.md if there is
// one, else the first regular file.
func pickFile(listing agentrt.Message) string {
	if listing.IsError {
		return ""
	}
	first := ""
	for _, name := range strings.Split(listing.Content, "\n") {
		if name == "" || strings.HasSuffix(name, "/") || strings.HasSuffix(name, "@") || strings.HasPrefix(name, "[") || name == "(empty directory)" {
			continue
		}
		if strings.EqualFold(name, "README.md") {
			return name
		}
		if first == "" {
			first = name
		}
	}
	return first
}

// readPath returns the path of this task's read_file call.
func readPath(req *agentrt.ModelRequest) string {
	_, start := task(req)
	for _, m := range req.Messages[start:] {
		for _, u := range m.ToolUses() {
			var in ReadFileIn
			if u.Name == "read_file" && json.Unmarshal(u.Input, &in) == nil {
				return in.Path
			}
		}
	}
	return "a file"
}

// demoNotes is the content the demo writes to NOTES.md.
func demoNotes(req *agentrt.ModelRequest) string {
	t, _ := task(req)
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Notes\n\nTask: %s\n\n", strings.Join(strings.Fields(t), " "))
	if m, ok := resultOf(req, "list_dir"); ok && !m.IsError {
		sb.WriteString("Files in the root directory:\n\n")
		for _, name := range strings.Split(strings.TrimSpace(m.Content), "\n") {
			fmt.Fprintf(&sb, "- %s\n", name)
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "Written by the %s.\n", demoLabel)
	return sb.String()
}

// demoReply is the final answer, streamed in small pieces through
// req.OnText as a model's would be.
func demoReply(req *agentrt.ModelRequest) *agentrt.ModelResponse {
	_, earlier := task(req)
	var sb strings.Builder
	fmt.Fprintf(&sb, "(%s.) ", demoLabel)
	if m, ok := resultOf(req, "list_dir"); ok && !m.IsError {
		fmt.Fprintf(&sb, "I listed the root directory (%s)", plural(countLines(m.Content), "entry", "entries"))
	} else {
		sb.WriteString("I could not list the root directory")
	}
	if m, ok := resultOf(req, "read_file"); ok {
		if m.IsError {
			fmt.Fprintf(&sb, ", could not read a file (%s)", m.Content)
		} else {
			fmt.Fprintf(&sb, ", read %s (%s)", readPath(req), plural(countLines(m.Content), "line", "lines"))
		}
	}
	if m, ok := resultOf(req, "write_file"); ok && !m.IsError {
		sb.WriteString(", and wrote NOTES.md.")
	} else if ok {
		fmt.Fprintf(&sb, ", but did not write NOTES.md: %s.", strings.TrimSuffix(m.Content, "."))
	}
	fmt.Fprintf(&sb, " Earlier messages in this session: %d.", earlier)
	text := sb.String()
	if req.OnText != nil {
		for _, w := range strings.SplitAfter(text, " ") {
			req.OnText(w)
		}
	}
	return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)), Finish: agentrt.FinishStop}
}

// plural returns "1 line" or "n lines".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
