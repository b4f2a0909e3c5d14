package jsonplanner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/jsonplanner"
)

// The JSON-text planner passes the images of a user message and of a tool
// result on to its provider, in order.
func TestJSONPlannerKeepsParts(t *testing.T) {
	t.Parallel()
	fake := agenttest.Script(agenttest.Reply(`{"action":"final_answer","answer":"a dot"}`))
	img := agentrt.ImageBlock("image/png", agenttest.PNG)
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("What is this?", img),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock("c1", "shot", json.RawMessage(`{}`))),
		{Role: agentrt.RoleTool, ToolUseID: "c1", Content: "the screen", Blocks: []agentrt.Block{img}},
		agentrt.NewUserMessage("And now?"),
	}}
	_, err := jsonplanner.New(fake, nil).Plan(context.Background(), req)
	require.NoError(t, err)
	sent := fake.Requests()[0].Messages
	require.Len(t, sent, 3)
	assert.Equal(t, []agentrt.Block{img}, sent[0].Blocks)
	last := sent[2]
	require.Len(t, last.Blocks, 2)
	assert.Contains(t, last.Content, "the screen")
	assert.Equal(t, img, last.Blocks[0])
	assert.Equal(t, agentrt.TextBlock("And now?"), last.Blocks[1], "text after an image stays after it")
}
