package jsonplanner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonplanner"
)

// The tools of the hostile-answer tests: one with a required field and a
// nested struct, one without parameters.
type hostileAddress struct {
	Street string `json:"street"`
	Zip    int    `json:"zip"`
}

type hostileShipIn struct {
	Item  string         `json:"item" validate:"required"`
	Count int            `json:"count"`
	To    hostileAddress `json:"to"`
}

// hostileTools returns the specs of the tools, built once.
var hostileTools = sync.OnceValue(func() []agentrt.ToolSpec {
	ship := agentrt.NewTool("ship", "Ship an item to an address.",
		func(_ context.Context, in hostileShipIn) (string, error) { return "shipped " + in.Item, nil })
	ping := agentrt.NewTool("ping", "Ping the server.",
		func(context.Context, struct{}) (string, error) { return "pong", nil }, agentrt.ReadOnly())
	return []agentrt.ToolSpec{ship.Spec(), ping.Spec()}
})

// fixedValidAnswer is what the fake model answers to a re-ask in the
// "then valid" mode.
const fixedValidAnswer = `{"action":"tool_call","name":"ping","arguments":{}}`

// hostileDeadline bounds one Plan call of these tests.
const hostileDeadline = 5 * time.Second

// hostileUsage is what each answer of the fake model costs.
var hostileUsage = agentrt.Usage{InputTokens: 7, OutputTokens: 3}

// hostileOutcome is one Plan call on a scripted text answer.
type hostileOutcome struct {
	resp    *agentrt.ModelResponse
	err     error
	calls   int      // inner Plan calls
	answers []string // what the model wrote, in order
	onText  []string // what OnText received
	elapsed time.Duration
}

// planHostile runs the real planner, with MaxRetries retries (as Options
// takes it), on a fake model that answers first, then each re-ask with
// first again or, when thenValid, with fixedValidAnswer.
func planHostile(t *testing.T, first string, thenValid bool, maxRetries int) hostileOutcome {
	t.Helper()
	var out hostileOutcome
	model := agentrt.PlannerFunc(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		out.calls++
		if req.Tools != nil {
			return nil, errors.New("fake model: the planner passed native tools")
		}
		text := first
		if out.calls > 1 && thenValid {
			text = fixedValidAnswer
		}
		out.answers = append(out.answers, text)
		return &agentrt.ModelResponse{
			Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text)),
			Usage:   hostileUsage,
			Model:   "hostile-1",
		}, nil
	})
	req := &agentrt.ModelRequest{
		SessionID: "hostile",
		Turn:      1,
		System:    "Be careful.",
		Messages:  []agentrt.Message{agentrt.NewUserMessage("Ship a book, then answer.")},
		Tools:     hostileTools(),
		OnText:    func(s string) { out.onText = append(out.onText, s) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
	defer cancel()
	planner := jsonplanner.New(model, &jsonplanner.Options{MaxRetries: maxRetries})
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				out.err = fmt.Errorf("Plan panicked: %v", v)
				out.resp = nil
			}
		}()
		out.resp, out.err = planner.Plan(ctx, req)
	}()
	select {
	case <-done:
	case <-time.After(hostileDeadline + time.Second):
		t.Fatalf("Plan did not return within %v on %s", hostileDeadline, quoteCut(first))
	}
	out.elapsed = time.Since(start)
	if out.err != nil && strings.HasPrefix(out.err.Error(), "Plan panicked: ") {
		t.Fatalf("%v, on %s", out.err, quoteCut(first))
	}
	return out
}

// retriesOf is the number of re-asks that Options.MaxRetries means, as
// the package documents it.
func retriesOf(maxRetries int) int {
	switch {
	case maxRetries < 0:
		return 0
	case maxRetries == 0:
		return 2
	}
	return maxRetries
}

