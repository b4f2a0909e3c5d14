package temporal

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/durable/loop"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// The activities run the step side of the loop ([loop.Loop]) on a
// worker: the user's callbacks run there exactly as in-process, and what
// they produce (a response, a decision, a result, the events) is returned
// to the workflow, which records it.

// PlanInput is the input of the planner activity: one attempt of a
// planner call. It is recorded in the workflow history, so the history
// shows every request made to the model.
type PlanInput struct {
	SessionID      string             `json:"session_id"`
	Turn           int                `json:"turn"`
	System         string             `json:"system"`
	Messages       []agentrt.Message  `json:"messages"`
	Tools          []agentrt.ToolSpec `json:"tools"`
	ResponseSchema json.RawMessage    `json:"response_schema,omitempty"`
	// Compaction is the session's last compaction, given to the
	// Compressor as Previous.
	Compaction *agentrt.Compaction `json:"compaction,omitempty"`
	// Force asks the Compressor for less after a context-length error.
	Force bool `json:"force,omitempty"`
	// Attempt counts the attempts of this planner call, from 1.
	Attempt int `json:"attempt"`
}

// PlanOutput is the result of the planner activity: the model's answer as
// the planner returned it (the workflow sanitizes it), what it cost, a new
// compaction, if any, and the events of the attempt (contained hook
// failures).
type PlanOutput struct {
	Message agentrt.Message `json:"message"`
	// Raw, when set, is Message encoded with encoding/gob: the model's
	// message as it came, when JSON could not carry it unchanged (an input
	// that is not valid JSON, a string that is not valid UTF-8), so that
	// the workflow decides on what the model sent, as in-process.
	Raw        []byte               `json:"raw,omitempty"`
	Usage      agentrt.Usage        `json:"usage"`
	Finish     agentrt.FinishReason `json:"finish,omitempty"`
	Model      string               `json:"model,omitempty"`
	Compaction *agentrt.Compaction  `json:"compaction,omitempty"`
	Events     []EventRecord        `json:"events,omitempty"`
}

// planFailure is the detail of a failed planner attempt, carried by a
// non-retryable application error: the workflow retries as Agent.Retry
// says, so that the activity's own retries are only for timeouts (a dead
// worker), which do not use up the provider's retry budget.
type planFailure struct {
	Message    string              `json:"message"`
	Layer      agentrt.Layer       `json:"layer"`
	Compact    bool                `json:"compact,omitempty"`
	Retry      bool                `json:"retry,omitempty"`
	Delay      time.Duration       `json:"delay,omitempty"`
	Compaction *agentrt.Compaction `json:"compaction,omitempty"`
	Events     []EventRecord       `json:"events,omitempty"`
	Shape      *errorShape         `json:"shape,omitempty"` // the typed part of the error
}

const plannerErrorType = "agentrt.PlannerError"

// DecideInput is the input of the decide activity: one tool_use, and,
// when a person allowed it with an edited input, their decision, for the
// checker to decide the edit again.
type DecideInput struct {
	SessionID string            `json:"session_id"`
	Turn      int               `json:"turn"`
	ToolUse   agentrt.Block     `json:"tool_use"`
	Edit      *agentrt.Decision `json:"edit,omitempty"`
}

// DecideOutput is the result of the decide activity: the input the tool
// will run with, or the call's is_error result, or that a person must
// approve the call (PolicyAsk, or a checker's agentrt.Decision.Pending).
type DecideOutput struct {
	Input  json.RawMessage `json:"input,omitempty"`
	Denied *ToolOutput     `json:"denied,omitempty"`
	Ask    bool            `json:"ask,omitempty"`
	Events []EventRecord   `json:"events,omitempty"`
}

// ToolInput is the input of the tool activity: one allowed tool_use.
type ToolInput struct {
	SessionID string          `json:"session_id"`
	Turn      int             `json:"turn"`
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input,omitempty"`
	// Run is the input the tool runs with when the permission checker
	// replaced Input; empty means Input.
	Run json.RawMessage `json:"run,omitempty"`
}

// ToolOutput is a call's outcome, as its AfterTool hooks left it, before
// the loop cuts it to Agent.MaxToolOutput and adds the loop guard's note.
// A tool's error, panic or timeout is an IsError output, not an activity
// failure: it is not retried.
type ToolOutput struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Blocks are the result's images and documents (agentrt.ContentTool).
	Blocks []agentrt.Block `json:"blocks,omitempty"`
	// Error is the failure behind an IsError output, for the caller.
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Ran says whether the tool's Execute returned.
	Ran    bool          `json:"ran,omitempty"`
	Events []EventRecord `json:"events,omitempty"`
}

// activities are the planner, decide and tool activities of one agent.
type activities struct {
	d *definition
}

// plan makes one attempt of a planner call.
func (a *activities) plan(ctx context.Context, in PlanInput) (*PlanOutput, error) {
	step, err := loop.New(a.d.ag, in.SessionID, nil)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.InvalidAgent", err)
	}
	req := &agentrt.ModelRequest{
		SessionID:      in.SessionID,
		Turn:           in.Turn,
		System:         in.System,
		Messages:       in.Messages[:len(in.Messages):len(in.Messages)],
		Tools:          in.Tools,
		ResponseSchema: in.ResponseSchema,
	}
	var evs events
	stop := heartbeat(ctx)
	out := step.Plan(ctx, req, in.Compaction, in.Force, in.Attempt, evs.add)
	stop()
	if out.Err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f := planFailure{Message: out.Err.Error(), Layer: out.Layer, Compact: out.Compact, Retry: out.Retry, Delay: out.Delay,
			Compaction: out.Compaction, Events: evs, Shape: shapeOf(out.Err)}
		return nil, temporal.NewNonRetryableApplicationError(f.Message, plannerErrorType, out.Err, f)
	}
	r := out.Response
	po := &PlanOutput{Usage: r.Usage, Finish: r.Finish, Model: r.Model, Compaction: out.Compaction, Events: evs}
	if jsonSafe(r.Message) {
		po.Message = r.Message
	} else {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(r.Message); err != nil {
			return nil, temporal.NewNonRetryableApplicationError("agentrt: encode the planner's message: "+err.Error(), plannerErrorType, err,
				planFailure{Message: "agentrt: encode the planner's message: " + err.Error(), Layer: agentrt.LayerPlanner})
		}
		po.Raw = buf.Bytes()
	}
	return po, nil
}

