package agentrt

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role says who produced a [Message].
type Role string

// The three roles of a conversation.
const (
	// RoleUser marks a message from the user: text, and any images or
	// documents in its Blocks.
	RoleUser Role = "user"
	// RoleAssistant marks a message produced by the model: an ordered list
	// of text and tool_use blocks.
	RoleAssistant Role = "assistant"
	// RoleTool marks the result of one tool_use: its ToolUseID, content
	// text, IsError flag, and any images or documents in its Blocks.
	RoleTool Role = "tool"
)

// BlockType says what a [Block] holds.
type BlockType string

// The block types. An assistant message holds text, tool_use and thinking
// blocks; a user message or a tool result holds text, image and document
// blocks.
const (
	// BlockText is a block of text.
	BlockText BlockType = "text"
	// BlockToolUse is a request by the model to call a tool.
	BlockToolUse BlockType = "tool_use"
	// BlockImage is an image: MediaType ("image/png", ...) and Data, or a
	// URL.
	BlockImage BlockType = "image"
	// BlockDocument is a file other than an image (a PDF, plain text,
	// audio): MediaType and Data, or a URL; Name is its file name, if any.
	BlockDocument BlockType = "document"
	// BlockThinking is the model's reasoning, as its vendor returned it:
	// Text is the thinking or its summary, Signature the opaque signature
	// or encrypted content the vendor wants back, Redacted marks thinking
	// whose text the vendor withheld, and Provider names the vendor; ID
	// and Name, if set, are that adapter's own (a reasoning item's id, the
	// field the text came in). An adapter sends it back only to the vendor
	// named in Provider and drops it for any other.
	BlockThinking BlockType = "thinking"
)

