package agentrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
)

// FuzzJSONLLoad feeds arbitrary bytes to the loader as a session file. It
// checks Load against an independent reading of the rules: Load never
// panics; it never succeeds on a file with a damaged line anywhere but at
// the very end; when it succeeds it returns exactly the message lines in
// the file; and an Append after it (which removes a damaged tail) leaves a
// file that loads with one more message, while an Append to a file that
// does not load never makes it load.
func FuzzJSONLLoad(f *testing.F) {
	const hdr = `{"kind":"header","version":1,"session_id":"s","created":"2026-01-02T03:04:05Z"}` + "\n"
	const m1 = `{"kind":"message","seq":1,"ts":"2026-01-02T03:04:06Z","message":{"role":"user","content":"hi"}}` + "\n"
	const m2 = `{"kind":"message","seq":2,"ts":"2026-01-02T03:04:07Z","message":{"role":"assistant","blocks":[{"type":"tool_use","id":"c","name":"t","input":{"a":1}}]}}` + "\n"
	const rec = `{"kind":"permission","seq":3,"ts":"2026-01-02T03:04:08Z","data":{"allow":true}}` + "\n"
	for _, seed := range []string{
		"", "\n", "\x00\x00", "{}", "{}\n", "null\n", "[]\n",
		hdr, hdr + m1, hdr + m1 + m2 + rec, hdr + m1[:30], hdr + m1 + "garbage\n",
		hdr + "garbage\n" + m1, hdr + m1 + "\n", hdr + "\n" + m1, hdr + hdr,
		`{"kind":"header","version":2}` + "\n" + m1, hdr + `{"kind":"future","seq":1,"x":{}}` + "\n",
		hdr + `{"kind":"message","seq":1,"message":null}` + "\n",
		hdr + m1 + `{"kind":"message","seq":2,"message":{"role":"user","content":"\u00e9\ud83d\ude00"}}` + "\r\n",
		hdr + m1 + m2[:len(m2)-1], "\n0", hdr + "{\n" + m1[:5],
	} {
		f.Add([]byte(seed))
	}
	dir := filepath.Join(f.TempDir(), "sessions")
	s, err := agentrt.NewJSONLStore(dir, &agentrt.JSONLOptions{Durability: agentrt.SyncNever})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		id := fmt.Sprintf("f%d", n.Add(1))
		path := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)

		want, wantOK := oracleMessages(data)
		msgs, err := s.Load(ctx, id)
		verr := s.Verify(ctx, id)
		if err != nil {
			var ce *jsonl.LineError
			if !errors.As(err, &ce) || ce.Tail {
				t.Fatalf("Load failed without a JSONLLineError (not a tail): %v", err)
			}
			if wantOK {
				t.Fatalf("Load failed on a file the rules accept: %v", err)
			}
			if !errors.As(verr, &ce) || ce.Tail {
				t.Fatalf("Load failed (%v) but Verify says %v", err, verr)
			}
		} else {
			if !wantOK {
				t.Fatalf("Load succeeded on a file with a damaged line before its end:\n%q", data)
			}
			if len(msgs) != want {
				t.Fatalf("Load returned %d messages, the file holds %d", len(msgs), want)
			}
			var tail *jsonl.LineError
			ms := &agentrt.MemoryStore{}
			for _, m := range msgs {
				ms.Append(ctx, "m", m)
			}
			broken := ms.Verify(ctx, "m")
			switch {
			case broken != nil:
				if !errors.Is(verr, agentrt.ErrBrokenSession) {
					t.Fatalf("the messages break the invariant (%v) but Verify says %v", broken, verr)
				}
			case verr != nil && (!errors.As(verr, &tail) || !tail.Tail):
				t.Fatalf("Load succeeded but Verify says %v", verr)
			}
		}

		// Appending never hides damage, and always repairs a damaged tail.
		aerr := s.Append(ctx, id, agentrt.NewUserMessage("fuzz"))
		msgs2, err2 := s.Load(ctx, id)
		if err != nil {
			if err2 == nil {
				t.Fatalf("an append (err %v) made a damaged file load:\nbefore %q\nafter %q", aerr, data, readBytes(t, path))
			}
			return
		}
		if aerr != nil {
			t.Fatalf("Append to a file that loads: %v", aerr)
		}
		if err2 != nil {
			t.Fatalf("Load after Append: %v\nbefore %q\nafter %q", err2, data, readBytes(t, path))
		}
		if len(msgs2) != len(msgs)+1 || msgs2[len(msgs)].Content != "fuzz" {
			t.Fatalf("after Append: %d messages, want %d", len(msgs2), len(msgs)+1)
		}
		if err := s.Verify(ctx, id); err != nil && !errors.Is(err, agentrt.ErrBrokenSession) {
			t.Fatalf("Verify after Append: %v", err)
		}
	})
}

func readBytes(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oracleMessages applies the format's reading rules, written apart from
// the store's code: lines end in '\n', and a last line without one is
// dropped; otherwise a last line that is not valid JSON is dropped; every
// other line must be a JSON object: the first a header of version 1, the
// others records with a kind (not "header") and a positive seq, message
// records with a message that has a role; and every documented field has
// its documented type. It returns the number of messages and whether the
// file is acceptable.
func oracleMessages(data []byte) (int, bool) {
	lines := bytes.Split(data, []byte("\n"))
	incomplete := len(lines[len(lines)-1]) > 0 // the part after the last '\n'
	lines = lines[:len(lines)-1]
	if !incomplete && len(lines) > 0 && !json.Valid(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	msgs := 0
	for i, line := range lines {
		var r struct { // the documented fields and their types
			Kind      *string          `json:"kind"`
			Seq       *int64           `json:"seq"`
			TS        string           `json:"ts"`
			Message   *agentrt.Message `json:"message"`
			Data      json.RawMessage  `json:"data"`
			Version   *int             `json:"version"`
			SessionID string           `json:"session_id"`
			Created   string           `json:"created"`
			Metadata  json.RawMessage  `json:"metadata"`
			Forked    *struct {
				SessionID string `json:"session_id"`
				Messages  int    `json:"messages"`
			} `json:"forked_from"`
		}
		if !json.Valid(line) || json.Unmarshal(line, &r) != nil || bytes.TrimSpace(line)[0] != '{' {
			return 0, false
		}
		if i == 0 {
			if r.Kind == nil || *r.Kind != "header" || r.Version == nil || *r.Version != 1 {
				return 0, false
			}
			continue
		}
		if r.Kind == nil || *r.Kind == "" || *r.Kind == "header" || r.Seq == nil || *r.Seq < 1 {
			return 0, false
		}
		if *r.Kind == "message" {
			if r.Message == nil || r.Message.Role == "" {
				return 0, false
			}
			msgs++
		}
	}
	return msgs, true
}
