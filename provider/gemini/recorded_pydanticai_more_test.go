package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// More replays of pydantic/pydantic-ai VCR cassettes of the Gemini API
// (testdata/pydanticai, see its README.md): built-in tools, a safety
// block, structured output, a video given by URL, and usage in a stream.
// Each test also compares the adapter's request with the recorded one,
// which the API answered.

// Recorded (pydantic-ai test_google_model_builtin_code_execution_stream):
// gemini-2.5-pro with the codeExecution tool streams an executableCode and
// a codeExecutionResult part marked thought: true, text, a second
// executableCode chunk carrying finishReason STOP although the stream goes
// on, its codeExecutionResult, and more text ending with STOP. The usage
// grows mid-stream (toolUsePromptTokenCount 476, then 1268). The code parts
// have no block: the texts around them make one text block, no thinking
// block comes of the thought-marked code parts, and the stream is read to
// its end, past the first STOP.
func TestPydanticAICodeExecutionStream(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "pydanticai/code-execution-stream.sse"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.5-pro", &Options{
		ServerTools: []*genai.Tool{{CodeExecution: &genai.ToolCodeExecution{}}},
	})
	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "Be concise and always use Python to do calculations no matter how small.",
		Messages: []agentrt.Message{agentrt.NewUserMessage("what is 65465-6544 * 65464-6+1.02255")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	want := []string{
		"Following the order of operations (PEMDAS/BODMAS), the calculation is performed as",
		" follows:\n\n1.  Multiplication: `6544 * 65464`\n2.  Subtraction",
		": `65465 - (the result from step 1)`\n3.  Subtraction: `(the",
		" result from step 2) - 6`\n4.  Addition: `(the result from step 3",
		") + 1.02255`\n\nHere is the calculation performed using Python:\n",
		"The",
		" result of the expression `65465-6544 * 65",
		"464-6+1.02255` is **-428,330",
		",955.97745**.",
	}
	require.Equal(t, want, deltas, "the text parts, in order; no code")
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(strings.Join(want, ""))), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 46 + 1268, OutputTokens: 235 + 563, ReasoningTokens: 563}, resp.Usage,
		"the last chunk's usage, tool-use prompt included")
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, "gemini-2.5-pro", resp.Model)

	got := srv.only(t)
	require.True(t, strings.HasSuffix(got.Path, "/models/gemini-2.5-pro:streamGenerateContent"), got.Path)
	require.Equal(t, "alt=sse", got.Query)
	recorded := decode(t, fixture(t, "pydanticai/code-execution-stream.request.json"))
	for _, k := range []string{"contents", "systemInstruction", "tools"} {
		require.Equal(t, recorded[k], got.Body[k], k)
	}
}

// Recorded (pydantic-ai test_google_model_safety_settings): with
// safetySettings HARM_CATEGORY_HATE_SPEECH at BLOCK_LOW_AND_ABOVE,
// gemini-1.5-flash answers a candidate whose content is {} with
// finishReason SAFETY and a blocked safety rating; the usage has only the
// prompt. The answer is content_filter with no block.
func TestPydanticAISafetyBlock(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, ok(t, "pydanticai/safety-block.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-1.5-flash", &Options{
		ExtraFields: map[string]any{"safetySettings": []any{
			map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_LOW_AND_ABOVE"},
		}},
	})
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		System:   "You hate the world!",
		Messages: []agentrt.Message{agentrt.NewUserMessage("Tell me a joke about a Brazilians.")},
	})
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(), resp.Message)
	require.Equal(t, agentrt.FinishContentFilter, resp.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 14}, resp.Usage)
	require.Equal(t, "gemini-1.5-flash", resp.Model)

	got := srv.only(t)
	require.True(t, strings.HasSuffix(got.Path, "/models/gemini-1.5-flash:generateContent"), got.Path)
	recorded := decode(t, fixture(t, "pydanticai/safety-block.request.json"))
	for _, k := range []string{"contents", "systemInstruction", "safetySettings"} {
		require.Equal(t, recorded[k], got.Body[k], k)
	}
}

