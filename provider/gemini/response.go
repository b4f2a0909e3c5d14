package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
)

// assembler builds one ModelResponse from a GenerateContentResponse, or
// from the chunks of a stream, which it is given in order. Text parts that
// follow each other make one text block, and thought parts one thinking
// block; each function call makes one tool_use block. Function calls
// streamed in pieces (Vertex AI's partialArgs) are put together. Thought
// signatures are kept on the blocks (Provider "gemini").
type assembler struct {
	model string

	blocks   []agentrt.Block
	text     strings.Builder
	textSig  []byte // the thought signature of the pending text
	thought  strings.Builder
	thoughtS []byte       // the thought signature of the pending thought
	inThink  bool         // a thought part is pending
	open     *partialCall // a call streamed in pieces, not yet closed
	calls    int
	ids      map[string]bool // the ids of the calls so far

	finish       genai.FinishReason
	blocked      bool // the prompt was refused (promptFeedback.blockReason)
	candidate    bool // some chunk had a candidate
	usage        *genai.GenerateContentResponseUsageMetadata
	modelVersion string
	responseID   string
}

func newAssembler(model string) *assembler {
	return &assembler{model: model}
}

// add takes one response (or stream chunk). onText, when non-nil, gets
// each piece of text as it is added.
func (a *assembler) add(r *genai.GenerateContentResponse, onText func(string)) error {
	if r == nil {
		return nil
	}
	if r.ModelVersion != "" {
		a.modelVersion = r.ModelVersion
	}
	if r.ResponseID != "" {
		a.responseID = r.ResponseID
	}
	if r.UsageMetadata != nil {
		a.usage = r.UsageMetadata // running totals: the latest is the answer's
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.blocked = true
	}
	cand := answerCandidate(r.Candidates)
	if cand == nil {
		return nil
	}
	a.candidate = true
	if cand.Content != nil {
		for _, part := range cand.Content.Parts {
			if part == nil {
				continue
			}
			switch {
			case part.FunctionCall != nil:
				a.flushThought()
				if err := a.addCall(part.FunctionCall, part.ThoughtSignature); err != nil {
					return err
				}
			case !textual(part):
				// Code execution, an image or a file in the answer: the
				// runtime has no block for it, so it is left out, with its
				// thought signature (which signs that part, not the text).
			case part.Thought:
				if a.open != nil {
					return badResponse("a thought arrived in the middle of a streamed function call")
				}
				a.flushText()
				a.inThink = true
				a.thought.WriteString(part.Text)
				if len(part.ThoughtSignature) > 0 {
					a.thoughtS = part.ThoughtSignature
				}
			case part.Text != "" || len(part.ThoughtSignature) > 0:
				if a.open != nil {
					return badResponse("text arrived in the middle of a streamed function call")
				}
				a.flushThought()
				if len(part.ThoughtSignature) > 0 {
					if part.Text == "" && a.text.Len() == 0 {
						// A signature alone, after the text it signs was
						// closed by a call: it signs nothing to send back.
						break
					}
					a.textSig = part.ThoughtSignature
				}
				a.text.WriteString(part.Text)
				if onText != nil && part.Text != "" {
					onText(part.Text)
				}
			}
		}
	}
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		a.finish = cand.FinishReason
	}
	return nil
}

// answerCandidate returns the candidate the answer is made of: the one of
// index 0 (an absent index is 0), wherever it is in the array. With
// candidateCount over 1 the API numbers the candidates, and a stream chunk
// may carry them in any order, or only others.
func answerCandidate(cands []*genai.Candidate) *genai.Candidate {
	for _, c := range cands {
		if c != nil && c.Index == 0 {
			return c
		}
	}
	return nil
}

// textual reports whether p is a text or thought part, rather than one
// that carries another kind of content (executableCode,
// codeExecutionResult, inlineData, fileData...) with an empty text.
func textual(p *genai.Part) bool {
	return p.InlineData == nil && p.FileData == nil && p.ExecutableCode == nil &&
		p.CodeExecutionResult == nil && p.FunctionResponse == nil &&
		p.ToolCall == nil && p.ToolResponse == nil
}

func (a *assembler) flushText() {
	if a.text.Len() > 0 {
		b := agentrt.TextBlock(a.text.String())
		if len(a.textSig) > 0 {
			b.Signature, b.Provider = a.textSig, providerName
		}
		a.blocks = append(a.blocks, b)
		a.text.Reset()
	}
	a.textSig = nil
}

func (a *assembler) flushThought() {
	if a.inThink {
		a.blocks = append(a.blocks, agentrt.Block{Type: agentrt.BlockThinking, Text: a.thought.String(), Signature: a.thoughtS, Provider: providerName})
		a.thought.Reset()
	}
	a.inThink, a.thoughtS = false, nil
}

