package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// This file is a property test: it generates hostile but legal agentrt
// sessions (what the runtime may store: ids of any vendor and length,
// parallel calls, results in any order, attachments, thinking of every
// kind, empty texts, a trailing assistant message...), sends each through
// both planners, and checks every request body against rules that the
// real APIs enforce with HTTP 400. Each rule cites its evidence.
//
// AGENTRT_PROP_N sets the number of sessions per planner (default
// 2,000), AGENTRT_PROP_SEED the first seed (default: from the clock);
// session i uses seed+i, printed with any violation, and
// AGENTRT_PROP_SHOW=1 prints the sessions that break a rule. By hand:
//
//	AGENTRT_PROP_N=100000 go test -run TestPropertyRequests -timeout 30m -v .

// propSession is one generated request, with what the generator knows of
// it.
type propSession struct {
	req *agentrt.ModelRequest
	// refuseChat and refuseResponses name a block of the session that the
	// planner must refuse with ErrUnsupportedContent, if any.
	refuseChat, refuseResponses string
	// explicitCache sends it with ExplicitCache, which rewrites messages
	// as lists of parts.
	explicitCache bool
}

// The tool names of generated sessions: all valid agentrt tool names.
var propToolNames = []string{"add", "get_weather", "search-web", "A1", "x", strings.Repeat("n", 64)}

type propGen struct {
	r     *rand.Rand
	used  map[string]bool
	n     int
	sess  *propSession
	items int // counter for the Responses item ids
	// hostile sessions hold attachments that a planner must refuse.
	hostile bool
}

func (g *propGen) pick(p float64) bool { return g.r.Float64() < p }

// callID returns a new tool_use id, unique in the session, of a random
// vendor's form.
func (g *propGen) callID() string {
	g.n++
	var id string
	switch g.r.IntN(9) {
	case 0:
		id = "call_" + g.alnum(24)
	case 1:
		id = "toolu_01" + g.alnum(22)
	case 2:
		id = fmt.Sprintf("functions.%s:%d", propToolNames[g.r.IntN(3)], g.n)
	case 3:
		id = "chatcmpl-tool-" + g.hex(32) // vLLM: 46 characters
	case 4:
		id = fmt.Sprintf("呼び出し-ü-%d", g.n)
	case 5:
		// 100 characters; all such ids of a session share their first 90.
		id = strings.Repeat("z", 90) + fmt.Sprintf("%010d", g.n)
	case 6:
		id = strconv.Itoa(g.n)
	case 7:
		// exactly 40 and 41 characters, and 64 and 65
		id = fmt.Sprintf("%s%04d", strings.Repeat("q", []int{36, 37, 60, 61}[g.r.IntN(4)]), g.n)
	default:
		id = "fc-" + g.alnum(g.r.IntN(70))
	}
	for g.used[id] {
		id += "x"
	}
	g.used[id] = true
	return id
}

func (g *propGen) alnum(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[g.r.IntN(len(chars))]
	}
	return string(b)
}

func (g *propGen) hex(n int) string {
	const chars = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[g.r.IntN(len(chars))]
	}
	return string(b)
}

func (g *propGen) text() string {
	return []string{"", " ", "\n\t ", "ok", "Let me check.", "日本語のテキスト", strings.Repeat("long ", 50)}[g.r.IntN(7)]
}

