package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
)

// The property test: generated sessions that the runtime may hand the
// adapter (hostile, but within its guarantees; see genSession) are sent
// to a replay server, and every request body sent must obey the rules
// the Messages API enforces with HTTP 400 (see checkBody, each rule with
// its evidence). A session holding an image or document of a media type
// the API does not take must be refused before sending, with
// agentrt.ErrUnsupportedContent. The same session sent twice must give
// the same bytes (the prompt cache depends on it).
//
// AGENTRT_PROPERTY_N sets the number of sessions (default 2000),
// AGENTRT_PROPERTY_SEED the first seed (default: the clock); session i
// uses seed+i, and a failure names the seed that reproduces it:
//
//	AGENTRT_PROPERTY_SEED=123 AGENTRT_PROPERTY_N=1 go test -run TestPropertyRequestsObeyAPIRules

func TestPropertyRequestsObeyAPIRules(t *testing.T) {
	n := envInt(t, "AGENTRT_PROPERTY_N", 2000)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTRT_PROPERTY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "AGENTRT_PROPERTY_SEED")
		seed = v
	}
	t.Logf("sessions %d, seeds %d to %d", n, seed, seed+uint64(n)-1)

	// A replay server per chunk of sessions: it keeps every request.
	const chunk = 250
	ok := jsonReply(fixture(t, "text.json"))
	replies := make([]reply, 2*chunk)
	for i := range replies {
		replies[i] = ok
	}
	var (
		r             *replay
		p             *Provider
		sent, refused int
		counts        = map[string]int{}
		examples      []string
	)
	for i := range n {
		if i%chunk == 0 {
			if r != nil {
				r.srv.Close()
			}
			r = newReplay(t, replies...)
			p = r.provider("claude-sonnet-4-5", nil)
		}
		s := seed + uint64(i)
		sess := genSession(s)
		before := len(r.requests())
		_, err := p.Plan(context.Background(), sess.req())
		after := len(r.requests())
		var violations []string
		switch {
		case sess.unsupported:
			// A media type the API does not take: refused before sending.
			if !errors.Is(err, agentrt.ErrUnsupportedContent) {
				violations = append(violations, fmt.Sprintf("refusal: want ErrUnsupportedContent, got %v", err))
			}
			if after != before {
				violations = append(violations, "refusal: a request was sent")
			}
			refused++
		case sess.nothingToSend():
			// Every message blank: refused, since the API takes no
			// request without messages.
			if !errors.Is(err, agentrt.ErrInvalidRequest) || after != before {
				violations = append(violations, fmt.Sprintf("messages: nothing to send, want ErrInvalidRequest before sending, got %v and %d requests", err, after-before))
			}
			refused++
		case err != nil:
			violations = append(violations, fmt.Sprintf("plan: %v", err))
		case after != before+1:
			violations = append(violations, fmt.Sprintf("plan: %d requests sent, want 1", after-before))
		default:
			sent++
			body := r.requests()[before].body
			violations = append(violations, checkBody(body, sess)...)
			// Determinism: the same session again gives the same bytes.
			_, err := p.Plan(context.Background(), sess.req())
			if reqs := r.requests(); err != nil || len(reqs) != after+1 {
				violations = append(violations, fmt.Sprintf("determinism: second call: %v", err))
			} else if !bytes.Equal(reqs[after].body, body) {
				violations = append(violations, "determinism: the second request body differs")
			}
		}
		for _, v := range violations {
			rule, _, _ := strings.Cut(v, ":")
			counts[rule]++
			switch {
			case len(examples) == 0:
				examples = append(examples, fmt.Sprintf("seed %d: %s\nsession:\n%s", s, v, sess))
			case len(examples) < 10:
				examples = append(examples, fmt.Sprintf("seed %d: %s", s, v))
			}
		}
	}
	t.Logf("%d sessions: %d sent, %d refused; violations by rule: %v", n, sent, refused, counts)
	// The generator must reach what it is for; a check that always passes
	// for want of cases proves nothing.
	assert.Greater(t, sent, n/2, "sessions sent")
	if n >= 1000 {
		assert.Positive(t, refused, "sessions refused")
	}
	if len(counts) > 0 {
		t.Errorf("violations by rule: %v\nfirst examples (AGENTRT_PROPERTY_SEED=<seed> AGENTRT_PROPERTY_N=1 reproduces one):\n%s",
			counts, strings.Join(examples, "\n\n"))
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	require.NoError(t, err, name)
	require.Positive(t, v, name)
	return v
}

