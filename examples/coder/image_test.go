package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func TestReadImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shot.png"), agenttest.PNG, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600))
	ws, err := openWorkspace(dir)
	require.NoError(t, err)
	defer ws.Close()

	// An agent calls read_image; the image reaches the next model request
	// as an image part of the tool result.
	script := agenttest.Script(
		agenttest.CallTools(
			agenttest.ToolUse("read_image", `{"path":"shot.png"}`),
			agenttest.ToolUse("read_image", `{"path":"notes.txt"}`),
			agenttest.ToolUse("read_image", `{"path":"../outside.png"}`),
		),
		agenttest.Reply("A single pixel."),
	)
	ag := &agentrt.Agent{Tools: ws.tools(), Planner: script}
	events, err := agenttest.Collect(ag.Run(context.Background(), "img", "What is in shot.png?"))
	require.NoError(t, err)
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 3)

	ok := results[0].Message
	assert.False(t, ok.IsError)
	assert.Equal(t, "shot.png (image/png, 70 bytes):", ok.Content)
	require.Len(t, ok.Blocks, 1)
	assert.Equal(t, agentrt.ImageBlock("image/png", agenttest.PNG), ok.Blocks[0])

	assert.True(t, results[1].Message.IsError)
	assert.Contains(t, results[1].Message.Content, "not a PNG, JPEG, GIF or WebP image")
	assert.True(t, results[2].Message.IsError)
	assert.Contains(t, results[2].Message.Content, "escapes the root directory")

	next := script.Requests()[1].Messages
	b, err := json.Marshal(next[2])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"type":"image","media_type":"image/png"`)
}
