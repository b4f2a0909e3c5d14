// Command custom-provider implements agentrt.Planner for an in-house model
// server in a page of code (provider.go) and runs an agent on it. Offline:
// it starts a stand-in for the server on loopback, a "model" that calls the
// add tool once and then answers; point -url at your server instead.
//
//	go run ./examples/custom-provider
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/agentrt/agentrt"
)

// AddIn is the add tool's input.
type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func main() {
	url := flag.String("url", "", "base URL of your model server (default: a local stand-in)")
	flag.Parse()
	if *url == "" {
		srv := httptest.NewServer(standIn())
		defer srv.Close()
		*url = srv.URL
		fmt.Println("model: a local stand-in for the in-house server (offline)")
	}
	if err := run(context.Background(), *url, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "custom-provider:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, w io.Writer) error {
	add := agentrt.NewTool("add", "Add two integers.",
		func(_ context.Context, in AddIn) (int, error) { return in.A + in.B, nil }, agentrt.ReadOnly())
	ag := &agentrt.Agent{
		Instructions: "Use the tools for arithmetic.",
		Tools:        []agentrt.Tool{add},
		Planner:      &InHouse{BaseURL: url},
	}
	for ev, err := range ag.Run(ctx, "s", "What is 2+40?") {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Fprintf(w, "-> %s %s\n", e.Tool.Name, e.RawInput)
		case agentrt.ToolResult:
			fmt.Fprintf(w, "<- %s\n", e.Message.Content)
		case agentrt.Done:
			fmt.Fprintf(w, "answer: %s (%d tokens)\n", e.FinalText, e.Usage.Total())
		}
	}
	return nil
}

// standIn is a toy model server speaking the in-house API: it calls add on
// the first turn and reports the tool's result on the next.
func standIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req wireRequest
		if r.URL.Path != "/generate" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var resp wireResponse
		resp.Usage.In, resp.Usage.Out = 20, 5
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			resp.Text = "2+40 is " + last.Text + "."
		} else {
			resp.ToolCalls = []wireCall{{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":40}`)}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	})
}