// session is a generated ModelRequest and what the checks need to know
// about it.
type session struct {
	system      string
	msgs        []agentrt.Message
	tools       []agentrt.ToolSpec
	choice      agentrt.ToolChoice
	unsupported bool            // holds a media type the API does not take
	signed      map[string]bool // Anthropic's thinking signatures and redacted data
	foreign     map[string]bool // other vendors' signatures
}

func (s *session) req() *agentrt.ModelRequest {
	return &agentrt.ModelRequest{System: s.system, Messages: s.msgs, Tools: s.tools, ToolChoice: s.choice}
}

// nothingToSend reports whether no message of s has anything the API
// would take: no user or tool result content, no assistant text or
// tool_use (thinking alone would end the conversation, and goes).
func (s *session) nothingToSend() bool {
	for _, m := range s.msgs {
		switch m.Role {
		case agentrt.RoleTool:
			return false
		case agentrt.RoleUser:
			if strings.TrimSpace(m.Content) != "" {
				return false
			}
			for _, b := range m.Blocks {
				if b.Type != agentrt.BlockText || strings.TrimSpace(b.Text) != "" {
					return false
				}
			}
		case agentrt.RoleAssistant:
			for _, b := range m.Blocks {
				if b.Type == agentrt.BlockToolUse || b.Type == agentrt.BlockText && strings.TrimSpace(b.Text) != "" {
					return false
				}
			}
		}
	}
	return true
}

func (s *session) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "  system %q, %d tools, tool choice %+v\n", s.system, len(s.tools), s.choice)
	for _, m := range s.msgs {
		fmt.Fprintf(&sb, "  %s\n", m)
	}
	return sb.String()
}

// gen makes one session from a seed.
type gen struct {
	r   *rand.Rand
	s   *session
	ids map[string]bool
	bad []string // ids generated so far that the API would refuse as they are
}

