package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// An agent on the Responses API with a reasoning model. The reasoning
// item of the first answer is kept in the session as a thinking block and
// sent back, encrypted, with the tool's result. The client points at a
// stand-in for the API so that the example runs offline.
func ExampleNewResponses() {
	var sentBack bool
	api := fakeResponses(func(body string) {
		sentBack = sentBack || strings.Contains(body, `"encrypted_content":"gAAAA-example"`)
	})
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
		Planner:      openai.NewResponses(client, "gpt-5-mini", &openai.ResponsesOptions{ReasoningEffort: "low", ReasoningSummary: "auto"}),
	}
	for ev, err := range ag.Run(context.Background(), "s1", "What is 2+40?") {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case agentrt.AssistantMessage:
			for _, b := range e.Message.Blocks {
				if b.Type == agentrt.BlockThinking {
					fmt.Println("thinking:", b.Text)
				}
			}
		case agentrt.ToolResult:
			fmt.Println("tool:", e.Message.Content)
		case agentrt.Done:
			fmt.Println("answer:", e.FinalText)
		}
	}
	fmt.Println("reasoning sent back:", sentBack)
	// Output:
	// thinking: Add the two numbers with the tool.
	// tool: 42
	// answer: 2 + 40 = 42.
	// reasoning sent back: true
}

// fakeResponses is a stand-in for the Responses API for the example: a
// reasoning item and a function call first, then an answer; streamed when
// asked. It hands each request body to seen.
func fakeResponses(seen func(body string)) *httptest.Server {
	const usage = `"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":0},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":10},"total_tokens":70}`
	first := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini","output":[
		{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-example","summary":[{"type":"summary_text","text":"Add the two numbers with the tool."}]},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"add","arguments":"{\"a\":2,\"b\":40}"}],` + usage + `}`
	second := `{"id":"resp_2","object":"response","status":"completed","model":"gpt-5-mini","output":[
		{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"2 + 40 = 42.","annotations":[]}]}],` + usage + `}`
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen(string(body))
		resp := first
		if strings.Contains(string(body), "function_call_output") {
			resp = second
		}
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if resp == second {
			_, _ = io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"2 + 40 = 42.\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"sequence_number\":0}\n\n")
		}
		_, _ = io.WriteString(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":"+
			strings.ReplaceAll(resp, "\n", "")+"}\n\n")
	}))
}
