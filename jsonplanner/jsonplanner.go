package jsonplanner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/jsonextract"
	"github.com/agentrt/agentrt/internal/textcut"
)

// ErrUnparsableDecision is returned, wrapped, by the Plan method of a
// planner of [New] when the model's answer is still not a usable JSON
// decision after every corrective re-ask of the turn. The error's text
// says what was wrong with the last answer and quotes its beginning.
var ErrUnparsableDecision = errors.New("jsonplanner: the model gave no valid JSON decision")

// defaultJSONRetries is Options.MaxRetries when it is 0.
const defaultJSONRetries = 2

// Options configures a [New]. The zero value (or a nil
// pointer) means the defaults. New reads the options once: changing
// them afterwards has no effect.
type Options struct {
	// MaxRetries is how many times in one turn the planner sends an
	// unusable answer back to the model, with what was wrong, and asks
	// again. 0 means 2; a negative value means never: the first unusable
	// answer is an error.
	MaxRetries int

	// Prompt, when not empty, is a text/template that replaces the system
	// prompt the planner sends. It is executed with a [PromptData];
	// the default is the instructions, the tools and the format, separated
	// by blank lines:
	//
	//	{{.Instructions}}
	//
	//	{{.Tools}}
	//
	//	{{.Format}}
	//
	// A template that lists the tools itself ranges over .Specs (print an
	// input schema with {{printf "%s" .InputSchema}}); it must still ask
	// for the decision format of .Format, which is the only one the
	// planner understands. New panics if Prompt does not parse.
	Prompt string
}

// PromptData is what a [Options.Prompt] template is executed
// with, once per turn.
type PromptData struct {
	// Instructions is the Agent's instructions (ModelRequest.System).
	Instructions string
	// Tools is the default section listing every tool with its
	// description and input schema, or "" when there are no tools.
	Tools string
	// Format is the default section that asks for one JSON decision and
	// shows its forms (and the answer's JSON Schema when the request has a
	// ResponseSchema).
	Format string
	// Specs are the tools of the request, for a template that renders
	// them itself. Do not modify them.
	Specs []agentrt.ToolSpec
}

// New returns an [agentrt.Planner] for models without native tool calling: it
// asks the Provider for one JSON decision per turn, as text, and turns it
// into an assistant message. It works on any Provider, including one that
// only returns text.
//
// Each turn the Provider gets a request without tools (Tools is nil) whose
// system prompt is the instructions followed by a section listing every
// tool (name, description, input schema) and the decision format:
//
//	{"action":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}
//	{"action":"tool_calls","calls":[{"name":"a","arguments":{}},{"name":"b","arguments":{}}]}
//	{"action":"final_answer","answer":"It is sunny in Paris."}
//
// The session is given to the model as text only: each earlier assistant
// message becomes the decision that produces it, and tool results become
// user messages such as "Tool result for json_1_1 (get_weather): 18°C"
// (or "Tool error for ..."); consecutive user messages are joined. The
// request's Messages are not modified.
//
// The answer is read with a tolerant JSON extractor, so code fences, prose around the
// object, a second object, trailing commas and comments do no harm; only
// the text of the Provider's answer is read. A tool_call becomes a tool_use
// block with an id unique in the session ("json_<n>_<k>": the k-th call of
// the session's n-th assistant message, or of a later n if that id is
// already taken); a final_answer becomes a text block (an answer that is
// not a JSON string, as for a ResponseSchema, becomes its JSON text).
// Bytes that are not UTF-8 inside the JSON strings of arguments or of an
// answer become U+FFFD, as encoding/json reads them. Whether arguments
// match the tool's input schema is left to the tool, whose error goes back
// to the model as the call's result.
//
// An answer that cannot be used (no JSON object, unknown action, missing
// name, a tool not in the request, arguments that are not an object or
// that give one key twice in an object, which JSON readers disagree on) is
// sent back to the model with a user message saying what was wrong and
// showing the format, up to MaxRetries times; then Plan returns an error
// wrapping [ErrUnparsableDecision]. These exchanges stay inside Plan: the session
// sees only the decision that worked. The returned Usage is the sum of
// every attempt of the turn.
//
// Streaming: the model's text is raw JSON, so the planner does not forward
// it as it arrives. Once a final_answer is parsed, the whole answer is
// passed to the request's OnText in one call, before Plan returns; tool
// calls and rejected answers are never streamed. The request's
// ResponseSchema is described in the system prompt instead of being passed
// to the Provider, whose output must be the decision object. Errors from
// the Provider are returned as they are, without retrying; a Provider
// that returns neither a response nor an error gets an error wrapping
// [agentrt.ErrBadResponse].
//
// The Planner is safe for concurrent use if the Provider is. New
// panics if p is nil or opts.Prompt does not parse.
func New(p agentrt.Planner, opts *Options) agentrt.Planner {
	if p == nil {
		panic("jsonplanner.New: nil Provider")
	}
	jp := &jsonPlanner{p: p, retries: defaultJSONRetries}
	if opts != nil {
		switch {
		case opts.MaxRetries < 0:
			jp.retries = 0
		case opts.MaxRetries > 0:
			jp.retries = opts.MaxRetries
		}
		if opts.Prompt != "" {
			t, err := template.New("prompt").Parse(opts.Prompt)
			if err != nil {
				panic(fmt.Sprintf("jsonplanner.New: invalid Prompt template: %v", err))
			}
			jp.prompt = t
		}
	}
	return jp
}

