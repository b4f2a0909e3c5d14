// Package agenttest is what a user needs to test an agent without a
// network, in the spirit of net/http/httptest and testing/fstest: a
// scripted planner that records what it was asked, helpers to collect
// events and check the runtime's invariants, and conformance suites for
// SessionStore implementations and provider adapters.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/agentrt/agentrt"
)

// ErrScriptExhausted is returned by a [Planner] called more often than it
// has steps.
var ErrScriptExhausted = errors.New("agenttest: script exhausted")

// Step is one scripted planner answer. Build steps with [Reply],
// [CallTool], [CallTools], [Respond], [StreamReply], [Fail], [Stall] and
// [Func].
type Step struct {
	desc  string
	fn    func(ctx context.Context, req *agentrt.ModelRequest, p *Planner) (*agentrt.ModelResponse, error)
	usage agentrt.Usage
}

// WithUsage returns the step with the usage it reports.
func (s Step) WithUsage(u agentrt.Usage) Step { s.usage = u; return s }

// String describes the step.
func (s Step) String() string { return s.desc }

// Reply answers with text and no tool call: the run completes.
func Reply(text string) Step {
	return Step{desc: "reply " + strconv.Quote(text), fn: func(context.Context, *agentrt.ModelRequest, *Planner) (*agentrt.ModelResponse, error) {
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)), Finish: agentrt.FinishStop}, nil
	}}
}

// StreamReply answers with the concatenation of chunks, passing each chunk
// to the request's OnText first, as a streaming provider does.
func StreamReply(chunks ...string) Step {
	return Step{desc: fmt.Sprintf("stream %q", chunks), fn: func(ctx context.Context, req *agentrt.ModelRequest, _ *Planner) (*agentrt.ModelResponse, error) {
		text := ""
		for _, c := range chunks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if req.OnText != nil {
				req.OnText(c)
			}
			text += c
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)), Finish: agentrt.FinishStop}, nil
	}}
}

// Use describes one tool call of [CallTools]: the tool's name and its JSON
// input. The id is given by the script ("call_1", "call_2", ...) unless set
// with [Use.WithID].
type Use struct {
	ID, Name, Input string
}

// ToolUse returns a Use of tool name with a JSON input.
func ToolUse(name, input string) Use { return Use{Name: name, Input: input} }

// WithID returns u with a fixed tool_use id.
func (u Use) WithID(id string) Use { u.ID = id; return u }

// CallTool answers with one call of tool name with a JSON input.
func CallTool(name, input string) Step { return CallTools(ToolUse(name, input)) }

// CallTools answers with several tool calls in one assistant message,
// as a model making parallel calls does.
func CallTools(uses ...Use) Step {
	return Step{desc: fmt.Sprintf("call %v", uses), fn: func(_ context.Context, req *agentrt.ModelRequest, p *Planner) (*agentrt.ModelResponse, error) {
		blocks := make([]agentrt.Block, len(uses))
		for i, u := range uses {
			id := u.ID
			if id == "" {
				id = p.nextID(req)
			}
			var in json.RawMessage
			if u.Input != "" {
				in = json.RawMessage(u.Input)
			}
			blocks[i] = agentrt.ToolUseBlock(id, u.Name, in)
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(blocks...), Finish: agentrt.FinishToolUse}, nil
	}}
}

// Respond answers with msg exactly as given, whatever it holds: use it for
// malformed replies (duplicate or empty ids, invalid JSON input).
func Respond(msg agentrt.Message) Step {
	return Step{desc: "respond " + msg.String(), fn: func(context.Context, *agentrt.ModelRequest, *Planner) (*agentrt.ModelResponse, error) {
		return &agentrt.ModelResponse{Message: msg, Finish: agentrt.FinishOther}, nil
	}}
}

// Fail answers with err, as a failing model API does.
func Fail(err error) Step {
	return Step{desc: fmt.Sprintf("fail %v", err), fn: func(context.Context, *agentrt.ModelRequest, *Planner) (*agentrt.ModelResponse, error) {
		return nil, err
	}}
}

// Stall blocks until the context is done and returns its error, as a hung
// model API does.
func Stall() Step {
	return Step{desc: "stall", fn: func(ctx context.Context, _ *agentrt.ModelRequest, _ *Planner) (*agentrt.ModelResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
}

// Func answers with whatever fn returns.
func Func(fn func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error)) Step {
	return Step{desc: "func", fn: func(ctx context.Context, req *agentrt.ModelRequest, _ *Planner) (*agentrt.ModelResponse, error) {
		return fn(ctx, req)
	}}
}

// Planner is a scripted planner: each call to Plan plays the next step, so
// it stands in for a model (a provider adapter) in an Agent, a summarize.Compressor
// or a planner built on another, such as jsonplanner's.
//
// It records every request it receives; Requests returns them. It is safe
// for concurrent use, but a script is meant for one run at a time.
type Planner struct {
	mu       sync.Mutex
	steps    []Step
	next     int
	ids      int
	requests []agentrt.ModelRequest
}

var _ agentrt.Planner = (*Planner)(nil)

// Script returns a Planner that plays steps in order.
func Script(steps ...Step) *Planner { return &Planner{steps: steps} }

// ScriptAfter returns a Planner that continues a stored session: the
// first steps stand for the assistant messages history already has, one
// step each, and are skipped, so a test in another process (or a later
// run) plays the script from where the session is. history is what the
// store loads, as [agentrt.SessionStore.Load] returns it.
func ScriptAfter(history []agentrt.Message, steps ...Step) *Planner {
	p := Script(steps...)
	for _, m := range history {
		if m.Role == agentrt.RoleAssistant {
			p.next++
		}
	}
	p.next = min(p.next, len(steps))
	return p
}

// Plan records req and plays the next step. After the last step it returns
// an error wrapping [ErrScriptExhausted].
func (p *Planner) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	p.mu.Lock()
	p.requests = append(p.requests, *req)
	if p.next >= len(p.steps) {
		n := len(p.steps)
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: called %d times, has %d steps", ErrScriptExhausted, len(p.requests), n)
	}
	s := p.steps[p.next]
	p.next++
	p.mu.Unlock()
	resp, err := s.fn(ctx, req, p)
	if resp != nil && s.usage != (agentrt.Usage{}) {
		resp.Usage = s.usage
	}
	return resp, err
}

// nextID returns the next id "call_N" that no tool_use of the session in
// req has, so that a script resuming a session never reuses an id (real
// APIs refuse that, and Run answers a reused id with an error result).
func (p *Planner) nextID(req *agentrt.ModelRequest) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		p.ids++
		id := "call_" + strconv.Itoa(p.ids)
		if !usedID(req, id) {
			return id
		}
	}
}

func usedID(req *agentrt.ModelRequest, id string) bool {
	if req == nil {
		return false
	}
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockToolUse && b.ID == id {
				return true
			}
		}
	}
	return false
}

// Requests returns the requests received so far, in order. Each holds the
// messages as the planner saw them at that call.
func (p *Planner) Requests() []agentrt.ModelRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Remaining returns the number of steps not played yet.
func (p *Planner) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.steps) - p.next
}

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// AssertDone fails the test if steps were left unplayed.
func (p *Planner) AssertDone(t TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next < len(p.steps) {
		t.Errorf("agenttest: %d of %d scripted steps were not used; next: %v", len(p.steps)-p.next, len(p.steps), p.steps[p.next])
	}
}