// addCall takes a functionCall part: a whole call, or the start, a piece
// or the end of a call streamed with partialArgs.
func (a *assembler) addCall(fc *genai.FunctionCall, sig []byte) error {
	cont := fc.WillContinue != nil && *fc.WillContinue
	if a.open != nil && fc.Name == "" {
		if err := a.open.apply(fc); err != nil {
			return err
		}
		if len(sig) > 0 && len(a.open.sig) == 0 {
			a.open.sig = sig
		}
		if !cont {
			return a.closeCall()
		}
		return nil
	}
	if a.open != nil { // a new call starts: the previous one ended
		if err := a.closeCall(); err != nil {
			return err
		}
	}
	if fc.Name == "" {
		if len(fc.PartialArgs) > 0 || len(fc.Args) > 0 {
			return badResponse("function call arguments arrived without a function call")
		}
		return nil // an empty terminator with nothing open
	}
	pc := &partialCall{id: fc.ID, name: fc.Name, sig: sig, args: map[string]any{}}
	for k, v := range fc.Args {
		pc.args[k] = v
	}
	if err := pc.apply(&genai.FunctionCall{PartialArgs: fc.PartialArgs}); err != nil {
		return err
	}
	a.open = pc
	if !cont {
		return a.closeCall()
	}
	return nil
}

// closeCall turns the open call into a tool_use block.
func (a *assembler) closeCall() error {
	pc := a.open
	a.open = nil
	if pc.contPath != "" {
		return badResponse(fmt.Sprintf("function call %q ended while its argument %s was still streaming", pc.name, pc.contPath))
	}
	input, err := json.Marshal(pc.args)
	if err != nil {
		return badResponse(fmt.Sprintf("function call %q: cannot encode its arguments: %v", pc.name, err))
	}
	a.flushText()
	a.flushThought()
	id := pc.id
	if id == "" {
		id = a.callID()
	}
	if a.ids[id] {
		return badResponse(fmt.Sprintf("two function calls have the id %q", id))
	}
	if a.ids == nil {
		a.ids = map[string]bool{}
	}
	a.ids[id] = true
	a.calls++
	b := agentrt.ToolUseBlock(id, pc.name, input)
	if len(pc.sig) > 0 {
		b.Signature, b.Provider = pc.sig, providerName
	}
	a.blocks = append(a.blocks, b)
	return nil
}

// callID makes the id of a function call that came without one (the Gemini
// API gives none to most calls): "call_" followed by the response id and the
// call's position in the answer, so that it is stable for a given answer
// and unique across answers. Without a response id, a random one is used.
func (a *assembler) callID() string {
	rid := a.responseID
	if rid == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		a.responseID = hex.EncodeToString(b[:])
		rid = a.responseID
	}
	return "call_" + rid + "_" + strconv.Itoa(a.calls)
}

// done returns the response once the answer is complete. stream says the
// answer was streamed, where a missing finish reason means a cut stream.
func (a *assembler) done(stream bool) (*agentrt.ModelResponse, error) {
	if a.open != nil {
		return nil, badResponse(fmt.Sprintf("the answer ended in the middle of function call %q", a.open.name))
	}
	if u := a.usage; u != nil && (u.PromptTokenCount < 0 || u.ToolUsePromptTokenCount < 0 ||
		u.CandidatesTokenCount < 0 || u.ThoughtsTokenCount < 0 || u.CachedContentTokenCount < 0) {
		return nil, badResponse("usageMetadata has a negative token count")
	}
	a.flushText()
	a.flushThought()
	resp := &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(a.blocks...),
		Usage:   usage(a.usage),
		Model:   a.modelVersion,
	}
	if resp.Model == "" {
		resp.Model = a.model
	}
	switch {
	case a.finish != "":
		resp.Finish = finishReason(a.finish, resp.Message.HasToolUse())
	case a.blocked:
		resp.Finish = agentrt.FinishContentFilter
	case stream:
		return nil, badResponse("the stream ended without a finish reason")
	case !a.candidate:
		return nil, badResponse("the response has no candidate")
	default:
		resp.Finish = agentrt.FinishOther
	}
	return resp, nil
}

// finishModelArmor is the finish reason Vertex AI gives, with no content,
// when a Model Armor template blocked the answer ("The response violated
// Responsible AI Safety settings ... filters."); the SDK has no constant
// for it.
const finishModelArmor genai.FinishReason = "MODEL_ARMOR"

// finishReason maps Gemini's finish reasons.
func finishReason(r genai.FinishReason, toolUse bool) agentrt.FinishReason {
	switch r {
	case genai.FinishReasonStop:
		if toolUse {
			return agentrt.FinishToolUse
		}
		return agentrt.FinishStop
	case genai.FinishReasonMaxTokens:
		return agentrt.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation,
		finishModelArmor:
		return agentrt.FinishContentFilter
	}
	return agentrt.FinishOther
}

