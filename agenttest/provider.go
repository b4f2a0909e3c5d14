package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt"
)

// Scenarios of [TestProvider]. For each, the adapter's test returns a
// planner wired to a replay server that answers as the scenario says, or
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
	// ScenarioImageInput: the last user message carries a PNG image
	// (ImageRequest); the server answers with text.
	ScenarioImageInput = "image_input"
	// ScenarioImageToolResult: a tool result carries a PNG image
	// (ImageToolResultRequest); the server answers with text.
	ScenarioImageToolResult = "image_tool_result"
	// ScenarioThinkingRoundTrip: the server answers with thinking and a
	// tool call, then, to the follow-up that sends them back with the
	// tool's result, with text.
	ScenarioThinkingRoundTrip = "thinking_round_trip"
	// ScenarioUnsupportedContent: the request carries a document of a
	// media type no API takes (UnsupportedMediaType). The provider must
	// refuse it with agentrt.ErrUnsupportedContent, not drop it; the
	// server answers with text if it is called at all.
	ScenarioUnsupportedContent = "unsupported_content"
)

// UnsupportedMediaType is the media type of ScenarioUnsupportedContent.
const UnsupportedMediaType = "application/x-agenttest-unsupported"

// PNG is a valid 1x1 PNG image, the image of the content scenarios.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// ImageRequest is ConformanceRequest whose last user message carries PNG.
func ImageRequest() *agentrt.ModelRequest {
	req := ConformanceRequest()
	last := &req.Messages[len(req.Messages)-1]
	last.Blocks = []agentrt.Block{agentrt.ImageBlock("image/png", PNG)}
	return req
}

// ImageToolResultRequest is ConformanceRequest whose first tool result
// (call_a) carries PNG after its text.
func ImageToolResultRequest() *agentrt.ModelRequest {
	req := ConformanceRequest()
	req.Messages[2].Blocks = []agentrt.Block{agentrt.ImageBlock("image/png", PNG)}
	return req
}

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
			agentrt.NewToolMessage("call_a", "18C, sunny", false),
			agentrt.NewToolMessage("call_b", "weather service unavailable", true),
			agentrt.NewUserMessage("Try Rome again, please."),
		},
		Tools: []agentrt.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", InputSchema: schema, ReadOnly: true},
			{Name: "add", Description: "Add two numbers.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`), ReadOnly: true},
		},
		MaxTokens: 256,
	}
}