func (g *propGen) input() json.RawMessage {
	return []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"a":1,"b":"x"}`), json.RawMessage(`[]`),
		json.RawMessage(`"str"`), json.RawMessage(`42`), json.RawMessage(`null`), json.RawMessage(`"{not json"`)}[g.r.IntN(8)]
}

// attachment returns an image or document block; some are refused by one
// planner or both (noted in the session).
func (g *propGen) attachment() agentrt.Block {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	if !g.hostile || !g.pick(0.3) { // supported by both
		switch g.r.IntN(4) {
		case 0:
			return agentrt.Block{Type: agentrt.BlockImage, MediaType: "image/png", Data: png}
		case 1:
			return agentrt.Block{Type: agentrt.BlockImage, MediaType: []string{"image/jpeg", "image/gif", "image/webp"}[g.r.IntN(3)], Data: []byte("img")}
		case 2:
			return agentrt.Block{Type: agentrt.BlockImage, URL: "https://example.com/cat.png"}
		default:
			return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "application/pdf", Data: []byte("%PDF-1.4"), Name: []string{"", "report.pdf"}[g.r.IntN(2)]}
		}
	}
	s := g.sess
	refuse := func(chat, resp bool, what string) {
		if chat && s.refuseChat == "" {
			s.refuseChat = what
		}
		if resp && s.refuseResponses == "" {
			s.refuseResponses = what
		}
	}
	switch g.r.IntN(5) {
	case 0:
		refuse(true, true, "image/bmp")
		return agentrt.Block{Type: agentrt.BlockImage, MediaType: "image/bmp", Data: []byte("BM")}
	case 1:
		refuse(true, true, "an uploaded file's id as a URL")
		return agentrt.Block{Type: agentrt.BlockImage, URL: "file-abc123"}
	case 2:
		refuse(true, false, "a document by URL")
		return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "application/pdf", URL: "https://example.com/a.pdf"}
	case 3:
		refuse(false, true, "audio")
		return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "audio/wav", Data: []byte("RIFF")}
	default:
		refuse(true, true, "text/plain")
		return agentrt.Block{Type: agentrt.BlockDocument, MediaType: "text/plain", Data: []byte("hello")}
	}
}

func (g *propGen) userMessage() agentrt.Message {
	m := agentrt.NewUserMessage(g.text())
	if g.pick(0.25) {
		for range 1 + g.r.IntN(3) {
			if g.pick(0.2) {
				m.Blocks = append(m.Blocks, agentrt.TextBlock(g.text()))
			} else {
				m.Blocks = append(m.Blocks, g.attachment())
			}
		}
	}
	return m
}

// assistant returns an assistant message of a random vendor's flavour with
// the given tool calls.
func (g *propGen) assistant(calls []agentrt.Block) agentrt.Message {
	var blocks []agentrt.Block
	flavour := g.r.IntN(5)
	text := func() agentrt.Block { return agentrt.TextBlock(g.text()) }
	switch flavour {
	case 0: // OpenAI Responses: reasoning items before the items they preceded
		g.items++
		k := g.items
		withID := func(b agentrt.Block, id string) agentrt.Block {
			b.Signature, b.Provider = []byte(id), "openai-responses"
			return b
		}
		rs := func(i int) agentrt.Block {
			b := agentrt.Block{Type: agentrt.BlockThinking, ID: fmt.Sprintf("rs_%d_%d", k, i), Text: g.text(), Provider: "openai-responses"}
			if !g.pick(0.1) { // a server may leave out the encrypted content
				b.Signature = []byte("gAAAA" + g.alnum(20))
			}
			return b
		}
		i := 0
		if g.pick(0.6) {
			blocks = append(blocks, rs(i))
			i++
		}
		if g.pick(0.5) {
			blocks = append(blocks, withID(text(), fmt.Sprintf("msg_%d_%d", k, i)))
		}
		for _, c := range calls {
			if g.pick(0.3) {
				blocks = append(blocks, rs(i))
				i++
			}
			blocks = append(blocks, withID(c, fmt.Sprintf("fc_%d_%d", k, i)))
			i++
		}
		switch g.r.IntN(8) { // hostile endings and interleavings
		case 0:
			blocks = append(blocks, rs(i)) // a reasoning block last
		case 1:
			blocks = append(blocks, agentrt.Block{Type: agentrt.BlockThinking, Text: "summary kept as text", Provider: "openai-responses"})
		case 2:
			blocks = append(blocks, agentrt.Block{Type: agentrt.BlockText, Text: "from gemini", Signature: []byte("sig"), Provider: "gemini"})
		}
		if g.pick(0.1) && len(blocks) > 0 { // a session edited by hand: a block moved
			j := g.r.IntN(len(blocks))
			b := blocks[j]
			blocks = append(blocks[:j], blocks[j+1:]...)
			blocks = append(blocks, b)
		}
		return agentrt.NewAssistantMessage(blocks...)
	case 1: // a Chat Completions server's reasoning
		if g.pick(0.6) {
			th := agentrt.Block{Type: agentrt.BlockThinking, Text: g.text(), Provider: "openai"}
			switch g.r.IntN(3) {
			case 0:
				th.Name = "reasoning"
			case 1:
				th.Signature = []byte(`[{"type":"reasoning.text","text":"t","format":"unknown","index":0},{"type":"reasoning.encrypted","data":"abc","format":"unknown","index":0}]`)
			}
			blocks = append(blocks, th)
		}
		for i := range calls {
			if g.pick(0.3) {
				calls[i].Signature, calls[i].Provider = []byte("Z2VtaW5p"), "openai" // Gemini's thought signature
			}
		}
	case 2: // Anthropic, Gemini, Kimi...: foreign thinking and signatures
		if g.pick(0.6) {
			blocks = append(blocks, agentrt.Block{Type: agentrt.BlockThinking, Text: g.text(), Signature: []byte("EqQBCkYIBx"), Provider: []string{"anthropic", "gemini", "kimi"}[g.r.IntN(3)], Redacted: g.pick(0.2)})
		}
		for i := range calls {
			if g.pick(0.3) {
				calls[i].Signature, calls[i].Provider = []byte("gsig"), "gemini"
			}
		}
	case 3: // empty
		if len(calls) == 0 {
			return agentrt.NewAssistantMessage()
		}
	}
	if g.pick(0.5) {
		blocks = append(blocks, text())
	}
	blocks = append(blocks, calls...)
	if g.pick(0.3) {
		blocks = append(blocks, text())
	}
	return agentrt.NewAssistantMessage(blocks...)
}

func (g *propGen) toolResult(id string) agentrt.Message {
	m := agentrt.NewToolMessage(id, g.text(), g.pick(0.2))
	if g.pick(0.2) {
		for range 1 + g.r.IntN(2) {
			if g.pick(0.25) {
				m.Blocks = append(m.Blocks, agentrt.TextBlock(g.text()))
			} else {
				m.Blocks = append(m.Blocks, g.attachment())
			}
		}
	}
	return m
}

// genSession generates one session from seed.
func genSession(seed uint64) *propSession {
	g := &propGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), used: map[string]bool{}}
	s := &propSession{req: &agentrt.ModelRequest{}}
	g.sess = s
	g.hostile = g.pick(0.1)
	req := s.req
	if g.pick(0.5) {
		req.System = []string{"You are terse.", " ", "Системный промпт"}[g.r.IntN(3)]
	}
	if g.pick(0.7) {
		for _, name := range propToolNames[:1+g.r.IntN(len(propToolNames))] {
			req.Tools = append(req.Tools, agentrt.ToolSpec{Name: name, Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)})
		}
	}
	switch g.r.IntN(6) {
	case 1:
		req.ToolChoice.Mode = "auto"
	case 2:
		req.ToolChoice.Mode = "none"
	case 3:
		req.ToolChoice.Mode = "required"
	case 4:
		if len(req.Tools) > 0 {
			req.ToolChoice = agentrt.ToolChoice{Mode: "tool", Name: req.Tools[g.r.IntN(len(req.Tools))].Name}
		}
	}
	if g.pick(0.5) {
		req.SessionID = "sess-" + g.alnum(8)
	}
	s.explicitCache = g.pick(0.2)
	msgs := &req.Messages
	turns := 1 + g.r.IntN(1+g.r.IntN(12)) // 1 to 12, short ones more often
	for t := range turns {
		*msgs = append(*msgs, g.userMessage())
		steps := 1 + g.r.IntN(2)
		for st := range steps {
			var calls []agentrt.Block
			for range g.r.IntN(5) {
				calls = append(calls, agentrt.ToolUseBlock(g.callID(), propToolNames[g.r.IntN(len(propToolNames))], g.input()))
			}
			last := t == turns-1 && st == steps-1
			if last && len(calls) == 0 && g.pick(0.5) {
				break // the session ends on the user's message
			}
			*msgs = append(*msgs, g.assistant(calls))
			if len(calls) == 0 {
				break // the turn's answer
			}
			order := g.r.Perm(len(calls)) // parallel calls finish in any order
			for _, i := range order {
				*msgs = append(*msgs, g.toolResult(calls[i].ID))
			}
			if g.pick(0.15) { // a hook's or the runtime's note after the results
				*msgs = append(*msgs, g.userMessage())
			}
		}
	}
	if g.pick(0.1) && (*msgs)[len(*msgs)-1].Role != agentrt.RoleAssistant {
		*msgs = append(*msgs, g.assistant(nil)) // a request ending with an assistant message (a prefill)
	}
	return s
}

// The rules. Each returns the violations found in a request body.

// violationKind matches what varies between violations of one kind.
var violationKind = regexp.MustCompile(`"[^"]*"|[0-9]+`)

var functionNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Maximum call id lengths. Chat Completions: "Invalid
// 'messages[2].tool_calls[0].id': string too long. Expected a string with
// maximum length 40, but got a string with length 43 instead."
// (code string_above_max_length, vercel/ai#5171; with a vLLM id of 46,
// BerriAI/litellm#17343). Responses: "Invalid 'input[95].call_id': string
// too long. Expected a string with maximum length 64, but got a string
// with length 116 instead." (AnswerDotAI/fastllm#45).
const (
	chatMaxCallID      = 40
	responsesMaxCallID = 64
)

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// checkChat returns the violations of a Chat Completions body.
func checkChat(body map[string]any) []string {
	var bad []string
	msgs := asList(body["messages"])
	for _, t := range asList(body["tools"]) {
		// "Invalid 'tools[0].function.name': string does not match
		// pattern. Expected a string that matches the pattern
		// '^[a-zA-Z0-9_-]+$'." (coinbase/agentkit#217); the API reference
		// (FunctionDefinitionParam.Name in openai-go's shared package):
		// "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with
		// a maximum length of 64."
		if name := str(asMap(asMap(t)["function"])["name"]); !functionNameRE.MatchString(name) {
			bad = append(bad, fmt.Sprintf("tools: function name %q does not match ^[a-zA-Z0-9_-]{1,64}$", name))
		}
	}
	for i := 0; i < len(msgs); i++ {
		m := asMap(msgs[i])
		role := str(m["role"])
		switch role {
		case "assistant":
			calls := asList(m["tool_calls"])
			// "Invalid value for 'content': expected a string, got
			// null." for an assistant message without tool calls
			// (vercel/ai#13744, openai/openai-cookbook#503).
			if _, ok := m["content"].(string); !ok && len(calls) == 0 {
				if _, ok := m["content"].([]any); !ok {
					bad = append(bad, fmt.Sprintf("messages[%d]: assistant message with neither content nor tool_calls", i))
				}
			}
			want := map[string]bool{}
			for j, c := range calls {
				id := str(asMap(c)["id"])
				if n := utf8.RuneCountInString(id); n > chatMaxCallID {
					bad = append(bad, fmt.Sprintf("messages[%d].tool_calls[%d].id: %d characters (max %d): %q", i, j, n, chatMaxCallID, id))
				}
				// "Invalid 'messages[9].tool_calls[0].function.name':
				// string does not match pattern." (mcp-use/mcp-use#90)
				if name := str(asMap(asMap(c)["function"])["name"]); !functionNameRE.MatchString(name) {
					bad = append(bad, fmt.Sprintf("messages[%d].tool_calls[%d]: function name %q", i, j, name))
				}
				want[id] = true
			}
			if len(calls) == 0 {
				continue
			}
			// "An assistant message with 'tool_calls' must be followed by
			// tool messages responding to each 'tool_call_id'. The
			// following tool_call_ids did not have response messages: ..."
			// (aliasrobotics/cai#111; "(insufficient tool messages
			// following tool_calls message)", agno-agi/agno#3105).
			j := i + 1
			for ; j < len(msgs) && str(asMap(msgs[j])["role"]) == "tool"; j++ {
				id := str(asMap(msgs[j])["tool_call_id"])
				if !want[id] {
					bad = append(bad, fmt.Sprintf("messages[%d]: tool_call_id %q answers no tool_call of messages[%d] (or answers one twice)", j, id, i))
				}
				delete(want, id)
			}
			if len(want) > 0 {
				bad = append(bad, fmt.Sprintf("messages[%d]: tool_calls without tool messages right after: %q", i, keys(want)))
			}
			i = j - 1
		case "tool":
			// "Invalid parameter: messages with role 'tool' must be a
			// response to a preceeding message with 'tool_calls'."
			// (miurla/morphic#136): a tool message not in the run right
			// after an assistant message with tool_calls (that run is
			// consumed by the assistant case above).
			bad = append(bad, fmt.Sprintf("messages[%d]: tool message (tool_call_id %q) not right after the assistant message with its tool_call", i, str(m["tool_call_id"])))
		}
	}
	for i, v := range msgs {
		m := asMap(v)
		// "Invalid 'messages[2]'. Image URLs are only allowed for
		// messages with role 'user', but this message with role 'tool'
		// contains an image URL." (OpenHands/OpenHands#7700; 'assistant':
		// openai/openai-node#1030). Files and audio are user input too.
		if role := str(m["role"]); role != "user" {
			for _, p := range asList(m["content"]) {
				if t := str(asMap(p)["type"]); t != "text" && t != "refusal" {
					bad = append(bad, fmt.Sprintf("messages[%d]: a %s part in a %s message", i, t, role))
				}
			}
		}
		// The tool_call_id of every tool message, within the limit of the
		// ids.
		if str(m["role"]) == "tool" {
			if id := str(m["tool_call_id"]); utf8.RuneCountInString(id) > chatMaxCallID {
				bad = append(bad, fmt.Sprintf("messages[%d].tool_call_id: %d characters (max %d): %q", i, utf8.RuneCountInString(id), chatMaxCallID, id))
			}
		}
	}
	return bad
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkResponses returns the violations of a Responses API body, given
// the reasoning item id that each item id of the session followed (see
// reasoningPairs).
func checkResponses(body map[string]any, reasoningOf map[string]string) []string {
	var bad []string
	for _, t := range asList(body["tools"]) {
		if tm := asMap(t); str(tm["type"]) == "function" && !functionNameRE.MatchString(str(tm["name"])) {
			bad = append(bad, fmt.Sprintf("tools: function name %q", str(tm["name"])))
		}
	}
	input := asList(body["input"])
	calls := map[string]bool{}
	for i, v := range input {
		it := asMap(v)
		typ, id := str(it["type"]), str(it["id"])
		if typ == "" && it["role"] != nil {
			typ = "message"
		}
		// Item ids are the API's own: "Invalid 'input[23].id':
		// 'rs_050b…'. Expected an ID that begins with 'msg'."
		// (mastra-ai/mastra#10815; openai/codex#33176).
		if prefix := map[string]string{"message": "msg_", "function_call": "fc_", "reasoning": "rs_"}[typ]; id != "" && !strings.HasPrefix(id, prefix) {
			bad = append(bad, fmt.Sprintf("input[%d]: %s item with id %q, not %s…", i, typ, id, prefix))
		}
		switch typ {
		case "reasoning":
			// "Item 'rs_…' of type 'reasoning' was provided without its
			// required following item." (continuedev/continue#8933): the
			// item that followed the reasoning item in its response, a
			// message or function call, must come right after it, with
			// its id. Recorded here: the API refused a reasoning item
			// followed by an assistant message without id
			// (testdata/pydanticai/responses-error-400-reasoning-without-following-item.*);
			// vercel/ai#7099 was fixed by sending the item ids.
			next := map[string]any{}
			if i+1 < len(input) {
				next = asMap(input[i+1])
			}
			nt := str(next["type"])
			if nt == "" && next["role"] != nil {
				nt = "message"
			}
			if (nt != "message" && nt != "function_call") || str(next["id"]) == "" {
				bad = append(bad, fmt.Sprintf("input[%d]: reasoning item %q not followed by the message or function call item (with its id) it preceded", i, id))
			}
		case "message", "function_call":
			// "Item 'msg_…' of type 'message' was provided without its
			// required 'reasoning' item." (continuedev/continue#12620):
			// an item sent with its id comes right after its reasoning
			// item. The generator's ids say which one: msg_K_I and fc_K_I
			// follow rs_K_(I-1) when the session had it there.
			if rs := reasoningOf[id]; id != "" && rs != "" {
				if !(i > 0 && str(asMap(input[i-1])["type"]) == "reasoning" && str(asMap(input[i-1])["id"]) == rs) {
					bad = append(bad, fmt.Sprintf("input[%d]: item %q sent with its id without its reasoning item %q right before it", i, id, rs))
				}
			}
			if typ == "function_call" {
				cid := str(it["call_id"])
				calls[cid] = true
				if n := utf8.RuneCountInString(cid); n > responsesMaxCallID {
					bad = append(bad, fmt.Sprintf("input[%d].call_id: %d characters (max %d): %q", i, n, responsesMaxCallID, cid))
				}
				if name := str(it["name"]); !functionNameRE.MatchString(name) {
					bad = append(bad, fmt.Sprintf("input[%d]: function name %q", i, name))
				}
			}
		case "function_call_output":
			cid := str(it["call_id"])
			// "No tool call found for function call output with call_id
			// call_SjdIRQnfceiXp0D5eZCcjlxW." (testdata/responses/
			// error-400-output-without-call.json)
			if !calls[cid] {
				bad = append(bad, fmt.Sprintf("input[%d]: function_call_output for call_id %q with no function_call before it", i, cid))
			}
			if n := utf8.RuneCountInString(cid); n > responsesMaxCallID {
				bad = append(bad, fmt.Sprintf("input[%d].call_id: %d characters (max %d)", i, n, responsesMaxCallID))
			}
		}
	}
	return bad
}

// reasoningPairs maps each Responses item id of a session's text and
// tool_use blocks to the id of the reasoning block right before it in its
// message, if any: the pairs the API checks.
func reasoningPairs(msgs []agentrt.Message) map[string]string {
	pairs := map[string]string{}
	for _, m := range msgs {
		if m.Role != agentrt.RoleAssistant {
			continue
		}
		for i, b := range m.Blocks {
			if b.Provider != "openai-responses" || b.Type == agentrt.BlockThinking || len(b.Signature) == 0 || i == 0 {
				continue
			}
			if p := m.Blocks[i-1]; p.Type == agentrt.BlockThinking && p.Provider == "openai-responses" && p.ID != "" {
				pairs[string(b.Signature)] = p.ID
			}
		}
	}
	return pairs
}

// checkIDsKept checks that the call ids that fit the API's limit go out
// unchanged, and, for Chat Completions, that the calls and the results
// the session pairs stay paired (the same id, mapped or not, on both).
func checkIDsKept(raw []byte, msgs []agentrt.Message, limit int) []string {
	var bad []string
	for _, m := range msgs {
		for _, b := range m.ToolUses() {
			if utf8.RuneCountInString(b.ID) <= limit {
				quoted, _ := json.Marshal(b.ID)
				if !bytes.Contains(raw, quoted) {
					bad = append(bad, fmt.Sprintf("call id %q fits in %d characters but was not sent as it is", b.ID, limit))
				}
			}
		}
	}
	return bad
}

func propCount(t *testing.T) (n int, seed uint64) {
	n = 2000
	if s := os.Getenv("AGENTRT_PROP_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("AGENTRT_PROP_N: %v", err)
		}
		n = v
	}
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTRT_PROP_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("AGENTRT_PROP_SEED: %v", err)
		}
		seed = v
	}
	return n, seed
}