// usage maps usageMetadata. InputTokens is the prompt (cached part
// included, as Gemini counts it) plus the tool-use prompt; OutputTokens the
// candidates plus the thoughts, which are billed as output, and
// ReasoningTokens the thoughts again; CacheReadTokens is
// cachedContentTokenCount.
func usage(u *genai.GenerateContentResponseUsageMetadata) agentrt.Usage {
	if u == nil {
		return agentrt.Usage{}
	}
	return agentrt.Usage{
		InputTokens:     int(u.PromptTokenCount) + int(u.ToolUsePromptTokenCount),
		OutputTokens:    int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
		ReasoningTokens: int(u.ThoughtsTokenCount),
		CacheReadTokens: int(u.CachedContentTokenCount),
	}
}

// partialCall is a function call whose arguments arrive in pieces: each
// partialArg sets the value at a JSON path, and a string value whose
// willContinue is set is continued by the next piece for the same path.
type partialCall struct {
	id, name string
	sig      []byte
	args     map[string]any
	contPath string // the path whose string value continues, if any
}

// maxArrayIndex bounds the array indexes a partialArg may use.
const maxArrayIndex = 1 << 16

func (pc *partialCall) apply(fc *genai.FunctionCall) error {
	for k, v := range fc.Args {
		pc.args[k] = v
	}
	for _, pa := range fc.PartialArgs {
		if pa == nil {
			continue
		}
		segs, err := parseJSONPath(pa.JsonPath)
		if err != nil {
			return badResponse(fmt.Sprintf("function call %q: %v", pc.name, err))
		}
		var val any
		appendStr := false
		switch {
		case pa.NumberValue != nil:
			val = *pa.NumberValue
		case pa.BoolValue != nil:
			val = *pa.BoolValue
		case pa.NULLValue != "":
			val = nil
		default:
			val = pa.StringValue
			appendStr = pc.contPath == pa.JsonPath
		}
		next, err := setPath(pc.args, segs, val, appendStr)
		if err != nil {
			return badResponse(fmt.Sprintf("function call %q: argument %s: %v", pc.name, pa.JsonPath, err))
		}
		obj, ok := next.(map[string]any)
		if !ok {
			return badResponse(fmt.Sprintf("function call %q: argument %s replaces the arguments object", pc.name, pa.JsonPath))
		}
		pc.args = obj
		pc.contPath = ""
		if pa.WillContinue != nil && *pa.WillContinue {
			pc.contPath = pa.JsonPath
		}
	}
	return nil
}

// setPath sets val at the path segs (string keys and int indexes) inside
// cur, creating objects and arrays on the way, and returns the new cur. With
// appendStr a string val is appended to the string already there.
func setPath(cur any, segs []any, val any, appendStr bool) (any, error) {
	if len(segs) == 0 {
		if s, ok := cur.(string); ok && appendStr {
			return s + val.(string), nil
		}
		return val, nil
	}
	switch seg := segs[0].(type) {
	case string:
		m, ok := cur.(map[string]any)
		if cur == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, fmt.Errorf("key %q inside a %T", seg, cur)
		}
		v, err := setPath(m[seg], segs[1:], val, appendStr)
		if err != nil {
			return nil, err
		}
		m[seg] = v
		return m, nil
	case int:
		arr, ok := cur.([]any)
		if cur == nil {
			ok = true
		}
		if !ok {
			return nil, fmt.Errorf("index %d inside a %T", seg, cur)
		}
		if seg > maxArrayIndex {
			return nil, fmt.Errorf("index %d too large", seg)
		}
		for len(arr) <= seg {
			arr = append(arr, nil)
		}
		v, err := setPath(arr[seg], segs[1:], val, appendStr)
		if err != nil {
			return nil, err
		}
		arr[seg] = v
		return arr, nil
	}
	return nil, fmt.Errorf("bad path segment %v", segs[0])
}

// parseJSONPath parses the paths partialArgs use, a subset of RFC 9535:
// "$", then ".name", "['name']", "[\"name\"]" or "[0]" segments.
func parseJSONPath(p string) ([]any, error) {
	rest, ok := strings.CutPrefix(p, "$")
	if !ok {
		return nil, fmt.Errorf("JSON path %q does not start with $", p)
	}
	var segs []any
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, fmt.Errorf("JSON path %q: empty name", p)
			}
			segs = append(segs, rest[:n])
			rest = rest[n:]
		case '[':
			if len(rest) > 1 && (rest[1] == '\'' || rest[1] == '"') {
				// A quoted name, which may hold "]" and escaped quotes.
				q := rest[1]
				var sb strings.Builder
				i := 2
				for ; i < len(rest) && rest[i] != q; i++ {
					if rest[i] == '\\' && i+1 < len(rest) {
						i++
					}
					sb.WriteByte(rest[i])
				}
				if i+1 >= len(rest) || rest[i+1] != ']' {
					return nil, fmt.Errorf("JSON path %q: bad quoted name", p)
				}
				segs = append(segs, sb.String())
				rest = rest[i+2:]
				continue
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("JSON path %q: unclosed [", p)
			}
			inner := rest[1:end]
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("JSON path %q: bad index %q", p, inner)
			}
			segs = append(segs, n)
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("JSON path %q: unexpected %q", p, rest[0])
		}
	}
	return segs, nil
}
