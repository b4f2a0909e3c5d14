package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/providertest"
)

// resumeAgent is the agent of both processes: Claude with thinking, a
// weather tool, the session in a JSONL store, one turn per run so that
// the parent stops after the tool call and the child makes the follow-up.
func resumeAgent(client sdk.Client, store agentrt.SessionStore) *agentrt.Agent {
	return providertest.ResumeAgent(New(client, "claude-sonnet-4-20250514", thinkingOpts), store)
}

// TestResumeChild is the child process of TestResumeInNewProcess; it does
// nothing in a normal run. It resumes the session and lets the model
// answer the tool's result.
func TestResumeChild(t *testing.T) {
	providertest.ResumeChild(t, func(hc *http.Client, url string, store agentrt.SessionStore) *agentrt.Agent {
		return resumeAgent(sdk.NewClient(option.WithBaseURL(url), option.WithAPIKey("test-key"),
			option.WithMaxRetries(0), option.WithHTTPClient(hc)), store)
	})
}

// A session with an image, a document and a thinking block goes through
// the JSONL store into a new process, whose follow-up request sends the
// thinking block back with the real signature recorded from the API, and
// the image and the document with their bytes.
func TestResumeInNewProcess(t *testing.T) {
	t.Parallel()
	r := newReplay(t,
		jsonReply(fixture(t, "thinking-tool-call.response.json")),
		jsonReply(fixture(t, "thinking-tool-result-followup.response.json")))
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	png := agenttest.PNG
	doc := []byte("Florence is in Tuscany.\n")
	events, err := agenttest.Collect(resumeAgent(r.client(), store).RunParts(context.Background(), "resume",
		"What's the weather in Florence, Italy?",
		agentrt.ImageBlock("image/png", png), agentrt.DocumentBlock("notes.txt", "text/plain", doc)))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	require.Equal(t, agentrt.StopMaxTurns, done.Reason)
	require.NoError(t, store.Close())

	assert.Contains(t, providertest.ResumeInChild(t, dir, r.srv.URL), "child answer: The current temperature in Florence, Italy is 40°C")

	reqs := r.requests()
	require.Len(t, reqs, 2)
	var recorded struct {
		Content []struct{ Signature string } `json:"content"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "thinking-tool-call.response.json"), &recorded))
	msgs := reqs[1].json(t)["messages"].([]any)
	require.Len(t, msgs, 3)
	user := msgs[0].(map[string]any)["content"].([]any)
	assert.JSONEq(t, `[{"type":"text","text":"What's the weather in Florence, Italy?"},
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+base64.StdEncoding.EncodeToString(png)+`"}},
		{"type":"document","title":"notes.txt","source":{"type":"text","media_type":"text/plain","data":"Florence is in Tuscany.\n"}}]`, jsonOf(t, user))
	assistant := msgs[1].(map[string]any)["content"].([]any)
	thinking := assistant[0].(map[string]any)
	assert.Equal(t, "thinking", thinking["type"])
	assert.Equal(t, recorded.Content[0].Signature, thinking["signature"], "the real signature, from the first process")
	assert.Equal(t, "tool_use", assistant[1].(map[string]any)["type"])
	assert.Equal(t, "tool_result", msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)["type"])
}
