package agentrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// AgentTool wraps an Agent as a Tool, so that a coordinating agent can
// delegate a task to a specialist with its own instructions, tools and
// limits. The tool takes {"task": "..."}; each call runs the child in a
// session of its own (the parent's session id, the tool's name and the
// tool_use id), stored in the child's Store and linked from the parent's
// session by a RecordSubAgent record. The child's events reach the
// caller of the parent's Run as [SubAgentEvent]s; cancelling the parent
// cancels the child. The result is the child's final answer; a child run
// that fails or stops at a limit gives an is_error result.
//
// The child's tool calls go through the parent run's permission checker,
// so that a user who approves writes approves them all in one place,
// unless the child has a Permission of its own.
//
// The tool is read-only when every tool of the child is, or with
// [ReadOnly]. [WithTimeout] bounds each sub-agent run; without it the
// parent's ToolTimeout, if any, does.
func AgentTool(child *Agent, name, description string, opts ...ToolOption) Tool {
	if !toolNameRE.MatchString(name) {
		panic(fmt.Sprintf("agentrt: AgentTool: invalid tool name %q: must match ^[a-zA-Z0-9_-]{1,64}$", name))
	}
	if child == nil {
		panic("agentrt: AgentTool: nil Agent")
	}
	var o toolOptions
	for _, opt := range opts {
		opt(&o)
	}
	readOnly := true
	for _, t := range child.Tools {
		if t != nil && !t.Spec().ReadOnly {
			readOnly = false
		}
	}
	schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"task":{"type":"string","description":%q}},"required":["task"],"additionalProperties":false}`,
		"The task for the "+name+" agent, with all the context it needs: it does not see this conversation."))
	node, _ := parseSchema(schema)
	return &agentTool{
		child: child,
		node:  node,
		spec:  ToolSpec{Name: name, Description: description, InputSchema: schema, ReadOnly: readOnly || o.readOnly, Timeout: o.timeout},
	}
}

type agentTool struct {
	child *Agent
	spec  ToolSpec
	node  *schemaNode
}

type agentToolInput struct {
	Task string `json:"task"`
}

func (t *agentTool) Spec() ToolSpec { return t.spec }

func (t *agentTool) Decode(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		raw = emptyObject
	}
	fixed, err := t.node.normalize(raw, true)
	if err != nil {
		return nil, err
	}
	var in agentToolInput
	if err := json.Unmarshal(fixed, &in); err != nil {
		return nil, describeDecodeError(err)
	}
	if in.Task == "" {
		return nil, errors.New(`invalid input: field "task" is required`)
	}
	return in, nil
}

func (t *agentTool) Execute(ctx context.Context, input any) (string, error) {
	in, ok := input.(agentToolInput)
	if !ok {
		return "", fmt.Errorf("internal error: input of type %T", input)
	}
	call, _ := ctx.Value(toolCallKey{}).(*toolCallCtx)
	sessionID := "sub-" + t.spec.Name
	var opts runOptions
	if call != nil {
		sessionID = childSessionID(call.r.sessionID, t.spec.Name, call.c.use.ID)
		if t.child.Permission == nil {
			opts.permission = call.r.permission
		}
		if err := call.link(sessionID); err != nil {
			return "", fmt.Errorf("sub-agent %q: the link to its session could not be recorded: %w", t.spec.Name, err)
		}
	}
	var done *Done
	for ev, err := range t.child.run(ctx, sessionID, in.Task, opts) {
		if err != nil {
			return "", fmt.Errorf("sub-agent %q failed: %w", t.spec.Name, err)
		}
		if call != nil {
			call.forward(SubAgentEvent{Turn: call.r.l.turn, ToolUseID: call.c.use.ID, Agent: t.spec.Name, SessionID: sessionID, Event: ev})
		}
		if d, ok := ev.(Done); ok {
			done = &d
		}
	}
	if done == nil {
		return "", fmt.Errorf("sub-agent %q ended without an answer", t.spec.Name)
	}
	if done.Reason != StopComplete {
		return "", fmt.Errorf("sub-agent %q stopped (%s): %s", t.spec.Name, done.Reason, done.FinalText)
	}
	return done.FinalText, nil
}

// childSessionID names the child session of an agent tool call after its
// parent, or after a hash of that name when it would be too long.
func childSessionID(parent, tool, toolUseID string) string {
	id := parent + "~" + tool + "~" + toolUseID
	if ValidateSessionID(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sub-" + tool + "-" + hex.EncodeToString(sum[:12])
}

type toolCallKey struct{}

// toolCallCtx gives an agent tool what it needs of the parent run.
type toolCallCtx struct {
	r *run
	c *call
}

// forward passes a child event to the parent's caller, who sees it at
// once: the parent's goroutine yields what the tool's goroutine sends.
func (tc *toolCallCtx) forward(ev Event) {
	if g := tc.c.group; g != nil {
		g <- groupMsg{ev: ev}
		return
	}
	tc.r.emit(ev)
}

func (tc *toolCallCtx) link(sessionID string) error {
	data, _ := json.Marshal(map[string]string{"tool_use_id": tc.c.use.ID, "agent": tc.c.use.Name, "session_id": sessionID})
	if ra, ok := tc.r.p.store.(RecordStore); ok {
		return ra.AppendRecord(tc.r.sctx, tc.r.sessionID, Record{Kind: RecordSubAgent, Data: data})
	}
	return nil
}