type jsonPlanner struct {
	p       agentrt.Planner
	retries int
	prompt  *template.Template // nil: the default prompt
}

// Describe reports the wrapped provider's info, if it has any.
func (jp *jsonPlanner) Describe() agentrt.ProviderInfo {
	if d, ok := jp.p.(interface{ Describe() agentrt.ProviderInfo }); ok {
		return d.Describe()
	}
	return agentrt.ProviderInfo{}
}

func (jp *jsonPlanner) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	if req.ToolChoice.Mode == "none" && len(req.Tools) > 0 {
		// The model reads the tools from the prompt: show none.
		r := *req
		r.Tools = nil
		req = &r
	}
	system, err := jp.system(req)
	if err != nil {
		return nil, err
	}
	h := newJSONHistory(req.Messages)
	msgs := h.msgs
	tools := make(map[string]bool, len(req.Tools))
	for _, t := range req.Tools {
		tools[t.Name] = true
	}
	var (
		usage   agentrt.Usage
		raw     string
		problem string
	)
	for attempt := 0; attempt <= jp.retries; attempt++ {
		if attempt > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			msgs = appendJSONCorrection(msgs, raw, problem, len(req.Tools) > 0)
		}
		resp, err := jp.generate(ctx, req, system, msgs)
		if err != nil {
			return nil, err
		}
		usage = usage.Add(resp.Usage)
		raw = answerText(resp.Message)
		d, prob := parseJSONDecision(raw, req.Tools, tools)
		if prob != "" {
			if resp.Finish == agentrt.FinishLength {
				prob += " (the answer was cut off at the token limit: keep it shorter)"
			}
			problem = prob
			continue
		}
		return decisionResponse(req, h, d, resp, usage), nil
	}
	return nil, fmt.Errorf("%w (%d attempts): %s; last answer: %q",
		ErrUnparsableDecision, jp.retries+1, problem, textcut.Ellipsis(raw, 300))
}

// appendJSONCorrection appends to msgs the answer that could not be
// parsed, raw, and the user's correction that says what was wrong with it.
func appendJSONCorrection(msgs []agentrt.Message, raw, problem string, hasTools bool) []agentrt.Message {
	if strings.TrimSpace(raw) == "" {
		raw = "(empty answer)"
	}
	return append(msgs,
		agentrt.NewAssistantMessage(agentrt.TextBlock(raw)),
		agentrt.NewUserMessage(jsonCorrection(problem, hasTools)))
}

