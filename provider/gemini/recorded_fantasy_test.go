package gemini

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Replays of charmbracelet/fantasy cassettes (testdata/fantasy, see
// testdata/README.md): Gemini 3 and 2.5 answers of the Gemini API and of
// Vertex AI, streamed and not, as the runtime sees them.
func TestFantasyRecordings(t *testing.T) {
	t.Parallel()
	const thought = "**Determining Weather Location**\n\nI've homed in on the user's request. " +
		"It's a clear weather query targeting \"Florence, Italy.\" This directly triggers the " +
		"`weather.get_weather` function. The key is the `location` parameter, which is easily " +
		"set to \"Florence, Italy\".\n\n\n"

	for _, tc := range []struct {
		name   string
		file   string // in testdata/fantasy; a .sse file is streamed
		vertex bool
		blocks []agentrt.Block // without their signatures
		sigs   []string        // per block, the start of its signature in base64, or ""
		deltas []string
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			name: "gemini-3-pro-preview: two calls in two chunks, the signature on the first only",
			file: "gemini-3-pro-preview-multi-tool-stream.sse",
			blocks: []agentrt.Block{
				use("call_bKIdaeD9AuPUxs0Pk8v7uA0_0", "add", `{"a":2,"b":3}`),
				use("call_bKIdaeD9AuPUxs0Pk8v7uA0_1", "multiply", `{"a":2,"b":3}`),
			},
			sigs:   []string{"ErwDCrkDAdHtim+t", ""},
			usage:  agentrt.Usage{InputTokens: 157, OutputTokens: 32 + 91, ReasoningTokens: 91},
			finish: agentrt.FinishToolUse, model: "gemini-3-pro-preview",
		},
		{
			name:   "gemini-3-pro-preview: text in three chunks, then an empty text with STOP",
			file:   "gemini-3-pro-preview-multi-tool-followup-stream.sse",
			blocks: []agentrt.Block{agentrt.TextBlock("The addition of 2 and 3 is 5, and the multiplication of 2 and 3 is 6.")},
			sigs:   []string{""},
			deltas: []string{"The addition of ", "2 and 3 is 5, and the multiplication of 2 and ", "3 is 6."},
			usage:  agentrt.Usage{InputTokens: 300, OutputTokens: 25},
			finish: agentrt.FinishStop, model: "gemini-3-pro-preview",
		},
		{
			name:   "gemini-2.5-pro: a thought chunk without usage of candidates, then a signed call",
			file:   "gemini-2.5-pro-thinking-stream.sse",
			blocks: []agentrt.Block{{Type: agentrt.BlockThinking, Text: thought}, use("call_hAkJaeFW9IfPsg_C9c2ACw_0", "weather", `{"location":"Florence, Italy"}`)},
			sigs:   []string{"", "CiIB0e2KbyCfx1Z1"},
			usage:  agentrt.Usage{InputTokens: 54, OutputTokens: 14 + 67, ReasoningTokens: 67},
			finish: agentrt.FinishToolUse, model: "gemini-2.5-pro",
		},
		{
			name: "vertex gemini-2.5-pro: both calls and the finish reason in one chunk",
			file: "vertex-gemini-2.5-pro-multi-tool-stream.sse", vertex: true,
			blocks: []agentrt.Block{
				use("call_PggJaeDQDNOM0ekPpsvo4Qk_0", "add", `{"a":2,"b":3}`),
				use("call_PggJaeDQDNOM0ekPpsvo4Qk_1", "multiply", `{"a":2,"b":3}`),
			},
			sigs:   []string{"CiQB4/H/XlX6NEE2", ""},
			usage:  agentrt.Usage{InputTokens: 57, OutputTokens: 10 + 78, ReasoningTokens: 78},
			finish: agentrt.FinishToolUse, model: "gemini-2.5-pro",
		},
		{
			// The first chunk's usageMetadata has no counts at all; the
			// last one's are the answer's.
			name: "vertex gemini-2.5-pro: text in two chunks, the first without counts",
			file: "vertex-gemini-2.5-pro-text-stream.sse", vertex: true,
			blocks: []agentrt.Block{agentrt.TextBlock("Of course! The most common ways to say \"hi\" in Portuguese are:\n\n" +
				"*   **Oi** (more informal, like \"hi\")\n*   **Olá** (a bit more formal, like \"hello\")\n\n" +
				"You might also hear people greet each other with **Tudo bem?**, which means \"How are you?\" or \"Is everything well?\".")},
			sigs: []string{""},
			deltas: []string{"Of course! The most common ways to say \"hi\" in Portuguese are:\n\n" +
				"*   **Oi** (more informal, like \"hi\")\n*   **Olá** (a bit more formal, like \"hello\")\n\n" +
				"You might also hear people greet each other with **Tudo bem?**, which means \"How",
				" are you?\" or \"Is everything well?\"."},
			usage:  agentrt.Usage{InputTokens: 9, OutputTokens: 74 + 650, ReasoningTokens: 650},
			finish: agentrt.FinishStop, model: "gemini-2.5-pro",
		},
		{
			name: "vertex gemini-2.5-flash: pretty-printed body with avgLogprobs and trafficType",
			file: "vertex-gemini-2.5-flash-tool.json", vertex: true,
			blocks: []agentrt.Block{use("call_lNH5aLSLKbHEptQP-Ob28Ak_0", "weather", `{"location":"Florence,Italy"}`)},
			sigs:   []string{"CsICAePx/14z2/Y1"},
			usage:  agentrt.Usage{InputTokens: 28, OutputTokens: 5 + 68, ReasoningTokens: 68},
			finish: agentrt.FinishToolUse, model: "gemini-2.5-flash",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := strings.HasSuffix(tc.file, ".sse")
			srv := newReplayServer(t, ok(t, "fantasy/"+tc.file))
			backend := genai.BackendGeminiAPI
			if tc.vertex {
				backend = genai.BackendVertexAI
			}
			p := New(newClient(t, srv, backend, nil), testModel, nil)
			var deltas []string
			req := textRequest(false)
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)

			require.Equal(t, agentrt.NewAssistantMessage(tc.blocks...), plain(resp.Message))
			requireSigs(t, tc.sigs, resp.Message)
			require.Equal(t, tc.deltas, deltas)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.model, resp.Model)
		})
	}
}