// genSession returns the session of seed: 1 to 12 turns, each a user
// message (possibly empty or whitespace, with images and documents),
// then assistant messages with 0 to 4 tool calls, thinking blocks of
// every kind and texts around the calls, each call answered by one tool
// result (in any order, some failed, some with images or documents), a
// user message after the results now and then; an assistant message may
// follow another (a paused turn continued), and the session may end
// with one. Everything the runtime guarantees holds: the first message is
// a user message, tool_use ids are unique, every call is answered once
// before the next assistant message.
func genSession(seed uint64) *session {
	g := &gen{
		r:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		s:   &session{signed: map[string]bool{}, foreign: map[string]bool{}},
		ids: map[string]bool{},
	}
	s := g.s
	if g.r.IntN(3) > 0 {
		s.system = g.pick("You are terse.", "Answer in French.", "You are a helpful agent.\nUse the tools.")
	}
	if g.r.IntN(4) > 0 {
		names := []string{"add", "weather", "search"}
		for _, name := range names[:1+g.r.IntN(len(names))] {
			spec := agentrt.ToolSpec{Name: name, Description: "does " + name}
			if g.r.IntN(2) == 0 {
				spec.InputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
			}
			s.tools = append(s.tools, spec)
		}
	}
	modes := []string{"", "auto", "none"}
	if len(s.tools) > 0 {
		modes = append(modes, "required", "tool")
	}
	s.choice.Mode = g.pick(modes...)
	if s.choice.Mode == "tool" {
		s.choice.Name = s.tools[g.r.IntN(len(s.tools))].Name
	}

	turns := 1 + g.r.IntN(12)
	for turn := range turns {
		s.msgs = append(s.msgs, g.userMessage())
		for {
			a := g.assistantMessage()
			s.msgs = append(s.msgs, a)
			uses := a.ToolUses()
			g.r.Shuffle(len(uses), func(i, j int) { uses[i], uses[j] = uses[j], uses[i] })
			for _, u := range uses {
				s.msgs = append(s.msgs, g.toolMessage(u.ID))
			}
			if len(uses) > 0 && g.r.IntN(4) == 0 {
				s.msgs = append(s.msgs, g.userMessage()) // a hook's or the user's note after the results
			}
			last := turn == turns-1
			switch {
			case len(uses) > 0 && g.r.IntN(3) > 0:
				continue // the model answers the results
			case len(uses) == 0 && g.r.IntN(8) == 0:
				continue // a paused turn, continued
			case last && len(uses) > 0 && g.r.IntN(2) == 0:
				// the session ends with the tool results (or the note)
			case last && g.r.IntN(3) == 0:
				s.msgs = append(s.msgs, g.userMessage())
			}
			break
		}
	}
	if g.r.IntN(5) == 0 && s.msgs[len(s.msgs)-1].Role != agentrt.RoleAssistant {
		// The request ends with an assistant message: a paused turn sent
		// back to be continued.
		a := g.assistantMessage()
		a.Blocks = removeToolUses(a.Blocks)
		s.msgs = append(s.msgs, a)
	}
	return s
}

func removeToolUses(blocks []agentrt.Block) []agentrt.Block {
	var out []agentrt.Block
	for _, b := range blocks {
		if b.Type != agentrt.BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (g *gen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// blank is an empty or whitespace-only text.
func (g *gen) blank() string {
	return g.pick("", " ", "\n", "\t", "  \n\t ", "\r\n", "\u00a0", "\u3000", "\n\n")
}

// text is a text, a blank one a fifth of the time; some end with
// whitespace.
func (g *gen) text() string {
	if g.r.IntN(5) == 0 {
		return g.blank()
	}
	t := g.pick("Let me check.", "2+2 is 4.", "Voilà : c'est fait", "日本語のテキスト", "```go\nfmt.Println(1)\n```", "ok", "  indented")
	if g.r.IntN(4) == 0 {
		t += g.pick(" ", "\n", "\n\n", "\t", "\u00a0")
	}
	return t
}

// id is a tool_use id unique in the session, in the form of some vendor:
// Anthropic's, OpenAI's, Kimi's, vLLM's, or stranger ones, including one
// that equals what the adapter would make of another id of the session.
func (g *gen) id() string {
	for {
		var id string
		switch g.r.IntN(10) {
		case 0, 1:
			id = "toolu_01" + g.chars(alnum, 22)
		case 2:
			id = "call_" + g.chars(alnum, 24)
		case 3:
			id = fmt.Sprintf("functions.%s:%d", g.pick("add", "weather", "search"), g.r.IntN(4))
		case 4:
			id = "chatcmpl-tool-" + g.chars("0123456789abcdef", 32)
		case 5:
			id = g.pick("調用_", "appel-é-", "🔧", "call x/") + strconv.Itoa(g.r.IntN(100))
		case 6:
			id = g.pick("", "call_0", "0", "-", "_", "a.b", "a:b", "tool use")
		case 7:
			if len(g.bad) > 0 && g.r.IntN(4) == 0 {
				id = sanitizedID(g.bad[g.r.IntN(len(g.bad))]) // valid, and equal to another id's mapping
			} else {
				id = "call-" + g.chars(alnum, 8)
			}
		default:
			id = g.chars(alnum+"_-", 1+g.r.IntN(40))
		}
		if g.ids[id] {
			continue
		}
		g.ids[id] = true
		if !idPattern.MatchString(id) {
			g.bad = append(g.bad, id)
		}
		return id
	}
}

// sanitizedID is an id that the API takes, made from one it does not
// take as the adapter's first version did: each other byte replaced by
// _, then _ and the FNV-1a hash of the id in hex.
func sanitizedID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !idChar(rune(c)) {
			b[i] = '_'
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s_%08x", b, h.Sum32())
}

// media returns an image or document block: one of a media type the
// adapter supports most of the time, one it must refuse now and then.
func (g *gen) media() agentrt.Block {
	png := []byte("\x89PNG\r\n\x1a\n" + g.chars(alnum, 8))
	if g.r.IntN(200) == 0 {
		g.s.unsupported = true
		switch g.r.IntN(6) {
		case 0:
			return agentrt.Block{Type: agentrt.BlockImage, MediaType: "image/bmp", Data: png}
		case 1:
			return agentrt.Block{Type: agentrt.BlockImage, MediaType: "image/svg+xml", Data: []byte("<svg/>")}
		case 2:
			return agentrt.Block{Type: agentrt.BlockImage, Data: png} // no media type
		case 3:
			return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "application/msword", Data: png, Name: "a.doc"}
		case 4:
			return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "audio/wav", Data: png}
		default:
			return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "text/plain", Data: []byte{0xff, 0xfe, 'x'}} // not UTF-8
		}
	}
	switch g.r.IntN(7) {
	case 0:
		return agentrt.Block{Type: agentrt.BlockImage, MediaType: g.pick("image/jpeg", "image/png", "image/gif", "image/webp"), Data: png}
	case 1:
		return agentrt.Block{Type: agentrt.BlockImage, MediaType: "image/png", Data: png}
	case 2:
		return agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/cat.jpg"}
	case 3:
		return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "application/pdf", Data: []byte("%PDF-1.4 " + g.chars(alnum, 8)), Name: g.pick("", "report.pdf")}
	case 4:
		return agentrt.Block{Type: agentrt.BlockDocument, URL: "https://example.com/paper.pdf"}
	case 5:
		return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "text/plain", Data: []byte(g.pick("notes", "ünïcode notes\n")), Name: "notes.txt"}
	default:
		return agentrt.TextBlock(g.text())
	}
}

