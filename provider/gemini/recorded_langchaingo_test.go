package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// Replays of tmc/langchaingo httprr recordings of the Gemini API
// (testdata/langchaingo, see its README.md), made through the genai SDK:
// answers cut by MAX_TOKENS (one with no parts at all), implicit caching,
// a thought part before the text, parallel calls with API-given ids, and
// Google's SSE framing, replayed through Plan.
func TestLangchaingoRecordings(t *testing.T) {
	t.Parallel()
	thought, answer := recordedTexts(t, "thinking-text.json")

	for _, tc := range []struct {
		name   string
		file   string          // in testdata/langchaingo; a .sse file is streamed
		blocks []agentrt.Block // without their signatures
		sigs   []string        // per block, the start of its signature in base64, or ""
		deltas []string
		usage  agentrt.Usage
		finish agentrt.FinishReason
		model  string
	}{
		{
			// The candidate is {"content": {"role": "model"}}: the whole
			// budget of 24 tokens went on thinking.
			name:   "MAX_TOKENS with no parts: no block, finish length, thoughts counted",
			file:   "truncated-thoughts-only.json",
			usage:  agentrt.Usage{InputTokens: 9, OutputTokens: 20, ReasoningTokens: 20},
			finish: agentrt.FinishLength, model: "gemini-2.5-flash",
		},
		{
			name:   "MAX_TOKENS streamed: the text and the finish reason in the only event",
			file:   "truncated-stream.sse",
			blocks: []agentrt.Block{agentrt.TextBlock("The water cycle, also known as")},
			sigs:   []string{""},
			deltas: []string{"The water cycle, also known as"},
			usage:  agentrt.Usage{InputTokens: 9, OutputTokens: 7 + 189, ReasoningTokens: 189},
			finish: agentrt.FinishLength, model: "gemini-2.5-flash",
		},
		{
			name:   "implicit cache hit: cachedContentTokenCount is CacheReadTokens, within the input",
			file:   "implicit-cache-hit.json",
			blocks: []agentrt.Block{agentrt.TextBlock("hello")},
			sigs:   []string{""},
			usage:  agentrt.Usage{InputTokens: 7506, OutputTokens: 1 + 15, ReasoningTokens: 15, CacheReadTokens: 7143},
			finish: agentrt.FinishStop, model: "gemini-2.5-flash",
		},
		{
			name: "gemini-3-flash-preview: two calls with API-given ids, the signature on the first only",
			file: "parallel-calls.json",
			blocks: []agentrt.Block{
				use("pkjly1p7", "get_temperature", `{"location":"Paris"}`),
				use("bnxwmmb1", "get_temperature", `{"location":"London"}`),
			},
			sigs:   []string{"ErwCCrkCARFNMg9m", ""},
			usage:  agentrt.Usage{InputTokens: 69, OutputTokens: 32 + 56, ReasoningTokens: 56},
			finish: agentrt.FinishToolUse, model: "gemini-3-flash-preview",
		},
		{
			name:   "gemini-2.0-flash: no index, safetyRatings, avgLogprobs, candidatesTokensDetails",
			file:   "gemini-2.0-flash-text.json",
			blocks: []agentrt.Block{agentrt.TextBlock("The capital of France is **Paris**.\n")},
			sigs:   []string{""},
			usage:  agentrt.Usage{InputTokens: 6, OutputTokens: 9},
			finish: agentrt.FinishStop, model: "gemini-2.0-flash",
		},
		{
			name: "gemini-2.5-pro, not streamed: a thought part, then the text",
			file: "thinking-text.json",
			blocks: []agentrt.Block{
				{Type: agentrt.BlockThinking, Text: thought},
				agentrt.TextBlock(answer),
			},
			sigs:   []string{"", ""},
			usage:  agentrt.Usage{InputTokens: 34, OutputTokens: 273 + 913, ReasoningTokens: 913},
			finish: agentrt.FinishStop, model: "gemini-2.5-pro",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := strings.HasSuffix(tc.file, ".sse")
			srv := newReplayServer(t, ok(t, "langchaingo/"+tc.file))
			p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), testModel, nil)
			var deltas []string
			req := textRequest(false)
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(context.Background(), req)
			require.NoError(t, err)

			path := srv.only(t).Path
			if stream {
				require.True(t, strings.HasSuffix(path, ":streamGenerateContent"), path)
			} else {
				require.True(t, strings.HasSuffix(path, ":generateContent"), path)
			}
			require.Equal(t, agentrt.NewAssistantMessage(tc.blocks...), plain(resp.Message))
			requireSigs(t, tc.sigs, resp.Message)
			require.Equal(t, tc.deltas, deltas)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.model, resp.Model)
		})
	}
}

