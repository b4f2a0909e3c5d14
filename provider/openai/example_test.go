package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// An agent on OpenAI with one tool. The client points at a stand-in for
// the API so that the example runs offline; drop option.WithBaseURL to
// talk to OpenAI.
func Example() {
	api := fakeOpenAI()
	defer api.Close()

	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil },
		agentrt.ReadOnly())

	client := oai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("sk-..."))
	ag := &agentrt.Agent{
		Instructions: "You are a careful assistant.",
		Tools:        []agentrt.Tool{add},
		Planner:      openai.New(client, "gpt-4.1-mini", nil),
	}
	for ev, err := range ag.Run(context.Background(), "s1", "What is 2+40?") {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case agentrt.ToolResult:
			fmt.Println("tool:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("answer:", e.FinalText)
		}
	}
	// Output:
	// tool: 42
	// answer: 2 + 40 = 42.
}

// One call, without an agent.
func ExampleProvider_Plan() {
	api := fakeOpenAI()
	defer api.Close()

	client := oai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("sk-..."))
	temp := 0.2
	p := openai.New(client, "gpt-4.1-mini", &openai.Options{Temperature: &temp, MaxTokens: 200})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "Answer in one short sentence.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("Say hello.")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text())
	fmt.Println(resp.Finish, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// Hello!
	// stop 12 3
}

// A local model served by Ollama (https://ollama.com), through its
// OpenAI-compatible endpoint. vLLM, llama.cpp server, LM Studio, DeepSeek
// and Qwen work the same way with their base URL and key.
func ExampleNewCompatible() {
	p := openai.NewCompatible("http://localhost:11434/v1", "ollama", "llama3.2", nil)
	ag := &agentrt.Agent{
		Instructions: "You are a helpful assistant.",
		Planner:      p,
	}
	for ev, err := range ag.Run(context.Background(), "local", "Why is the sky blue?") {
		if err != nil {
			log.Fatal(err)
		}
		if d, ok := ev.(agentrt.TextDelta); ok {
			fmt.Print(d.Text)
		}
	}
}

// fakeOpenAI is a stand-in for the Chat Completions API for the examples:
// a tool call first when tools are offered, then an answer; streamed when
// asked.
func fakeOpenAI() *httptest.Server {
	var calls atomic.Int32
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-ex","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	const usage = `data: {"id":"chatcmpl-ex","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini-2025-04-14","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}` + "\n\n"
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"chatcmpl-ex","object":"chat.completion","created":1,"model":"gpt-4.1-mini-2025-04-14",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			_, _ = io.WriteString(w, chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,"}}]}`, "null")+
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"b\":40}"}}]}`, "null")+
				chunk(`{}`, `"tool_calls"`)+usage+"data: [DONE]\n\n")
			return
		}
		_, _ = io.WriteString(w, chunk(`{"role":"assistant","content":"2 + 40"}`, "null")+
			chunk(`{"content":" = 42."}`, `"stop"`)+usage+"data: [DONE]\n\n")
	}))
}
