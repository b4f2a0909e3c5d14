package gemini

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/internal/providertest"
)

// resumeAgent is the agent of both processes: Gemini with thoughts, a
// weather tool, the session in a JSONL store, one turn per run so that
// the parent stops after the tool call and the child makes the follow-up.
func resumeAgent(client *genai.Client, store agentrt.SessionStore) *agentrt.Agent {
	return providertest.ResumeAgent(New(client, "gemini-3-pro-preview", &Options{MaxRetries: -1, ExtraFields: map[string]any{
		"generationConfig": map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true, "thinkingLevel": "HIGH"}}}}), store)
}

// TestResumeChild is the child process of TestResumeInNewProcess; it does
// nothing in a normal run. It resumes the session in a new Planner and
// lets the model answer the tool's result.
func TestResumeChild(t *testing.T) {
	providertest.ResumeChild(t, func(hc *http.Client, url string, store agentrt.SessionStore) *agentrt.Agent {
		client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: hc,
			HTTPOptions: genai.HTTPOptions{BaseURL: url},
		})
		require.NoError(t, err)
		return resumeAgent(client, store)
	})
}

// A session with an image, a document and thinking goes through the JSONL
// store into a new process, whose follow-up request sends the function
// call back with the real thought signature recorded from the API (not
// skip_thought_signature_validator), and the image and the document with
// their bytes.
func TestResumeInNewProcess(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "thinking-tool-call.response.json"), ok(t, "thinking-tool-result-followup.response.json"))
	dir := t.TempDir()
	store, err := agentrt.NewJSONLStore(dir, nil)
	require.NoError(t, err)
	png := agenttest.PNG
	pdf := []byte("%PDF-1.4 Florence")
	events, err := agenttest.Collect(resumeAgent(newClient(t, srv, genai.BackendGeminiAPI, nil), store).RunParts(context.Background(), "resume",
		"What's the weather in Florence, Italy?",
		agentrt.ImageBlock("image/png", png), agentrt.DocumentBlock("notes.pdf", "application/pdf", pdf)))
	require.NoError(t, err)
	done, _ := agenttest.Done(events)
	require.Equal(t, agentrt.StopMaxTurns, done.Reason)
	require.NoError(t, store.Close())

	assert.Contains(t, providertest.ResumeInChild(t, dir, srv.URL), "child answer: The current weather in Florence, Italy is 40°C")

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	recorded := decode(t, fixture(t, "thinking-tool-call.response.json"))
	sig := at(t, recorded, "candidates", 0, "content", "parts", 1, "thoughtSignature").(string)
	follow := reqs[1].Body
	jsonEq(t, `{"role":"user","parts":[{"text":"What's the weather in Florence, Italy?"},
		{"inlineData":{"mimeType":"image/png","data":"`+base64.StdEncoding.EncodeToString(png)+`"}},
		{"inlineData":{"mimeType":"application/pdf","data":"`+base64.StdEncoding.EncodeToString(pdf)+`"}}]}`, at(t, follow, "contents", 0))
	jsonEq(t, `{"role":"model","parts":[{"functionCall":{"id":"v3yybtcf","name":"weather","args":{"location":"Florence, Italy"}},"thoughtSignature":"`+sig+`"}]}`,
		at(t, follow, "contents", 1), "the real signature, from the first process")
	assert.NotContains(t, string(reqs[1].Raw), base64.StdEncoding.EncodeToString(skipSignature))
	jsonEq(t, `{"role":"user","parts":[{"functionResponse":{"id":"v3yybtcf","name":"weather","response":{"output":"40 C"}}}]}`, at(t, follow, "contents", 2))
}