// Recorded (langchaingo TestGoogleAIErrorHandling): the Gemini API refuses
// a bad key with HTTP 400 INVALID_ARGUMENT and an ErrorInfo reason
// API_KEY_INVALID. It is an authentication error, not retried, streamed or
// not.
func TestLangchaingoAPIKeyInvalid(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := "generateContent"
		if stream {
			name = "streamGenerateContent"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newReplayServer(t, fail(t, 400, "langchaingo/error-400-api-key-invalid.json"))
			p, w := newTestProvider(t, srv, nil)
			resp, err := p.Plan(context.Background(), textRequest(stream))
			require.Nil(t, resp)
			require.ErrorIs(t, err, agentrt.ErrAuth)
			require.NotErrorIs(t, err, agentrt.ErrInvalidRequest)
			var pe *agentrt.ProviderError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, 400, pe.StatusCode)
			require.Equal(t, "INVALID_ARGUMENT", pe.Code)
			require.Equal(t, "API key not valid. Please pass a valid API key.", pe.Message)
			require.Zero(t, pe.RetryAfter)
			require.True(t, strings.HasSuffix(srv.only(t).Path, ":"+name), "not retried; sent to %s", srv.only(t).Path)
			require.Empty(t, w.all())
		})
	}
}

// Recorded (langchaingo TestGoogleAI_ParallelFunctionCallsWithSignature):
// two calls with API-given ids, then the follow-up with both results. The
// model turn sent back is byte for byte the recorded one (the API's ids,
// the signature on the first call only), and the results answer those ids.
func TestLangchaingoParallelCallsFollowup(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "langchaingo/parallel-calls.json"),
		ok(t, "langchaingo/parallel-calls-followup.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-flash-preview", nil)
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What's the temperature in Paris and London?")},
		Tools: []agentrt.ToolSpec{{
			Name:        "get_temperature",
			Description: "Get the current temperature for a location",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","description":"The city name, e.g. Paris"}},"required":["location"]}`),
		}},
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	uses := first.Message.ToolUses()
	require.Len(t, uses, 2)
	require.Equal(t, []string{"pkjly1p7", "bnxwmmb1"}, []string{uses[0].ID, uses[1].ID})

	req.Messages = append(req.Messages, first.Message,
		agentrt.NewToolMessage(uses[0].ID, "22°C", false),
		agentrt.NewToolMessage(uses[1].ID, "22°C", false))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.NewAssistantMessage(agentrt.TextBlock("The temperature is currently 22°C in both Paris and London.")), resp.Message)
	require.Equal(t, agentrt.Usage{InputTokens: 131, OutputTokens: 15}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	require.True(t, strings.HasSuffix(reqs[1].Path, "/models/gemini-3-flash-preview:generateContent"), reqs[1].Path)
	got := reqs[1].Body
	recorded := decode(t, fixture(t, "langchaingo/parallel-calls-followup.request.json"))
	require.Len(t, got["contents"], 3)
	require.Equal(t, at(t, recorded, "contents", 0), at(t, got, "contents", 0), "user turn")
	require.Equal(t, at(t, recorded, "contents", 1), at(t, got, "contents", 1), "model turn")
	// langchaingo wraps a result as {"response": ...}, the adapter as
	// {"output": ...}; the ids, names and order are the recorded ones.
	for i := range 2 {
		want := at(t, recorded, "contents", 2, "parts", i, "functionResponse").(map[string]any)
		gotFR := at(t, got, "contents", 2, "parts", i, "functionResponse").(map[string]any)
		require.Equal(t, want["id"], gotFR["id"], "result %d", i)
		require.Equal(t, want["name"], gotFR["name"], "result %d", i)
		jsonEq(t, `{"output":"22°C"}`, gotFR["response"], "result %d", i)
	}
	require.Equal(t, "user", at(t, got, "contents", 2, "role"))
}