func (g *gen) parts(max int) []agentrt.Block {
	var blocks []agentrt.Block
	for range g.r.IntN(max + 1) {
		blocks = append(blocks, g.media())
	}
	return blocks
}

func (g *gen) userMessage() agentrt.Message {
	var parts []agentrt.Block
	if g.r.IntN(3) == 0 {
		parts = g.parts(3)
	}
	return agentrt.NewUserMessage(g.text(), parts...)
}

func (g *gen) toolMessage(id string) agentrt.Message {
	content := g.text()
	if g.r.IntN(6) == 0 {
		content = `{"temp": 18, "unit": "C"}`
	}
	m := agentrt.NewToolMessage(id, content, g.r.IntN(5) == 0)
	if g.r.IntN(5) == 0 {
		m.Blocks = g.parts(2)
	}
	return m
}

// thinking returns a thinking block of one of the kinds a session may
// hold: Anthropic's signed or redacted thinking, another vendor's, or
// thinking without a signature.
func (g *gen) thinking() agentrt.Block {
	b := agentrt.Block{Type: agentrt.BlockThinking, Text: g.pick("", "Let me think.", "The user wants a sum.")}
	switch g.r.IntN(5) {
	case 0, 1:
		b.Provider = providerName
		b.Signature = []byte("EqQBCkYIBxgCKkD" + g.chars(alnum, 24))
		g.s.signed[string(b.Signature)] = true
	case 2:
		b.Provider, b.Redacted, b.Text = providerName, true, ""
		b.Signature = []byte("EmwKAhgBEgy" + g.chars(alnum, 24))
		g.s.signed[string(b.Signature)] = true
	case 3:
		b.Provider = g.pick("openai", "gemini", "kimi", "vllm")
		b.Signature = []byte("foreign-" + b.Provider + "-" + g.chars(alnum, 20))
		b.Redacted = g.r.IntN(3) == 0
		g.s.foreign[string(b.Signature)] = true
	default:
		b.Provider = g.pick(providerName, "", "deepseek") // no signature
	}
	return b
}