// jsonSafe reports whether JSON carries m unchanged: its strings are valid
// UTF-8 and its inputs valid JSON.
func jsonSafe(m agentrt.Message) bool {
	if !utf8.ValidString(m.Content) || !utf8.ValidString(m.ToolUseID) || !utf8.ValidString(string(m.Role)) {
		return false
	}
	for _, b := range m.Blocks {
		if !utf8.ValidString(b.Text) || !utf8.ValidString(b.ID) || !utf8.ValidString(b.Name) || !utf8.ValidString(string(b.Type)) {
			return false
		}
		if len(b.Input) > 0 && (!json.Valid(b.Input) || !utf8.Valid(b.Input)) {
			return false
		}
	}
	return true
}

// message returns the planner's message.
func (o *PlanOutput) message() (agentrt.Message, error) {
	if len(o.Raw) == 0 {
		return o.Message, nil
	}
	var m agentrt.Message
	err := gob.NewDecoder(bytes.NewReader(o.Raw)).Decode(&m)
	return m, err
}

// askChecker is PolicyAsk's checker: read-only tools run; a write tool
// is left to a person (agentrt.Decision.Pending), whom the workflow asks.
type askChecker struct{}

func (askChecker) Check(_ context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	if req.Tool.ReadOnly {
		return agentrt.Decision{Allow: true}, nil
	}
	return agentrt.Decision{Pending: true}, nil
}

// decide decodes a call's input and asks the permission checker.
func (a *activities) decide(ctx context.Context, in DecideInput) (*DecideOutput, error) {
	step, err := loop.New(a.d.ag, in.SessionID, a.d.checker())
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.InvalidAgent", err)
	}
	var evs events
	ask := false
	stop := heartbeat(ctx)
	defer stop()
	if in.Edit != nil {
		input, denied := step.Recheck(ctx, in.Turn, in.ToolUse, *in.Edit, evs.add)
		out := &DecideOutput{Input: input, Events: evs}
		if denied != nil {
			out.Denied = toolOutput(*denied, false)
		}
		return out, nil
	}
	input, denied := step.Decide(ctx, in.Turn, in.ToolUse, func(ev agentrt.Event) {
		if pd, ok := ev.(agentrt.PermissionDecision); ok && pd.Decision.Pending {
			ask = true // the workflow reports the person's decision
			return
		}
		evs.add(ev)
	})
	out := &DecideOutput{Input: input, Ask: ask && denied == nil, Events: evs}
	if denied != nil {
		out.Denied = toolOutput(*denied, false)
	}
	return out, nil
}

// tool runs one allowed call, heartbeating while it runs.
//
// The tool's context is the activity's: it is cancelled when the workflow
// is cancelled (the cancellation arrives with a heartbeat) or the worker
// stops. A call that failed because of it fails the activity with the
// context's error instead of returning a result, so that Temporal
// decides: a retry for a read-only or idempotent tool, an "interrupted" or
// "cancelled" result otherwise.
func (a *activities) tool(ctx context.Context, in ToolInput) (*ToolOutput, error) {
	permission := a.d.checker()
	if a.d.policy == PolicyAsk {
		// A sub-agent's write calls cannot wait for a signal.
		permission = agentrt.AllowReadOnly()
	}
	step, err := loop.New(a.d.ag, in.SessionID, permission)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agentrt.InvalidAgent", err)
	}
	run := in.Run
	if len(run) == 0 {
		run = in.Input
	}
	var evs events
	stop := heartbeat(ctx)
	out, ran := step.Execute(ctx, in.Turn, agentrt.ToolUseBlock(in.ToolUseID, in.Name, in.Input), run, evs.add)
	stop()
	if out.Message.IsError && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := toolOutput(out, ran)
	res.Events = evs
	return res, nil
}

func toolOutput(o agentrt.ToolResult, ran bool) *ToolOutput {
	out := &ToolOutput{Content: o.Message.Content, IsError: o.Message.IsError, Blocks: o.Message.Blocks, Duration: o.Duration, Ran: ran}
	var te *agentrt.ToolError
	switch {
	case errors.As(o.Err, &te) && te.Err != nil:
		out.Error = te.Err.Error()
	case o.Err != nil:
		out.Error = o.Err.Error()
	}
	return out
}

// result converts a ToolOutput back for loop.Loop.Settle.
func (o *ToolOutput) result() agentrt.ToolResult {
	out := agentrt.ToolResult{Message: agentrt.Message{Content: o.Content, IsError: o.IsError, Blocks: o.Blocks}, Duration: o.Duration}
	if o.Error != "" {
		out.Err = errors.New(o.Error)
	}
	return out
}

// events collects the events of a step that the workflow records.
type events []EventRecord

func (e *events) add(ev agentrt.Event) {
	if r, ok := recordOf(ev); ok {
		*e = append(*e, r)
	}
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