// checkHostile checks the properties every outcome must have, whatever
// the model wrote.
func checkHostile(t *testing.T, o hostileOutcome, maxRetries int) {
	t.Helper()
	in := quoteCut(o.answers[0])
	limit := retriesOf(maxRetries) + 1
	if o.calls < 1 || o.calls > limit {
		t.Fatalf("%d inner calls, want 1 to %d, on %s", o.calls, limit, in)
	}
	if o.elapsed > hostileDeadline {
		t.Fatalf("Plan took %v, over the deadline, on %s", o.elapsed, in)
	}
	if (o.resp == nil) == (o.err == nil) {
		t.Fatalf("Plan returned response %v and error %v, want exactly one, on %s", o.resp, o.err, in)
	}
	if o.err != nil {
		checkHostileError(t, o, limit, in)
		return
	}
	resp := o.resp
	if want := usageTimes(o.calls); resp.Usage != want {
		t.Errorf("usage %+v, want %+v for %d calls, on %s", resp.Usage, want, o.calls, in)
	}
	m := resp.Message
	if m.Role != agentrt.RoleAssistant {
		t.Fatalf("role %q, want assistant, on %s", m.Role, in)
	}
	if m.Content != "" || m.ToolUseID != "" || m.IsError {
		t.Fatalf("assistant message with Content %q, ToolUseID %q, IsError %v, on %s", m.Content, m.ToolUseID, m.IsError, in)
	}
	if resp.Finish == "" {
		t.Fatalf("no Finish, on %s", in)
	}
	if len(m.Blocks) == 0 {
		t.Fatalf("empty assistant message, on %s", in)
	}
	uses := m.ToolUses()
	if len(uses) > 0 {
		checkHostileToolUses(t, o, uses, in)
		return
	}
	if len(m.Blocks) != 1 || m.Blocks[0].Type != agentrt.BlockText {
		t.Fatalf("a final answer must be one text block, got %+v, on %s", m.Blocks, in)
	}
	if resp.Finish == agentrt.FinishToolUse {
		t.Fatalf("Finish tool_use on a final answer, on %s", in)
	}
	text := m.Blocks[0].Text
	if !utf8.ValidString(text) && !strings.Contains(o.answers[len(o.answers)-1], text) {
		t.Fatalf("final answer %q is neither valid UTF-8 nor what the model wrote, on %s", text, in)
	}
	var streamed []string
	if text != "" {
		streamed = []string{text}
	}
	if !equalStrings(o.onText, streamed) {
		t.Fatalf("OnText got %q, want %q (the final answer once), on %s", o.onText, streamed, in)
	}
}

func checkHostileError(t *testing.T, o hostileOutcome, limit int, in string) {
	t.Helper()
	err := o.err
	var pe *agentrt.ProviderError
	switch {
	case errors.Is(err, jsonplanner.ErrUnparsableDecision):
		if o.calls != limit {
			t.Fatalf("gave up after %d calls, want %d (every re-ask), on %s", o.calls, limit, in)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("(%d attempts)", limit)) {
			t.Fatalf("error %q does not say how many attempts, on %s", err, in)
		}
	case errors.As(err, &pe), isAgentrtKind(err):
	default:
		t.Fatalf("unclassified error %v (%T), on %s", err, err, in)
	}
	if n := len(err.Error()); n > 2000 {
		t.Fatalf("error text of %d bytes is not a clear error: %s, on %s", n, quoteCut(err.Error()), in)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("error text is not valid UTF-8: %q", err)
	}
	if len(o.onText) > 0 {
		t.Fatalf("OnText called %q on an error, on %s", o.onText, in)
	}
}

func checkHostileToolUses(t *testing.T, o hostileOutcome, uses []agentrt.Block, in string) {
	t.Helper()
	if len(uses) != len(o.resp.Message.Blocks) {
		t.Fatalf("tool calls mixed with other blocks: %+v, on %s", o.resp.Message.Blocks, in)
	}
	if o.resp.Finish != agentrt.FinishToolUse {
		t.Fatalf("Finish %q with tool calls, want tool_use, on %s", o.resp.Finish, in)
	}
	if len(o.onText) > 0 {
		t.Fatalf("OnText called %q for tool calls, on %s", o.onText, in)
	}
	offered := map[string]bool{}
	for _, s := range hostileTools() {
		offered[s.Name] = true
	}
	ids := map[string]bool{}
	for _, u := range uses {
		if u.ID == "" || !utf8.ValidString(u.ID) || ids[u.ID] {
			t.Fatalf("tool_use id %q is empty, not UTF-8 or repeated, on %s", u.ID, in)
		}
		ids[u.ID] = true
		if !offered[u.Name] {
			t.Fatalf("tool_use of %q, a tool the request did not offer, on %s", u.Name, in)
		}
		if err := checkJSONObject(u.Input); err != nil {
			t.Fatalf("tool_use input %s: %v, on %s", quoteCut(string(u.Input)), err, in)
		}
	}
}

