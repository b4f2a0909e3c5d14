package pgstore

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentrt/agentrt"
)

// benchMessage is a typical message: an assistant message calling a tool
// (about 300 bytes of JSON).
func benchMessage(i int) agentrt.Message {
	return agentrt.NewAssistantMessage(
		agentrt.TextBlock(fmt.Sprintf("Step %d: I will look the file up and then summarize what it says about the store.", i)),
		agentrt.ToolUseBlock(fmt.Sprintf("call_%d", i), "read_file", json.RawMessage(`{"path":"docs/jsonl-format.md","offset":0,"limit":4096}`)),
	)
}

// benchStores are the stores compared: this one in both durabilities, and
// the JSONL store in the same two.
func benchStores(b *testing.B) map[string]func(b *testing.B) agentrt.SessionStore {
	return map[string]func(b *testing.B) agentrt.SessionStore{
		"pg/SyncEveryAppend": func(b *testing.B) agentrt.SessionStore { return newStore(b, nil) },
		"pg/SyncEveryTurn":   func(b *testing.B) agentrt.SessionStore { return newStore(b, &Options{Durability: SyncEveryTurn}) },
		"jsonl/SyncEveryAppend": func(b *testing.B) agentrt.SessionStore {
			s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.SyncEveryAppend})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
		"jsonl/SyncEveryTurn": func(b *testing.B) agentrt.SessionStore {
			s, err := agentrt.NewJSONLStore(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// BenchmarkAppend appends one message per iteration to one session.
func BenchmarkAppend(b *testing.B) {
	for name, newStore := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			s := newStore(b)
			ctx := b.Context()
			i := 0
			for b.Loop() {
				if err := s.Append(ctx, "bench", benchMessage(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkLoad loads a session of 200 messages; ns/msg is per message.
func BenchmarkLoad(b *testing.B) {
	const n = 200
	for name, newStore := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			s := newStore(b)
			ctx := b.Context()
			for i := range n {
				if err := s.Append(ctx, "bench", benchMessage(i)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				msgs, err := s.Load(ctx, "bench")
				if err != nil || len(msgs) != n {
					b.Fatal(len(msgs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}
