package agentotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agentotel"
	"github.com/agentrt/agentrt/agenttest"
)

type describedScript struct{ *agenttest.Planner }

func (describedScript) Describe() agentrt.ProviderInfo {
	return agentrt.ProviderInfo{Name: "openai", Model: "gpt-test"}
}

type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var toolSpan trace.SpanContext
	add := agentrt.NewTool("add", "Add.", func(ctx context.Context, in AddIn) (int, error) {
		// A tool's own span nests under its call.
		_, span := tp.Tracer("tool").Start(ctx, "inner")
		toolSpan = span.SpanContext()
		span.End()
		return in.A + in.B, nil
	}, agentrt.ReadOnly())
	fail := agentrt.NewTool("fail", "Fails.", func(context.Context, struct{}) (string, error) {
		return "", errors.New("disk full")
	}, agentrt.ReadOnly())
	script := agenttest.Script(
		agenttest.CallTool("add", `{"a":1,"b":2}`).WithUsage(agentrt.Usage{InputTokens: 10, OutputTokens: 3}),
		agenttest.CallTool("fail", `{}`),
		agenttest.Reply("done").WithUsage(agentrt.Usage{InputTokens: 20, OutputTokens: 5}),
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{Name: "calc", Tools: []agentrt.Tool{add, fail}, Planner: describedScript{script}, Store: store,
		Hooks: []agentrt.Hooks{agentotel.Hooks(tp)}}
	_, err := agenttest.Collect(ag.Run(context.Background(), "sess-1", "1+2"))
	require.NoError(t, err)

	spans := rec.Ended()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	require.Len(t, byName["invoke_agent calc"], 1)
	run := byName["invoke_agent calc"][0]
	ra := attrs(run)
	assert.Equal(t, "invoke_agent", ra[agentotel.OperationName].AsString())
	assert.Equal(t, "sess-1", ra[agentotel.ConversationID].AsString())
	assert.Equal(t, "calc", ra[agentotel.AgentName].AsString())
	assert.EqualValues(t, 30, ra[agentotel.UsageInputTokens].AsInt64())
	assert.Equal(t, "complete", ra[agentotel.StopReason].AsString())

	require.Len(t, byName["agentrt.turn 1"], 1)
	turn1 := byName["agentrt.turn 1"][0]
	assert.Equal(t, run.SpanContext().SpanID(), turn1.Parent().SpanID())

	chats := byName["chat gpt-test"]
	require.Len(t, chats, 3)
	ca := attrs(chats[0])
	assert.Equal(t, "chat", ca[agentotel.OperationName].AsString())
	assert.Equal(t, "gpt-test", ca[agentotel.RequestModel].AsString())
	assert.Equal(t, "openai", ca[agentotel.ProviderName].AsString())
	assert.EqualValues(t, 10, ca[agentotel.UsageInputTokens].AsInt64())
	assert.EqualValues(t, 3, ca[agentotel.UsageOutputTokens].AsInt64())
	assert.Equal(t, trace.SpanKindClient, chats[0].SpanKind())
	assert.Equal(t, turn1.SpanContext().SpanID(), chats[0].Parent().SpanID())

	require.Len(t, byName["execute_tool add"], 1)
	tool := byName["execute_tool add"][0]
	ta := attrs(tool)
	assert.Equal(t, "execute_tool", ta[agentotel.OperationName].AsString())
	assert.Equal(t, "add", ta[agentotel.ToolName].AsString())
	assert.Equal(t, "call_1", ta[agentotel.ToolCallID].AsString())
	assert.Equal(t, turn1.SpanContext().SpanID(), tool.Parent().SpanID())
	require.Len(t, byName["inner"], 1)
	assert.Equal(t, tool.SpanContext().SpanID(), byName["inner"][0].Parent().SpanID(), "the tool's own span nests under its call")
	assert.Equal(t, toolSpan.SpanID(), byName["inner"][0].SpanContext().SpanID())
	assert.Equal(t, codes.Unset, tool.Status().Code)

	// The session's trace records name the spans.
	ids := map[string]string{} // span id → the record that names it
	recs, err := store.LoadRecords(t.Context(), "sess-1")
	require.NoError(t, err)
	for _, r := range recs {
		var rec struct {
			TraceID   string `json:"trace_id"`
			SpanID    string `json:"span_id"`
			ModelCall struct {
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			} `json:"model_call"`
			ToolCalls []struct {
				ID      string `json:"tool_use_id"`
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			} `json:"tool_calls"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &rec))
		ids[rec.SpanID] = string(r.Kind)
		ids[rec.ModelCall.SpanID] = "model_call"
		for _, c := range rec.ToolCalls {
			ids[c.SpanID] = c.ID
			assert.Equal(t, run.SpanContext().TraceID().String(), c.TraceID)
		}
	}
	assert.Equal(t, "run", ids[run.SpanContext().SpanID().String()])
	assert.Equal(t, "model_call", ids[chats[0].SpanContext().SpanID().String()])
	assert.Equal(t, "call_1", ids[tool.SpanContext().SpanID().String()])

	failed := byName["execute_tool fail"][0]
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Contains(t, failed.Status().Description, "disk full")
	require.NotEmpty(t, failed.Events())
	assert.Equal(t, "exception", failed.Events()[0].Name)
}

func TestRunErrorOnSpan(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	boom := errors.New("model down")
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Fail(boom)), Hooks: []agentrt.Hooks{agentotel.Hooks(tp)}}
	_, err := agenttest.Collect(ag.Run(context.Background(), "s", "hi"))
	require.ErrorIs(t, err, boom)
	var chat, run sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "chat":
			chat = s
		case "invoke_agent":
			run = s
		}
	}
	require.NotNil(t, chat)
	require.NotNil(t, run)
	assert.Equal(t, codes.Error, chat.Status().Code)
	assert.Equal(t, codes.Error, run.Status().Code)
	assert.Equal(t, "error", attrs(run)[agentotel.StopReason].AsString())
}
