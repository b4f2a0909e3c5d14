package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
)

// Scenarios of [TestProvider]. For each, the adapter's test returns a
// Provider wired to a replay server that answers as the scenario says, or
// nil when the adapter cannot play it (the scenario is then skipped).
const (
	// ScenarioText: a plain text answer, not streamed.
	ScenarioText = "text"
	// ScenarioTextStream: a plain text answer, streamed.
	ScenarioTextStream = "text_stream"
	// ScenarioToolCall: one tool call, not streamed.
	ScenarioToolCall = "tool_call"
	// ScenarioToolCallStream: one tool call, streamed.
	ScenarioToolCallStream = "tool_call_stream"
	// ScenarioParallelToolCalls: two or more tool calls in one answer.
	ScenarioParallelToolCalls = "parallel_tool_calls"
	// ScenarioParallelToolCallsStream: the same, streamed.
	ScenarioParallelToolCallsStream = "parallel_tool_calls_stream"
	// ScenarioRateLimitedThenOK: HTTP 429 (with Retry-After: 0) once, then a
	// text answer: the provider's retry must make the call succeed.
	ScenarioRateLimitedThenOK = "rate_limited_then_ok"
	// ScenarioRateLimited: HTTP 429 on every attempt.
	ScenarioRateLimited = "rate_limited"
	// ScenarioServerError: HTTP 500 on every attempt.
	ScenarioServerError = "server_error"
	// ScenarioAuthError: HTTP 401.
	ScenarioAuthError = "auth_error"
	// ScenarioContextLength: the vendor's context-window error.
	ScenarioContextLength = "context_length"
	// ScenarioTruncatedStream: a stream cut off in the middle of a tool
	// call, with no finish reason.
	ScenarioTruncatedStream = "truncated_stream"
	// ScenarioStalledStream: a stream that sends some text and then waits
	// until the client goes away.
	ScenarioStalledStream = "stalled_stream"
)

// ConformanceRequest is the request TestProvider sends: a system prompt, a
// history with a finished tool round trip (one result is an error) and two
// tools. Replay servers ignore it; adapters must be able to encode it.
func ConformanceRequest() *agentrt.ModelRequest {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`)
	return &agentrt.ModelRequest{
		SessionID: "conformance",
		Turn:      2,
		System:    "You are a test assistant.",
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("What is the weather in Paris and Rome?"),
			agentrt.NewAssistantMessage(
				agentrt.TextBlock("Let me check."),
				agentrt.ToolUseBlock("call_a", "weather", json.RawMessage(`{"city":"Paris"}`)),
				agentrt.ToolUseBlock("call_b", "weather", json.RawMessage(`{"city":"Rome"}`)),
			),
			agentrt.NewToolResult("call_a", "18C, sunny", false),
			agentrt.NewToolResult("call_b", "weather service unavailable", true),
			agentrt.NewUserMessage("Try Rome again, please."),
		},
		Tools: []agentrt.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", InputSchema: schema, ReadOnly: true},
			{Name: "add", Description: "Add two numbers.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`), ReadOnly: true},
		},
		MaxTokens: 256,
	}
}