// Recorded (fantasy, gemini-3-pro-preview): two calls streamed in two
// chunks, then the follow-up with both results. The model turn sent back is
// the recorded one (the signature on the first call only, none invented
// for the second), except for the call ids, which are the adapter's.
func TestFantasyGemini3ParallelCallsFollowup(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "fantasy/gemini-3-pro-preview-multi-tool-stream.sse"),
		ok(t, "fantasy/gemini-3-pro-preview-multi-tool-followup-stream.sse"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-pro-preview", nil)
	req := &agentrt.ModelRequest{
		System:    "You are a helpful assistant. Always use both add and multiply at the same time.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Add and multiply the number 2 and 3")},
		Tools:     arithSpecs(),
		MaxTokens: 4000,
		OnText:    func(string) {},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	uses := first.Message.ToolUses()
	require.Len(t, uses, 2)

	req.Messages = append(req.Messages, first.Message,
		agentrt.NewToolMessage(uses[0].ID, "5", false),
		agentrt.NewToolMessage(uses[1].ID, "6", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "The addition of 2 and 3 is 5, and the multiplication of 2 and 3 is 6.", resp.Message.Text())

	got := srv.reqs()[1].Body
	recorded := decode(t, fixture(t, "fantasy/gemini-3-pro-preview-multi-tool-followup.request.json"))
	require.Equal(t, at(t, recorded, "contents", 0), at(t, got, "contents", 0))
	model := at(t, recorded, "contents", 1).(map[string]any)
	at(t, model, "parts", 0, "functionCall").(map[string]any)["id"] = uses[0].ID
	at(t, model, "parts", 1, "functionCall").(map[string]any)["id"] = uses[1].ID
	require.Equal(t, model, at(t, got, "contents", 1), "model turn")
	jsonEq(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"`+uses[0].ID+`","name":"add","response":{"output":"5"}}},
		{"functionResponse":{"id":"`+uses[1].ID+`","name":"multiply","response":{"output":"6"}}}]}`,
		at(t, got, "contents", 2), "both results in one user turn, in call order")
	require.Len(t, got["contents"], 3)
	for _, k := range []string{"systemInstruction", "generationConfig", "tools"} {
		require.Equal(t, recorded[k], got[k], "request field %q", k)
	}
}
