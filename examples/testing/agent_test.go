package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

// A unit test: the scripted planner plays the model; assert on the tool
// results, the final answer and what the model was shown.
func TestAgentWithScript(t *testing.T) {
	t.Parallel()
	script := scripted()
	store := &agentrt.MemoryStore{}
	events, err := agenttest.Collect(NewAgent(script, store).Run(context.Background(), "s", Question))
	require.NoError(t, err)
	script.AssertDone(t)

	var results []string
	for _, r := range agenttest.Filter[agentrt.ToolResult](events) {
		results = append(results, r.Tool+"="+r.Message.Content)
	}
	assert.Equal(t, []string{"weather=12", "weather=17.5", "add=29.5"}, results)
	done, _ := agenttest.Done(events)
	assert.Equal(t, "The sum is 29.5°C.", done.FinalText)

	// What the model saw on its last turn: both temperatures and the sum.
	last := script.Requests()[2].Messages
	assert.Equal(t, "29.5", last[len(last)-1].Content)
	msgs, _ := store.Load(context.Background(), "s")
	agenttest.AssertInvariants(t, msgs)
}

// An unknown city: the tool error reaches the model, the run goes on.
func TestAgentToolErrorReachesModel(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.CallTool("weather", `{"city":"Atlantis"}`), agenttest.Reply("I have no data for Atlantis."))
	events, err := agenttest.Collect(NewAgent(script, nil).Run(context.Background(), "s", "Weather in Atlantis?"))
	require.NoError(t, err)
	res := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, res, 1)
	assert.True(t, res[0].Message.IsError)
	assert.Equal(t, `tool "weather": no data for "Atlantis"`, res[0].Message.Content)
}

// A golden test: replay a recorded session (testdata/recorded.jsonl) and
// diff the new session against it. Any change in what the tools return or
// in the tools offered shows up as a failing diff.
func TestGoldenReplay(t *testing.T) {
	t.Parallel()
	recorded := loadRecorded(t)
	replay := agenttest.Replay(recorded)
	store := &agentrt.MemoryStore{}
	_, err := agenttest.Collect(NewAgent(replay, store).Run(context.Background(), "replay", recorded[0].Content))
	require.NoError(t, err)
	got, _ := store.Load(context.Background(), "replay")
	if d := agenttest.Diff(recorded, got); d != "" {
		t.Errorf("the replayed session differs from the recording:\n%s", d)
	}
	replay.AssertDone(t)
}

// The golden test fails when the agent changes: here the weather tool
// starts answering in Fahrenheit.
func TestGoldenReplayCatchesChange(t *testing.T) {
	t.Parallel()
	recorded := loadRecorded(t)
	store := &agentrt.MemoryStore{}
	ag := NewAgent(agenttest.Replay(recorded), store)
	ag.Tools[0] = agentrt.NewTool("weather", "Temperature in °F.", func(_ context.Context, in WeatherIn) (float64, error) {
		return 53.6, nil
	}, agentrt.ReadOnly())
	_, err := agenttest.Collect(ag.Run(context.Background(), "replay", recorded[0].Content))
	require.NoError(t, err)
	got, _ := store.Load(context.Background(), "replay")
	d := agenttest.Diff(recorded, got)
	assert.Contains(t, d, "-tool call_1: 12")
	assert.Contains(t, d, "+tool call_1: 53.6")
}

func loadRecorded(t *testing.T) []agentrt.Message {
	t.Helper()
	// Copy the golden file: a JSONLStore may repair a file it opens.
	dir := t.TempDir()
	src, err := os.Open(filepath.Join("testdata", RecordedID+".jsonl"))
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, RecordedID+".jsonl"))
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	msgs, err := store.Load(context.Background(), RecordedID)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs
}