// signature gives a text or tool_use block what may ride in its
// Signature: nothing, a Gemini thought signature, or the thinking that
// preceded it in a session written before thinking blocks existed.
func (g *gen) signature(b *agentrt.Block) {
	switch g.r.IntN(8) {
	case 0:
		b.Provider = "gemini"
		b.Signature = []byte("foreign-gemini-" + g.chars(alnum, 20))
		g.s.foreign[string(b.Signature)] = true
	case 1:
		sig, data := "EqQBlegacy"+g.chars(alnum, 16), "EmwKlegacy"+g.chars(alnum, 16)
		g.s.signed[sig], g.s.signed[data] = true, true
		b.Signature = fmt.Appendf(nil, `{"anthropic_thinking":[{"type":"thinking","thinking":"hmm","signature":%q},{"type":"redacted_thinking","data":%q}]}`, sig, data)
	}
}

func (g *gen) assistantMessage() agentrt.Message {
	var blocks []agentrt.Block
	if g.r.IntN(8) == 0 {
		return agentrt.NewAssistantMessage() // empty
	}
	for range g.r.IntN(3) {
		blocks = append(blocks, g.thinking())
	}
	if g.r.IntN(2) == 0 {
		b := agentrt.TextBlock(g.text())
		g.signature(&b)
		blocks = append(blocks, b)
	}
	for range g.r.IntN(5) {
		if g.r.IntN(6) == 0 {
			blocks = append(blocks, g.thinking()) // interleaved thinking
		}
		var input string
		switch g.r.IntN(6) {
		case 0:
			input = ""
		case 1:
			input = "{}"
		case 2:
			input = g.pick(`"2+2"`, `[1,2]`, `null`, `42`, `{"a": 1,`) // not an object, or not JSON
		default:
			input = fmt.Sprintf(`{"x": %q}`, g.text())
		}
		b := agentrt.ToolUseBlock(g.id(), g.pick("add", "weather", "search", "gone"), json.RawMessage(input))
		g.signature(&b)
		blocks = append(blocks, b)
	}
	for range g.r.IntN(3) {
		if g.r.IntN(3) == 0 {
			blocks = append(blocks, g.thinking())
		} else {
			blocks = append(blocks, agentrt.TextBlock(g.text()))
		}
	}
	return agentrt.NewAssistantMessage(blocks...)
}

