package terminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/internal/termtext/termtexttest"
	"github.com/agentrt/agentrt/terminal"
)

func TestAsker(t *testing.T) {
	t.Parallel()
	type writeIn struct {
		Path string `json:"path"`
	}
	var out strings.Builder
	ask := terminal.Asker(strings.NewReader("maybe\ny\nalways\n"), &out)
	req := &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write"}, Input: writeIn{Path: "a"}}
	a, err := ask(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.Decision{Allow: true, Source: "user"}, a)
	a, err = ask(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, agentrt.Decision{Allow: true, Source: "user", Always: true}, a)
	a, err = ask(context.Background(), req) // end of input
	require.NoError(t, err)
	assert.False(t, a.Allow)
	assert.Equal(t, `permission denied: the user refused this call of "write"`, a.Reason)
	assert.Contains(t, out.String(), `write tool "write"`)
	assert.Contains(t, out.String(), `"path": "a"`)
	assert.Equal(t, 4, strings.Count(out.String(), "Allow? "), "an unclear answer asks again")
}

func TestAskerCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	a, err := terminal.Asker(strings.NewReader("y\n"), &out)(ctx, &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write"}})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, a.Allow, "a cancelled question is a refusal")
	assert.NotContains(t, out.String(), "Allow? ", "nothing is asked once ctx is done")
}

// Questions asked at once are asked one after the other: each answer is
// read for its own question (under -race, an unserialized reader fails).
func TestAskerSerializesQuestions(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	ask := terminal.Asker(strings.NewReader("y\nn\ny\nn\n"), &out)
	const n = 4
	allowed := make(chan bool, n)
	for i := range n {
		go func() {
			d, err := ask(context.Background(), &agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: fmt.Sprintf("w%d", i)}})
			assert.NoError(t, err)
			allowed <- d.Allow
		}()
	}
	yes := 0
	for range n {
		if <-allowed {
			yes++
		}
	}
	assert.Equal(t, 2, yes, "two y and two n, one per question")
	assert.Equal(t, n, strings.Count(out.String(), "Allow? "), "each question asked once, none asked again")
	assert.Equal(t, n, strings.Count(out.String(), "The agent wants to run"))
}

// The input is model-controlled: an escape sequence that erases the line
// and a carriage return would let it overwrite what the person reads, and
// a right-to-left override would show "notes.txt\u202etxt.exe" as
// "notes.txtexe.txt". The person sees each of them escaped, on every path
// the input takes: as the model sent it, as a json.RawMessage, and as
// indented JSON.
func TestAskerShowsInputEscaped(t *testing.T) {
	t.Parallel()
	type writeIn struct {
		Path string `json:"path"`
	}
	const path = "\x1b[2K\rnotes.txt\u202etxt.exe"
	for _, tc := range []struct {
		name string
		req  *agentrt.ToolCall
		want string
	}{
		{
			name: "raw input",
			req:  &agentrt.ToolCall{RawInput: json.RawMessage(`{"path":"` + path + `","note":"` + "\xff" + `"}`)},
			want: `  {"path":"\x1b[2K\rnotes.txt\u202etxt.exe","note":"\xff"}` + "\n",
		},
		{
			name: "json.RawMessage",
			req:  &agentrt.ToolCall{Input: json.RawMessage("{\n\"path\": \"" + path + "\"\n}")},
			want: "  {\n" + `  "path": "\x1b[2K\rnotes.txt\u202etxt.exe"` + "\n  }\n",
		},
		{
			name: "indented JSON",
			req:  &agentrt.ToolCall{Input: writeIn{Path: path}},
			want: "  {\n" + `    "path": "\u001b[2K\rnotes.txt\u202etxt.exe"` + "\n  }\n",
		},
		{
			name: "raw input, not the decoded value",
			req:  &agentrt.ToolCall{Input: writeIn{Path: "b"}, RawInput: json.RawMessage(`{"path":"a\u200b","path":"b"}`)},
			want: `  {"path":"a\u200b","path":"b"}` + "\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.req.Tool = agentrt.ToolSpec{Name: "write"}
			var out strings.Builder
			d, err := terminal.Asker(strings.NewReader("n\n"), &out)(context.Background(), tc.req)
			require.NoError(t, err)
			assert.False(t, d.Allow)
			want := "\nThe agent wants to run the write tool \"write\" with input:\n" + tc.want + "Allow? [y]es / [n]o / [a]lways for this tool: "
			assert.Equal(t, want, out.String())
			assert.NotContains(t, out.String(), "\x1b")
			assert.NotContains(t, out.String(), "\r")
			assert.NotContains(t, out.String(), "\u202e")
			assert.NotContains(t, out.String(), "\xff")
		})
	}
}

// TestAskerHostile: every hostile string in the raw input is shown with
// its escapes, exactly as termtext.Safe shows it in the timeline.
func TestAskerHostile(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Hostile() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			raw := `{"path":"` + c.In + `"}`
			var out strings.Builder
			_, err := terminal.Asker(strings.NewReader("n\n"), &out)(context.Background(),
				&agentrt.ToolCall{Tool: agentrt.ToolSpec{Name: "write"}, RawInput: json.RawMessage(raw)})
			require.NoError(t, err)
			termtexttest.Check(t, c, out.String(), '\n')
			assert.Contains(t, out.String(), "\n  "+termtext.Safe(raw)+"\n", "the form of the timeline")
		})
	}
}
