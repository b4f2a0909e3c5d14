package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/responses"
)

// stream makes a streaming call, hands each text and refusal delta to
// onText, and returns the response that the stream's last event
// (response.completed, response.incomplete or response.failed) carries
// whole. Reading stops at that event: what a server sends after it
// (another response, as in recordings of several calls) is not this
// response's.
func (r *Responses) stream(ctx context.Context, params responses.ResponseNewParams, onText func(string), raw **http.Response, ropts []option.RequestOption) (*responses.Response, error) {
	st := r.client.Responses.NewStreaming(ctx, params, ropts...)
	defer st.Close()
	events := 0
	var deltas strings.Builder // the text handed to onText
	var final *responses.Response
	var items []responses.ResponseOutputItemUnion // from output_item.done, in case the last event has no output
	for final == nil && st.Next() {
		events++
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			if ev.Delta != "" {
				deltas.WriteString(ev.Delta)
				onText(ev.Delta)
			}
		case "response.output_item.done":
			items = append(items, ev.Item)
		case "response.completed", "response.incomplete", "response.failed":
			resp := ev.Response
			final = &resp
		case "error":
			info := errorInfo{Code: ev.Code, Message: ev.Message}
			return nil, &agentrt.ProviderError{Provider: providerName, Code: info.Code, Message: info.Message, Kind: failureKind(info)}
		}
	}
	if err := st.Err(); err != nil {
		if events == 0 {
			return nil, callError(ctx, err, *raw)
		}
		return nil, streamError(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if final == nil {
		if events == 0 {
			return nil, badResponse("the stream ended before its first event", nil)
		}
		return nil, badResponse("the stream ended before the response was complete", nil)
	}
	if len(final.Output) == 0 {
		final.Output = items
	}
	// The text handed to onText must be the answer's: deltas lost,
	// repeated or out of order would make the caller show one text and
	// keep another. A server that streams no text deltas at all gives the
	// text whole, at the end.
	switch text, shown := outputText(final.Output), deltas.String(); {
	case shown == text:
	case shown == "":
		onText(text)
	default:
		return nil, badResponse("the stream's text deltas are not the text of its response", nil)
	}
	return final, nil
}

// outputText is the text of the output's messages (output_text and
// refusal parts), in order: what response makes text blocks of.
func outputText(output []responses.ResponseOutputItemUnion) string {
	var sb strings.Builder
	for _, item := range output {
		if item.Type != "message" {
			continue
		}
		for _, c := range item.Content {
			switch c.Type {
			case "output_text":
				sb.WriteString(c.Text)
			case "refusal":
				sb.WriteString(c.Refusal)
			}
		}
	}
	return sb.String()
}

// responseTypes refuses a response whose fields that the adapter reads
// hold values of another type than the API's (see wrongType).
func responseTypes(resp *responses.Response) error {
	u := resp.Usage
	if err := wrongType("the response", field{"output", resp.JSON.Output}, field{"status", resp.JSON.Status}, field{"usage", resp.JSON.Usage},
		field{"model", resp.JSON.Model}, field{"incomplete_details", resp.JSON.IncompleteDetails},
		field{"input_tokens", u.JSON.InputTokens}, field{"output_tokens", u.JSON.OutputTokens},
		field{"input_tokens_details", u.JSON.InputTokensDetails}, field{"output_tokens_details", u.JSON.OutputTokensDetails},
		field{"cached_tokens", u.InputTokensDetails.JSON.CachedTokens}, field{"reasoning_tokens", u.OutputTokensDetails.JSON.ReasoningTokens}); err != nil {
		return err
	}
	if err := checkUsage(u.InputTokens, u.OutputTokens, u.InputTokensDetails.CachedTokens, u.InputTokensDetails.CacheWriteTokens, u.OutputTokensDetails.ReasoningTokens); err != nil {
		return err
	}
	for _, item := range resp.Output {
		if err := wrongType("an output item", field{"type", item.JSON.Type}, field{"id", item.JSON.ID}); err != nil {
			return err
		}
		switch item.Type {
		case "message":
			if err := wrongType("a message item", field{"content", item.JSON.Content}); err != nil {
				return err
			}
			// The SDK takes a scalar for this list (the field is shared
			// with other item types).
			if raw := strings.TrimSpace(item.JSON.Content.Raw()); raw != respjson.Omitted && raw != respjson.Null && !strings.HasPrefix(raw, "[") {
				return badResponse("a message item: content is not a list: "+truncate(raw, 100), nil)
			}
			for _, c := range item.Content {
				if err := wrongType("a message item's content", field{"type", c.JSON.Type}, field{"text", c.JSON.Text}, field{"refusal", c.JSON.Refusal}); err != nil {
					return err
				}
			}
		case "function_call":
			if err := wrongType("a function_call item", field{"call_id", item.JSON.CallID}, field{"name", item.JSON.Name}); err != nil {
				return err
			}
		case "reasoning":
			if err := wrongType("a reasoning item", field{"summary", item.JSON.Summary}, field{"content", item.JSON.Content},
				field{"encrypted_content", item.JSON.EncryptedContent}); err != nil {
				return err
			}
			for _, x := range item.Summary {
				if err := wrongType("a reasoning summary", field{"text", x.JSON.Text}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// response maps a complete response: reasoning items to thinking blocks
// (the summary, or else the reasoning_text, as text, the encrypted
// content as Signature), message
// text and refusals to text blocks, function calls to tool_use blocks
// (the calls of a "parallel" wrapper each to its own, see
// [parallelCalls]), in the order of the output. tools are the tools
// the request declared. Other items (server-side tool calls, MCP,
// custom tool calls, compaction) are left out, but an MCP approval
// request that nothing answered is an error (see [pendingApproval]).
func (r *Responses) response(resp *responses.Response, tools []agentrt.ToolSpec) (*agentrt.ModelResponse, error) {
	if resp == nil {
		return nil, badResponse("the reply is empty", nil)
	}
	if err := responseTypes(resp); err != nil {
		return nil, err
	}
	if resp.Status == responses.ResponseStatusFailed {
		info := errorInfo{Code: string(resp.Error.Code), Message: resp.Error.Message}
		return nil, &agentrt.ProviderError{Provider: providerName, Code: info.Code, Message: firstNonEmpty(info.Message, "the response failed"), Kind: failureKind(info)}
	}
	if err := pendingApproval(resp.Output); err != nil {
		return nil, err
	}
	var blocks []agentrt.Block
	calls, refused := 0, false
	// Item ids matter only beside reasoning items (see withItemID).
	reasoned := slices.ContainsFunc(resp.Output, func(o responses.ResponseOutputItemUnion) bool { return o.Type == "reasoning" })
	for i, item := range resp.Output {
		switch item.Type {
		case "reasoning":
			var texts []string
			for _, s := range item.Summary {
				texts = append(texts, s.Text)
			}
			if len(texts) == 0 {
				// Servers that show the reasoning itself (LM Studio,
				// vLLM, gpt-oss) send it as reasoning_text content.
				for _, c := range item.Content {
					if c.Type == "reasoning_text" {
						texts = append(texts, c.Text)
					}
				}
			}
			b := agentrt.Block{Type: agentrt.BlockThinking, ID: item.ID, Text: strings.Join(texts, "\n\n"), Provider: responsesProvider}
			if item.EncryptedContent != "" {
				b.Signature = []byte(item.EncryptedContent)
			}
			if !followedByAnswer(resp.Output, i) {
				// The API refuses a reasoning item sent back without the
				// item that followed it ("provided without its required
				// following item"), and a server tool's call is not sent
				// back: its text is kept, the item is not sent.
				if b.Text == "" {
					continue
				}
				b.ID, b.Signature = "", nil
			}
			blocks = append(blocks, b)
		case "message":
			var text strings.Builder
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
					refused = true
				}
			}
			if text.Len() > 0 {
				blocks = append(blocks, withItemID(agentrt.TextBlock(text.String()), item.ID, reasoned))
			}
		case "function_call":
			if item.Name == "" {
				return nil, badResponse(fmt.Sprintf("function call %q has no name", item.CallID), nil)
			}
			id := item.CallID
			if id == "" {
				id = newCallID()
			}
			args := item.Arguments.OfString
			if raw := strings.TrimSpace(item.JSON.Arguments.Raw()); strings.HasPrefix(raw, "{") {
				// The arguments as an object, not a string holding one
				// (some compatible servers): the object is the input.
				args = raw
			}
			if expanded := parallelCalls(id, item.Name, args, tools); expanded != nil {
				blocks = append(blocks, expanded...)
				calls += len(expanded)
				continue
			}
			blocks = append(blocks, withItemID(agentrt.ToolUseBlock(id, item.Name, toolInput(args)), item.ID, reasoned))
			calls++
		}
	}
	model := string(resp.Model)
	if model == "" {
		model = r.model
	}
	u := resp.Usage
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage: agentrt.Usage{
			InputTokens:      int(u.InputTokens),
			OutputTokens:     int(u.OutputTokens),
			ReasoningTokens:  int(u.OutputTokensDetails.ReasoningTokens),
			CacheReadTokens:  int(u.InputTokensDetails.CachedTokens),
			CacheWriteTokens: int(u.InputTokensDetails.CacheWriteTokens),
		},
		Finish: responsesFinish(resp, calls > 0, refused),
		Model:  model,
	}, nil
}

// withItemID keeps the id of the output item a text or tool_use block came
// from (msg_…, fc_…) as its Signature, when the output has reasoning
// items: the API pairs a reasoning item sent back with the item that
// followed it by that id (see inputItems).
func withItemID(b agentrt.Block, id string, reasoned bool) agentrt.Block {
	if id != "" && reasoned {
		b.Signature, b.Provider = []byte(id), responsesProvider
	}
	return b
}

// followedByAnswer reports whether the item after output[i] is one this
// adapter maps and sends back: a message or a function call.
func followedByAnswer(output []responses.ResponseOutputItemUnion, i int) bool {
	if i+1 >= len(output) {
		return false
	}
	t := output[i+1].Type
	return t == "message" || t == "function_call"
}

// pendingApproval refuses a response that waits for the approval of a
// remote MCP tool call (an mcp_approval_request item that no mcp_call of
// the same output answers): the runtime has no way to send the
// mcp_approval_response, and without an error the turn would end with no
// answer. An mcp tool with require_approval "never" asks for none.
func pendingApproval(output []responses.ResponseOutputItemUnion) error {
	for _, item := range output {
		if item.Type != "mcp_approval_request" {
			continue
		}
		answered := slices.ContainsFunc(output, func(o responses.ResponseOutputItemUnion) bool {
			return o.Type == "mcp_call" && o.ApprovalRequestID == item.ID
		})
		if !answered {
			return invalidRequest(fmt.Sprintf(`the response waits for the approval of a call of %q on MCP server %q (mcp_approval_request %s), which this adapter cannot give: declare the mcp tool with require_approval "never"`,
				item.Name, item.ServerLabel, item.ID))
		}
	}
	return nil
}

// responsesFinish maps a response's status: an incomplete response to
// FinishLength (max_output_tokens) or FinishContentFilter, a complete one
// to FinishToolUse when it calls tools, FinishContentFilter when it
// refused, and FinishStop otherwise.
func responsesFinish(resp *responses.Response, hasCalls, refused bool) agentrt.FinishReason {
	switch resp.Status {
	case responses.ResponseStatusIncomplete:
		switch resp.IncompleteDetails.Reason {
		case "max_output_tokens":
			return agentrt.FinishLength
		case "content_filter":
			return agentrt.FinishContentFilter
		}
		return agentrt.FinishOther
	case responses.ResponseStatusCompleted, "":
		switch {
		case hasCalls:
			return agentrt.FinishToolUse
		case refused:
			return agentrt.FinishContentFilter
		}
		return agentrt.FinishStop
	}
	return agentrt.FinishOther
}

// failureKind classifies the error of a failed response or an error
// event by its code.
func failureKind(info errorInfo) error {
	switch c := strings.ToLower(info.Code + " " + info.Type); {
	case isContextLength(info):
		return agentrt.ErrContextLength
	case strings.Contains(c, "rate_limit"), strings.Contains(c, "quota"):
		return agentrt.ErrRateLimited
	case strings.Contains(c, "server_error"), strings.Contains(c, "overloaded"), strings.Contains(c, "unavailable"):
		return agentrt.ErrOverloaded
	case strings.Contains(c, "invalid"):
		return agentrt.ErrInvalidRequest
	}
	return agentrt.ErrBadResponse
}

// parallelCalls expands the wrapper that OpenAI models sometimes emit as
// a function call of its own, named "parallel", when they call several
// tools at once:
//
//	{"tool_uses":[{"recipient_name":"functions.weather","parameters":{...}}, ...]}
//
// Each entry becomes a tool_use block named after its recipient, with the
// id "<id>_<i>". It returns nil when the call is not such a wrapper, or
// when the request declared a tool named "parallel".
func parallelCalls(id, name, args string, tools []agentrt.ToolSpec) []agentrt.Block {
	if name != "parallel" || slices.ContainsFunc(tools, func(t agentrt.ToolSpec) bool { return t.Name == name }) {
		return nil
	}
	var wrapper struct {
		ToolUses []struct {
			RecipientName string          `json:"recipient_name"`
			Parameters    json.RawMessage `json:"parameters"`
		} `json:"tool_uses"`
	}
	if json.Unmarshal([]byte(args), &wrapper) != nil || len(wrapper.ToolUses) == 0 {
		return nil
	}
	blocks := make([]agentrt.Block, 0, len(wrapper.ToolUses))
	for i, use := range wrapper.ToolUses {
		tool, ok := strings.CutPrefix(use.RecipientName, "functions.")
		var input bytes.Buffer
		if !ok || tool == "" || json.Compact(&input, use.Parameters) != nil || input.Bytes()[0] != '{' {
			return nil
		}
		blocks = append(blocks, agentrt.ToolUseBlock(fmt.Sprintf("%s_%d", id, i), tool, input.Bytes()))
	}
	return blocks
}
