package agentrt_test

import (
	"context"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// A user turn with an image, and a tool that returns one: both reach the
// model as image parts (agenttest.Script stands in for the model here and
// records what it was sent).
func ExampleAgent_RunParts() {
	screenshot := agentrt.NewTool("screenshot", "Take a screenshot.",
		func(context.Context, struct{}) ([]agentrt.Block, error) {
			return []agentrt.Block{agentrt.TextBlock("the screen:"), agentrt.ImageBlock("image/png", agenttest.PNG)}, nil
		}, agentrt.ReadOnly())
	model := agenttest.Script(
		agenttest.CallTool("screenshot", `{}`),
		agenttest.Reply("Both show a single pixel."),
	)
	ag := &agentrt.Agent{Tools: []agentrt.Tool{screenshot}, Planner: model}
	photo := agentrt.ImageBlock("image/png", agenttest.PNG)
	for ev, err := range ag.RunParts(context.Background(), "s1", "Compare this photo with the screen.", photo) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if d, ok := ev.(agentrt.Done); ok {
			fmt.Println(d.FinalText)
		}
	}
	for _, m := range model.Requests()[1].Messages {
		fmt.Println(m)
	}
	// Output:
	// Both show a single pixel.
	// user: Compare this photo with the screen. [image image/png 70 bytes]
	// assistant: [tool_use call_1 screenshot {}]
	// tool call_1: the screen: [image image/png 70 bytes]
}
