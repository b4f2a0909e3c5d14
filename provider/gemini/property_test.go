package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// This file holds a property test: it generates hostile but legal agentrt
// sessions (the runtime's invariants hold; everything else is as odd as
// another vendor, a crash or a resumed session can make it) and checks
// that every request the adapter sends for them obeys the rules the real
// Gemini API enforces with HTTP 400, or that the adapter refuses the
// session with agentrt.ErrUnsupportedContent when it holds media the API
// does not take.
//
//	GEMINI_PROP_N=100000 go test -run TestPropertyRequests -count=1 .
//	GEMINI_PROP_SEED=123 ...     replays a failing run
//	GEMINI_PROP_ALL=1 ...        goes on after a violation and counts them by rule

// propModels are the models the sessions are sent to: media in function
// responses differ between them (beforeGemini3), and Gemini 3 enforces
// thought signatures.
var propModels = []string{"gemini-2.5-flash", "gemini-3-pro-preview"}

// propCase is one generated request.
type propCase struct {
	model  string
	req    *agentrt.ModelRequest
	refuse bool            // holds a media type the adapter must refuse
	gemSig map[string]bool // the Gemini signatures of the session, as strings
}

// gen generates sessions from one random source.
type gen struct {
	r      *rand.Rand
	ids    map[string]bool
	gemSig map[string]bool
	refuse bool
	sigN   int
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) p(prob float64) bool      { return g.r.Float64() < prob }

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

// text is a text as sessions hold them: empty, whitespace-only, unicode.
func (g *gen) text() string {
	return g.pick("", "", " ", "\n\t ", "Let me check.", "Done: 42.", "ünïcödé ✓ 🚀 日本語", `{"json":"looking"}`, strings.Repeat("long ", 12))
}

// id is a tool_use id of any vendor's form, unique in the session.
func (g *gen) id(name string, n int) string {
	for {
		var id string
		switch g.r.IntN(8) {
		case 0:
			id = "toolu_01" + g.hex(22)
		case 1:
			id = fmt.Sprintf("functions.%s:%d", name, n)
		case 2:
			id = "chatcmpl-tool-" + g.hex(32)
		case 3:
			id = "call_" + g.hex(24)
		case 4:
			id = "呼び出し-" + strconv.Itoa(g.r.IntN(1000))
		case 5:
			id = ""
		case 6:
			id = strconv.Itoa(n)
		default:
			id = fmt.Sprintf("call_%s_%d", g.hex(8), n)
		}
		if !g.ids[id] {
			g.ids[id] = true
			return id
		}
	}
}

// name is a tool name agentrt takes that Gemini's documented pattern also
// takes (see doc.go: names starting with a digit or a dash are sent as they
// are, a known limitation this test does not exercise).
func (g *gen) name() string {
	return g.pick("add", "get_weather", "search-web", "_internal", "Read", "a", "tool_9", strings.Repeat("n", 64))
}

// sig returns a fresh signature of a vendor; Gemini's are recorded.
func (g *gen) sig(provider string) []byte {
	g.sigN++
	s := fmt.Sprintf("%s-sig-%d-%s", provider, g.sigN, g.hex(8))
	if provider == providerName {
		g.gemSig[s] = true
	}
	return []byte(s)
}

func (g *gen) thinking() agentrt.Block {
	b := agentrt.Block{Type: agentrt.BlockThinking, Text: g.pick("", "Thinking about it.", "**Plan**\n1. call")}
	switch g.r.IntN(6) {
	case 0, 1: // Gemini's, signed
		b.Provider, b.Signature = providerName, g.sig(providerName)
	case 2: // Gemini's, unsigned
		b.Provider = providerName
	case 3: // Anthropic's, maybe redacted
		b.Provider, b.Signature = "anthropic", g.sig("anthropic")
		if g.p(0.3) {
			b.Redacted, b.Text = true, ""
		}
	case 4: // OpenAI's encrypted reasoning
		b.Provider, b.Signature, b.ID = "openai", g.sig("openai"), "rs_"+g.hex(16)
	default: // vLLM/Kimi: text only
		b.Provider = g.pick("", "kimi", "vllm")
	}
	return b
}