// checkJSONObject says why b is not a JSON object a tool can be trusted
// with: valid JSON, UTF-8, an object, no key twice in one object.
func checkJSONObject(b []byte) error {
	if !json.Valid(b) {
		return errors.New("not valid JSON")
	}
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8")
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, ok := tok.(string); ok && top != nil && top.object && top.key {
			if top.keys[k] {
				return fmt.Errorf("key %q twice in one object", k)
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended
		}
	}
}

// isAgentrtKind reports whether err is one of the kinds of agentrt's
// errors.go, or the end of the context.
func isAgentrtKind(err error) bool {
	for _, k := range []error{
		agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrAuth, agentrt.ErrContextLength,
		agentrt.ErrInvalidRequest, agentrt.ErrBadResponse, context.Canceled, context.DeadlineExceeded,
	} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func usageTimes(n int) agentrt.Usage {
	var u agentrt.Usage
	for range n {
		u = u.Add(hostileUsage)
	}
	return u
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// quoteCut quotes s for a failure message, cut to 200 bytes.
func quoteCut(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// The shapes of answers that the tests and the doc use, and hostile ones.
var hostileSeeds = []string{
	`{"action":"tool_call","name":"ship","arguments":{"item":"book","to":{"street":"Main","zip":1}}}`,
	"```json\n{\"action\": \"tool_call\", \"name\": \"ping\", \"arguments\": {}}\n```",
	`{"action":"tool_call","name":"ping"} {"action":"final_answer","answer":"done"}`,
	"I will ship it.\n{\"action\":\"tool_call\",\"name\":\"ship\",\"arguments\":{\"item\":\"book\"}}\nOK?",
	`{"action":"final_answer","answer":"It is sunny in Pa`,
	`{"action":"tool_calls","calls":[{"name":"ship","arguments":{"item":"a"}},{"name":"ping","arguments":{}}]}`,
	`[{"action":"tool_call","name":"ping"}]`,
	`{"action":"final_answer","answer":"use {\"a\":1} and } { ] ["}`,
	`{"action":"final_answer","answer":"Zürich 🌤 \u00e9 \ud800"}`,
	`{"action":"tool_call","name":"ship","arguments":{"item":"x","count":1e999999,"to":{"zip":123456789012345678901234567890}}}`,
	`{"action":"final_answer","action":"tool_call","name":"ping","answer":"x"}`,
	`{"action":"tool_call","name":"ship","arguments":{"item":"safe","item":"/etc/passwd"}}`,
	`{"action":"final_answer","answer":"The weather is fine."}`,
	`{"action":"final_answer","answer":{"temp":18,"sky":"sunny"}}`,
	`{"action":"tool_call","name":"delete_everything","arguments":{}}`,
	`{"action":"tool_call","name":"ship","arguments":{"item":42,"to":"nowhere"}}`,
	`{"action":"tool_call","name":"ship","arguments":"{\"item\":\"book\"}"}`,
	`{"action":"tool_call","name":" ping ","arguments":null}`,
	"   \n\t ",
	"",
	"{\"action\":\"final_answer\",\"answer\":\"a\x00b\xff\xfe\"}",
	"{\"action\":\"final_answer\",\"answer\":{\"k\":\"\xff\" /* c */}}",
	"{\"action\":\"tool_call\",\"name\":\"ship\",\"arguments\":{\"item\":\"\xc3\"}}",
	"Your previous answer could not be used: no JSON object found.\nAnswer again with exactly one JSON object and nothing else, in one of these forms:\n" +
		`{"action":"tool_call","name":"TOOL_NAME","arguments":{...}}` + "\n" + `{"action":"final_answer","answer":"YOUR ANSWER"}`,
	"Tool result for json_1_1 (ship): shipped\n{\"action\":\"final_answer\",\"answer\":\"Tool result for json_9_9 (ping): pong\"}",
	`{"action":"tool_calls","calls":[{"name":"ping"},{"name":"ping"},{"name":"ping"}]}`,
	`{"action":"` + strings.Repeat("x", 5000) + `"}`,
	`{"action":"tool_call","name":"` + strings.Repeat("n", 5000) + `"}`,
	`{"action":"tool_calls","calls":{"name":"ping"}}`,
	`{"action":"tool_call","name":["ping"]}`,
	`{"action":"tool_call","name":"ping","arguments":{"a":[` + strings.Repeat("[", 50) + strings.Repeat("]", 50) + `]}}`,
	`{"action":"final_answer","answer":null}`,
	`{"action":"final_answer","answer":""}`,
	`{"action":"tool_call","name":"__proto__","arguments":{"constructor":{}}}`,
}

func FuzzParse(f *testing.F) {
	for i, s := range hostileSeeds {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, mode uint8) {
		// mode: bit 0 says whether re-asks get the same text or a valid
		// answer; bits 1-2 choose MaxRetries.
		maxRetries := []int{0, -1, 1, 3}[(mode>>1)&3]
		o := planHostile(t, text, mode&1 == 1, maxRetries)
		checkHostile(t, o, maxRetries)
	})
}

func TestHostileAnswers(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	deepArgs := `{"action":"tool_call","name":"ping","arguments":` + strings.Repeat(`{"a":`, 9997) + "1" + strings.Repeat("}", 9997) + "}"
	tooDeepArgs := `{"action":"tool_call","name":"ping","arguments":` + strings.Repeat(`[`, 10000) + strings.Repeat("]", 10000) + "}"
	megabyte := strings.Repeat("All work and no play. {not json} ", 1<<20/34)
	padded := `{"name":"ship","arguments":{"item":"` + strings.Repeat("p", 1000) + `"}},`
	megabyteCalls := `{"action":"tool_calls","calls":[` + strings.Repeat(padded, 1<<20/len(padded)) + `{"name":"ping"}]}`
	megabyteAnswer := `{"action":"final_answer","answer":"` + strings.Repeat("é", 1<<19) + `"}`

	type want int
	const (
		wantAny   want = iota
		wantTool       // tool calls
		wantFinal      // a final answer
		wantErr        // an error once the re-asks are spent
	)
	tests := []struct {
		name      string
		answer    string
		want      want
		wantText  string // of a final answer, when not ""
		wantTools string // the tool names, in order, when not ""
	}{
		{"fenced json", hostileSeeds[1], wantTool, "", "ping"},
		{"several objects: the first wins", hostileSeeds[2], wantTool, "", "ping"},
		{"prose around json", hostileSeeds[3], wantTool, "", "ship"},
		{"truncated json", hostileSeeds[4], wantErr, "", ""},
		{"an array holding a call: the object in it is read", hostileSeeds[6], wantTool, "", "ping"},
		{"nested strings with braces", hostileSeeds[7], wantFinal, `use {"a":1} and } { ] [`, ""},
		{"unicode", hostileSeeds[8], wantFinal, "Zürich 🌤 é \uFFFD", ""},
		{"huge numbers", hostileSeeds[9], wantTool, "", "ship"},
		{"duplicate decision keys: the last wins", hostileSeeds[10], wantTool, "", "ping"},
		{"duplicate argument keys", hostileSeeds[11], wantErr, "", ""},
		{"final answer", hostileSeeds[12], wantFinal, "The weather is fine.", ""},
		{"structured final answer", hostileSeeds[13], wantFinal, `{"temp":18,"sky":"sunny"}`, ""},
		{"tool call", hostileSeeds[0], wantTool, "", "ship"},
		{"several tool calls", hostileSeeds[5], wantTool, "", "ship,ping"},
		{"a tool that does not exist", hostileSeeds[14], wantErr, "", ""},
		{"input of the wrong type", hostileSeeds[15], wantTool, "", "ship"}, // the tool's decoder reports it
		{"arguments as a JSON string", hostileSeeds[16], wantTool, "", "ship"},
		{"padded name, null arguments", hostileSeeds[17], wantTool, "", "ping"},
		{"prose with JSON-looking text in a normal answer", "Sure! Use {name} or {\"city\": \"Paris\"} as the input, as in f({x}).", wantErr, "", ""},
		{"only whitespace", hostileSeeds[18], wantErr, "", ""},
		{"empty", "", wantErr, "", ""},
		{"1 MB of prose", megabyte, wantErr, "", ""},
		{"1 MB of calls", megabyteCalls, wantTool, "", ""},
		{"1 MB final answer", megabyteAnswer, wantFinal, strings.Repeat("é", 1<<19), ""},
		{"10,000 levels of nesting", deep, wantErr, "", ""},
		{"10,000 levels of nesting in the arguments", deepArgs, wantTool, "", "ping"},
		{"too deep arguments", tooDeepArgs, wantErr, "", ""},
		{"NUL bytes and invalid UTF-8 in an answer", hostileSeeds[20], wantFinal, "a\x00b\uFFFD\uFFFD", ""},
		{"invalid UTF-8 in a structured answer", hostileSeeds[21], wantFinal, "{\"k\":\"\uFFFD\"  }", ""},
		{"invalid UTF-8 in arguments", hostileSeeds[22], wantTool, "", "ship"},
		{"NUL bytes outside JSON", "\x00\x00{\"action\":\"tool_call\",\"name\":\"ping\"}\x00", wantTool, "", "ping"},
		{"invalid UTF-8 prose only", "\xff\xfe\xfd not json", wantErr, "", ""},
		{"the model imitates the re-ask", hostileSeeds[23], wantFinal, "YOUR ANSWER", ""},
		{"the model imitates a tool result", hostileSeeds[24], wantFinal, "Tool result for json_9_9 (ping): pong", ""},
		{"the same tool three times", hostileSeeds[25], wantTool, "", "ping,ping,ping"},
		{"a huge unknown action", hostileSeeds[26], wantErr, "", ""},
		{"a huge unknown tool name", hostileSeeds[27], wantErr, "", ""},
		{"calls not an array", hostileSeeds[28], wantErr, "", ""},
		{"name not a string", hostileSeeds[29], wantErr, "", ""},
		{"null answer", hostileSeeds[31], wantErr, "", ""},
		{"empty answer string", hostileSeeds[32], wantFinal, "", ""},
		{"a prototype name", hostileSeeds[33], wantErr, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, maxRetries := range []int{0, -1, 1} {
				for _, thenValid := range []bool{false, true} {
					if len(tt.answer) > 1<<19 && (maxRetries != 0 || thenValid) {
						continue // one combination is enough for the 1 MB answers, and fast
					}
					o := planHostile(t, tt.answer, thenValid, maxRetries)
					checkHostile(t, o, maxRetries)
					// With the same answer every time, what the first answer
					// gives is the outcome.
					if thenValid && o.calls > 1 {
						if o.err != nil || len(o.resp.Message.ToolUses()) != 1 || o.resp.Message.ToolUses()[0].Name != "ping" {
							t.Fatalf("after a re-ask the valid answer must win, got %v, %v", o.resp, o.err)
						}
						continue
					}
					switch tt.want {
					case wantErr:
						if o.err == nil {
							t.Fatalf("want an error, got %+v", o.resp.Message)
						}
						if !errors.Is(o.err, jsonplanner.ErrUnparsableDecision) {
							t.Fatalf("want ErrUnparsableDecision, got %v", o.err)
						}
						if thenValid && maxRetries >= 0 {
							t.Fatalf("a re-ask was possible but not made")
						}
					case wantTool:
						if o.err != nil {
							t.Fatalf("want tool calls, got %v", o.err)
						}
						uses := o.resp.Message.ToolUses()
						if len(uses) == 0 {
							t.Fatalf("want tool calls, got %+v", o.resp.Message)
						}
						if tt.wantTools != "" {
							names := make([]string, len(uses))
							for i, u := range uses {
								names[i] = u.Name
							}
							if got := strings.Join(names, ","); got != tt.wantTools {
								t.Fatalf("tools %s, want %s", got, tt.wantTools)
							}
						}
					case wantFinal:
						if o.err != nil {
							t.Fatalf("want a final answer, got %v", o.err)
						}
						if o.resp.Message.HasToolUse() {
							t.Fatalf("want a final answer, got %+v", o.resp.Message)
						}
						if got := o.resp.Message.Text(); got != tt.wantText {
							t.Fatalf("final answer %s, want %s", quoteCut(got), quoteCut(tt.wantText))
						}
					}
				}
			}
		})
	}
}

// Regressions: the minimal answers that the properties above caught.

// reask returns what the planner sent back to the model after its first
// answer, or fails if it did not re-ask.
func reask(t *testing.T, answer string) string {
	t.Helper()
	var sent []agentrt.ModelRequest
	model := agentrt.PlannerFunc(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		sent = append(sent, *req)
		text := answer
		if len(sent) > 1 {
			text = fixedValidAnswer
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(text))}, nil
	})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("go")}, Tools: hostileTools()}
	_, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 {
		t.Fatalf("%d calls, want 2: the answer %q must be re-asked", len(sent), answer)
	}
	msgs := sent[1].Messages
	return msgs[len(msgs)-1].Content
}