// idPattern is the pattern of a tool_use id the API takes.
var idPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// checkBody returns the rules body breaks, each as "rule: detail".
func checkBody(body []byte, sess *session) []string {
	var out []string
	fail := func(rule, format string, args ...any) {
		out = append(out, rule+": "+fmt.Sprintf(format, args...))
	}
	var req struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return []string{"json: " + err.Error()}
	}
	msgs := req.Messages

	// Messages non-empty. API: 400 "messages: at least one message is
	// required" (quoted at https://portkey.ai/error-library/input-validation-error-10153).
	if len(msgs) == 0 {
		fail("messages", "none")
	}

	// Roles alternate. API: 400 "messages: roles must alternate between
	// \"user\" and \"assistant\", but found multiple \"user\" roles in a
	// row" (quoted at https://errornotes.dev/en/errors/ai-tools/fixing-anthropic-400-roles-must-alternate-between-user-and-assistant).
	// The API of today combines consecutive turns instead (the SDK's doc
	// of MessageNewParams.Messages; testdata/pydanticai/retry-after-empty-response
	// was accepted with two user messages in a row), but the adapter
	// promises to merge them (doc.go), and that is checked.
	//
	// Not checked: that the first message is a user one, which the API
	// once required ("The first message must always use the user role")
	// but no longer does: testdata/pydanticai/empty-message-on-history,
	// which begins with an assistant message, was accepted.
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" || i > 0 && m.Role == msgs[i-1].Role {
			fail("roles", "messages.%d is %q after %q", i, m.Role, msgs[max(i-1, 0)].Role)
		}
	}

	// No message with empty content. API: 400 "messages.0: all messages
	// must have non-empty content except for the optional final assistant
	// message" (anthropics/claude-code#6774, #3196). The adapter never
	// sends an empty final assistant message either: the rule is applied
	// to every message.
	for i, m := range msgs {
		if len(m.Content) == 0 {
			fail("empty-content", "messages.%d has no content", i)
		}
	}

	// No text block empty or whitespace-only, in messages or tool results.
	// API: 400 "messages: text content blocks must be non-empty"
	// (stackblitz/bolt.new#7426) and "messages: text content blocks must
	// contain non-whitespace text" (anthropics/claude-code#23440).
	var texts func(where string, blocks []map[string]any)
	texts = func(where string, blocks []map[string]any) {
		for j, b := range blocks {
			switch b["type"] {
			case "text":
				if t, _ := b["text"].(string); strings.TrimSpace(t) == "" {
					fail("blank-text", "%s.content.%d is %q", where, j, t)
				}
			case "tool_result":
				if c, ok := b["content"].([]any); ok {
					texts(fmt.Sprintf("%s.content.%d", where, j), asBlocks(c))
				}
			}
		}
	}
	for i, m := range msgs {
		texts(fmt.Sprintf("messages.%d", i), m.Content)
	}

	// tool_use ids match ^[a-zA-Z0-9_-]+$ and are unique in the request.
	// API: 400 "messages.1.content.1.tool_use.id: String should match
	// pattern '^[a-zA-Z0-9_-]+$'" (CommandCodeAI/command-code#323) and
	// "messages.43.content.2: tool_use ids must be unique"
	// (anthropics/claude-code#28515).
	seen := map[string]bool{}
	for i, m := range msgs {
		for j, b := range m.Content {
			if b["type"] != "tool_use" {
				continue
			}
			id, _ := b["id"].(string)
			if !idPattern.MatchString(id) {
				fail("id-pattern", "messages.%d.content.%d id %q", i, j, id)
			}
			if seen[id] {
				fail("id-unique", "messages.%d.content.%d id %q used twice", i, j, id)
			}
			seen[id] = true
		}
	}

	// Every tool_use has its tool_result in the next message, and the
	// tool_result blocks come first in that user message; every
	// tool_result answers a tool_use of the message right before it.
	// API: 400 "messages.1: `tool_use` ids were found without
	// `tool_result` blocks immediately after: ... Each `tool_use` block
	// must have a corresponding `tool_result` block in the next message."
	// and "messages.0.content.1: unexpected `tool_use_id` found in
	// `tool_result` blocks: T1. Each `tool_result` block must have a
	// corresponding `tool_use` block in the previous message." (recorded:
	// testdata/error-400-tool-use-without-result.response.json,
	// testdata/error-400-unexpected-tool-use-id.response.json); tool_result
	// blocks after text refused by the live API (QwenLM/qwen-code#8161).
	for i, m := range msgs {
		var uses []string
		for _, b := range m.Content {
			if b["type"] == "tool_use" {
				id, _ := b["id"].(string)
				uses = append(uses, id)
			}
		}
		if m.Role == "assistant" && len(uses) > 0 {
			results := map[string]bool{}
			if i+1 < len(msgs) && msgs[i+1].Role == "user" {
				for _, b := range msgs[i+1].Content {
					if b["type"] == "tool_result" {
						id, _ := b["tool_use_id"].(string)
						results[id] = true
					}
				}
			}
			for _, id := range uses {
				if !results[id] {
					fail("tool-result-missing", "messages.%d tool_use %q has no tool_result in the next message", i, id)
				}
			}
		}
		if m.Role != "user" {
			continue
		}
		var before map[string]bool
		if i > 0 && msgs[i-1].Role == "assistant" {
			before = map[string]bool{}
			for _, b := range msgs[i-1].Content {
				if b["type"] == "tool_use" {
					id, _ := b["id"].(string)
					before[id] = true
				}
			}
		}
		other := false
		for j, b := range m.Content {
			if b["type"] != "tool_result" {
				other = true
				continue
			}
			id, _ := b["tool_use_id"].(string)
			if other {
				fail("tool-result-first", "messages.%d.content.%d tool_result %q after other content", i, j, id)
			}
			if !before[id] {
				fail("tool-result-orphan", "messages.%d.content.%d tool_result %q answers no tool_use of the message before", i, j, id)
			}
		}
	}

	// A final assistant message ends neither with whitespace nor with a
	// thinking block. API: 400 "messages: final assistant content cannot
	// end with trailing whitespace" (tailcallhq/forgecode#1872) and
	// "messages.N: The final block in an assistant message cannot be
	// `thinking`" (router-for-me/CLIProxyAPI#5321).
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && len(msgs[n-1].Content) > 0 {
		last := msgs[n-1].Content[len(msgs[n-1].Content)-1]
		switch last["type"] {
		case "thinking", "redacted_thinking":
			fail("final-thinking", "the final assistant message ends with %s", last["type"])
		case "text":
			if t, _ := last["text"].(string); strings.TrimRightFunc(t, unicode.IsSpace) != t {
				fail("final-whitespace", "the final assistant message ends with %q", t)
			}
		}
	}

	// At most 4 cache_control marks. API: 400 "A maximum of 4 blocks with
	// cache_control may be provided. Found 5." (tghamm/Anthropic.SDK#50).
	var raw any
	_ = json.Unmarshal(body, &raw)
	if c := countKey(raw, "cache_control"); c > 4 {
		fail("cache-control", "%d marks", c)
	}

	// Thinking blocks carry a non-empty signature, redacted_thinking its
	// data, and none is another vendor's. API: 400
	// "messages.1.content.0.thinking.signature: Field required"
	// (lbjlaq/Antigravity-Manager#1650), "messages.0.content.0.redacted_thinking.data:
	// Field required" (diegosouzapw/OmniRoute#2191), "messages.1.content.0:
	// Invalid `signature` in `thinking` block" for a signature the API did
	// not make (ding113/claude-code-hub#518). Every signature sent must be
	// one the session got from Anthropic.
	for i, m := range msgs {
		for j, b := range m.Content {
			var sig string
			switch b["type"] {
			case "thinking":
				sig, _ = b["signature"].(string)
			case "redacted_thinking":
				sig, _ = b["data"].(string)
			default:
				continue
			}
			switch {
			case sig == "":
				fail("thinking-signature", "messages.%d.content.%d %s without signature or data", i, j, b["type"])
			case sess.foreign[sig]:
				fail("thinking-foreign", "messages.%d.content.%d %s carries another vendor's signature %q", i, j, b["type"], sig)
			case !sess.signed[sig]:
				fail("thinking-foreign", "messages.%d.content.%d %s carries a signature Anthropic did not give: %q", i, j, b["type"], sig)
			}
		}
	}
	for sig := range sess.foreign {
		if bytes.Contains(body, []byte(sig)) {
			fail("thinking-foreign", "another vendor's signature %q is in the body", sig)
		}
	}

	// Image and document sources have a media type the API takes: images
	// image/jpeg, image/png, image/gif or image/webp, base64 documents
	// application/pdf, text documents text/plain (the Messages API's
	// schema, as generated into anthropic-sdk-go: Base64ImageSourceMediaType,
	// Base64PDFSource, PlainTextSource).
	var sources func(where string, blocks []map[string]any)
	sources = func(where string, blocks []map[string]any) {
		for j, b := range blocks {
			src, _ := b["source"].(map[string]any)
			typ, _ := src["type"].(string)
			mt, _ := src["media_type"].(string)
			switch b["type"] {
			case "image":
				if typ == "base64" && !oneOf(mt, "image/jpeg", "image/png", "image/gif", "image/webp") || !oneOf(typ, "base64", "url") {
					fail("media-type", "%s.content.%d image source %s %q", where, j, typ, mt)
				}
			case "document":
				if typ == "base64" && mt != "application/pdf" || typ == "text" && mt != "text/plain" || !oneOf(typ, "base64", "text", "url") {
					fail("media-type", "%s.content.%d document source %s %q", where, j, typ, mt)
				}
			case "tool_result":
				if c, ok := b["content"].([]any); ok {
					sources(fmt.Sprintf("%s.content.%d", where, j), asBlocks(c))
				}
			}
		}
	}
	for i, m := range msgs {
		sources(fmt.Sprintf("messages.%d", i), m.Content)
	}
	sort.Strings(out)
	return out
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

