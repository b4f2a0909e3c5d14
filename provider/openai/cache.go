package openai

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
)

// cacheKey is the prompt_cache_key of a request: key if set, else one
// made from the session id (a hash, so that nothing of the id is sent),
// or "" for none.
func cacheKey(key string, derive bool, sessionID string) string {
	if key != "" || !derive || sessionID == "" {
		return key
	}
	sum := sha256.Sum256([]byte(sessionID))
	return "agentrt-" + hex.EncodeToString(sum[:8])
}

// sessionEnd returns how many of msgs come from the session: all but a
// trailing run of user messages added for this call only, such as the
// facts a recall hook appends or the runtime's note after a limit. Such a
// run follows tool results, or the user's own message (which ends the
// session's part): before a planner call the session ends with one of
// them.
func sessionEnd(msgs []agentrt.Message) int {
	k := len(msgs)
	for k > 0 && msgs[k-1].Role == agentrt.RoleUser {
		k--
	}
	if k < len(msgs) && (k == 0 || msgs[k-1].Role == agentrt.RoleAssistant) {
		k++ // the user's message
	}
	return k
}

// explicitBreakpoints turns msgs into the form of explicit caching and
// marks its breakpoints: every system, user and tool message's content
// becomes a list of parts (so that a breakpoint that moves on leaves the
// bytes of the message as they were, but for the marker), and a
// prompt_cache_breakpoint goes on the last part of the system prompt, of
// msgs[stable] (the end of the session's messages, before any part only
// this call has) and of the message before the last assistant message up
// to it (where the call before ended): 3 of the 4 the API writes.
func explicitBreakpoints(msgs []oai.ChatCompletionMessageParamUnion, stable int, ttl string) {
	for i := range msgs {
		asParts(&msgs[i])
	}
	at := []int{stable}
	if len(msgs) > 0 && msgs[0].OfSystem != nil {
		at = append(at, 0)
	}
	for a := stable; a >= 0; a-- {
		if msgs[a].OfAssistant != nil {
			if p := a - 1; p >= 0 && msgs[p].OfSystem == nil {
				at = append(at, p)
			}
			break
		}
	}
	for _, i := range at {
		if i >= 0 && i < len(msgs) {
			mark(&msgs[i], ttl)
		}
	}
}

// asParts turns the string content of a system, user or tool message into
// one text part.
func asParts(m *oai.ChatCompletionMessageParamUnion) {
	switch {
	case m.OfSystem != nil && m.OfSystem.Content.OfString.Valid():
		c := &m.OfSystem.Content
		c.OfArrayOfContentParts = []oai.ChatCompletionContentPartTextParam{{Text: c.OfString.Value}}
		c.OfString = param.Opt[string]{}
	case m.OfUser != nil && m.OfUser.Content.OfString.Valid():
		c := &m.OfUser.Content
		c.OfArrayOfContentParts = []oai.ChatCompletionContentPartUnionParam{oai.TextContentPart(c.OfString.Value)}
		c.OfString = param.Opt[string]{}
	case m.OfTool != nil && m.OfTool.Content.OfString.Valid():
		c := &m.OfTool.Content
		c.OfArrayOfContentParts = []oai.ChatCompletionContentPartTextParam{{Text: c.OfString.Value}}
		c.OfString = param.Opt[string]{}
	}
}

// mark puts a prompt_cache_breakpoint on the last part of a system, tool
// or user message.
func mark(m *oai.ChatCompletionMessageParamUnion, ttl string) {
	text := func(p *oai.ChatCompletionContentPartTextParam) {
		p.PromptCacheBreakpoint = oai.NewChatCompletionContentPartTextPromptCacheBreakpointParam()
		p.PromptCacheBreakpoint.Ttl = ttl
	}
	switch {
	case m.OfSystem != nil:
		if parts := m.OfSystem.Content.OfArrayOfContentParts; len(parts) > 0 {
			text(&parts[len(parts)-1])
		}
	case m.OfTool != nil:
		if parts := m.OfTool.Content.OfArrayOfContentParts; len(parts) > 0 {
			text(&parts[len(parts)-1])
		}
	case m.OfUser != nil:
		parts := m.OfUser.Content.OfArrayOfContentParts
		if len(parts) == 0 {
			return
		}
		switch p := parts[len(parts)-1]; {
		case p.OfText != nil:
			text(p.OfText)
		case p.OfImageURL != nil:
			p.OfImageURL.PromptCacheBreakpoint = oai.NewChatCompletionContentPartImagePromptCacheBreakpointParam()
			p.OfImageURL.PromptCacheBreakpoint.Ttl = ttl
		case p.OfInputAudio != nil:
			p.OfInputAudio.PromptCacheBreakpoint = oai.NewChatCompletionContentPartInputAudioPromptCacheBreakpointParam()
			p.OfInputAudio.PromptCacheBreakpoint.Ttl = ttl
		case p.OfFile != nil:
			p.OfFile.PromptCacheBreakpoint = oai.NewChatCompletionContentPartFilePromptCacheBreakpointParam()
			p.OfFile.PromptCacheBreakpoint.Ttl = ttl
		}
	}
}

