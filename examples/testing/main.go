// Command testing shows how to test an agent with agenttest: a scripted
// planner for unit tests, and record-and-replay for golden tests. See
// agent_test.go; `go test ./examples/testing` runs them.
//
// With -record, it records a session to testdata/ (the golden file the
// replay test reads): against a real model when -provider names one and its
// key is set, with the scripted planner otherwise (offline, the default).
//
//	go run ./examples/testing -record
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/provider/openai"
)

// Question is the task of the recorded session.
const Question = "What is the sum of today's temperatures in Beijing and Shanghai?"

// RecordedID is the session id of the golden file testdata/<id>.jsonl.
const RecordedID = "recorded"

func scripted() *agenttest.Planner {
	return agenttest.Script(
		agenttest.CallTools(agenttest.ToolUse("weather", `{"city":"Beijing"}`), agenttest.ToolUse("weather", `{"city":"Shanghai"}`)),
		agenttest.CallTool("add", `{"a":12,"b":17.5}`),
		agenttest.Reply("The sum is 29.5°C."),
	)
}

func main() {
	record := flag.Bool("record", false, "record a session to testdata/")
	provider := flag.String("provider", "scripted", "scripted or openai (needs OPENAI_API_KEY)")
	model := flag.String("model", "gpt-4.1-mini", "model for -provider openai")
	flag.Parse()
	if !*record {
		fmt.Println("run `go test ./examples/testing` for the tests, or -record to record the golden session")
		return
	}
	var planner agentrt.Planner = scripted()
	if *provider == "openai" {
		planner = openai.New(oai.NewClient(option.WithMaxRetries(0)), *model, nil)
	}
	dir := filepath.Join("examples", "testing", "testdata")
	if _, err := os.Stat(dir); err != nil {
		dir = "testdata"
	}
	_ = os.Remove(filepath.Join(dir, RecordedID+".jsonl"))
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer store.Close()
	for _, err := range NewAgent(planner, store).Run(context.Background(), RecordedID, Question) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("recorded %s/%s.jsonl with the %s planner\n", dir, RecordedID, *provider)
}