func asBlocks(v []any) []map[string]any {
	out := make([]map[string]any, 0, len(v))
	for _, e := range v {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func countKey(v any, key string) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == key {
				n++
			}
			n += countKey(e, key)
		}
	case []any:
		for _, e := range v {
			n += countKey(e, key)
		}
	}
	return n
}

// Regression tests for the violations the property test found.

// A user's text, or a text block of a user message or tool result, that
// is whitespace alone was sent; the API refuses it ("text content blocks
// must contain non-whitespace text"). It is left out like an assistant's.
func TestBlankUserTextLeftOut(t *testing.T) {
	t.Parallel()
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("What is 2+2?", agentrt.TextBlock("\n")),
			agentrt.NewAssistantMessage(agentrt.ToolUseBlock("t1", "add", json.RawMessage(`{}`))),
			{Role: agentrt.RoleTool, ToolUseID: "t1", Content: "4", Blocks: []agentrt.Block{agentrt.TextBlock(" ")}},
			agentrt.NewUserMessage("\t"),
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"What is 2+2?"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"add","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"4"}]}]}
	]`, jsonOf(t, r.only().json(t)["messages"]))
}

// A session whose every message is blank has nothing to send, and the
// API refuses a request without messages: refused before sending.
func TestAllBlankMessagesRefused(t *testing.T) {
	t.Parallel()
	r := newReplay(t)
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{agentrt.NewUserMessage(" ")},
	})
	require.ErrorIs(t, err, agentrt.ErrInvalidRequest)
	assert.Empty(t, r.requests())
}

// An id the API refuses ("a.b") was sent as its mapping, which another
// vendor's id of the same session ("a_b_" and the hash) may already be:
// the API refuses the repeated id ("tool_use ids must be unique"). The
// mapped one gets a suffix; call and result still match.
func TestToolUseIDMappingKeptUnique(t *testing.T) {
	t.Parallel()
	taken := cleanID("a.b")
	r := newReplay(t, jsonReply(fixture(t, "text.json")))
	_, err := r.provider("claude-sonnet-4-5", nil).Plan(context.Background(), &agentrt.ModelRequest{
		Messages: []agentrt.Message{
			agentrt.NewUserMessage("Add twice."),
			agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock(taken, "add", json.RawMessage(`{}`)),
				agentrt.ToolUseBlock("a.b", "add", json.RawMessage(`{}`)),
			),
			agentrt.NewToolMessage("a.b", "1", false),
			agentrt.NewToolMessage(taken, "2", false),
		},
	})
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprintf(`[
		{"role":"user","content":[{"type":"text","text":"Add twice."}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":%[1]q,"name":"add","input":{}},
			{"type":"tool_use","id":%[2]q,"name":"add","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":%[2]q,"content":[{"type":"text","text":"1"}]},
			{"type":"tool_result","tool_use_id":%[1]q,"content":[{"type":"text","text":"2"}]}]}
	]`, taken, taken+"_2"), jsonOf(t, r.only().json(t)["messages"]))
}
