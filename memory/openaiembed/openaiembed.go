// Package openaiembed is a [memory.Embedder] on the OpenAI embeddings API,
// through the official Go SDK (the client of agentrt's provider/openai),
// and so on every server that offers the same API (Ollama, vLLM, LM
// Studio, ...: set the client's base URL).
//
//	e := openaiembed.New(openai.NewClient(), "text-embedding-3-small")
//	mem, err := sqlitemem.Open("memory.db", &sqlitemem.Options{Embedder: e})
package openaiembed

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
)

// MaxBatch is the most texts sent in one request (the API's limit).
const MaxBatch = 2048

// Embedder embeds texts with one model.
type Embedder struct {
	Client openai.Client
	Model  string
	// Dimensions asks for shorter vectors (text-embedding-3 models); 0 is
	// the model's default.
	Dimensions int
}

// New returns an Embedder using client and model.
func New(client openai.Client, model string) *Embedder {
	return &Embedder{Client: client, Model: model}
}

// Embed returns one vector per text, in order, in requests of at most
// MaxBatch texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for start := 0; start < len(texts); start += MaxBatch {
		batch := texts[start:min(start+MaxBatch, len(texts))]
		params := openai.EmbeddingNewParams{
			Model: openai.EmbeddingModel(e.Model),
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
		}
		if e.Dimensions > 0 {
			params.Dimensions = openai.Int(int64(e.Dimensions))
		}
		resp, err := e.Client.Embeddings.New(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("openaiembed: %w", err)
		}
		if len(resp.Data) != len(batch) {
			return nil, fmt.Errorf("openaiembed: %d embeddings for %d texts", len(resp.Data), len(batch))
		}
		for _, d := range resp.Data {
			if d.Index < 0 || int(d.Index) >= len(batch) || out[start+int(d.Index)] != nil {
				return nil, fmt.Errorf("openaiembed: bad or repeated index %d", d.Index)
			}
			v := make([]float32, len(d.Embedding))
			for i, f := range d.Embedding {
				v[i] = float32(f)
			}
			out[start+int(d.Index)] = v
		}
	}
	return out, nil
}