func (g *gen) textBlock() agentrt.Block {
	b := agentrt.TextBlock(g.text())
	switch g.r.IntN(5) {
	case 0:
		b.Provider, b.Signature = providerName, g.sig(providerName)
	case 1:
		b.Provider, b.Signature = "openai", g.sig("openai") // a Responses item id
	}
	return b
}

func (g *gen) input() json.RawMessage {
	return json.RawMessage(g.pick(`{}`, `{"a":2,"b":40}`, ``, `null`, ` {"nested":{"x":[1,2,{"y":null}]}} `,
		`[1,2]`, `42`, `"not json {"`, `true`, `{"s":"ünï\u0000"}`))
}

// assistant generates an assistant message with up to maxCalls calls and
// returns it with its calls.
func (g *gen) assistant(maxCalls int) (agentrt.Message, []agentrt.Block) {
	if g.p(0.08) {
		return agentrt.Message{Role: agentrt.RoleAssistant}, nil // empty
	}
	var blocks, calls []agentrt.Block
	if g.p(0.4) {
		blocks = append(blocks, g.thinking())
	}
	if g.p(0.5) {
		blocks = append(blocks, g.textBlock())
	}
	n := 0
	if maxCalls > 0 {
		n = g.r.IntN(maxCalls + 1)
	}
	for i := range n {
		name := g.name()
		b := agentrt.ToolUseBlock(g.id(name, i), name, g.input())
		switch x := g.r.IntN(10); {
		case i == 0 && x < 5, i > 0 && x == 0:
			b.Provider, b.Signature = providerName, g.sig(providerName)
		case x == 9:
			b.Provider, b.Signature = g.pick("anthropic", "openai"), g.sig("openai")
		}
		calls = append(calls, b)
		blocks = append(blocks, b)
		if g.p(0.15) {
			blocks = append(blocks, g.thinking())
		}
		if g.p(0.15) {
			blocks = append(blocks, g.textBlock())
		}
	}
	if g.p(0.3) {
		blocks = append(blocks, g.textBlock())
	}
	if len(blocks) == 0 && g.p(0.5) {
		blocks = append(blocks, g.thinking())
	}
	return agentrt.Message{Role: agentrt.RoleAssistant, Blocks: blocks}, calls
}

// media returns an image or document block of one of types, as bytes or
// as a Files API URL.
func (g *gen) media(types ...string) agentrt.Block {
	t := g.pick(types...)
	typ := agentrt.BlockDocument
	if strings.HasPrefix(t, "image/") {
		typ = agentrt.BlockImage
	}
	b := agentrt.Block{Type: typ, MediaType: t}
	if g.p(0.25) {
		b.URL = "https://generativelanguage.googleapis.com/v1beta/files/" + g.hex(12)
	} else {
		b.Data = []byte("\x89PNG-ish " + g.hex(6))
	}
	if typ == agentrt.BlockDocument && g.p(0.5) {
		b.Name = "file-" + g.hex(4)
	}
	return b
}