// TestProvider is the conformance suite of [agentrt.Provider]
// implementations. newProvider returns, for a scenario name (the Scenario
// constants), a Provider that talks to a server answering as the scenario
// says, or nil to skip it. Each scenario runs as a subtest.
//
// It checks what the runtime relies on: a well-formed assistant message
// (tool_use ids non-empty and unique, inputs JSON objects), usage and
// finish reasons, streamed deltas that add up to the final text, errors
// classified for errors.Is, truncated streams reported as errors, and
// cancellation that stops a stream at once.
func TestProvider(t *testing.T, newProvider func(t *testing.T, scenario string) agentrt.Provider) {
	t.Helper()
	run := func(name string, f func(t *testing.T, p agentrt.Provider)) {
		t.Run(name, func(t *testing.T) {
			p := newProvider(t, name)
			if p == nil {
				t.Skipf("the adapter does not play scenario %q", name)
			}
			f(t, p)
		})
	}
	ctx := context.Background()

	text := func(stream bool) func(t *testing.T, p agentrt.Provider) {
		return func(t *testing.T, p agentrt.Provider) {
			req := ConformanceRequest()
			var deltas []string
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Generate(ctx, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkMessage(t, resp)
			if resp.Message.Text() == "" {
				t.Errorf("answer has no text: %v", resp.Message)
			}
			if resp.Message.HasToolUse() {
				t.Errorf("text scenario answered with tool calls: %v", resp.Message)
			}
			if resp.Finish != agentrt.FinishStop {
				t.Errorf("Finish = %q, want %q", resp.Finish, agentrt.FinishStop)
			}
			if stream {
				if len(deltas) == 0 {
					t.Errorf("streamed answer gave no OnText deltas")
				}
				if got := strings.Join(deltas, ""); got != resp.Message.Text() {
					t.Errorf("deltas add up to %q, final text is %q", got, resp.Message.Text())
				}
			}
		}
	}
	tools := func(stream bool, min int) func(t *testing.T, p agentrt.Provider) {
		return func(t *testing.T, p agentrt.Provider) {
			req := ConformanceRequest()
			if stream {
				req.OnText = func(string) {}
			}
			resp, err := p.Generate(ctx, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkMessage(t, resp)
			uses := resp.Message.ToolUses()
			if len(uses) < min {
				t.Fatalf("got %d tool calls, want at least %d: %v", len(uses), min, resp.Message)
			}
			if resp.Finish != agentrt.FinishToolUse {
				t.Errorf("Finish = %q, want %q", resp.Finish, agentrt.FinishToolUse)
			}
		}
	}
	wantErr := func(kind error) func(t *testing.T, p agentrt.Provider) {
		return func(t *testing.T, p agentrt.Provider) {
			req := ConformanceRequest()
			if kind == agentrt.ErrBadResponse {
				req.OnText = func(string) {}
			}
			resp, err := p.Generate(ctx, req)
			if err == nil {
				t.Fatalf("Generate succeeded (%v), want an error of kind %v", resp.Message, kind)
			}
			if !errors.Is(err, kind) {
				t.Errorf("error %q: errors.Is(err, %q) is false", err, kind)
			}
			var pe *agentrt.ProviderError
			if !errors.As(err, &pe) {
				t.Errorf("error %q is not a *agentrt.ProviderError", err)
			}
		}
	}

	run(ScenarioText, text(false))
	run(ScenarioTextStream, text(true))
	run(ScenarioToolCall, tools(false, 1))
	run(ScenarioToolCallStream, tools(true, 1))
	run(ScenarioParallelToolCalls, tools(false, 2))
	run(ScenarioParallelToolCallsStream, tools(true, 2))
	run(ScenarioRateLimitedThenOK, text(false))
	run(ScenarioRateLimited, wantErr(agentrt.ErrRateLimited))
	run(ScenarioServerError, wantErr(agentrt.ErrOverloaded))
	run(ScenarioAuthError, wantErr(agentrt.ErrAuth))
	run(ScenarioContextLength, wantErr(agentrt.ErrContextLength))
	run(ScenarioTruncatedStream, wantErr(agentrt.ErrBadResponse))
	run(ScenarioStalledStream, func(t *testing.T, p agentrt.Provider) {
		// A safety net only: a conforming provider returns long before.
		ctx, cancel := context.WithTimeoutCause(ctx, 30*time.Second, errors.New("Generate did not return after cancellation"))
		defer cancel()
		ctx, stop := context.WithCancel(ctx)
		req := ConformanceRequest()
		req.OnText = func(string) { stop() }
		_, err := p.Generate(ctx, req)
		if err == nil {
			t.Fatal("Generate succeeded on a stalled stream that was cancelled")
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %q does not wrap context.Canceled", err)
		}
	})
}

func checkMessage(t *testing.T, resp *agentrt.ModelResponse) {
	t.Helper()
	if resp == nil {
		t.Fatal("Generate returned a nil response and no error")
	}
	m := resp.Message
	if m.Role != agentrt.RoleAssistant {
		t.Errorf("Role = %q, want assistant", m.Role)
	}
	seen := map[string]bool{}
	for _, u := range m.ToolUses() {
		if u.ID == "" || seen[u.ID] {
			t.Errorf("tool_use id %q empty or duplicated", u.ID)
		}
		seen[u.ID] = true
		if u.Name == "" {
			t.Errorf("tool_use %q has no name", u.ID)
		}
		var obj map[string]any
		if err := json.Unmarshal(u.Input, &obj); err != nil || obj == nil {
			t.Errorf("tool_use %q input %q is not a JSON object", u.ID, u.Input)
		}
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("Usage = %+v, want input and output tokens", resp.Usage)
	}
}
