package agentrt

import (
	"context"
	"iter"
	"strings"
)

// This file holds what a message carries beyond text: images and
// documents in user messages and tool results, how a tool returns them,
// and how a run starts with them. The block types are in message.go.

// ImageBlock returns an image block of the given media type ("image/png",
// "image/jpeg", "image/gif", "image/webp") holding data. For an image
// given by URL, use Block{Type: BlockImage, URL: url}.
func ImageBlock(mediaType string, data []byte) Block {
	return Block{Type: BlockImage, MediaType: mediaType, Data: data}
}

// DocumentBlock returns a document block named name (a file name; may be
// empty) of the given media type ("application/pdf", "text/plain", ...)
// holding data. For a document given by URL, use Block{Type:
// BlockDocument, URL: url}.
func DocumentBlock(name, mediaType string, data []byte) Block {
	return Block{Type: BlockDocument, Name: name, MediaType: mediaType, Data: data}
}

// RunParts is [Agent.Run] with a user turn of several parts: text followed
// by images, documents or more text (see [ImageBlock], [DocumentBlock]).
// The user message stored is NewUserMessage(text, parts...). Everything
// else is as for Run.
func (a *Agent) RunParts(ctx context.Context, sessionID, text string, parts ...Block) iter.Seq2[Event, error] {
	return a.run(ctx, sessionID, text, runOptions{parts: parts})
}

// ContentTool is implemented by a [Tool] whose results can carry images or
// documents, not only text. The runtime calls ExecuteContent instead of
// Execute: text becomes the tool result's Content and parts its Blocks.
// The tools [NewTool] makes are ContentTools: a function that returns a
// [Block] or a []Block gives parts, any other gives text only.
type ContentTool interface {
	Tool
	ExecuteContent(ctx context.Context, input any) (text string, parts []Block, err error)
}

// executeTool runs t, through ExecuteContent when it has it.
func executeTool(ctx context.Context, t Tool, input any) (string, []Block, error) {
	if ct, ok := t.(ContentTool); ok {
		return ct.ExecuteContent(ctx, input)
	}
	out, err := t.Execute(ctx, input)
	return out, nil, err
}

// splitParts returns the text of the leading text blocks of parts, joined
// by newlines, and the parts that follow; a tool result keeps its text in
// Content for the model and for hooks that read it.
func splitParts(parts []Block) (string, []Block) {
	var texts []string
	i := 0
	for ; i < len(parts) && parts[i].Type == BlockText; i++ {
		texts = append(texts, parts[i].Text)
	}
	rest := parts[i:]
	if len(rest) == 0 {
		rest = nil
	}
	return strings.Join(texts, "\n"), rest
}

// describeParts is the text form of parts for a caller of Execute, which
// returns text only: each text block as it is, each other block as
// [Block.String] shows it.
func describeParts(parts []Block) string {
	var sb strings.Builder
	for i, b := range parts {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(b.String())
	}
	return sb.String()
}