// generate asks the provider for one answer to msgs, without tools: the
// system prompt describes them.
func (jp *jsonPlanner) generate(ctx context.Context, req *agentrt.ModelRequest, system string, msgs []agentrt.Message) (*agentrt.ModelResponse, error) {
	n := len(msgs)
	resp, err := jp.p.Plan(ctx, &agentrt.ModelRequest{
		SessionID: req.SessionID,
		Turn:      req.Turn,
		System:    system,
		Messages:  msgs[:n:n],
		MaxTokens: req.MaxTokens,
	})
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, fmt.Errorf("agentrt: JSON planner: the provider returned no response: %w", agentrt.ErrBadResponse)
	}
	return resp, nil
}

// decisionResponse is the planner's response for the decision d parsed
// from the provider's resp: a final answer, or tool calls with ids new in
// the history h. usage is that of every attempt.
func decisionResponse(req *agentrt.ModelRequest, h *jsonHistory, d jsonDecision, resp *agentrt.ModelResponse, usage agentrt.Usage) *agentrt.ModelResponse {
	out := &agentrt.ModelResponse{Usage: usage, Model: resp.Model}
	if d.final {
		out.Message = agentrt.NewAssistantMessage(agentrt.TextBlock(d.answer))
		out.Finish = resp.Finish
		if out.Finish == "" {
			out.Finish = agentrt.FinishStop
		}
		if req.OnText != nil && d.answer != "" {
			req.OnText(d.answer)
		}
		return out
	}
	ids := h.newIDs(len(d.calls))
	blocks := make([]agentrt.Block, len(d.calls))
	for i, c := range d.calls {
		blocks[i] = agentrt.ToolUseBlock(ids[i], c.name, c.arguments)
	}
	out.Message = agentrt.NewAssistantMessage(blocks...)
	out.Finish = agentrt.FinishToolUse
	return out
}

// answerText is the whole text of a provider's answer, wherever the
// provider put it (stray Content first, as the runtime's sanitizing does),
// even in a message whose Role was left empty.
func answerText(m agentrt.Message) string {
	m.Role = agentrt.RoleAssistant
	return m.Content + m.Text()
}