// TestPropertyRequests sends generated sessions through both planners and
// checks every request body against the rules above, that a session with
// content a planner cannot send is refused with ErrUnsupportedContent
// before anything is sent, and that the same session gives the same bytes
// twice.
func TestPropertyRequests(t *testing.T) {
	n, base := propCount(t)
	var (
		mu                      sync.Mutex
		failures, sent, refused int
		kinds                   = map[string]int{} // violations by kind: digits and quoted strings left out
		next                    atomic.Int64
		wg                      sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var pl *propPlanners
			defer func() { pl.close() }()
			for k := 0; ; k++ {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if k%100 == 0 { // new servers now and then: they keep every request
					pl.close()
					pl = newPropPlanners(t)
				}
				seed := base + uint64(i)
				res := pl.run(seed)
				mu.Lock()
				sent += res.sent
				refused += res.refused
				for _, api := range []string{chatAPI, responsesAPI} {
					bad := res.bad[api]
					for _, b := range bad {
						kinds[api+": "+violationKind.ReplaceAllString(b, "")]++
					}
					if len(bad) == 0 {
						continue
					}
					failures++
					if failures <= 3 {
						t.Errorf("%s, seed %d (rerun: AGENTRT_PROP_SEED=%d AGENTRT_PROP_N=1 AGENTRT_PROP_SHOW=1):\n  %s", api, seed, seed, strings.Join(bad, "\n  "))
						if os.Getenv("AGENTRT_PROP_SHOW") != "" {
							r := res.req
							sess, _ := json.Marshal(map[string]any{"system": r.System, "tools": r.Tools, "tool_choice": r.ToolChoice, "messages": r.Messages})
							t.Logf("session: %s", sess)
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d sessions per planner from seed %d: %d requests checked, %d refusals checked, %d (session, planner) pairs with violations", n, base, sent, refused, failures)
	for k, c := range kinds {
		t.Logf("%6d × %s", c, k)
	}
}

// propPlanners are the planners of the property test, on replay servers
// that record the requests.
type propPlanners struct {
	chatSrv, respSrv *replayServer
	chat             map[bool]*openai.Provider  // by ExplicitCache
	resp             map[bool]*openai.Responses // by ExplicitCache
}

func newPropPlanners(t *testing.T) *propPlanners {
	pl := &propPlanners{
		chatSrv: newReplay(t, reply{body: fixture(t, "text.json")}),
		respSrv: newReplay(t, reply{body: []byte(textReply)}),
	}
	pl.chat = map[bool]*openai.Provider{false: pl.chatSrv.provider(nil), true: pl.chatSrv.provider(&openai.Options{ExplicitCache: true})}
	pl.resp = map[bool]*openai.Responses{false: pl.respSrv.responses(nil), true: pl.respSrv.responses(&openai.ResponsesOptions{ExplicitCache: true})}
	return pl
}

// close shuts the servers down and lets their requests go.
func (pl *propPlanners) close() {
	if pl == nil {
		return
	}
	for _, srv := range []*replayServer{pl.chatSrv, pl.respSrv} {
		srv.Close()
		srv.mu.Lock()
		srv.requests = nil
		srv.mu.Unlock()
	}
}

type propResult struct {
	req           *agentrt.ModelRequest
	sent, refused int
	bad           map[string][]string // by planner
}

// run generates the session of seed, sends it through both planners (twice
// each) and checks what they sent.
func (pl *propPlanners) run(seed uint64) propResult {
	s := genSession(seed)
	res := propResult{req: s.req, bad: map[string][]string{}}
	pairs := reasoningPairs(s.req.Messages)
	for _, api := range []string{chatAPI, responsesAPI} {
		srv, refuse := pl.chatSrv, s.refuseChat
		plan := func() error { _, err := pl.chat[s.explicitCache].Plan(context.Background(), s.req); return err }
		if api == responsesAPI {
			srv, refuse = pl.respSrv, s.refuseResponses
			plan = func() error { _, err := pl.resp[s.explicitCache].Plan(context.Background(), s.req); return err }
		}
		var bad []string
		before := srv.count()
		err := plan()
		switch {
		case refuse != "":
			res.refused++
			if !errors.Is(err, agentrt.ErrUnsupportedContent) {
				bad = append(bad, fmt.Sprintf("a session with %s: want ErrUnsupportedContent, got %v", refuse, err))
			}
			if srv.count() != before {
				bad = append(bad, "a refused session was sent")
			}
		case err != nil:
			bad = append(bad, fmt.Sprintf("Plan: %v", err))
		default:
			res.sent++
			if err := plan(); err != nil {
				bad = append(bad, fmt.Sprintf("second Plan: %v", err))
				break
			}
			first, second := srv.request(before), srv.request(before+1)
			if !bytes.Equal(first.Raw, second.Raw) {
				bad = append(bad, "the same session sent twice gave different bodies")
			}
			if api == chatAPI {
				bad = append(bad, checkChat(first.Body)...)
				bad = append(bad, checkIDsKept(first.Raw, s.req.Messages, chatMaxCallID)...)
			} else {
				bad = append(bad, checkResponses(first.Body, pairs)...)
				bad = append(bad, checkIDsKept(first.Raw, s.req.Messages, responsesMaxCallID)...)
			}
		}
		res.bad[api] = bad
	}
	return res
}

// TestPropertyCheckersCatch shows that each rule of the property test can
// fail: bodies that break one rule each.
func TestPropertyCheckersCatch(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 41)
	chatBodies := map[string]string{
		"unanswered call":     `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f"}}]},{"role":"user","content":"x"}]}`,
		"stray tool message":  `{"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		"wrong tool_call_id":  `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c2","content":"r"}]}`,
		"id too long":         `{"messages":[{"role":"assistant","tool_calls":[{"id":"` + long + `","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"` + long + `","content":"r"}]}`,
		"null content":        `{"messages":[{"role":"assistant","content":null}]}`,
		"image in a tool msg": `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"image_url"}]}]}`,
		"bad function name":   `{"messages":[],"tools":[{"type":"function","function":{"name":"a.b"}}]}`,
	}
	for name, body := range chatBodies {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		if len(checkChat(m)) == 0 {
			t.Errorf("chat %s: not caught", name)
		}
	}
	respBodies := map[string]string{
		"output without call":    `{"input":[{"type":"function_call_output","call_id":"c1","output":"x"}]}`,
		"reasoning last":         `{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"e"}]}`,
		"reasoning then no id":   `{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"e"},{"role":"assistant","content":"x"}]}`,
		"foreign item id":        `{"input":[{"type":"function_call","id":"toolu_1","call_id":"c","name":"f","arguments":"{}"}]}`,
		"call_id too long":       `{"input":[{"type":"function_call","call_id":"` + strings.Repeat("a", 65) + `","name":"f","arguments":"{}"}]}`,
		"item without reasoning": `{"input":[{"type":"function_call","id":"fc_9_1","call_id":"c","name":"f","arguments":"{}"}]}`,
		"bad function call name": `{"input":[{"type":"function_call","call_id":"c","name":"a b","arguments":"{}"}]}`,
	}
	pairs := map[string]string{"fc_9_1": "rs_9_0"} // "item without reasoning": the session had rs_9_0 before fc_9_1
	for name, body := range respBodies {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		if len(checkResponses(m, pairs)) == 0 {
			t.Errorf("responses %s: not caught", name)
		}
	}
}

// Regression tests for the violations the property test found.

// TestChatLongToolCallIDs: a session begun on vLLM (ids of 46
// characters) or another vendor (100) used to send its ids as they were,
// which OpenAI refuses beyond 40 characters. They go out mapped, the same
// in the call and its result; ids that fit go out unchanged.
func TestChatLongToolCallIDs(t *testing.T) {
	t.Parallel()
	vllm := "chatcmpl-tool-0123456789abcdef0123456789abcdef"
	long1, long2 := strings.Repeat("z", 99)+"1", strings.Repeat("z", 99)+"2"
	srv := newReplay(t, reply{body: fixture(t, "text.json")})
	msgs := []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock(vllm, "add", nil), agentrt.ToolUseBlock(long1, "add", nil), agentrt.ToolUseBlock(long2, "add", nil), agentrt.ToolUseBlock("call_1", "add", nil)),
		agentrt.NewToolMessage(long2, "2", false),
		agentrt.NewToolMessage(vllm, "v", false),
		agentrt.NewToolMessage("call_1", "c", false),
		agentrt.NewToolMessage(long1, "1", false),
	}
	_, err := srv.provider(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	sent := asList(srv.request(0).Body["messages"])
	var calls []string
	for _, c := range asList(asMap(sent[1])["tool_calls"]) {
		calls = append(calls, str(asMap(c)["id"]))
	}
	var results []string
	for _, m := range sent[2:] {
		results = append(results, str(asMap(m)["tool_call_id"]))
	}
	if len(calls) != 4 || len(results) != 4 {
		t.Fatalf("calls %v, results %v", calls, results)
	}
	if calls[3] != "call_1" {
		t.Errorf("an id that fits was changed: %q", calls[3])
	}
	for i, id := range calls[:3] {
		if len(id) > 40 || id == msgs[1].Blocks[i].ID {
			t.Errorf("call %d: id %q sent for %q", i, id, msgs[1].Blocks[i].ID)
		}
	}
	if calls[1] == calls[2] {
		t.Errorf("two ids with the same first 99 characters sent as one: %q", calls[1])
	}
	if want := []string{calls[2], calls[0], calls[3], calls[1]}; fmt.Sprint(results) != fmt.Sprint(want) {
		t.Errorf("results answer %v, want %v", results, want)
	}
	if bad := checkChat(srv.request(0).Body); len(bad) > 0 {
		t.Error(bad)
	}
}

// TestResponsesLongCallIDs: call ids beyond the Responses API's 64
// characters go out mapped, the same in the function_call and its
// function_call_output; one of 64 goes out unchanged.
func TestResponsesLongCallIDs(t *testing.T) {
	t.Parallel()
	long, fits := strings.Repeat("z", 100), strings.Repeat("q", 64)
	srv := newReplay(t, reply{body: []byte(textReply)})
	_, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: []agentrt.Message{
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(agentrt.ToolUseBlock(long, "add", nil), agentrt.ToolUseBlock(fits, "add", nil)),
		agentrt.NewToolMessage(fits, "f", false),
		agentrt.NewToolMessage(long, "l", false),
	}})
	if err != nil {
		t.Fatal(err)
	}
	input := asList(srv.request(0).Body["input"])
	ids := []string{str(asMap(input[1])["call_id"]), str(asMap(input[2])["call_id"]), str(asMap(input[3])["call_id"]), str(asMap(input[4])["call_id"])}
	if ids[0] == long || len(ids[0]) > 64 || ids[3] != ids[0] || ids[1] != fits || ids[2] != fits {
		t.Errorf("call ids sent: %q", ids)
	}
	if bad := checkResponses(srv.request(0).Body, nil); len(bad) > 0 {
		t.Error(bad)
	}
}

// TestResponsesReasoningWithoutFollowingItem: a reasoning block last in
// its message (the message item after it had no text), or followed by a
// block without this API's item id, used to go back as a reasoning item
// without its following item, which the API refuses (recorded:
// testdata/pydanticai/responses-error-400-reasoning-without-following-item.json).
// None of the message's reasoning goes back then.
func TestResponsesReasoningWithoutFollowingItem(t *testing.T) {
	t.Parallel()
	rs := func(id string) agentrt.Block {
		return agentrt.Block{Type: agentrt.BlockThinking, ID: id, Signature: []byte("gAAAA"), Provider: "openai-responses"}
	}
	call := agentrt.ToolUseBlock("call_1", "add", nil)
	call.Signature, call.Provider = []byte("fc_1"), "openai-responses"
	for name, blocks := range map[string][]agentrt.Block{
		"last":                  {rs("rs_1"), call, rs("rs_2")},
		"before another":        {rs("rs_1"), rs("rs_2"), call},
		"before a foreign text": {rs("rs_1"), call, rs("rs_2"), agentrt.TextBlock("no id")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newReplay(t, reply{body: []byte(textReply)})
			msgs := []agentrt.Message{agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(blocks...), agentrt.NewToolMessage("call_1", "2", false)}
			if _, err := srv.responses(nil).Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			body := srv.request(0).Body
			if bad := checkResponses(body, reasoningPairs(msgs)); len(bad) > 0 {
				t.Error(bad)
			}
			if raw := srv.request(0).Raw; bytes.Contains(raw, []byte(`"reasoning"`)) || bytes.Contains(raw, []byte(`"fc_1"`)) {
				t.Errorf("reasoning or item ids sent: %s", raw)
			}
		})
	}
}