// Recorded (langchaingo TestGoogleAI_TextResponseWithSignatureStreaming):
// gemini-3-flash-preview streams a thought (without signature), the text in
// 21 chunks, then an empty text part carrying the signature, with STOP.
// The next turn, not streamed, sends the model turn back as the recorded
// request did (which the API accepted): the text with its signature, the
// unsigned thought left out. Its answer signs its own text part.
func TestLangchaingoTextSignatureFollowup(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t,
		ok(t, "langchaingo/text-signature-stream.sse"),
		ok(t, "langchaingo/text-signature-followup.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-3-flash-preview", nil)
	var deltas []string
	req := &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Calculate 23 * 17. Show your work.")},
		OnText:   func(d string) { deltas = append(deltas, d) },
	}
	first, err := p.Plan(context.Background(), req)
	require.NoError(t, err)

	recorded := decode(t, fixture(t, "langchaingo/text-signature-followup.request.json"))
	text, _ := at(t, recorded, "contents", 1, "parts", 0, "text").(string)
	require.True(t, strings.HasPrefix(text, "To calculate **23 × 17**, here are three different ways"), text)
	require.Len(t, first.Message.Blocks, 2)
	th := first.Message.Blocks[0]
	require.Equal(t, agentrt.BlockThinking, th.Type)
	require.True(t, strings.HasPrefix(th.Text, "**Calculating the product**\n\nI've started tackling"), th.Text)
	require.Empty(t, th.Signature)
	require.Equal(t, agentrt.TextBlock(text), plain(first.Message).Blocks[1])
	requireSigs(t, []string{"", "EoUKCoIKARFNMg/3"}, first.Message)
	require.Len(t, deltas, 21)
	require.Equal(t, "To calculate **23 × 17**, here", deltas[0])
	require.Equal(t, "Answer: 391**", deltas[20])
	require.Equal(t, text, strings.Join(deltas, ""))
	require.Equal(t, agentrt.Usage{InputTokens: 14, OutputTokens: 498 + 436, ReasoningTokens: 436}, first.Usage)
	require.Equal(t, agentrt.FinishStop, first.Finish)

	req.OnText = nil
	req.Messages = append(req.Messages, first.Message, agentrt.NewUserMessage("Now divide that result by 23"))
	resp, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, agentrt.FinishStop, resp.Finish)
	require.Equal(t, agentrt.Usage{InputTokens: 522, OutputTokens: 286 + 266, ReasoningTokens: 266}, resp.Usage)
	require.True(t, strings.HasPrefix(resp.Message.Text(), "To divide **391** by **23**"), resp.Message.Text())
	require.True(t, strings.HasSuffix(resp.Message.Text(), "**Result: 17**"), resp.Message.Text())
	requireSigs(t, []string{"Ep0FCpoFARFNMg9q"}, resp.Message)

	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	require.True(t, strings.HasSuffix(reqs[0].Path, ":streamGenerateContent"), reqs[0].Path)
	require.True(t, strings.HasSuffix(reqs[1].Path, ":generateContent"), reqs[1].Path)
	require.Equal(t, recorded["contents"], reqs[1].Body["contents"])
}

// Recorded (langchaingo TestGoogleAIStructuredOutput, streaming case): the
// request with a ResponseSchema carries the recorded contents,
// responseMimeType and responseJsonSchema (the adapter adds
// propertyOrdering), and the JSON answer streams in two chunks.
func TestLangchaingoStructuredOutputStream(t *testing.T) {
	t.Parallel()
	recorded := decode(t, fixture(t, "langchaingo/structured-output-stream.request.json"))
	schema, err := json.Marshal(at(t, recorded, "generationConfig", "responseJsonSchema"))
	require.NoError(t, err)

	srv := newReplayServer(t, ok(t, "langchaingo/structured-output-stream.sse"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), "gemini-2.5-flash", nil)
	var deltas []string
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages:       []agentrt.Message{agentrt.NewUserMessage("What is the capital of Japan?")},
		ResponseSchema: schema,
		OnText:         func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)
	require.Equal(t, []string{`{"capital": "Tokyo`, `", "country": "Japan"}`}, deltas)
	var got struct{ Capital, Country string }
	require.NoError(t, json.Unmarshal([]byte(resp.Message.Text()), &got))
	assert.Equal(t, "Tokyo", got.Capital)
	assert.Equal(t, "Japan", got.Country)
	require.Equal(t, agentrt.Usage{InputTokens: 8, OutputTokens: 12 + 51, ReasoningTokens: 51}, resp.Usage)
	require.Equal(t, agentrt.FinishStop, resp.Finish)

	sent := srv.only(t).Body
	require.Equal(t, recorded["contents"], sent["contents"])
	require.Equal(t, "application/json", at(t, sent, "generationConfig", "responseMimeType"))
	dropPropertyOrdering(sent)
	require.Equal(t, at(t, recorded, "generationConfig", "responseJsonSchema"),
		at(t, sent, "generationConfig", "responseJsonSchema"))
}

// recordedTexts reads the thought and the text of a recorded
// generateContent body whose two parts are a thought and a text, with
// encoding/json rather than the SDK.
func recordedTexts(t *testing.T, name string) (thought, text string) {
	t.Helper()
	var body struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text    string `json:"text"`
					Thought bool   `json:"thought"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "langchaingo/"+name), &body))
	require.Len(t, body.Candidates, 1)
	parts := body.Candidates[0].Content.Parts
	require.Len(t, parts, 2)
	require.True(t, parts[0].Thought)
	require.False(t, parts[1].Thought)
	require.True(t, strings.HasPrefix(parts[0].Text, "**My Thought Process on the Sequence**"), parts[0].Text)
	require.True(t, strings.HasSuffix(parts[1].Text, "*   6 x 7 = **42**"), parts[1].Text)
	return parts[0].Text, parts[1].Text
}
