package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentrt/agentrt"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// PlanInput is the input of the planner activity: what the model is asked.
// It is recorded in the workflow history, so the history shows every
// request made to the model.
type PlanInput struct {
	SessionID string             `json:"session_id"`
	Turn      int                `json:"turn"`
	System    string             `json:"system"`
	Messages  []agentrt.Message  `json:"messages"`
	Tools     []agentrt.ToolSpec `json:"tools"`
}

// PlanOutput is the result of the planner activity: the assistant message,
// already sanitized (role set, every tool_use with a unique non-empty id and
// valid JSON input), and what it cost.
type PlanOutput struct {
	Message agentrt.Message      `json:"message"`
	Usage   agentrt.Usage        `json:"usage"`
	Finish  agentrt.FinishReason `json:"finish,omitempty"`
	Model   string               `json:"model,omitempty"`
	// Notes maps the id of each tool_use that must not run (malformed,
	// unknown tool, invalid input) to the error text the model will see.
	Notes map[string]string `json:"notes,omitempty"`
}

// ToolInput is the input of the tool activity: one tool_use.
type ToolInput struct {
	SessionID string          `json:"session_id"`
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// ToolOutput is the result of the tool activity: what the model sees.
// A tool's error, panic or timeout is an IsError output, not an activity
// failure: it is not retried.
type ToolOutput struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Error is the failure behind an IsError output, for the caller.
	Error string `json:"error,omitempty"`
	// FullOutput is the whole output when Content was cut to
	// Agent.MaxToolOutput.
	FullOutput string        `json:"full_output,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
}

// activities are the planner and tool activities of one agent.
type activities struct {
	d  *definition
	ag *agentrt.Agent
}

// plan asks the Agent's planner for the next assistant message.
func (a *activities) plan(ctx context.Context, in PlanInput) (*PlanOutput, error) {
	req := &agentrt.ModelRequest{
		SessionID: in.SessionID,
		Turn:      in.Turn,
		System:    in.System,
		Messages:  slices.Clip(in.Messages),
		Tools:     in.Tools,
	}
	stop := heartbeat(ctx)
	resp, err := a.ag.Planner.Plan(ctx, req)
	stop()
	if err == nil && resp == nil {
		err = errors.New("planner returned no response")
	}
	if err != nil {
		var pe *agentrt.ProviderError
		switch {
		case ctx.Err() != nil:
			return nil, err
		case errors.As(err, &pe) && pe.Retryable():
			return nil, temporal.NewApplicationErrorWithOptions(err.Error(), "agentrt.PlannerTransient",
				temporal.ApplicationErrorOptions{NextRetryDelay: pe.RetryAfter, Cause: err})
		}
		return nil, temporal.NewApplicationErrorWithOptions(err.Error(), "agentrt.PlannerError",
			temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
	}
	msg, notes := agentrt.SanitizeAssistant(resp.Message, in.Turn)
	for _, u := range msg.ToolUses() {
		if _, bad := notes[u.ID]; bad {
			continue
		}
		note := ""
		if t, ok := a.d.tools[u.Name]; !ok {
			note = fmt.Sprintf("unknown tool %q; the available tools are: %s", u.Name, a.d.names)
			if a.d.names == "" {
				note = fmt.Sprintf("unknown tool %q; no tools are available", u.Name)
			}
		} else if _, err := t.Decode(u.Input); err != nil {
			note = fmt.Sprintf("tool %q: %v", u.Name, err)
		}
		if note != "" {
			if notes == nil {
				notes = map[string]string{}
			}
			notes[u.ID] = note
		}
	}
	return &PlanOutput{Message: msg, Usage: resp.Usage, Finish: resp.Finish, Model: resp.Model, Notes: notes}, nil
}

// tool decodes and runs one tool call, heartbeating while it runs.
//
// The tool's context is the activity's: it is cancelled when the workflow
// is cancelled (the cancellation arrives with a heartbeat) or the worker
// stops. In that case the activity fails with the context's error instead
// of returning a result, so that Temporal decides: a retry for a read-only
// or idempotent tool, an "interrupted" or "cancelled" result otherwise.
func (a *activities) tool(ctx context.Context, in ToolInput) (*ToolOutput, error) {
	t, ok := a.d.tools[in.Name]
	if !ok {
		return &ToolOutput{Content: fmt.Sprintf("unknown tool %q on this worker", in.Name), IsError: true}, nil
	}
	v, err := t.Decode(in.Input)
	if err != nil {
		return &ToolOutput{Content: fmt.Sprintf("tool %q: %v", in.Name, err), IsError: true, Error: err.Error()}, nil
	}
	tctx := ctx
	timeout := a.d.toolTimeoutOf(t.Spec())
	if timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stop := heartbeat(ctx)
	start := time.Now()
	out, err := execute(tctx, t, v)
	dur := time.Since(start)
	stop()
	if err == nil {
		res := &ToolOutput{Content: out, Duration: dur}
		if cut, ok := agentrt.TruncateOutput(out, a.d.maxOutput); ok {
			res.FullOutput, res.Content = out, cut
		}
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := &ToolOutput{IsError: true, Error: err.Error(), Duration: dur}
	var pe *agentrt.PanicError
	switch {
	case errors.As(err, &pe):
		res.Content = fmt.Sprintf("tool %q panicked: %v", in.Name, pe.Value)
	case timeout > 0 && errors.Is(tctx.Err(), context.DeadlineExceeded):
		res.Content = fmt.Sprintf("tool %q timed out after %v", in.Name, timeout)
	default:
		res.Content = err.Error()
	}
	return res, nil
}

// execute runs the tool, turning a panic into a *agentrt.PanicError.
func execute(ctx context.Context, t agentrt.Tool, v any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &agentrt.PanicError{Value: r}
		}
	}()
	return t.Execute(ctx, v)
}

// heartbeat records a heartbeat three times per heartbeat timeout until
// the returned function is called (which waits for the goroutine to end).
func heartbeat(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}
