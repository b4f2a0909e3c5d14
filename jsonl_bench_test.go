package agentrt_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
)

// benchMessage is message i of a typical tool-using session: a question,
// a call, its result (a few hundred bytes), an answer.
func benchMessage(i int) agentrt.Message {
	switch i % 4 {
	case 0:
		return agentrt.NewUserMessage(fmt.Sprintf("Please look at file %d and tell me what it does.", i))
	case 1:
		return agentrt.NewAssistantMessage(agentrt.TextBlock("Let me read it."),
			agentrt.ToolUseBlock(fmt.Sprintf("call_%d", i), "read_file", json.RawMessage(fmt.Sprintf(`{"path":"src/file_%d.go"}`, i))))
	case 2:
		return agentrt.NewToolMessage(fmt.Sprintf("call_%d", i-1), strings.Repeat("package main\n\nfunc main() {}\n", 10), false)
	default:
		return agentrt.NewAssistantMessage(agentrt.TextBlock("It declares an empty main function in package main; nothing else happens."))
	}
}

// BenchmarkJSONLAppend measures one Append as the runtime makes it: with
// the session locked (its file kept open), and, for every-turn, the two
// Syncs of a turn of four messages (after the assistant message carrying
// tool calls, and at the end of the turn).
func BenchmarkJSONLAppend(b *testing.B) {
	for _, d := range []agentrt.Durability{agentrt.SyncEveryAppend, agentrt.SyncEveryTurn, agentrt.SyncNever} {
		b.Run(d.String(), func(b *testing.B) {
			s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: d})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			unlock, err := s.Lock(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			defer unlock()
			msgs := make([]agentrt.Message, 4)
			for i := range msgs {
				msgs[i] = benchMessage(i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := s.Append(ctx, "bench", msgs[i%4]); err != nil {
					b.Fatal(err)
				}
				if i%4 == 1 || i%4 == 3 {
					if err := s.Sync(ctx, "bench"); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
		})
	}
}

// benchSession writes a session of n messages and returns its store and
// the path of its file.
func benchSession(b *testing.B, n int) (*agentrt.JSONLStore, string) {
	b.Helper()
	s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	unlock, err := s.Lock(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	for i := range n {
		if err := s.Append(ctx, "big", benchMessage(i)); err != nil {
			b.Fatal(err)
		}
	}
	return s, filepath.Join(s.Dir(), "big.jsonl")
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkJSONLLoad100k loads a session of 100,000 messages (about 26 MB).
func BenchmarkJSONLLoad100k(b *testing.B) {
	s, path := benchSession(b, 100_000)
	b.SetBytes(fileSize(b, path))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		msgs, err := s.Load(ctx, "big")
		if err != nil || len(msgs) != 100_000 {
			b.Fatal(len(msgs), err)
		}
	}
}

// BenchmarkJSONLLoadFloor100k reads the same file as BenchmarkJSONLLoad100k
// the plainest way: bufio.Scanner with a big buffer and json.Unmarshal of
// each line, without any of the checks Load makes.
func BenchmarkJSONLLoadFloor100k(b *testing.B) {
	_, path := benchSession(b, 100_000)
	b.SetBytes(fileSize(b, path))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var msgs []agentrt.Message
		for sc.Scan() {
			var line struct {
				Kind    string           `json:"kind"`
				Seq     int64            `json:"seq"`
				TS      string           `json:"ts"`
				Message *agentrt.Message `json:"message"`
				Data    json.RawMessage  `json:"data"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				b.Fatal(err)
			}
			if line.Kind == "message" {
				msgs = append(msgs, *line.Message)
			}
		}
		f.Close()
		if sc.Err() != nil || len(msgs) != 100_000 {
			b.Fatal(len(msgs), sc.Err())
		}
	}
}

// BenchmarkJSONLList measures List of 100 sessions of 40 messages: again
// after a first List (what a session picker refreshing itself costs), and
// by a new store that has to read every file.
func BenchmarkJSONLList(b *testing.B) {
	s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 100 {
		for j := range 40 {
			if err := s.Append(ctx, fmt.Sprintf("s%d", i), benchMessage(j)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := s.List(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if infos, err := s.List(ctx); err != nil || len(infos) != 100 {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			s2, err := agentrt.NewJSONLStore(s.Dir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if infos, err := s2.List(ctx); err != nil || len(infos) != 100 {
				b.Fatal(err)
			}
			s2.Close()
		}
	})
}

// BenchmarkJSONLImage1MB measures a message carrying a 1 MB image, stored
// inline (base64 in the message line): its Append (SyncNever, so the
// encoding and the write are measured, not the disk's flush), and the Load
// of a session of 20 text messages plus that one.
func BenchmarkJSONLImage1MB(b *testing.B) {
	img := make([]byte, 1<<20)
	for i := range img {
		img[i] = byte(i * 7919 >> 3)
	}
	msg := agentrt.NewUserMessage("What is in this picture?", agentrt.ImageBlock("image/png", img))
	b.Run("append", func(b *testing.B) {
		s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		b.ReportAllocs()
		b.SetBytes(int64(len(img)))
		for b.Loop() {
			if err := s.Append(ctx, "img", msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		s, err := agentrt.NewJSONLStore(b.TempDir(), &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		for i := range 20 {
			if err := s.Append(ctx, "img", benchMessage(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Append(ctx, "img", msg); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(img)))
		for b.Loop() {
			msgs, err := s.Load(ctx, "img")
			if err != nil || len(msgs) != 21 || len(msgs[20].Blocks[0].Data) != len(img) {
				b.Fatalf("load: %d messages, %v", len(msgs), err)
			}
		}
	})
}
