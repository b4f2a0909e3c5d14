package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCommands runs every command of agentrt on a session file of any
// content: a damaged, truncated or hostile file gets output or a clear
// error (exit 2 with a message, or verify's exit 1 with findings), never a
// panic, and what reaches the terminal is valid UTF-8.
func FuzzCommands(f *testing.F) {
	doc, err := os.ReadFile("../../docs/jsonl-format.md")
	if err != nil {
		f.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```jsonl\n")
	example, _, _ := strings.Cut(rest, "```")
	old, err := os.ReadFile("../../timeline/testdata/old.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	// A session with request fingerprints and cache breaks.
	cached, err := os.ReadFile("../../timeline/testdata/cache/tool-list.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(strings.ReplaceAll(string(cached), `"from":1`, `"from":-1`)))
	f.Add([]byte(strings.ReplaceAll(string(cached), `"tail":1`, `"tail":-3`)))
	for _, s := range []string{example, string(old), string(cached)} {
		f.Add([]byte(s))
		f.Add([]byte(s[:len(s)/2]))         // cut mid-line
		f.Add([]byte(s[:len(s)-1]))         // without its last newline
		f.Add([]byte(strings.Repeat(s, 2))) // a second header in the middle
		f.Add([]byte(strings.ReplaceAll(s, `"seq":3`, `"seq":30`)))
		f.Add([]byte(strings.ReplaceAll(s, `"kind":"turn"`, `"kind":"run"`)))
	}
	f.Add([]byte{})
	f.Add([]byte("\x00\xff\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, args := range [][]string{
			{"show", "-color", "never", "-width", "60", path},
			{"show", "-full", "-color", "never", path},
			{"show", "-json", path},
			{"html", path},
			{"verify", path},
			{"verify", "-json", path},
			{"ls", dir},
			{"tail", "-color", "never", path},
		} {
			var out, errb strings.Builder
			code := run(ctx, args, &out, &errb)
			switch {
			case code == 2 && strings.TrimSpace(errb.String()) == "":
				t.Fatalf("%v: exit 2 with no message", args)
			case code == 1 && args[0] != "verify":
				t.Fatalf("%v: exit 1", args)
			case code != 0 && code != 1 && code != 2:
				t.Fatalf("%v: exit %d", args, code)
			}
			if args[0] != "html" && !utf8.ValidString(out.String()) {
				t.Fatalf("%v: output is not valid UTF-8", args)
			}
		}
	})
}