// Block is one part of a message: text, a tool_use, an image, a document
// or thinking.
//
// For a text block only Text is set. For a tool_use block ID, Name and
// Input are set; Input is the tool's input as the model sent it (raw JSON,
// normally an object). Input is shared like the rest of its [Message]: read
// it, do not modify it. For image and document blocks MediaType and Data
// (or URL) are set. See [BlockThinking] for thinking blocks.
type Block struct {
	Type  BlockType       `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// MediaType is the IANA media type of an image or document's Data
	// ("image/png", "application/pdf", "text/plain").
	MediaType string `json:"media_type,omitempty"`
	// Data is the content of an image or document (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// URL locates an image or document that has no Data. Not every vendor
	// takes one; an adapter that cannot refuses the request.
	URL string `json:"url,omitempty"`
	// Signature is opaque data a vendor attaches to a block and wants back
	// in later requests: the signature or encrypted content of a thinking
	// block, Gemini's thought signature on a text or tool_use block, or the
	// id of the OpenAI Responses output item a block came from.
	// Provider adapters set and read it; it is kept in the session (base64
	// in JSON) so that a resumed session can send it again.
	Signature []byte `json:"signature,omitempty"`
	// Redacted marks a thinking block whose text the vendor withheld:
	// Signature holds the encrypted thinking.
	Redacted bool `json:"redacted,omitempty"`
	// Provider names the vendor that produced a thinking block or a
	// Signature ("anthropic", "gemini", "openai"), so that adapters send
	// them back to that vendor only.
	Provider string `json:"provider,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ToolUseBlock returns a tool_use block asking for the tool name with the
// given JSON input. An empty input stands for the empty object.
func ToolUseBlock(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// Message is one entry of a session: a user's input, an assistant's
// blocks, or the result of one tool call.
//
// Its content is Content, as a text part when not empty, followed by
// Blocks in order. An assistant message keeps everything in Blocks; a user
// message or a tool result keeps its text in Content and may add images
// and documents (and more text) in Blocks.
//
// Its JSON form is stable and documented (it is the message record of the
// JSONL session format):
//
//	{"role":"user","content":"What is 2+40?"}
//	{"role":"assistant","blocks":[{"type":"text","text":"Let me add."},
//	    {"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":40}}]}
//	{"role":"tool","content":"42","tool_use_id":"call_1"}
//	{"role":"tool","content":"unknown tool \"sub\"","tool_use_id":"call_2","is_error":true}
//	{"role":"user","content":"What is this?","blocks":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo…"}]}
//
// Messages are values that are shared, not copied, once appended to a
// session: the runtime, the planner and the store all see the same Blocks
// and Input bytes. Do not modify a message after handing it over.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of a user message or the content of a tool
	// result. Assistant messages keep their text in Blocks.
	Content string `json:"content,omitempty"`
	// Blocks are the ordered blocks of an assistant message, or the
	// images, documents and further text of a user message or tool result,
	// after Content.
	Blocks []Block `json:"blocks,omitempty"`
	// ToolUseID links a tool result to the tool_use block it answers.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// IsError marks a tool result that reports a failure to the model.
	IsError bool `json:"is_error,omitempty"`
}

// NewUserMessage returns a user message carrying text, followed by parts
// (images, documents, more text), if any.
func NewUserMessage(text string, parts ...Block) Message {
	return Message{Role: RoleUser, Content: text, Blocks: parts}
}

// NewAssistantMessage returns an assistant message made of blocks.
func NewAssistantMessage(blocks ...Block) Message {
	return Message{Role: RoleAssistant, Blocks: blocks}
}

// NewToolMessage returns the result of the tool_use with the given id.
// isError marks a failure that the model should see as such.
func NewToolMessage(toolUseID, content string, isError bool) Message {
	return Message{Role: RoleTool, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// Text returns the text of the message: the content of a user message or
// tool result, or the text blocks of an assistant message joined together.
// The text blocks of a user message or tool result that has no Content
// stand for it.
func (m Message) Text() string {
	if m.Role != RoleAssistant && (m.Content != "" || len(m.Blocks) == 0) {
		return m.Content
	}
	switch n := countText(m.Blocks); n {
	case 0:
		return ""
	case 1:
		for _, b := range m.Blocks {
			if b.Type == BlockText {
				return b.Text
			}
		}
	}
	var sb strings.Builder
	for _, b := range m.Blocks {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

func countText(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		if b.Type == BlockText {
			n++
		}
	}
	return n
}

// ToolUses returns the tool_use blocks of an assistant message, in order.
// It returns nil for other messages and for an assistant message without
// tool_use blocks.
func (m Message) ToolUses() []Block {
	if m.Role != RoleAssistant {
		return nil
	}
	var uses []Block
	for _, b := range m.Blocks {
		if b.Type == BlockToolUse {
			uses = append(uses, b)
		}
	}
	return uses
}

// HasToolUse reports whether m is an assistant message with at least one
// tool_use block. Unlike ToolUses it does not allocate.
func (m Message) HasToolUse() bool {
	if m.Role != RoleAssistant {
		return false
	}
	for _, b := range m.Blocks {
		if b.Type == BlockToolUse {
			return true
		}
	}
	return false
}

// String returns a one-line form of the message for logs and debugging,
// such as
//
//	user: What is 2+40?
//	assistant: Let me add. [tool_use call_1 add {"a":2,"b":40}]
//	tool call_1: 42
//	tool call_2 (error): unknown tool "sub"
func (m Message) String() string {
	var sb strings.Builder
	switch m.Role {
	case RoleTool:
		fmt.Fprintf(&sb, "tool %s", m.ToolUseID)
		if m.IsError {
			sb.WriteString(" (error)")
		}
		sb.WriteString(": ")
		sb.WriteString(m.Content)
		for i, b := range m.Blocks {
			if i > 0 || m.Content != "" {
				sb.WriteByte(' ')
			}
			sb.WriteString(b.String())
		}
	case RoleAssistant:
		sb.WriteString("assistant:")
		for _, b := range m.Blocks {
			sb.WriteByte(' ')
			sb.WriteString(b.String())
		}
	default:
		sb.WriteString(string(m.Role))
		sb.WriteString(": ")
		sb.WriteString(m.Content)
		for i, b := range m.Blocks {
			if i > 0 || m.Content != "" {
				sb.WriteByte(' ')
			}
			sb.WriteString(b.String())
		}
	}
	return sb.String()
}

// String returns the block's text, or a bracketed summary of any other
// block: "[tool_use ID NAME INPUT]", "[image image/png 2048 bytes]",
// "[document report.pdf application/pdf 5120 bytes]", "[image URL]",
// "[thinking anthropic: TEXT]".
func (b Block) String() string {
	switch b.Type {
	case BlockToolUse:
		in := string(b.Input)
		if in == "" {
			in = "{}"
		}
		return fmt.Sprintf("[tool_use %s %s %s]", b.ID, b.Name, in)
	case BlockImage, BlockDocument:
		var sb strings.Builder
		sb.WriteString("[")
		sb.WriteString(string(b.Type))
		if b.Name != "" {
			sb.WriteString(" " + b.Name)
		}
		if b.URL != "" {
			sb.WriteString(" " + b.URL)
		} else {
			fmt.Fprintf(&sb, " %s %d bytes", b.MediaType, len(b.Data))
		}
		sb.WriteString("]")
		return sb.String()
	case BlockThinking:
		text := b.Text
		if b.Redacted {
			text = "(redacted)"
		}
		return fmt.Sprintf("[thinking %s: %s]", b.Provider, text)
	}
	return b.Text
}
