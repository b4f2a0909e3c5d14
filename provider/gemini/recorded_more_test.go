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

// Replays of more charmbracelet/fantasy cassettes (testdata/fantasy, see
// testdata/README.md): the older TestGoogleCommon recording of a thinking
// call and its answer, and TestGoogleObjectGeneration /
// TestGoogleVertexObjectGeneration answers, whose text is the JSON the
// schema asked for.
func TestMoreFantasyRecordings(t *testing.T) {
	t.Parallel()
	const geminiObject = "{\n\"age\": 30,\n\"city\": \"Paris\",\n\"name\": \"Alice\"\n}"
	const proObject = "{\n  \"age\": 30,\n  \"city\": \"Paris\",\n  \"name\": \"Alice\"\n}"
	const book = "{\n  \"title\": \"The Lord of the Rings\",\n  \"author\": {\n    \"name\": \"J.R.R. Tolkien\",\n" +
		"    \"nationality\": \"British\"\n  },\n  \"genres\": [\n    \"fantasy\",\n    \"adventure\"\n  ],\n  \"published_year\": 1954\n}"
	const thought = "**Analyzing Weather Requests**\n\nI've homed in on the user's request for weather in Florence, Italy. " +
		"It seems a suitable fit for the `weather.get_weather` tool, which explicitly accepts a `location` parameter.\n\n\n"

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
			name: "gemini-2.5-pro: a thought chunk (no candidatesTokenCount), then a signed call with STOP",
			file: "gemini-2.5-pro-weather-thinking-stream.sse",
			blocks: []agentrt.Block{
				{Type: agentrt.BlockThinking, Text: thought},
				agentrt.ToolUseBlock("call_txfVaNT4L--C7M8P4Yuh8QY_0", "weather", json.RawMessage(`{"location":"Florence, Italy"}`)),
			},
			sigs:   []string{"", "CiIB0e2Kb79Nza7M"},
			usage:  agentrt.Usage{InputTokens: 54, OutputTokens: 14 + 64, ReasoningTokens: 64},
			finish: agentrt.FinishToolUse, model: "gemini-2.5-pro",
		},
		{
			name:   "gemini-2.5-pro: the answer after the call, in two chunks",
			file:   "gemini-2.5-pro-weather-answer-stream.sse",
			blocks: []agentrt.Block{agentrt.TextBlock("It is 40 C in Florence, Italy.")},
			sigs:   []string{""},
			deltas: []string{"It", " is 40 C in Florence, Italy."},
			usage:  agentrt.Usage{InputTokens: 84, OutputTokens: 11},
			finish: agentrt.FinishStop, model: "gemini-2.5-pro",
		},
		{
			// The JSON in two chunks, then an empty text part carrying the
			// signature of the text, with STOP.
			name:   "gemini-3-pro-preview: JSON output streamed, its signature in a last empty part",
			file:   "gemini-3-pro-preview-object-stream.sse",
			blocks: []agentrt.Block{agentrt.TextBlock(geminiObject)},
			sigs:   []string{"Es0MCsoMAdHtim/2"},
			deltas: []string{"{\n\"age\": 30,\n\"city\": \"Paris\",\n\"name\": \"Alice\"", "\n}"},
			usage:  agentrt.Usage{InputTokens: 20, OutputTokens: 25 + 383, ReasoningTokens: 383},
			finish: agentrt.FinishStop, model: "gemini-3-pro-preview",
		},
		{
			name:   "gemini-2.5-pro: JSON output, not streamed (pretty-printed body)",
			file:   "gemini-2.5-pro-object.json",
			blocks: []agentrt.Block{agentrt.TextBlock(proObject)},
			sigs:   []string{""},
			usage:  agentrt.Usage{InputTokens: 20, OutputTokens: 28 + 61, ReasoningTokens: 61},
			finish: agentrt.FinishStop, model: "gemini-2.5-pro",
		},
		{
			// No index, role before parts, usage without counts until the
			// last chunk.
			name: "vertex gemini-2.5-flash: nested JSON output in three chunks",
			file: "vertex-gemini-2.5-flash-object-stream.sse", vertex: true,
			blocks: []agentrt.Block{agentrt.TextBlock(book)},
			sigs:   []string{""},
			deltas: []string{
				"{\n  \"title\": \"The Lord of the Rings\",\n  \"author\": {\n    ",
				"\"name\": \"J.R.R. Tolkien\",\n    \"nationality\": \"British\"\n  },\n  \"genres\": [\n    \"fantasy\",\n    \"adventure\"\n  ],\n  \"published_year",
				"\": 1954\n}",
			},
			usage:  agentrt.Usage{InputTokens: 37, OutputTokens: 77 + 51, ReasoningTokens: 51},
			finish: agentrt.FinishStop, model: "gemini-2.5-flash",
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
			for _, u := range resp.Message.ToolUses() {
				require.True(t, json.Valid(u.Input), "input of %s: %s", u.ID, u.Input)
			}
			require.Equal(t, tc.deltas, deltas)
			require.Equal(t, tc.usage, resp.Usage)
			require.Equal(t, tc.finish, resp.Finish)
			require.Equal(t, tc.model, resp.Model)
		})
	}
}