// Media types the adapter must refuse, and those it must send.
var (
	refusedTypes    = []string{"application/zip", "application/octet-stream", "application/msword"}
	userTypes       = []string{"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "application/pdf", "text/plain", "text/csv", "text/html", "audio/mp3", "audio/wav", "audio/ogg", "audio/flac"}
	toolResultTypes = []string{"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}
	// A tool result's media of another type is refused (doc.go), even when
	// a user message could carry it.
	toolRefusedTypes = []string{"image/gif", "audio/mp3", "application/zip", "text/csv"}
)

func (g *gen) user() agentrt.Message {
	m := agentrt.NewUserMessage(g.text())
	for range g.r.IntN(4) {
		switch x := g.r.IntN(1000); {
		case x < 4:
			m.Blocks = append(m.Blocks, g.media(refusedTypes...))
			g.refuse = true
		case x < 450:
			m.Blocks = append(m.Blocks, g.media(userTypes...))
		default:
			m.Blocks = append(m.Blocks, agentrt.TextBlock(g.text()))
		}
	}
	return m
}

func (g *gen) result(call agentrt.Block) agentrt.Message {
	m := agentrt.NewToolMessage(call.ID, g.text(), g.p(0.2))
	for range g.r.IntN(3) {
		switch x := g.r.IntN(1000); {
		case x < 4:
			m.Blocks = append(m.Blocks, g.media(toolRefusedTypes...))
			g.refuse = true
		case x < 500:
			m.Blocks = append(m.Blocks, g.media(toolResultTypes...))
		default:
			m.Blocks = append(m.Blocks, agentrt.TextBlock(g.text()))
		}
	}
	return m
}

// genCase generates one request: a session of 1 to 12 turns that starts
// with a user message, every call answered by exactly one result right
// after its assistant message (in any order), user messages after the
// results or not, assistant messages one after another now and then, and
// maybe a trailing assistant message.
func genCase(r *rand.Rand) propCase {
	g := &gen{r: r, ids: map[string]bool{}, gemSig: map[string]bool{}}
	msgs := []agentrt.Message{g.user()}
	turns := 1 + r.IntN(1+r.IntN(12)) // 1 to 12, short ones more often
	for t := range turns {
		a, calls := g.assistant(4)
		msgs = append(msgs, a)
		results := make([]agentrt.Message, len(calls))
		for i, c := range calls {
			results[i] = g.result(c)
		}
		r.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
		msgs = append(msgs, results...)
		if t < turns-1 && (len(calls) > 0 && g.p(0.5) || len(calls) == 0 && g.p(0.85)) {
			msgs = append(msgs, g.user())
		}
	}
	switch r.IntN(3) {
	case 0:
		msgs = append(msgs, g.user())
	case 1:
		a, _ := g.assistant(0)
		msgs = append(msgs, a) // trailing assistant message
	}
	req := &agentrt.ModelRequest{Messages: msgs, System: g.pick("", "", "Be brief.", " ", "Système: ünï")}
	if g.p(0.7) {
		seen := map[string]bool{}
		for range 1 + r.IntN(4) {
			n := g.name()
			if seen[n] {
				continue
			}
			seen[n] = true
			spec := agentrt.ToolSpec{Name: n, Description: g.pick("", "Does a thing.")}
			if g.p(0.6) {
				spec.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"]}`)
			}
			req.Tools = append(req.Tools, spec)
		}
	}
	modes := []string{"", "auto", "none", "required"}
	if len(req.Tools) > 0 {
		modes = append(modes, "tool")
	}
	req.ToolChoice.Mode = g.pick(modes...)
	if req.ToolChoice.Mode == "tool" {
		req.ToolChoice.Name = req.Tools[r.IntN(len(req.Tools))].Name
	}
	if g.p(0.3) {
		req.OnText = func(string) {}
	}
	if g.p(0.3) {
		req.MaxTokens = 1 + r.IntN(4096)
	}
	return propCase{model: propModels[r.IntN(len(propModels))], req: req, refuse: g.refuse, gemSig: g.gemSig}
}

// The rules, each with its evidence.
var (
	// Content.role "Must be either 'user' or 'model'" (Gemini API
	// reference, ai.google.dev/api/caching#Content); other roles get HTTP
	// 400 "Please use a valid role: user, model." (the-open-agent/openagent#1666,
	// songquanpeng/one-api#1385).
	ruleRole = "role"
	// HTTP 400 "* GenerateContentRequest.contents[1].parts: contents.parts
	// must not be empty." (egoist/chatwise-releases#250, vercel/ai#3775);
	// a request without contents: "GenerateContentRequest.contents:
	// contents is not specified" (vercel/ai#3775).
	ruleEmpty = "empty contents or parts"
	// HTTP 400 "* GenerateContentRequest.contents[1].parts[0].data:
	// required oneof field 'data' must have one initialized field"
	// (boldsoftware/sketch#68, genkit-ai/genkit#3816): a part carries
	// exactly one of its data fields.
	rulePartData = "part data"
	// HTTP 400 "Please ensure that function call turn comes immediately
	// after a user turn or after a function response turn."
	// (google-gemini/gemini-cli#11814: "when the sent conversation history
	// starts with a function call"; continuedev/continue#11164).
	ruleCallTurn = "function call turn placement"
	// HTTP 400 "Please ensure that the number of function response parts
	// is equal to the number of function call parts of the function call
	// turn." (google-gemini/gemini-cli#4217, #5443, #16415), and "Please
	// ensure that function response turn comes immediately after a
	// function call turn." (langchain-ai/langchain#27799,
	// GoogleCloudPlatform/generative-ai#368). FunctionResponse.name
	// "Matches [FunctionDeclaration.name] and [FunctionCall.name]" and its
	// id matches the call's (Vertex AI FunctionResponse reference).
	ruleResponses = "function responses"
	// Gemini 3: HTTP 400 "Function call is missing a thought_signature in
	// functionCall parts. This is required for tools to work correctly"
	// (lbjlaq/Antigravity-Manager#3229, csells/dartantic#86,
	// nanbingxyz/5ire#405); the thought-signatures docs
	// (ai.google.dev/gemini-api/docs/thought-signatures) require the
	// signature of the first function call of each step, and document
	// "skip_thought_signature_validator" for calls the model did not make.
	ruleSignature = "thought signature"
	// A signature the API did not issue: HTTP 400 "Corrupted thought
	// signature." (google-gemini/gemini-cli#13467, charmbracelet/crush#1698),
	// "Thought signature is not valid" (diegosouzapw/OmniRoute#1410,
	// after Claude in the same chat). Only Gemini's own signatures, or
	// the documented placeholder, may be sent.
	ruleForeignSig = "foreign signature"
	// Media types the API documents: images png, jpeg, webp, heic, heif
	// (Vertex AI "Image understanding"; GIF refused on Gemini 2.0,
	// discuss.ai.google.dev/t/71468); audio wav, mp3, aiff, aac, ogg,
	// flac (ai.google.dev/gemini-api/docs/audio); documents pdf, text/plain,
	// csv, html, css, md, xml, rtf, javascript, python (Gemini "Document
	// understanding" MIME list).
	ruleMime = "media type"
	// FunctionDeclaration.name: "Must start with a letter or an
	// underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots,
	// colons and dashes, with a maximum length of 64." (genai SDK
	// reference, googleapis.github.io/java-genai FunctionDeclaration).
	ruleDeclName = "declaration name"
	// systemInstruction comes from ModelRequest.System only (adapter
	// contract, doc.go: "System → systemInstruction").
	ruleSystem = "system instruction"
	// The adapter's own contract: a legal session is sent (or refused
	// with ErrUnsupportedContent when it holds media the API does not
	// take), and the same session gives the same bytes (implicit caching
	// needs a stable prefix, doc.go "Prompt caching").
	ruleSend        = "sent or refused"
	ruleDeterminism = "determinism"
)

var (
	declNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
	apiMime    = map[string]bool{
		"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true,
		"audio/wav": true, "audio/mp3": true, "audio/aiff": true, "audio/aac": true, "audio/ogg": true, "audio/flac": true,
		"application/pdf": true, "text/plain": true, "text/csv": true, "text/html": true, "text/css": true, "text/md": true,
		"text/xml": true, "text/rtf": true, "text/javascript": true, "application/x-javascript": true,
		"text/x-python": true, "application/x-python": true,
	}
	// partData are the fields of Part's data oneof.
	partData = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
)

// violation is a broken rule.
type violation struct{ rule, detail string }

func (v violation) String() string { return v.rule + ": " + v.detail }

// checkBody returns the rules the request body breaks.
func checkBody(c propCase, body map[string]any) []violation {
	var out []violation
	bad := func(rule, format string, args ...any) {
		out = append(out, violation{rule, fmt.Sprintf(format, args...)})
	}
	contents := asMaps(body["contents"])
	if len(contents) == 0 {
		bad(ruleEmpty, "no contents")
	}
	checkMedia := func(where string, p map[string]any) {
		for _, key := range []string{"inlineData", "fileData"} {
			m, ok := p[key].(map[string]any)
			if !ok {
				continue
			}
			if mt, _ := m["mimeType"].(string); !apiMime[mt] {
				bad(ruleMime, "%s.%s: mimeType %q", where, key, mt)
			}
			if d, _ := m["data"].(string); key == "inlineData" && d == "" {
				bad(rulePartData, "%s.inlineData without data", where)
			}
			if u, _ := m["fileUri"].(string); key == "fileData" && u == "" {
				bad(rulePartData, "%s.fileData without fileUri", where)
			}
		}
	}
	calls := func(c map[string]any) []map[string]any {
		var fc []map[string]any
		for _, p := range asMaps(c["parts"]) {
			if m, ok := p["functionCall"].(map[string]any); ok {
				fc = append(fc, m)
			}
		}
		return fc
	}
	for i, content := range contents {
		role, _ := content["role"].(string)
		if role != "user" && role != "model" {
			bad(ruleRole, "contents[%d].role %q", i, role)
		}
		parts := asMaps(content["parts"])
		if len(parts) == 0 {
			bad(ruleEmpty, "contents[%d] has no parts", i)
		}
		var responses []map[string]any
		for j, p := range parts {
			where := fmt.Sprintf("contents[%d].parts[%d]", i, j)
			n := 0
			for _, f := range partData {
				if _, ok := p[f]; ok {
					n++
				}
			}
			if n != 1 {
				bad(rulePartData, "%s has %d data fields: %v", where, n, keys(p))
			}
			checkMedia(where, p)
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				responses = append(responses, fr)
				for k, fp := range asMaps(fr["parts"]) {
					checkMedia(fmt.Sprintf("%s.functionResponse.parts[%d]", where, k), fp)
				}
			}
			if s, ok := p["thoughtSignature"]; ok {
				str, _ := s.(string)
				raw, err := base64.StdEncoding.DecodeString(str)
				if err != nil || !(c.gemSig[string(raw)] || string(raw) == string(skipSignature)) {
					bad(ruleForeignSig, "%s: thoughtSignature %q is not one Gemini gave", where, raw)
				}
			}
		}
		if len(responses) > 0 {
			if i == 0 || len(calls(contents[i-1])) == 0 {
				bad(ruleResponses, "contents[%d] has function responses but the content before has no function call", i)
			}
			if role != "user" {
				bad(ruleResponses, "contents[%d]: function responses in a %q content", i, role)
			}
		}
		fc := calls(content)
		if len(fc) == 0 {
			continue
		}
		if role != "model" {
			bad(ruleCallTurn, "contents[%d]: function calls in a %q content", i, role)
		}
		if i == 0 || contents[i-1]["role"] != "user" {
			bad(ruleCallTurn, "contents[%d]: function call turn not right after a user or function response turn", i)
		}
		if !beforeGemini3(c.model) {
			for _, p := range parts {
				if _, ok := p["functionCall"]; ok {
					if s, _ := p["thoughtSignature"].(string); s == "" {
						bad(ruleSignature, "contents[%d]: first function call %v has no thoughtSignature", i, p["functionCall"])
					}
					break
				}
			}
		}
		var next []map[string]any
		if i+1 < len(contents) {
			for _, p := range asMaps(contents[i+1]["parts"]) {
				if fr, ok := p["functionResponse"].(map[string]any); ok {
					next = append(next, fr)
				}
			}
		}
		if len(next) != len(fc) {
			bad(ruleResponses, "contents[%d] has %d function calls, the next content %d function responses", i, len(fc), len(next))
			continue
		}
		callKeys, respKeys := make([]string, len(fc)), make([]string, len(next))
		for k := range fc {
			callKeys[k] = fmt.Sprintf("%v|%v", fc[k]["id"], fc[k]["name"])
			respKeys[k] = fmt.Sprintf("%v|%v", next[k]["id"], next[k]["name"])
		}
		sort.Strings(callKeys)
		sort.Strings(respKeys)
		if !slices.Equal(callKeys, respKeys) {
			bad(ruleResponses, "contents[%d]: calls %v answered by %v (id|name)", i, callKeys, respKeys)
		}
	}
	si, hasSI := body["systemInstruction"].(map[string]any)
	switch {
	case c.req.System == "" && hasSI:
		bad(ruleSystem, "systemInstruction without System")
	case c.req.System != "" && !hasSI:
		bad(ruleSystem, "System not sent")
	case hasSI:
		sp := asMaps(si["parts"])
		if len(sp) != 1 || sp[0]["text"] != c.req.System {
			bad(ruleSystem, "systemInstruction %v is not System %q", si, c.req.System)
		}
	}
	for _, tool := range asMaps(body["tools"]) {
		for _, d := range asMaps(tool["functionDeclarations"]) {
			if n, _ := d["name"].(string); !declNameRE.MatchString(n) {
				bad(ruleDeclName, "function declaration name %q", n)
			}
		}
	}
	return out
}

func keys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// sendCase sends c twice (once if it must be refused) through srv and
// returns the violations found.
func sendCase(srv *replayServer, clients map[string]*Provider, replies [2]reply, c propCase) []violation {
	r := replies[0]
	if c.req.OnText != nil {
		r = replies[1]
	}
	srv.mu.Lock()
	srv.replies, srv.requests = []reply{r, r}, nil
	srv.mu.Unlock()
	p := clients[c.model]
	_, err := p.Plan(context.Background(), c.req)
	if c.refuse {
		var out []violation
		if !errors.Is(err, agentrt.ErrUnsupportedContent) {
			out = append(out, violation{ruleSend, fmt.Sprintf("a session with media the API does not take: got error %v, want ErrUnsupportedContent", err)})
		}
		if n := len(srv.reqs()); n != 0 {
			out = append(out, violation{ruleSend, fmt.Sprintf("%d requests sent for a session that must be refused", n)})
		}
		return out
	}
	if err != nil {
		return []violation{{ruleSend, fmt.Sprintf("legal session refused: %v", err)}}
	}
	if _, err := p.Plan(context.Background(), c.req); err != nil {
		return []violation{{ruleSend, fmt.Sprintf("second send: %v", err)}}
	}
	reqs := srv.reqs()
	if len(reqs) != 2 {
		return []violation{{ruleSend, fmt.Sprintf("%d requests for 2 sends", len(reqs))}}
	}
	out := checkBody(c, reqs[0].Body)
	if string(reqs[0].Raw) != string(reqs[1].Raw) {
		out = append(out, violation{ruleDeterminism, "the same session sent twice gave different bodies"})
	}
	return out
}

// newPropProviders returns a Provider per model, on one replay server.
func newPropProviders(t *testing.T) (*replayServer, map[string]*Provider) {
	srv := newReplayServer(t)
	client := newClient(t, srv, genai.BackendGeminiAPI, nil)
	clients := map[string]*Provider{}
	for _, m := range propModels {
		clients[m] = New(client, m, &Options{MaxRetries: -1})
	}
	return srv, clients
}

func envInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, name)
	return n
}

