package terminal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/terminal"
)

func TestAsker(t *testing.T) {
	t.Parallel()
	type writeIn struct {
		Path string `json:"path"`
	}
	var out strings.Builder
	ask := terminal.Asker(strings.NewReader("maybe\ny\nalways\n"), &out)
	req := &agentrt.ToolInvocation{Tool: agentrt.ToolSpec{Name: "write"}, Input: writeIn{Path: "a"}}
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
	a, err := terminal.Asker(strings.NewReader("y\n"), &out)(ctx, &agentrt.ToolInvocation{Tool: agentrt.ToolSpec{Name: "write"}})
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
			d, err := ask(context.Background(), &agentrt.ToolInvocation{Tool: agentrt.ToolSpec{Name: fmt.Sprintf("w%d", i)}})
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