// Recorded (pydantic-ai): answers to requests the adapter builds the same
// way, each compared with the recorded request in the keys listed.
//   - test_google_native_output: structured output with
//     responseMimeType application/json and a responseJsonSchema; the
//     answer is the JSON text.
//   - test_google_model_youtube_video_url_input: a user turn with text and
//     a fileData part (a YouTube URL as video/mp4); usage of a video
//     prompt with thoughts.
//   - test_google_model_web_fetch_tool[True]: the urlContext tool; the
//     candidate has groundingMetadata and urlContextMetadata, which make no
//     block; toolUsePromptTokenCount 4665 counts as input.
//   - test_google_stream_usage_is_live_mid_stream: text streamed in three
//     chunks whose usage (with an unknown serviceTier field) grows; the last
//     one is the answer's.
func TestPydanticAIAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		file    string   // the answer; .sse is streamed
		request string   // the recorded request
		keys    []string // its keys that the adapter's request must match
		model   string
		server  []*genai.Tool // Options.ServerTools
		req     agentrt.ModelRequest
		text    string
		deltas  []string
		usage   agentrt.Usage
	}{
		{
			name: "structured output", file: "native-output.json", request: "native-output.request.json",
			keys: []string{"contents"}, model: "gemini-2.0-flash",
			req: agentrt.ModelRequest{
				Messages:       []agentrt.Message{agentrt.NewUserMessage("What is the largest city in Mexico?")},
				ResponseSchema: json.RawMessage(`{"description":"A city and its country.","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"title":"CityLocation","type":"object"}`),
			},
			text:  "{\n  \"city\": \"Mexico City\",\n  \"country\": \"Mexico\"\n}",
			usage: agentrt.Usage{InputTokens: 8, OutputTokens: 20},
		},
		{
			name: "video URL", file: "youtube-video.json", request: "youtube-video.request.json",
			keys: []string{"contents", "systemInstruction"}, model: "gemini-2.5-flash",
			req: agentrt.ModelRequest{
				System: "You are a helpful chatbot.",
				Messages: []agentrt.Message{agentrt.NewUserMessage("Explain me this video in a few sentences",
					agentrt.Block{Type: agentrt.BlockDocument, URL: "https://youtu.be/lCdaVNyHtjU", MediaType: "video/mp4"})},
			},
			text: "This video demonstrates using an AI agent to analyze recent 404 HTTP responses from a service. The user " +
				"asks the agent, \"Logfire,\" to identify patterns in these errors. The agent then queries a Logfire database, " +
				"extracts relevant information like URL paths, HTTP methods, and timestamps, and presents a detailed analysis " +
				"covering common error-prone endpoints, request patterns, timeline-related issues, and potential configuration " +
				"or authentication problems. Finally, it offers a list of actionable recommendations to address these issues.",
			usage: agentrt.Usage{InputTokens: 17713, OutputTokens: 100 + 1176, ReasoningTokens: 1176},
		},
		{
			name: "url context", file: "url-context.json", request: "url-context.request.json",
			keys: []string{"contents", "systemInstruction", "tools"}, model: "gemini-2.5-flash",
			server: []*genai.Tool{{URLContext: &genai.URLContext{}}},
			req: agentrt.ModelRequest{
				System: "You are a helpful chatbot.",
				Messages: []agentrt.Message{agentrt.NewUserMessage(
					"What is the first sentence on the page https://ai.pydantic.dev? Reply with only the sentence.")},
			},
			text:  "Join us at the inaugural PyAI Conf in San Francisco on March 10th!",
			usage: agentrt.Usage{InputTokens: 32 + 4665, OutputTokens: 34 + 45, ReasoningTokens: 45},
		},
		{
			name: "usage grows in a stream", file: "usage-live-stream.sse", request: "usage-live-stream.request.json",
			keys: []string{"contents"}, model: "gemini-2.5-flash",
			req: agentrt.ModelRequest{Messages: []agentrt.Message{
				agentrt.NewUserMessage("Count from 1 to 30, one number per line, digits only.")}},
			text: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n30",
			deltas: []string{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n1",
				"4\n15\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n3", "0"},
			usage: agentrt.Usage{InputTokens: 18, OutputTokens: 80 + 35, ReasoningTokens: 35},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, ok(t, "pydanticai/"+tc.file))
			p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), tc.model, &Options{ServerTools: tc.server})
			req := tc.req
			var deltas []string
			stream := strings.HasSuffix(tc.file, ".sse")
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(context.Background(), &req)
			require.NoError(t, err)
			require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock(tc.text)), resp.Message)
			require.Equal(t, tc.deltas, deltas)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, agentrt.FinishStop, resp.Finish)
			require.Equal(t, tc.model, resp.Model)

			got := srv.only(t)
			method := ":generateContent"
			if stream {
				method = ":streamGenerateContent"
			}
			require.True(t, strings.HasSuffix(got.Path, "/models/"+tc.model+method), got.Path)
			recorded := decode(t, fixture(t, "pydanticai/"+tc.request))
			for _, k := range tc.keys {
				require.Equal(t, recorded[k], got.Body[k], k)
			}
			if tc.req.ResponseSchema != nil {
				require.Equal(t, "application/json", at(t, got.Body, "generationConfig", "responseMimeType"))
				schema := at(t, got.Body, "generationConfig", "responseJsonSchema")
				jsonEq(t, `["city","country"]`, at(t, schema, "propertyOrdering"))
				dropPropertyOrdering(schema)
				require.Equal(t, at(t, recorded, "generationConfig", "responseJsonSchema"), schema)
			}
		})
	}
}