// The object-generation cassettes: a request with a ResponseSchema is sent
// as the recording client sent it (the same contents and generationConfig,
// responseMimeType and responseJsonSchema included), and the answer's text
// is JSON of that schema.
func TestFantasyObjectGeneration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer, request string
		order                 string // the propertyOrdering sent for the top object
		vertex                bool
		check                 func(t *testing.T, text string)
	}{
		{
			name: "gemini-3-pro-preview", answer: "gemini-3-pro-preview-object-stream.sse",
			request: "gemini-3-pro-preview-object.request.json", order: `["age","city","name"]`,
			check: func(t *testing.T, text string) {
				var person struct {
					Name string
					Age  int
					City string
				}
				require.NoError(t, json.Unmarshal([]byte(text), &person))
				require.Equal(t, "Alice", person.Name)
				require.Equal(t, 30, person.Age)
				require.Equal(t, "Paris", person.City)
			},
		},
		{
			name: "vertex gemini-2.5-flash", answer: "vertex-gemini-2.5-flash-object-stream.sse",
			request: "vertex-gemini-2.5-flash-object.request.json", vertex: true,
			order: `["author","genres","published_year","title"]`,
			check: func(t *testing.T, text string) {
				var b struct {
					Title  string
					Author struct{ Name, Nationality string }
					Genres []string
					Year   int `json:"published_year"`
				}
				require.NoError(t, json.Unmarshal([]byte(text), &b))
				require.Equal(t, "The Lord of the Rings", b.Title)
				require.Equal(t, "J.R.R. Tolkien", b.Author.Name)
				require.Equal(t, []string{"fantasy", "adventure"}, b.Genres)
				require.Equal(t, 1954, b.Year)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recorded := decode(t, fixture(t, "fantasy/"+tc.request))
			var raw struct {
				GenerationConfig struct {
					ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
				} `json:"generationConfig"`
			}
			require.NoError(t, json.Unmarshal(fixture(t, "fantasy/"+tc.request), &raw))
			schema := raw.GenerationConfig.ResponseJSONSchema
			require.NotEmpty(t, schema)
			prompt, _ := at(t, recorded, "contents", 0, "parts", 0, "text").(string)
			require.NotEmpty(t, prompt)

			srv := newReplayServer(t, ok(t, "fantasy/"+tc.answer))
			backend := genai.BackendGeminiAPI
			if tc.vertex {
				backend = genai.BackendVertexAI
			}
			p := New(newClient(t, srv, backend, nil), testModel, nil)
			resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
				Messages:       []agentrt.Message{agentrt.NewUserMessage(prompt)},
				ResponseSchema: schema,
				MaxTokens:      4000,
				OnText:         func(string) {},
			})
			require.NoError(t, err)
			tc.check(t, resp.Message.Text())

			// The adapter adds propertyOrdering (the order of the schema's
			// text) to each object schema; the rest is the recorded request.
			got := srv.only(t).Body
			jsonEq(t, tc.order, at(t, got, "generationConfig", "responseJsonSchema", "propertyOrdering"))
			dropPropertyOrdering(got)
			require.Equal(t, recorded["contents"], got["contents"])
			require.Equal(t, recorded["generationConfig"], got["generationConfig"])
		})
	}
}

// dropPropertyOrdering removes every "propertyOrdering" key from v.
func dropPropertyOrdering(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "propertyOrdering")
		for _, e := range v {
			dropPropertyOrdering(e)
		}
	case []any:
		for _, e := range v {
			dropPropertyOrdering(e)
		}
	}
}