// TestPropertyRequests sends generated sessions (2,000 by default,
// GEMINI_PROP_N otherwise) and checks every request body against the
// rules above. A failure prints the seed and the case to replay it with
// GEMINI_PROP_SEED. Cases run on one worker per CPU, each with its own
// replay server; case i is generated from (seed, i) whichever runs it.
func TestPropertyRequests(t *testing.T) {
	n := envInt(t, "GEMINI_PROP_N", 2000)
	seed := envInt(t, "GEMINI_PROP_SEED", rand.Uint64())
	all := os.Getenv("GEMINI_PROP_ALL") != ""
	workers := uint64(max(1, min(runtime.GOMAXPROCS(0), 8)))
	replies := [2]reply{ok(t, "text.json"), ok(t, "text-stream.sse")} // unstreamed, streamed
	var (
		mu      sync.Mutex
		counts  = map[string]int{}
		first   = map[string]string{}
		failure string
		refused int
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range workers {
		srv, clients := newPropProviders(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && !stop.Load(); i += workers {
				c := genCase(rand.New(rand.NewPCG(seed, i)))
				vs := sendCase(srv, clients, replies, c)
				mu.Lock()
				if c.refuse {
					refused++
				}
				for _, v := range vs {
					if counts[v.rule] == 0 {
						first[v.rule] = fmt.Sprintf("case %d: %s", i, v.detail)
					}
					counts[v.rule]++
				}
				if len(vs) > 0 && !all && failure == "" {
					session, _ := json.MarshalIndent(c.req.Messages, "", " ")
					failure = fmt.Sprintf("GEMINI_PROP_SEED=%d, case %d (model %s): %d violations:\n%v\nsession:\n%s\nbody:\n%s",
						seed, i, c.model, len(vs), vs, session, lastRaw(srv))
					stop.Store(true)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	t.Logf("seed %d: %d sessions (%d to be refused), violations by rule: %v", seed, n, refused, counts)
	if len(counts) > 0 {
		t.Errorf("GEMINI_PROP_SEED=%d: violations %v; first of each: %v", seed, counts, first)
	}
}

func lastRaw(srv *replayServer) string {
	reqs := srv.reqs()
	if len(reqs) == 0 {
		return "(none sent)"
	}
	return string(reqs[0].Raw)
}

// The generator makes what it promises: every kind of hostile content
// shows up in a run, and the sessions keep the runtime's invariant, so
// that the property above is about legal sessions and a check of it can
// fail.
func TestPropertyGenerator(t *testing.T) {
	seen := map[string]int{}
	for i := range uint64(500) {
		c := genCase(rand.New(rand.NewPCG(1, i)))
		msgs := c.req.Messages
		require.Equal(t, agentrt.RoleUser, msgs[0].Role)
		for j, m := range msgs {
			uses := m.ToolUses()
			if len(uses) > 0 {
				seen["calls"]++
				if len(uses) > 1 {
					seen["parallel"]++
				}
				var got []string
				for _, r := range msgs[j+1 : j+1+len(uses)] {
					require.Equal(t, agentrt.RoleTool, r.Role)
					got = append(got, r.ToolUseID)
				}
				var want []string
				for _, u := range uses {
					want = append(want, u.ID)
				}
				require.ElementsMatch(t, want, got, "results right after their calls")
			}
			if m.Role == agentrt.RoleAssistant && j > 0 && msgs[j-1].Role == agentrt.RoleAssistant {
				seen["consecutive assistants"]++
			}
			if m.Role == agentrt.RoleAssistant && len(m.Blocks) == 0 {
				seen["empty assistant"]++
			}
			for _, b := range m.Blocks {
				if b.Type == agentrt.BlockThinking && b.Provider != providerName && len(b.Signature) > 0 {
					seen["foreign thinking"]++
				}
				if b.Type == agentrt.BlockImage || b.Type == agentrt.BlockDocument {
					seen[string(m.Role)+" media"]++
				}
			}
		}
		if msgs[len(msgs)-1].Role == agentrt.RoleAssistant {
			seen["trailing assistant"]++
		}
		if c.refuse {
			seen["refuse"]++
		}
	}
	for _, k := range []string{"calls", "parallel", "consecutive assistants", "empty assistant", "foreign thinking",
		"user media", "tool media", "trailing assistant", "refuse"} {
		require.Positive(t, seen[k], k)
	}
}

// planOnce sends msgs to model and returns the body sent.
func planOnce(t *testing.T, model string, msgs ...agentrt.Message) map[string]any {
	t.Helper()
	srv := newReplayServer(t, ok(t, "text.json"))
	p := New(newClient(t, srv, genai.BackendGeminiAPI, nil), model, nil)
	_, err := p.Plan(context.Background(), &agentrt.ModelRequest{Messages: msgs})
	require.NoError(t, err)
	return srv.only(t).Body
}

// requireRules checks body against the property's rules.
func requireRules(t *testing.T, model string, body map[string]any, gemSigs ...string) {
	t.Helper()
	c := propCase{model: model, req: &agentrt.ModelRequest{}, gemSig: map[string]bool{}}
	for _, s := range gemSigs {
		c.gemSig[s] = true
	}
	require.Empty(t, checkBody(c, body))
}

// Regression: a tool input that is not a JSON object (another provider's
// session) made the whole session unsendable; it goes as {"input": value}.
func TestPropRegressionNonObjectInput(t *testing.T) {
	t.Parallel()
	body := planOnce(t, testModel,
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(use("functions.add:0", "add", `[1,2]`)),
		agentrt.NewToolMessage("functions.add:0", "3", false))
	requireRules(t, testModel, body)
	jsonEq(t, `{"id":"functions.add:0","name":"add","args":{"input":[1,2]}}`, at(t, body, "contents", 1, "parts", 0, "functionCall"))
}

// Regression: on Gemini 3 the first call of a model turn needs a thought
// signature; one on a later call only did not count.
func TestPropRegressionFirstCallSigned(t *testing.T) {
	t.Parallel()
	second := use("c2", "add", `{}`)
	second.Provider, second.Signature = providerName, []byte("gem-sig")
	body := planOnce(t, "gemini-3-pro-preview",
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(use("c1", "add", `{}`), second),
		agentrt.NewToolMessage("c1", "1", false), agentrt.NewToolMessage("c2", "2", false))
	requireRules(t, "gemini-3-pro-preview", body, "gem-sig")
	first := at(t, body, "contents", 1, "parts", 0).(map[string]any)
	require.Equal(t, base64.StdEncoding.EncodeToString(skipSignature), first["thoughtSignature"])
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte("gem-sig")), at(t, body, "contents", 1, "parts", 1, "thoughtSignature"))
}

// Regression: a signed Gemini thought with no text went out as a part
// without data ({"thought":true,"thoughtSignature":...}); it goes with
// "text":"".
func TestPropRegressionEmptySignedThought(t *testing.T) {
	t.Parallel()
	thought := agentrt.Block{Type: agentrt.BlockThinking, Provider: providerName, Signature: []byte("gem-sig")}
	body := planOnce(t, testModel,
		agentrt.NewUserMessage("hi"), agentrt.NewAssistantMessage(thought, agentrt.TextBlock("Hello.")), agentrt.NewUserMessage("and?"))
	requireRules(t, testModel, body, "gem-sig")
	jsonEq(t, `{"text":"","thought":true,"thoughtSignature":"Z2VtLXNpZw=="}`, at(t, body, "contents", 1, "parts", 0))
}

// Regression: two assistant messages in a row (the first without calls)
// made two model contents, so the function call turn did not follow a
// user turn; they make one. A user message of empty texts only made no
// content at all (and a request of it alone none): it is {"text":""}.
func TestPropRegressionTurns(t *testing.T) {
	t.Parallel()
	body := planOnce(t, testModel,
		agentrt.NewUserMessage("hi"),
		agentrt.NewAssistantMessage(agentrt.TextBlock("Let me see.")),
		agentrt.NewAssistantMessage(use("c1", "add", `{}`)),
		agentrt.NewToolMessage("c1", "1", false))
	requireRules(t, testModel, body)
	jsonEq(t, `[{"role":"user","parts":[{"text":"hi"}]},
		{"role":"model","parts":[{"text":"Let me see."},{"functionCall":{"id":"c1","name":"add"},"thoughtSignature":"c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="}]},
		{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"add","response":{"output":"1"}}}]}]`, body["contents"])

	body = planOnce(t, testModel,
		agentrt.NewUserMessage("", agentrt.TextBlock("")),
		agentrt.NewAssistantMessage(use("c1", "add", `{}`)),
		agentrt.NewToolMessage("c1", "1", false))
	requireRules(t, testModel, body)
	jsonEq(t, `{"role":"user","parts":[{"text":""}]}`, at(t, body, "contents", 0))
}
