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
	// RoleUser marks a message typed by the user. It carries text.
	RoleUser Role = "user"
	// RoleAssistant marks a message produced by the model: an ordered list
	// of text and tool_use blocks.
	RoleAssistant Role = "assistant"
	// RoleTool marks the result of one tool_use: its ToolUseID, content
	// text and IsError flag.
	RoleTool Role = "tool"
)

// BlockType says what a [Block] of an assistant message holds.
type BlockType string

// The block types of an assistant message.
const (
	// BlockText is a block of text written by the model.
	BlockText BlockType = "text"
	// BlockToolUse is a request by the model to call a tool.
	BlockToolUse BlockType = "tool_use"
)

// Block is one part of an assistant message: text, or a tool_use.
//
// For a text block only Text is set. For a tool_use block ID, Name and
// Input are set; Input is the tool's input as the model sent it (raw JSON,
// normally an object). Input is shared like the rest of its [Message]: read
// it, do not modify it.
type Block struct {
	Type  BlockType       `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// Signature is opaque data a vendor attaches to a block and wants back
	// in later requests (Gemini's thought signatures, Anthropic's thinking
	// signatures). Provider adapters set and read it; it is kept in the
	// session (base64 in JSON) so that a resumed session can send it again.
	Signature []byte `json:"signature,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ToolUseBlock returns a tool_use block asking for the tool name with the
// given JSON input. An empty input stands for the empty object.
func ToolUseBlock(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// Message is one entry of a session: a user's text, an assistant's blocks,
// or the result of one tool call.
//
// Its JSON form is stable and documented (it is the message record of the
// JSONL session format):
//
//	{"role":"user","content":"What is 2+40?"}
//	{"role":"assistant","blocks":[{"type":"text","text":"Let me add."},
//	    {"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":40}}]}
//	{"role":"tool","content":"42","tool_use_id":"call_1"}
//	{"role":"tool","content":"unknown tool \"sub\"","tool_use_id":"call_2","is_error":true}
//
// Messages are values that are shared, not copied, once appended to a
// session: the runtime, the planner and the store all see the same Blocks
// and Input bytes. Do not modify a message after handing it over.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of a user message or the content of a tool
	// result. Assistant messages keep their text in Blocks.
	Content string `json:"content,omitempty"`
	// Blocks are the ordered blocks of an assistant message.
	Blocks []Block `json:"blocks,omitempty"`
	// ToolUseID links a tool result to the tool_use block it answers.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// IsError marks a tool result that reports a failure to the model.
	IsError bool `json:"is_error,omitempty"`
}

// NewUserMessage returns a user message carrying text.
func NewUserMessage(text string) Message { return Message{Role: RoleUser, Content: text} }

// NewAssistantMessage returns an assistant message made of blocks.
func NewAssistantMessage(blocks ...Block) Message {
	return Message{Role: RoleAssistant, Blocks: blocks}
}

// NewToolResult returns the result of the tool_use with the given id.
// isError marks a failure that the model should see as such.
func NewToolResult(toolUseID, content string, isError bool) Message {
	return Message{Role: RoleTool, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// Text returns the text of the message: the content of a user message or
// tool result, or the text blocks of an assistant message joined together.
func (m Message) Text() string {
	if m.Role != RoleAssistant {
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
	}
	return sb.String()
}

// String returns the block's text, or "[tool_use ID NAME INPUT]".
func (b Block) String() string {
	if b.Type == BlockToolUse {
		in := string(b.Input)
		if in == "" {
			in = "{}"
		}
		return fmt.Sprintf("[tool_use %s %s %s]", b.ID, b.Name, in)
	}
	return b.Text
}
