package openai

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
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
