package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveOfflineFallback(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_HOST", "AGENTRT_PROVIDER"} {
		t.Setenv(k, "")
	}
	var out strings.Builder
	require.NoError(t, run(context.Background(), nil, &out))
	s := out.String()
	assert.Contains(t, s, "planner: scripted (offline")
	assert.Contains(t, s, `-> weather {"city":"Beijing"}`)
	assert.Contains(t, s, `<- {"city":"Shanghai","temp_celsius":17.5,"sky":"cloudy"}`)
	assert.Contains(t, s, "<- 29.5\n")
	assert.Contains(t, s, "assistant: Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.\n")
	assert.Contains(t, s, "[complete after 3 turns")
}

// With AGENTRT_PROVIDER=openai-responses the agent runs on the Responses
// API (here a stand-in server, reached through OPENAI_BASE_URL): the
// reasoning summary is shown, and the reasoning item goes back,
// encrypted, with the tools' results.
func TestLiveOpenAIResponses(t *testing.T) {
	answers := []string{
		`{"type":"reasoning","id":"rs_1","encrypted_content":"enc-1","summary":[{"type":"summary_text","text":"Look up both cities."}]},
		 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Beijing\"}","status":"completed"},
		 {"type":"function_call","id":"fc_2","call_id":"call_2","name":"weather","arguments":"{\"city\":\"Shanghai\"}","status":"completed"}`,
		`{"type":"function_call","id":"fc_3","call_id":"call_3","name":"calculator","arguments":"{\"op\":\"add\",\"a\":12,\"b\":17.5}","status":"completed"}`,
		`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"The sum is 29.5°C.","annotations":[]}]}`,
	}
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		resp := `{"id":"resp_x","object":"response","status":"completed","model":"gpt-5-mini","output":[` + answers[min(len(bodies), len(answers))-1] +
			`],"usage":{"input_tokens":10,"output_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}}`
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":0,\"response\":%s}\n\n", strings.ReplaceAll(resp, "\n", ""))
	}))
	defer srv.Close()
	t.Setenv("AGENTRT_PROVIDER", "openai-responses")
	t.Setenv("AGENTRT_MODEL", "")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("OPENAI_BASE_URL", srv.URL)

	var out strings.Builder
	require.NoError(t, run(context.Background(), nil, &out))
	s := out.String()
	assert.Contains(t, s, "planner: openai-responses, model gpt-5-mini")
	assert.Contains(t, s, "(thinking: Look up both cities.)")
	assert.Contains(t, s, "<- 29.5\n")
	assert.Contains(t, s, "The sum is 29.5°C.")
	require.Len(t, bodies, 3)
	assert.Contains(t, bodies[1], `"encrypted_content":"enc-1"`)
	assert.Contains(t, bodies[2], `"encrypted_content":"enc-1"`)
	assert.Contains(t, bodies[0], `"store":false`)
}