// explicitResponseBreakpoints is explicitBreakpoints for the Responses
// API's input items: the content of every message and function call
// output becomes a list of parts, and a breakpoint goes on the last part
// of the developer message (the system prompt), of input[stable] and of
// the item before the last model item up to it.
func explicitResponseBreakpoints(input responses.ResponseInputParam, stable int, ttl string) {
	for i := range input {
		responseParts(&input[i])
	}
	at := []int{stable}
	dev := len(input) > 0 && input[0].OfMessage != nil && input[0].OfMessage.Role == responses.EasyInputMessageRoleDeveloper
	if dev {
		at = append(at, 0)
	}
	for a := stable; a >= 0; a-- {
		it := input[a]
		if it.OfFunctionCall != nil || it.OfReasoning != nil || (it.OfMessage != nil && it.OfMessage.Role == responses.EasyInputMessageRoleAssistant) {
			for p := a - 1; p >= 0; p-- { // before the model's items of that answer
				if q := input[p]; q.OfFunctionCall == nil && q.OfReasoning == nil && (q.OfMessage == nil || q.OfMessage.Role != responses.EasyInputMessageRoleAssistant) {
					if p > 0 || !dev {
						at = append(at, p)
					}
					break
				}
			}
			break
		}
	}
	for _, i := range at {
		if i >= 0 && i < len(input) {
			markItem(&input[i], ttl)
		}
	}
}

// responseParts turns the string content of a message or function call
// output into one input_text part.
func responseParts(it *responses.ResponseInputItemUnionParam) {
	switch {
	case it.OfMessage != nil && it.OfMessage.Role != responses.EasyInputMessageRoleAssistant && it.OfMessage.Content.OfString.Valid():
		c := &it.OfMessage.Content
		c.OfInputItemContentList = responses.ResponseInputMessageContentListParam{responses.ResponseInputContentParamOfInputText(c.OfString.Value)}
		c.OfString = param.Opt[string]{}
	case it.OfFunctionCallOutput != nil && it.OfFunctionCallOutput.Output.OfString.Valid():
		o := &it.OfFunctionCallOutput.Output
		o.OfResponseFunctionCallOutputItemArray = responses.ResponseFunctionCallOutputItemListParam{responses.ResponseFunctionCallOutputItemParamOfInputText(o.OfString.Value)}
		o.OfString = param.Opt[string]{}
	}
}

// markItem puts a prompt_cache_breakpoint on the last part of a message
// or function call output.
func markItem(it *responses.ResponseInputItemUnionParam, ttl string) {
	switch {
	case it.OfMessage != nil:
		parts := it.OfMessage.Content.OfInputItemContentList
		if len(parts) == 0 {
			return
		}
		switch p := parts[len(parts)-1]; {
		case p.OfInputText != nil:
			p.OfInputText.PromptCacheBreakpoint = responses.NewResponseInputTextPromptCacheBreakpointParam()
			p.OfInputText.PromptCacheBreakpoint.Ttl = ttl
		case p.OfInputImage != nil:
			p.OfInputImage.PromptCacheBreakpoint = responses.NewResponseInputImagePromptCacheBreakpointParam()
			p.OfInputImage.PromptCacheBreakpoint.Ttl = ttl
		case p.OfInputFile != nil:
			p.OfInputFile.PromptCacheBreakpoint = responses.NewResponseInputFilePromptCacheBreakpointParam()
			p.OfInputFile.PromptCacheBreakpoint.Ttl = ttl
		}
	case it.OfFunctionCallOutput != nil:
		parts := it.OfFunctionCallOutput.Output.OfResponseFunctionCallOutputItemArray
		if len(parts) == 0 {
			return
		}
		switch p := parts[len(parts)-1]; {
		case p.OfInputText != nil:
			p.OfInputText.PromptCacheBreakpoint = responses.NewResponseInputTextContentPromptCacheBreakpointParam()
			p.OfInputText.PromptCacheBreakpoint.Ttl = ttl
		case p.OfInputImage != nil:
			p.OfInputImage.PromptCacheBreakpoint = responses.NewResponseInputImageContentPromptCacheBreakpointParam()
			p.OfInputImage.PromptCacheBreakpoint.Ttl = ttl
		case p.OfInputFile != nil:
			p.OfInputFile.PromptCacheBreakpoint = responses.NewResponseInputFileContentPromptCacheBreakpointParam()
			p.OfInputFile.PromptCacheBreakpoint.Ttl = ttl
		}
	}
}
