package agentrt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

type Verdict struct {
	Label      string  `json:"label" jsonschema:"enum=spam,enum=ham" validate:"oneof=spam ham"`
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
}

func TestRunTypedRetriesThenAccepts(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(
		agenttest.Reply("I think it is spam."),
		agenttest.Reply("```json\n{\"label\":\"junk\",\"confidence\":0.9}\n```"),
		agenttest.Reply(`Here you go: {"label":"spam","confidence":0.9}`),
	)
	ag, store := newAgent(script)
	var events []agentrt.Event
	v, err := agentrt.RunTyped[Verdict](context.Background(), ag, "s1", "Classify: WIN A PRIZE", &agentrt.TypedOptions{
		OnEvent: func(ev agentrt.Event) { events = append(events, ev) },
	})
	require.NoError(t, err)
	assert.Equal(t, Verdict{Label: "spam", Confidence: 0.9}, v)
	script.AssertDone(t)
	reqs := script.Requests()
	assert.JSONEq(t, `{"type":"object","properties":{"label":{"type":"string","enum":["spam","ham"]},"confidence":{"type":"number"}},"required":["label","confidence"],"additionalProperties":false}`, string(reqs[0].ResponseSchema))
	assert.Contains(t, reqs[0].System, "reply with only a JSON value")
	// The model was told what was wrong each time.
	assert.Contains(t, reqs[1].Messages[2].Content, "Your final answer is not valid: the answer is not valid JSON")
	assert.Contains(t, reqs[2].Messages[4].Content, `field "label" must be one of "spam", "ham"`)
	msgs, _ := store.Load(context.Background(), "s1")
	agenttest.AssertInvariants(t, msgs)
	done, _ := agenttest.Done(events)
	assert.Equal(t, agentrt.StopComplete, done.Reason)
}

func TestRunTypedGivesUp(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.Reply(`{"label":"x"}`), agenttest.Reply(`{"label":"y"}`))
	ag, _ := newAgent(script)
	_, err := agentrt.RunTyped[Verdict](context.Background(), ag, "s1", "Classify", &agentrt.TypedOptions{MaxRetries: 1})
	var oe *agentrt.OutputError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, `{"label":"y"}`, oe.Raw)
	assert.Contains(t, oe.Err.Error(), `field "label" must be one of`)
	script.AssertDone(t)
}

func TestRunTypedWithToolsAndPlannerError(t *testing.T) {
	t.Parallel()
	script := agenttest.Script(agenttest.CallTool("add", `{"a":20,"b":22}`), agenttest.Reply(`{"label":"ham","confidence":1}`))
	ag, _ := newAgent(script, addTool())
	v, err := agentrt.RunTyped[Verdict](context.Background(), ag, "s1", "go", nil)
	require.NoError(t, err)
	assert.Equal(t, "ham", v.Label)

	boom := errors.New("down")
	ag, _ = newAgent(agenttest.Script(agenttest.Fail(boom)))
	_, err = agentrt.RunTyped[Verdict](context.Background(), ag, "s1", "go", nil)
	require.ErrorIs(t, err, boom)
}

func TestOutputErrorTextKeepsRunesWhole(t *testing.T) {
	t.Parallel()
	raw := "a" + strings.Repeat("é", 400) // byte 300 falls inside a rune
	err := &agentrt.OutputError{Raw: raw, Err: errors.New("not JSON")}
	msg := err.Error()
	assert.True(t, utf8.ValidString(msg), "a cut never splits a rune")
	assert.Contains(t, msg, "a"+strings.Repeat("é", 149)+"…")
}