// TestProvider is the conformance suite of provider adapters (the
// [agentrt.Planner]s that call a model API). newProvider returns, for a scenario name (the Scenario
// constants), an adapter that talks to a server answering as the scenario
// says, or nil to skip it. Each scenario runs as a subtest.
//
// It checks what the runtime relies on: a well-formed assistant message
// (tool_use ids non-empty and unique, inputs JSON objects), usage and
// finish reasons, streamed deltas that add up to the final text, errors
// classified for errors.Is, truncated streams reported as errors, and
// cancellation that stops a stream at once.
//
// The content scenarios check that images in a user message or a tool
// result are either taken (a well-formed answer) or refused with
// [agentrt.ErrUnsupportedContent] (the adapter declares it cannot take
// them; the scenario then passes and logs it), that content no API takes
// is refused rather than dropped, and that thinking blocks come back as
// blocks of their own (Provider set) that survive the session's JSON form
// and can be sent again. What goes on the wire is the adapter's to check
// in its own tests, against its replay server's requests.
func TestProvider(t *testing.T, newProvider func(t *testing.T, scenario string) agentrt.Planner) {
	t.Helper()
	run := func(name string, f func(t *testing.T, p agentrt.Planner)) {
		t.Run(name, func(t *testing.T) {
			p := newProvider(t, name)
			if p == nil {
				t.Skipf("the adapter does not play scenario %q", name)
			}
			f(t, p)
		})
	}
	ctx := context.Background()

	text := func(stream bool) func(t *testing.T, p agentrt.Planner) {
		return func(t *testing.T, p agentrt.Planner) {
			req := ConformanceRequest()
			var deltas []string
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := p.Plan(ctx, req)
			if err != nil {
				t.Fatalf("Plan: %v", err)
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
	tools := func(stream bool, min int) func(t *testing.T, p agentrt.Planner) {
		return func(t *testing.T, p agentrt.Planner) {
			req := ConformanceRequest()
			if stream {
				req.OnText = func(string) {}
			}
			resp, err := p.Plan(ctx, req)
			if err != nil {
				t.Fatalf("Plan: %v", err)
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
	wantErr := func(kind error) func(t *testing.T, p agentrt.Planner) {
		return func(t *testing.T, p agentrt.Planner) {
			req := ConformanceRequest()
			if kind == agentrt.ErrBadResponse {
				req.OnText = func(string) {}
			}
			resp, err := p.Plan(ctx, req)
			if err == nil {
				t.Fatalf("Plan succeeded (%v), want an error of kind %v", resp.Message, kind)
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
	content := func(req func() *agentrt.ModelRequest) func(t *testing.T, p agentrt.Planner) {
		return func(t *testing.T, p agentrt.Planner) {
			resp, err := p.Plan(ctx, req())
			if errors.Is(err, agentrt.ErrUnsupportedContent) {
				t.Logf("the provider declares it cannot take this content: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Plan: %v (a provider that cannot take the content must say so with agentrt.ErrUnsupportedContent)", err)
			}
			checkMessage(t, resp)
			if resp.Message.Text() == "" && !resp.Message.HasToolUse() {
				t.Errorf("empty answer: %v", resp.Message)
			}
		}
	}
	run(ScenarioImageInput, content(ImageRequest))
	run(ScenarioImageToolResult, content(ImageToolResultRequest))
	run(ScenarioUnsupportedContent, func(t *testing.T, p agentrt.Planner) {
		req := ConformanceRequest()
		last := &req.Messages[len(req.Messages)-1]
		last.Blocks = []agentrt.Block{agentrt.DocumentBlock("data.bin", UnsupportedMediaType, []byte{1, 2, 3})}
		resp, err := p.Plan(ctx, req)
		if err == nil {
			t.Fatalf("Plan succeeded (%v): a document of type %s was dropped or sent, not refused", resp.Message, UnsupportedMediaType)
		}
		if !errors.Is(err, agentrt.ErrUnsupportedContent) {
			t.Errorf("error %q: errors.Is(err, agentrt.ErrUnsupportedContent) is false", err)
		}
	})
	run(ScenarioThinkingRoundTrip, func(t *testing.T, p agentrt.Planner) {
		req := ConformanceRequest()
		resp, err := p.Plan(ctx, req)
		if err != nil {
			t.Fatalf("Plan: %v", err)
		}
		checkMessage(t, resp)
		var thinking *agentrt.Block
		for i, b := range resp.Message.Blocks {
			if b.Type == agentrt.BlockThinking {
				thinking = &resp.Message.Blocks[i]
				break
			}
		}
		if thinking == nil {
			t.Fatalf("no thinking block in %v", resp.Message)
		}
		if thinking.Provider == "" {
			t.Errorf("thinking block without a Provider: %+v", *thinking)
		}
		if thinking.Text == "" && len(thinking.Signature) == 0 {
			t.Errorf("thinking block with neither text nor signature: %+v", *thinking)
		}
		uses := resp.Message.ToolUses()
		if len(uses) == 0 {
			t.Fatalf("no tool call after the thinking: %v", resp.Message)
		}
		// Through the session's JSON form, as a resumed session sees it.
		b, err := json.Marshal(resp.Message)
		if err != nil {
			t.Fatal(err)
		}
		var stored agentrt.Message
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored, resp.Message) {
			t.Errorf("the message changed through JSON:\n got %#v\nwant %#v", stored, resp.Message)
		}
		follow := ConformanceRequest()
		follow.Messages = append(follow.Messages, stored)
		for _, u := range uses {
			follow.Messages = append(follow.Messages, agentrt.NewToolMessage(u.ID, "21C", false))
		}
		resp2, err := p.Plan(ctx, follow)
		if err != nil {
			t.Fatalf("follow-up Plan: %v", err)
		}
		checkMessage(t, resp2)
	})
	run(ScenarioStalledStream, func(t *testing.T, p agentrt.Planner) {
		// A safety net only: a conforming provider returns long before.
		ctx, cancel := context.WithTimeoutCause(ctx, 30*time.Second, errors.New("Plan did not return after cancellation"))
		defer cancel()
		ctx, stop := context.WithCancel(ctx)
		req := ConformanceRequest()
		req.OnText = func(string) { stop() }
		_, err := p.Plan(ctx, req)
		if err == nil {
			t.Fatal("Plan succeeded on a stalled stream that was cancelled")
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %q does not wrap context.Canceled", err)
		}
	})
}

func checkMessage(t *testing.T, resp *agentrt.ModelResponse) {
	t.Helper()
	if resp == nil {
		t.Fatal("Plan returned a nil response and no error")
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