// system renders the system prompt for req.
func (jp *jsonPlanner) system(req *agentrt.ModelRequest) (string, error) {
	data := PromptData{
		Instructions: req.System,
		Tools:        jsonToolsSection(req.Tools),
		Format:       jsonFormatSection(len(req.Tools) > 0, req.ResponseSchema),
		Specs:        req.Tools,
	}
	if jp.prompt == nil {
		parts := make([]string, 0, 3)
		for _, s := range []string{data.Instructions, data.Tools, data.Format} {
			if s = strings.TrimSpace(s); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n\n"), nil
	}
	var sb strings.Builder
	if err := jp.prompt.Execute(&sb, &data); err != nil {
		return "", fmt.Errorf("agentrt: JSON planner: prompt template: %w", err)
	}
	return sb.String(), nil
}

func jsonToolsSection(specs []agentrt.ToolSpec) string {
	if len(specs) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("# Tools\n\nYou can use the tools below. Each takes a JSON object as input, described by a JSON Schema.")
	for _, s := range specs {
		sb.WriteString("\n\n## ")
		sb.WriteString(s.Name)
		if d := strings.TrimSpace(s.Description); d != "" {
			sb.WriteByte('\n')
			sb.WriteString(d)
		}
		schema := s.InputSchema
		var buf bytes.Buffer
		if json.Compact(&buf, schema) == nil {
			schema = buf.Bytes()
		}
		if len(schema) == 0 {
			schema = emptyObject
		}
		sb.WriteString("\nInput schema: ")
		sb.Write(schema)
	}
	return sb.String()
}

// The decision forms, as the prompt and the corrections show them.
const (
	jsonFormToolCall    = `{"action":"tool_call","name":"TOOL_NAME","arguments":{...}}`
	jsonFormToolCalls   = `{"action":"tool_calls","calls":[{"name":"TOOL_NAME","arguments":{...}},{"name":"TOOL_NAME","arguments":{...}}]}`
	jsonFormFinalAnswer = `{"action":"final_answer","answer":"YOUR ANSWER"}`
)

func jsonFormatSection(withTools bool, responseSchema json.RawMessage) string {
	var sb strings.Builder
	sb.WriteString("# Answer format\n\n")
	if withTools {
		sb.WriteString("Answer every turn with exactly one JSON object, and nothing before or after it. It is one of these:\n\n")
		sb.WriteString("To call a tool:\n" + jsonFormToolCall + "\n\n")
		sb.WriteString("To call several tools at once (they run in order):\n" + jsonFormToolCalls + "\n\n")
		sb.WriteString("To give your final answer to the user:\n" + jsonFormFinalAnswer + "\n\n")
		sb.WriteString(`"arguments" is a JSON object that matches the tool's input schema. ` +
			`After a tool call, the next message gives you its result ("Tool result for ID (TOOL_NAME): ...") ` +
			`or its error ("Tool error for ID (TOOL_NAME): ..."); then answer again with one JSON object. ` +
			`Give the final answer when you need no more tools.`)
	} else {
		sb.WriteString("Answer with exactly one JSON object, and nothing before or after it:\n" + jsonFormFinalAnswer)
	}
	if len(responseSchema) > 0 {
		var buf bytes.Buffer
		schema := []byte(responseSchema)
		if json.Compact(&buf, schema) == nil {
			schema = buf.Bytes()
		}
		sb.WriteString("\n\nThe value of \"answer\" must be a JSON value that matches this JSON Schema: ")
		sb.Write(schema)
	}
	return sb.String()
}

// jsonCorrection is the user message that sends an unusable answer back.
func jsonCorrection(problem string, withTools bool) string {
	var sb strings.Builder
	sb.WriteString("Your previous answer could not be used: ")
	sb.WriteString(problem)
	sb.WriteString(".\nAnswer again with exactly one JSON object and nothing else, ")
	if withTools {
		sb.WriteString("in one of these forms:\n" + jsonFormToolCall + "\n" + jsonFormToolCalls + "\n" + jsonFormFinalAnswer)
	} else {
		sb.WriteString("in this form:\n" + jsonFormFinalAnswer)
	}
	return sb.String()
}

// jsonDecision is a parsed, checked decision: a final answer or tool calls.
type jsonDecision struct {
	final  bool
	answer string
	calls  []jsonCall
}

type jsonCall struct {
	name      string
	arguments json.RawMessage // a compact JSON object
}

// jsonDecisionWire is a decision as the model writes it and as the
// history shows it.
type jsonDecisionWire struct {
	Action    json.RawMessage `json:"action,omitempty"`
	Name      json.RawMessage `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Calls     json.RawMessage `json:"calls,omitempty"`
	Answer    json.RawMessage `json:"answer,omitempty"`
}

type jsonCallWire struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// parseJSONDecision reads the model's answer. problem is "" on success and
// otherwise says, for the model, what is wrong.
func parseJSONDecision(raw string, specs []agentrt.ToolSpec, tools map[string]bool) (d jsonDecision, problem string) {
	obj, err := jsonextract.Extract(raw)
	if err != nil {
		return d, err.Error()
	}
	var w jsonDecisionWire
	if err := json.Unmarshal(obj, &w); err != nil {
		return d, fmt.Sprintf("the JSON object is not a decision: %v", err)
	}
	if len(w.Action) == 0 {
		return d, `the JSON object has no "action"`
	}
	var action string
	if json.Unmarshal(w.Action, &action) != nil {
		return d, `"action" must be a string`
	}
	switch strings.ToLower(strings.TrimSpace(action)) {
	case "final_answer":
		if len(w.Answer) == 0 || string(w.Answer) == "null" {
			return d, `a final_answer needs an "answer"`
		}
		d.final = true
		if json.Unmarshal(w.Answer, &d.answer) != nil {
			// Not a string: a structured answer, kept as JSON text,
			// with each byte that is not UTF-8 as U+FFFD, as in a string.
			d.answer = textcut.ValidText(string(w.Answer))
		}
		return d, ""
	case "tool_call":
		c, prob := checkJSONCall(w.Name, w.Arguments, specs, tools)
		if prob != "" {
			return d, prob
		}
		d.calls = []jsonCall{c}
		return d, ""
	case "tool_calls":
		var calls []jsonCallWire
		if json.Unmarshal(w.Calls, &calls) != nil || len(calls) == 0 {
			return d, `a tool_calls decision needs a non-empty "calls" array of {"name":...,"arguments":{...}} objects`
		}
		for i, cw := range calls {
			c, prob := checkJSONCall(cw.Name, cw.Arguments, specs, tools)
			if prob != "" {
				return jsonDecision{}, fmt.Sprintf("calls[%d]: %s", i, prob)
			}
			d.calls = append(d.calls, c)
		}
		return d, ""
	}
	return d, fmt.Sprintf(`unknown action %s: use "tool_call", "tool_calls" or "final_answer"`, quoteCut(action))
}

func checkJSONCall(rawName, rawArgs json.RawMessage, specs []agentrt.ToolSpec, tools map[string]bool) (c jsonCall, problem string) {
	if len(rawName) == 0 || json.Unmarshal(rawName, &c.name) != nil || strings.TrimSpace(c.name) == "" {
		return c, `a tool call needs a "name": the name of one of the tools`
	}
	c.name = strings.TrimSpace(c.name)
	if !tools[c.name] {
		if len(specs) == 0 {
			return c, fmt.Sprintf("unknown tool %s: no tools are available, give a final_answer", quoteCut(c.name))
		}
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = strconv.Quote(s.Name)
		}
		slices.Sort(names)
		return c, fmt.Sprintf("unknown tool %s: the available tools are %s", quoteCut(c.name), strings.Join(names, ", "))
	}
	args := bytes.TrimSpace(rawArgs)
	if len(args) == 0 || string(args) == "null" {
		c.arguments = emptyObject
		return c, ""
	}
	if args[0] == '"' {
		// An object sent as a JSON-encoded string: unwrap it.
		var s string
		if json.Unmarshal(args, &s) == nil {
			if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
				args = inner
			}
		}
	}
	if args[0] != '{' {
		var v any
		_ = json.Unmarshal(args, &v)
		return c, fmt.Sprintf(`"arguments" of tool %q must be a JSON object, not %s`, c.name, jsonextract.Kind(v))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		return c, fmt.Sprintf(`"arguments" of tool %q are not valid JSON: %v`, c.name, err)
	}
	if key, ok := repeatedKey(buf.Bytes()); ok {
		return c, fmt.Sprintf(`"arguments" of tool %q have the key %s twice in one object: give each key once`, c.name, quoteCut(key))
	}
	// Bytes that are not UTF-8 can only be inside strings: U+FFFD, as
	// encoding/json reads them, keeps the object valid JSON text.
	c.arguments = json.RawMessage(textcut.ValidText(buf.String()))
	return c, ""
}

// quoteCut quotes a value the model wrote, cut to 100 bytes, for a
// problem that must stay short whatever the model wrote.
func quoteCut(s string) string {
	return strconv.Quote(textcut.Ellipsis(s, 100))
}

// repeatedKey returns a key that appears twice in one object of the
// valid JSON value v, at any depth. JSON readers disagree on which of the
// two values counts (the last in Go, the first in others), so such
// arguments are not passed on.
func repeatedKey(v []byte) (key string, ok bool) {
	if !bytes.Contains(v, []byte{':'}) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	type level struct {
		keys   map[string]bool // nil for an array
		atName bool            // the next string is a key
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // the end (v is valid JSON)
		}
		if s, isString := tok.(string); isString && len(stack) > 0 && stack[len(stack)-1].atName {
			top := &stack[len(stack)-1]
			if top.keys[s] {
				return s, true
			}
			top.keys[s] = true
			top.atName = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{keys: map[string]bool{}, atName: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].atName = true
		}
	}
}

// jsonHistory is the session as a text-only conversation, and what is
// needed to give new tool_use ids that are unique in the session.
type jsonHistory struct {
	msgs []agentrt.Message
	next int             // the session's count of assistant messages, plus one
	used map[string]bool // tool_use ids in the session
}

func newJSONHistory(session []agentrt.Message) *jsonHistory {
	h := &jsonHistory{msgs: make([]agentrt.Message, 0, len(session)), next: 1, used: map[string]bool{}}
	names := map[string]string{} // tool_use id -> tool name
	for _, m := range session {
		switch m.Role {
		case agentrt.RoleAssistant:
			h.next++
			for _, b := range m.Blocks {
				if b.Type == agentrt.BlockToolUse {
					names[b.ID] = b.Name
					h.used[b.ID] = true
				}
			}
			h.msgs = append(h.msgs, agentrt.NewAssistantMessage(agentrt.TextBlock(renderJSONDecision(m))))
		case agentrt.RoleTool:
			kind := "result"
			if m.IsError {
				kind = "error"
			}
			var text string
			if name, ok := names[m.ToolUseID]; ok {
				text = fmt.Sprintf("Tool %s for %s (%s): %s", kind, m.ToolUseID, name, m.Content)
			} else {
				text = fmt.Sprintf("Tool %s for %s: %s", kind, m.ToolUseID, m.Content)
			}
			h.addUser(text, m.Blocks)
		default:
			h.addUser(m.Content, m.Blocks)
		}
	}
	return h
}

// addUser appends a user message, joined to the last one if it is a user
// message too: the model sees user and assistant turns alternate. parts
// (the images and documents of a user message or tool result) go along,
// for the provider to send or refuse.
func (h *jsonHistory) addUser(text string, parts []agentrt.Block) {
	if n := len(h.msgs); n > 0 && h.msgs[n-1].Role == agentrt.RoleUser {
		last := &h.msgs[n-1]
		if len(last.Blocks) > 0 {
			// Text after parts: keep the order.
			last.Blocks = append(last.Blocks, agentrt.TextBlock(text))
		} else {
			last.Content += "\n\n" + text
		}
		last.Blocks = append(last.Blocks, parts...)
		return
	}
	h.msgs = append(h.msgs, agentrt.NewUserMessage(text, slices.Clip(parts)...))
}

// newIDs returns n tool_use ids for the next assistant message.
func (h *jsonHistory) newIDs(n int) []string {
	ids := make([]string, n)
	for seq := h.next; ; seq++ {
		free := true
		for i := range ids {
			ids[i] = fmt.Sprintf("json_%d_%d", seq, i+1)
			free = free && !h.used[ids[i]]
		}
		if free {
			return ids
		}
	}
}

// renderJSONDecision writes an assistant message as the decision that
// produces it, with any text written beside tool calls before it.
func renderJSONDecision(m agentrt.Message) string {
	text := answerText(m)
	uses := m.ToolUses()
	var w jsonDecisionWire
	switch len(uses) {
	case 0:
		w.Action = json.RawMessage(`"final_answer"`)
		w.Answer = marshalJSONText(text)
		text = ""
	case 1:
		w.Action = json.RawMessage(`"tool_call"`)
		w.Name = marshalJSONText(uses[0].Name)
		w.Arguments = jsonInput(uses[0].Input)
	default:
		w.Action = json.RawMessage(`"tool_calls"`)
		calls := make([]jsonCallWire, len(uses))
		for i, u := range uses {
			calls[i] = jsonCallWire{Name: marshalJSONText(u.Name), Arguments: jsonInput(u.Input)}
		}
		w.Calls = marshalJSONValue(calls)
	}
	decision := string(marshalJSONValue(w))
	if text = strings.TrimSpace(text); text != "" {
		return text + "\n" + decision
	}
	return decision
}

// jsonInput is a tool_use input as decision arguments.
func jsonInput(in json.RawMessage) json.RawMessage {
	switch {
	case len(bytes.TrimSpace(in)) == 0:
		return emptyObject
	case json.Valid(in):
		return in
	}
	return marshalJSONText(string(in))
}

func marshalJSONText(s string) json.RawMessage { return marshalJSONValue(s) }

// marshalJSONValue encodes v without escaping <, > and &, which a model
// reads better as they are. v is always encodable.
func marshalJSONValue(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// emptyObject is the input of a call given without arguments.
var emptyObject = json.RawMessage(`{}`)