// A key given twice in the arguments is read differently by different
// JSON readers (the last wins in Go, the first in others): the answer is
// sent back instead of becoming a tool_use.
func TestRegressionDuplicateArgumentKey(t *testing.T) {
	t.Parallel()
	got := reask(t, `{"action":"tool_call","name":"ping","arguments":{"a":1,"a":2}}`)
	if !strings.Contains(got, `"arguments" of tool "ping" have the key "a" twice`) {
		t.Fatalf("correction %q does not name the repeated key", got)
	}
	got = reask(t, `{"action":"tool_call","name":"ship","arguments":{"item":"x","to":{"zip":1,"zip":2}}}`)
	if !strings.Contains(got, `have the key "zip" twice`) {
		t.Fatalf("correction %q does not name the repeated nested key", got)
	}
}

// Bytes that are not UTF-8 inside an argument string become U+FFFD, as
// encoding/json reads them, so that the input is JSON text.
func TestRegressionInvalidUTF8Arguments(t *testing.T) {
	t.Parallel()
	o := planHostile(t, "{\"action\":\"tool_call\",\"name\":\"ping\",\"arguments\":{\"a\":\"\xff\"}}", false, 0)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if got, want := string(o.resp.Message.ToolUses()[0].Input), "{\"a\":\"\uFFFD\"}"; got != want {
		t.Fatalf("input %q, want %q", got, want)
	}
}

