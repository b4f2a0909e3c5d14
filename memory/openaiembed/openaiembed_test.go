package openaiembed

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/sqlitemem"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServer answers /embeddings with a vector per input that says which
// words it holds (one dimension per known word), in reverse order of
// index, as the API may.
func fakeServer(t *testing.T, requests *[]map[string]any) *httptest.Server {
	words := []string{"car", "automobile", "bicycle", "keys"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		*requests = append(*requests, req)
		inputs := req["input"].([]any)
		var data []map[string]any
		for i := len(inputs) - 1; i >= 0; i-- {
			v := make([]float64, len(words))
			for _, term := range memory.Terms(inputs[i].(string)) {
				for j, w := range words {
					if term == w || (term == "car" && w == "automobile") {
						v[j]++
					}
				}
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req["model"],
			"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEmbedder(t *testing.T) {
	var requests []map[string]any
	srv := fakeServer(t, &requests)
	e := New(openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0)), "text-embedding-3-small")
	e.Dimensions = 4
	vecs, err := e.Embed(t.Context(), []string{"a car", "bicycle keys"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1, 0, 0}, {0, 0, 1, 1}}, vecs, "in input order")
	require.Len(t, requests, 1)
	assert.Equal(t, "text-embedding-3-small", requests[0]["model"])
	assert.EqualValues(t, 4, requests[0]["dimensions"])

	// In a store: the car is found as an automobile.
	mem, err := sqlitemem.Open(":memory:", &sqlitemem.Options{Embedder: e})
	require.NoError(t, err)
	defer mem.Close()
	_, err = mem.Put(t.Context(), "u", memory.Item{ID: "a", Text: "The automobile is in the garage."}, memory.Item{ID: "b", Text: "The bicycle is in the shed."})
	require.NoError(t, err)
	hits, err := memory.Recall(t.Context(), mem, "u", "where is the car?", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "a", hits[0].ID)
}

func TestEmbedderError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	e := New(openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("x"), option.WithMaxRetries(0)), "m")
	_, err := e.Embed(t.Context(), []string{"x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "openaiembed:")
}
