package openai_test

import (
	"context"
	"net/http"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/providertest"
	"github.com/agentrt/agentrt/provider/openai"
)

// resumeAgent is the agent of both processes: gpt-5 on the Responses API
// with a reasoning summary, a weather tool, the session in a JSONL store,
// one turn per run so that the parent stops after the tool call and the
// child makes the follow-up.
func resumeAgent(client oai.Client, store agentrt.SessionStore) *agentrt.Agent {
	return providertest.ResumeAgent(openai.NewResponses(client, "gpt-5", recordedResponsesOpts), store)
}

// TestResumeChild is the child process of TestResponsesResumeInNewProcess;
// it does nothing in a normal run. It resumes the session with a new
// planner and lets the model answer the tool's result.
func TestResumeChild(t *testing.T) {
	providertest.ResumeChild(t, func(hc *http.Client, url string, store agentrt.SessionStore) *agentrt.Agent {
		return resumeAgent(oai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("test-key"),
			option.WithMaxRetries(0), option.WithHTTPClient(hc)), store)
	})
}

// A session whose reasoning item was written to the JSONL store by this
// process is resumed by a new process, whose follow-up request sends the
// item back with the encrypted content recorded from the API.
func TestResponsesResumeInNewProcess(t *testing.T) {
	t.Parallel()
	srv := newReplay(t, reply{body: rfixture(t, "reasoning-summary-tool-call.response.json")},
		reply{body: rfixture(t, "reasoning-summary-tool-result-followup.response.json")})
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	events, err := agenttest.Collect(resumeAgent(client, store).Run(context.Background(), "resume", "What's the weather in Florence, Italy?"))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	require.Equal(t, agentrt.StopMaxTurns, done.Reason)
	require.NoError(t, store.Close())
	require.Equal(t, 1, srv.count())

	assert.Contains(t, providertest.ResumeInChild(t, dir, srv.URL), "child answer: It’s currently about 40°C")

	require.Equal(t, 2, srv.count())
	item := recordedJSON(t, "reasoning-summary-tool-call.response.json")["output"].([]any)[0].(map[string]any)
	input := srv.request(1).Body["input"].([]any)
	require.Len(t, input, 5)
	sameJSON(t, map[string]any{"type": "reasoning", "id": item["id"], "encrypted_content": item["encrypted_content"],
		"summary": item["summary"]}, input[2], "the reasoning item written by the first process")
	sameJSON(t, recordedInput(t, "reasoning-summary-tool-result-followup.request.json"), withoutCallIDs(t, append(input[:2:2], input[3:]...)))
}
