package summarize_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/summarize"
)

// history is a session of n turns of about 25 tokens each (4 bytes a
// token): a user question, then an answer.
func history(n int) []agentrt.Message {
	msgs := []agentrt.Message{agentrt.NewUserMessage("the goal")}
	for i := range n {
		if i > 0 {
			msgs = append(msgs, agentrt.NewUserMessage(strings.Repeat("q", 100)))
		}
		msgs = append(msgs, agentrt.NewAssistantMessage(agentrt.TextBlock(strings.Repeat("a", 100))))
	}
	return msgs
}

func count(msgs []agentrt.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.String()) / 4
	}
	return n
}

func TestCompressor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var asked []*agentrt.ModelRequest
	c := &summarize.Compressor{Threshold: 200, Keep: 80, Planner: agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		asked = append(asked, req)
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(" the summary \n"))}, nil
	})}

	// Under the threshold: the history as it is, no model call.
	short := history(2)
	res, err := c.Compress(ctx, &agentrt.CompressRequest{Messages: short, Count: count})
	require.NoError(t, err)
	assert.Equal(t, short, res.Messages)
	assert.Nil(t, res.Compaction)
	assert.Empty(t, asked)

	// Over it: one call, a compaction cut in front of an assistant message,
	// and a view of the goal with the summary, then the kept messages.
	long := history(12)
	res, err = c.Compress(ctx, &agentrt.CompressRequest{Messages: long, Count: count})
	require.NoError(t, err)
	require.Len(t, asked, 1)
	require.NotNil(t, res.Compaction)
	cut := res.Compaction.UpTo
	assert.Equal(t, "the summary", res.Compaction.Summary)
	assert.Equal(t, agentrt.RoleAssistant, long[cut].Role, "the cut never separates a tool_use from its results")
	assert.LessOrEqual(t, count(long[cut:]), 80)
	require.Len(t, res.Messages, 1+len(long)-cut)
	assert.Contains(t, res.Messages[0].Content, "the goal")
	assert.Contains(t, res.Messages[0].Content, "the summary")
	assert.Equal(t, long[cut:], res.Messages[1:])

	// With that compaction as Previous and no new growth, it is reused.
	res, err = c.Compress(ctx, &agentrt.CompressRequest{Messages: long, Count: count, Previous: res.Compaction})
	require.NoError(t, err)
	assert.Len(t, asked, 1, "no new summary below the threshold")
	assert.Nil(t, res.Compaction)
	assert.Contains(t, res.Messages[0].Content, "the summary")
}

func TestCompressorErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := &agentrt.CompressRequest{Messages: history(12), Count: count}
	cases := map[string]struct {
		planner agentrt.Planner
		want    string
	}{
		"no planner": {nil, "agentrt: summarize.Compressor has no Planner"},
		"failing": {agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return nil, errors.New("agentrt: no summaries today")
		}), "agentrt: summarize: no summaries today"},
		"nil response": {agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return nil, nil
		}), "agentrt: summarize: the planner returned no response and no error"},
		"empty summary": {agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("  "))}, nil
		}), "agentrt: summarize: the model returned an empty summary"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := (&summarize.Compressor{Planner: tc.planner, Threshold: 200}).Compress(ctx, req)
			require.EqualError(t, err, tc.want)
		})
	}
}

// A Compressor serves as a value or through a pointer (checked when this
// file compiles).
var (
	_ agentrt.Compressor = summarize.Compressor{}
	_ agentrt.Compressor = &summarize.Compressor{}
)

// One Compressor serves runs at once: it keeps no state of its own.
func TestCompressorConcurrent(t *testing.T) {
	t.Parallel()
	c := summarize.Compressor{Threshold: 200, Keep: 80, Planner: agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("the summary"))}, nil
	})}
	long := history(12)
	done := make(chan *agentrt.CompressResult, 8)
	for range 8 {
		go func() {
			res, err := c.Compress(context.Background(), &agentrt.CompressRequest{Messages: long, Count: count})
			assert.NoError(t, err)
			done <- res
		}()
	}
	var first *agentrt.CompressResult
	for range 8 {
		res := <-done
		require.NotNil(t, res)
		if first == nil {
			first = res
			continue
		}
		assert.Equal(t, first.Compaction, res.Compaction, "every run gets the same compaction")
		assert.Equal(t, first.Messages, res.Messages)
	}
}
