package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/gemini"
)

// fakeGemini stands in for the Gemini API: it streams a two-chunk answer
// in the API's wire format.
func fakeGemini() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash"}`+"\r\n\r\n")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"parts":[{"text":" from Gemini!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4},"modelVersion":"gemini-2.5-flash"}`+"\r\n\r\n")
	}))
}

// An agent on Gemini. The client is the SDK's own; here its base URL points
// at a local stand-in for the API, so that the example runs offline.
func Example() {
	srv := fakeGemini()
	defer srv.Close()

	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "my-api-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}, // leave empty for the real API
	})
	if err != nil {
		log.Fatal(err)
	}
	ag := &agentrt.Agent{
		Instructions: "You are a friendly assistant.",
		Planner:      gemini.New(client, "gemini-2.5-flash", nil),
	}
	for ev, err := range ag.Run(ctx, "session-1", "Say hello.") {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case agentrt.TextDelta:
			fmt.Printf("delta %q\n", e.Text)
		case agentrt.Done:
			fmt.Println(e.Reason, e.FinalText, e.Usage.InputTokens, e.Usage.OutputTokens)
		}
	}
	// Output:
	// delta "Hello"
	// delta " from Gemini!"
	// complete Hello from Gemini! 8 4
}

// The common case: the Gemini API with a key from the environment.
func ExampleNewFromAPIKey() {
	temperature := 0.2
	p, err := gemini.NewFromAPIKey(os.Getenv("GEMINI_API_KEY"), "gemini-2.5-flash", &gemini.Options{
		Temperature: &temperature,
		MaxTokens:   2048,
		MaxRetries:  3,
		ExtraFields: map[string]any{
			"generationConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 512}},
		},
	})
	if err != nil {
		log.Fatal(err) // no API key
	}
	resp, err := p.Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("Why is the sky blue?")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text())
}

type searchIn struct {
	Query string            `json:"query" jsonschema:"description=What to look for"`
	Kind  string            `json:"kind,omitempty" jsonschema:"enum=web,enum=news"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// What Gemini is shown for a tool: its schema converted to the OpenAPI
// subset the API accepts (the map becomes a JSON string).
func ExampleToolParameters() {
	search := agentrt.NewTool("search", "Search the web.",
		func(ctx context.Context, in searchIn) (string, error) { return "", nil })
	params, err := gemini.ToolParameters(search.Spec().InputSchema)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := json.MarshalIndent(params, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "properties": {
	//     "kind": {
	//       "enum": [
	//         "web",
	//         "news"
	//       ],
	//       "type": "STRING"
	//     },
	//     "query": {
	//       "description": "What to look for",
	//       "type": "STRING"
	//     },
	//     "tags": {
	//       "description": "A JSON object encoded as a string, mapping string keys to string values, such as \"{\\\"key\\\": ...}\".",
	//       "type": "STRING"
	//     }
	//   },
	//   "required": [
	//     "query"
	//   ],
	//   "type": "OBJECT"
	// }
}

// Built-in tools next to the agent's own: Google Search grounding and code
// execution, which the API runs itself. The stand-in for the API prints the
// tools the request carries and answers with a grounded text.
func ExampleOptions_serverTools() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Tools json.RawMessage }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println(string(body.Tools))
		fmt.Fprint(w, `{"candidates":[{"content":{"parts":[{"text":"Utqiagvik, Alaska."}],"role":"model"},"finishReason":"STOP",`+
			`"groundingMetadata":{"webSearchQueries":["northernmost city in the United States"]}}],"modelVersion":"gemini-3-flash-preview"}`)
	}))
	defer srv.Close()

	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "my-api-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}, // leave empty for the real API
	})
	if err != nil {
		log.Fatal(err)
	}
	p := gemini.New(client, "gemini-3-flash-preview", &gemini.Options{
		ServerTools: []*genai.Tool{
			{GoogleSearch: &genai.GoogleSearch{}},
			{CodeExecution: &genai.ToolCodeExecution{}},
		},
		// The Gemini API wants this when built-in tools and function
		// declarations are used together.
		ExtraFields: map[string]any{"toolConfig": map[string]any{"includeServerSideToolInvocations": true}},
	})
	resp, err := p.Plan(ctx, &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage("What is the northernmost city in the United States?")},
		Tools:    []agentrt.ToolSpec{{Name: "get_weather", Description: "Weather in a city."}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text())
	// Output:
	// [{"functionDeclarations":[{"description":"Weather in a city.","name":"get_weather"}]},{"googleSearch":{}},{"codeExecution":{}}]
	// Utqiagvik, Alaska.
}
