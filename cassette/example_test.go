package cassette_test

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/cassette"
	"github.com/agentrt/agentrt/provider/anthropic"
)

// In a test, pass t. The cassette testdata/anthropic/text-stream.yaml
// holds a streamed answer of Claude: it is replayed, delta by delta, with
// no network and no key. With AGENTRT_CASSETTE=record and a key, the same
// code calls the API and writes the cassette.
func ExampleNew() {
	t := &exampleT{}
	defer t.finish()

	rec := cassette.New(t, "testdata/anthropic/text-stream", &cassette.Options{
		Mode:   cassette.Replay, // a test leaves it to AGENTRT_CASSETTE
		KeyEnv: []string{"ANTHROPIC_API_KEY"},
	})
	client := sdk.NewClient(option.WithHTTPClient(rec.Client()), option.WithAPIKey(os.Getenv("ANTHROPIC_API_KEY")))
	claude := anthropic.New(client, "claude-sonnet-4-5-20250929", nil)

	var deltas int
	resp, err := claude.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "You are a helpful assistant.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's the weather in Florence?")},
		Tools:    weatherSpecs(),
		OnText:   func(string) { deltas++ },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d deltas: %s\n", deltas, resp.Message.Text())
	// Output:
	// 6 deltas: Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?
}

// weatherSpecs are the tools of the recorded request.
func weatherSpecs() []agentrt.ToolSpec {
	return []agentrt.ToolSpec{weatherAgent(nil, "", toolDesc).Tools[0].Spec()}
}

// exampleT stands in for a *testing.T in the example.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                        {}
func (*exampleT) Errorf(format string, a ...any) { fmt.Printf(format+"\n", a...) }
func (*exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (*exampleT) Skipf(format string, a ...any)  { panic(fmt.Sprintf(format, a...)) }
func (t *exampleT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) finish() {
	for _, f := range t.cleanups {
		f()
	}
}
