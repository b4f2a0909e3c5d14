package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/anthropic"
)

// fakeAPI stands in for api.anthropic.com: it answers successive calls with
// the recorded or written responses in testdata, so that the examples run
// offline. Real programs leave out option.WithBaseURL.
func fakeAPI(files ...string) *httptest.Server {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		name := files[int(n.Add(1)-1)%len(files)]
		body, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if strings.HasSuffix(name, ".sse") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(body)
	}))
}

// One call to the Messages API.
func Example() {
	api := fakeAPI("text.json")
	defer api.Close()

	client := sdk.NewClient(option.WithAPIKey("sk-ant-..."), option.WithBaseURL(api.URL))
	p := anthropic.New(client, "claude-sonnet-4-5", &anthropic.Options{MaxTokens: 1024})

	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "You are a friendly assistant.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("Hello, how are you?")},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(resp.Message.Text())
	fmt.Println(resp.Finish, resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Model)
	// Output:
	// Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?
	// stop 12 29 claude-sonnet-4-5-20250929
}

type weatherIn struct {
	City string `json:"city" validate:"required"`
}

// An agent on Claude: the planner of the Agent is the adapter. The run
// streams; each text delta arrives as an agentrt.TextDelta.
func Example_agent() {
	api := fakeAPI("written/agent-1-weather-calls.sse", "written/agent-3-final-answer.sse")
	defer api.Close()

	client := sdk.NewClient(option.WithAPIKey("sk-ant-..."), option.WithBaseURL(api.URL))
	weather := agentrt.NewTool("weather", "Today's weather in a city.",
		func(_ context.Context, in weatherIn) (string, error) {
			return map[string]string{"Beijing": "12°C, clear", "Shanghai": "17.5°C, cloudy"}[in.City], nil
		}, agentrt.ReadOnly())

	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant. Use the tools for facts.",
		Tools:        []agentrt.Tool{weather},
		Planner:      anthropic.New(client, "claude-sonnet-4-5", nil),
	}
	for ev, err := range ag.Run(context.Background(), "s1", "What is the sum of today's temperatures in Beijing and Shanghai?") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Println("call:", e.Tool.Name, string(e.RawInput))
		case agentrt.ToolResult:
			fmt.Println("result:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("answer:", e.FinalText)
		}
	}
	// Output:
	// call: weather {"city":"Beijing"}
	// call: weather {"city":"Shanghai"}
	// result: 12°C, clear
	// result: 17.5°C, cloudy
	// answer: Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.
}

// The common case: an API key, the production API and the SDK's defaults.
// Options pass API features the adapter does not model, here automatic
// prompt caching, which pays off in agent loops that resend the session.
func ExampleNewFromAPIKey() {
	p := anthropic.NewFromAPIKey(os.Getenv("ANTHROPIC_API_KEY"), "claude-sonnet-4-5", &anthropic.Options{
		MaxTokens:   4096,
		MaxRetries:  4,
		ExtraFields: map[string]any{"cache_control": map[string]any{"type": "ephemeral"}},
	})
	_ = &agentrt.Agent{Planner: p}
}

// A tool the API runs itself, web fetch here, declared next to the agent's
// own tools with Options.ServerTools. What it adds to the reply (its call
// and its result) stays out of the message; the model's text stays.
func ExampleOptions_serverTools() {
	api := fakeAPI("web-fetch-error-result.json")
	defer api.Close()

	client := sdk.NewClient(option.WithAPIKey("sk-ant-..."), option.WithBaseURL(api.URL))
	p := anthropic.New(client, "claude-sonnet-4-5", &anthropic.Options{
		ServerTools: []sdk.ToolUnionParam{{OfWebFetchTool20250910: &sdk.WebFetchTool20250910Param{MaxUses: sdk.Int(1)}}},
	})

	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What does https://example.com/ai.pdf say about AI?")},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, b := range resp.Message.Blocks {
		fmt.Println(b.Type)
	}
	fmt.Println(resp.Finish, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// text
	// text
	// stop 1902 214
}