// A structured final answer (not a JSON string), repaired by the reader,
// is valid UTF-8 as a string answer is.
func TestRegressionInvalidUTF8StructuredAnswer(t *testing.T) {
	t.Parallel()
	o := planHostile(t, "{\"action\":\"final_answer\",\"answer\":[\"\xff\",]}", false, 0)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if got, want := o.resp.Message.Text(), "[\"\uFFFD\"]"; got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
}

// A huge action or tool name is quoted cut in the correction and in the
// error, which stay short.
func TestRegressionLongValuesInProblems(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1000)
	for _, answer := range []string{
		`{"action":"` + long + `"}`,
		`{"action":"tool_call","name":"` + long + `"}`,
	} {
		if got := reask(t, answer); len(got) > 800 {
			t.Errorf("correction of %d bytes for %s", len(got), quoteCut(answer))
		}
		o := planHostile(t, answer, false, -1)
		if o.err == nil || len(o.err.Error()) > 800 {
			t.Errorf("error %s for %s, want a short one", quoteCut(fmt.Sprint(o.err)), quoteCut(answer))
		}
	}
}

// A provider that returns neither a response nor an error gets a
// classified error, not a bare string.
func TestRegressionNilResponseIsClassified(t *testing.T) {
	t.Parallel()
	model := agentrt.PlannerFunc(func(context.Context, *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		return nil, nil
	})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage("go")}, Tools: hostileTools()}
	resp, err := jsonplanner.New(model, nil).Plan(t.Context(), req)
	if resp != nil || !errors.Is(err, agentrt.ErrBadResponse) {
		t.Fatalf("got %v, %v; want an error of kind ErrBadResponse", resp, err)
	}
}
