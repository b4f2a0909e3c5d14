package openai

import (
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// params maps a ModelRequest to the body of a Responses API call.
func (r *Responses) params(req *agentrt.ModelRequest) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{Model: r.model}
	msgs := req.Messages
	if r.chain != nil {
		params.Store = oai.Bool(true)
		// Chain on the last assistant message if this planner produced
		// it: the server holds everything up to it.
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role != agentrt.RoleAssistant {
				continue
			}
			if id, ok := r.chain.previous(msgs[i]); ok {
				params.PreviousResponseID = oai.String(id)
				msgs = msgs[i+1:]
			}
			break
		}
	} else {
		params.Store = oai.Bool(false)
	}
	params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	// The session's messages, then what only this call has (a hook's
	// trailing user message), after the last cache breakpoint.
	n := sessionEnd(msgs)
	input, err := inputItems(msgs[:n], r.chain == nil)
	if err != nil {
		return params, err
	}
	stable := len(input) - 1
	tail, err := inputItems(msgs[n:], r.chain == nil)
	if err != nil {
		return params, err
	}
	input = append(input, tail...)
	// The system prompt is the first input item, a developer message, as
	// OpenAI's own clients send it; a chained call finds it in the stored
	// conversation.
	if req.System != "" && params.PreviousResponseID.Value == "" {
		dev := responses.ResponseInputItemParamOfMessage(req.System, responses.EasyInputMessageRoleDeveloper)
		input = append(responses.ResponseInputParam{dev}, input...)
		stable++
	}
	if r.opts.ExplicitCache {
		explicitResponseBreakpoints(input, stable, r.opts.CacheTTL)
		params.PromptCacheOptions.Mode = "explicit"
		params.PromptCacheOptions.Ttl = r.opts.CacheTTL
	}
	params.Input.OfInputItemList = input

	for _, t := range req.Tools {
		s, strict := schemaFor(t.InputSchema, r.opts.DisableStrict)
		ps, err := parameters(s)
		if err != nil {
			return params, fmt.Errorf("openai: tool %q: %w", t.Name, err)
		}
		fn := responses.FunctionToolParam{Name: t.Name, Parameters: ps, Strict: oai.Bool(strict)}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	// The tools OpenAI runs, after the function tools, in a fixed order.
	params.Tools = append(params.Tools, r.opts.ServerTools...)
	if len(params.Tools) > 0 {
		switch tc := req.ToolChoice; tc.Mode {
		case "":
		case "auto", "none", "required":
			params.ToolChoice.OfToolChoiceMode = oai.Opt(responses.ToolChoiceOptions(tc.Mode))
		case "tool":
			if tc.Name == "" {
				return params, invalidRequest(`tool choice "tool" without a tool name`)
			}
			params.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: tc.Name}
		default:
			return params, invalidRequest(fmt.Sprintf("unknown tool choice mode %q", tc.Mode))
		}
	}
	if len(req.ResponseSchema) > 0 {
		if !json.Valid(req.ResponseSchema) {
			return params, fmt.Errorf("openai: ResponseSchema is not valid JSON")
		}
		s, strict := schemaFor(req.ResponseSchema, r.opts.DisableStrict)
		ps, err := parameters(s)
		if err != nil {
			return params, fmt.Errorf("openai: ResponseSchema: %w", err)
		}
		params.Text.Format.OfJSONSchema = &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "response", Schema: ps, Strict: oai.Bool(strict),
		}
	}
	if r.opts.Temperature != nil {
		params.Temperature = oai.Float(*r.opts.Temperature)
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = r.opts.MaxTokens
	}
	if maxTokens > 0 {
		params.MaxOutputTokens = oai.Int(int64(maxTokens))
	}
	if r.opts.ReasoningEffort != "" {
		params.Reasoning.Effort = shared.ReasoningEffort(r.opts.ReasoningEffort)
	}
	if r.opts.ReasoningSummary != "" {
		params.Reasoning.Summary = shared.ReasoningSummary(r.opts.ReasoningSummary)
	}
	if !r.opts.NoPromptCacheKey {
		if key := cacheKey(r.opts.PromptCacheKey, true, req.SessionID); key != "" {
			params.PromptCacheKey = oai.String(key)
		}
	}
	if len(r.opts.ExtraFields) > 0 {
		params.SetExtraFields(r.opts.ExtraFields)
	}
	return params, nil
}

// inputItems maps the session to input items: a user message per user
// message, for an assistant message its reasoning items (when reasoning
// is true), text and function calls in order, and a function_call_output
// per tool result.
//
// Reasoning goes back only when nothing is stored. A call with "store":
// true that cannot chain (a new process) sends the whole history, and
// there the API refuses a reasoning item whose following item comes
// without its id ("Item 'rs_…' of type 'reasoning' was provided without
// its required following item", recorded), as the session keeps no item
// ids of messages and calls.
func inputItems(msgs []agentrt.Message, reasoning bool) (responses.ResponseInputParam, error) {
	out := make(responses.ResponseInputParam, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case agentrt.RoleUser:
			content := responses.ResponseInputMessageContentListParam{}
			if m.Content != "" || len(m.Blocks) == 0 {
				content = append(content, responses.ResponseInputContentParamOfInputText(m.Content))
			}
			for j, b := range m.Blocks {
				part, err := inputContent(b)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("message %d, block %d: %v", i, j, err))
				}
				content = append(content, part)
			}
			out = append(out, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
		case agentrt.RoleAssistant:
			ids := reasoning && sendsReasoning(m)
			for _, b := range m.Blocks {
				switch b.Type {
				case agentrt.BlockText:
					if id := itemID(b); ids && id != "" {
						out = append(out, outputMessage(b.Text, id))
					} else {
						out = append(out, responses.ResponseInputItemParamOfMessage(b.Text, responses.EasyInputMessageRoleAssistant))
					}
				case agentrt.BlockToolUse:
					call := responses.ResponseInputItemParamOfFunctionCall(toolArguments(b.Input), callID(b.ID, responsesMaxCallID), b.Name)
					if id := itemID(b); ids && id != "" {
						call.OfFunctionCall.ID = oai.String(id)
					}
					out = append(out, call)
				case agentrt.BlockThinking:
					if ids && goesBack(b) {
						out = append(out, reasoningItem(b))
					}
				}
			}
		case agentrt.RoleTool:
			output, err := toolOutput(m)
			if err != nil {
				return nil, unsupported(fmt.Sprintf("message %d (tool result %s): %v", i, m.ToolUseID, err))
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: oai.String(callID(m.ToolUseID, responsesMaxCallID)),
				Output: output,
			}})
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// sendsReasoning reports whether m's reasoning items go back: it has
// some, and every one of its item-bearing thinking blocks can go back,
// followed by the text or tool_use block of the item that followed it
// (with that item's id). Its messages and calls then go back with their
// item ids: the API pairs a reasoning item with the item that followed it
// by id, and refuses a reasoning item without it ("provided without its
// required following item") and an item whose reasoning is missing
// ("provided without its required reasoning item"). Otherwise none of its
// reasoning items and no ids are sent.
func sendsReasoning(m agentrt.Message) bool {
	n := 0
	for i, b := range m.Blocks {
		if b.Type != agentrt.BlockThinking || b.Provider != responsesProvider || b.ID == "" {
			continue
		}
		if !goesBack(b) || i+1 == len(m.Blocks) || !answersReasoning(m.Blocks[i+1]) {
			return false
		}
		n++
	}
	return n > 0
}

// answersReasoning reports whether b can be the item that follows a
// reasoning item: a text or tool_use block with its item id.
func answersReasoning(b agentrt.Block) bool {
	return (b.Type == agentrt.BlockText || b.Type == agentrt.BlockToolUse) && itemID(b) != ""
}

// goesBack reports whether a thinking block goes back as a reasoning
// item: one of this API's, with its item id and encrypted content
// (without it, the API could not use the item).
func goesBack(b agentrt.Block) bool {
	return b.Provider == responsesProvider && b.ID != "" && len(b.Signature) > 0
}

// itemID returns the output item id kept on a text or tool_use block from
// this API (see withItemID), or "".
func itemID(b agentrt.Block) string {
	if b.Provider != responsesProvider {
		return ""
	}
	return string(b.Signature)
}

// outputMessage is an assistant text sent back as the output message item
// it came from, with its id, as the API returned it.
func outputMessage(text, id string) responses.ResponseInputItemUnionParam {
	content := []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
		Text:        text,
		Annotations: []responses.ResponseOutputTextAnnotationUnionParam{},
	}}}
	return responses.ResponseInputItemParamOfOutputMessage(content, id, responses.ResponseOutputMessageStatusCompleted)
}

// reasoningItem maps a thinking block that goes back (see goesBack) to
// its reasoning item: id, summary and encrypted content.
func reasoningItem(b agentrt.Block) responses.ResponseInputItemUnionParam {
	summary := []responses.ResponseReasoningItemSummaryParam{}
	if b.Text != "" {
		summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: b.Text})
	}
	item := responses.ResponseInputItemParamOfReasoning(b.ID, summary)
	item.OfReasoning.EncryptedContent = oai.String(string(b.Signature))
	return item
}

// inputContent maps a block of a user message: text as input_text, an
// image as input_image (a data: URL for bytes, or its URL), a PDF as
// input_file (file_data with its name, or file_url).
func inputContent(b agentrt.Block) (responses.ResponseInputContentUnionParam, error) {
	switch b.Type {
	case agentrt.BlockText:
		return responses.ResponseInputContentParamOfInputText(b.Text), nil
	case agentrt.BlockImage:
		url, err := imageURL(b)
		if err != nil {
			return responses.ResponseInputContentUnionParam{}, err
		}
		return responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
			Detail: responses.ResponseInputImageDetailAuto, ImageURL: oai.String(url),
		}}, nil
	case agentrt.BlockDocument:
		data, name, fileURL, err := inputFile(b)
		if err != nil {
			return responses.ResponseInputContentUnionParam{}, err
		}
		f := &responses.ResponseInputFileParam{}
		if fileURL != "" {
			f.FileURL = oai.String(fileURL)
		} else {
			f.FileData, f.Filename = oai.String(data), oai.String(name)
		}
		return responses.ResponseInputContentUnionParam{OfInputFile: f}, nil
	}
	return responses.ResponseInputContentUnionParam{}, fmt.Errorf("a %s block belongs in an assistant message", b.Type)
}

// toolOutput maps a tool result to a function_call_output's output: its
// text alone as a string, or, with images or documents, a list of
// input_text, input_image and input_file parts. An error result starts
// with "Error: ", as in Chat Completions (the API has no error flag).
func toolOutput(m agentrt.Message) (responses.ResponseInputItemFunctionCallOutputOutputUnionParam, error) {
	text := toolResultContent(m)
	var out responses.ResponseInputItemFunctionCallOutputOutputUnionParam
	if len(m.Blocks) == 0 {
		out.OfString = oai.String(text)
		return out, nil
	}
	list := responses.ResponseFunctionCallOutputItemListParam{}
	if text != "" {
		list = append(list, responses.ResponseFunctionCallOutputItemParamOfInputText(text))
	}
	for j, b := range m.Blocks {
		switch b.Type {
		case agentrt.BlockText:
			list = append(list, responses.ResponseFunctionCallOutputItemParamOfInputText(b.Text))
		case agentrt.BlockImage:
			url, err := imageURL(b)
			if err != nil {
				return out, fmt.Errorf("block %d: %w", j, err)
			}
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: oai.String(url), Detail: responses.ResponseInputImageContentDetailAuto,
			}})
		case agentrt.BlockDocument:
			data, name, fileURL, err := inputFile(b)
			if err != nil {
				return out, fmt.Errorf("block %d: %w", j, err)
			}
			f := &responses.ResponseInputFileContentParam{}
			if fileURL != "" {
				f.FileURL = oai.String(fileURL)
			} else {
				f.FileData, f.Filename = oai.String(data), oai.String(name)
			}
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: f})
		default:
			return out, fmt.Errorf("block %d: a %s block belongs in an assistant message", j, b.Type)
		}
	}
	out.OfResponseFunctionCallOutputItemArray = list
	return out, nil
}

// imageURL is the image_url of an image block: a data: URL of its bytes
// (JPEG, PNG, GIF or WebP), or its URL.
func imageURL(b agentrt.Block) (string, error) {
	if len(b.Data) == 0 && b.URL != "" {
		if !isURL(b.URL) {
			return "", notURL(b.URL)
		}
		return b.URL, nil
	}
	switch b.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return dataURL(b), nil
	}
	return "", fmt.Errorf("image of media type %q: the Responses API takes image/jpeg, image/png, image/gif and image/webp", b.MediaType)
}

// inputFile returns the file_data (a data: URL) and filename of a PDF
// document block, or its file_url.
func inputFile(b agentrt.Block) (data, name, fileURL string, err error) {
	if len(b.Data) == 0 && b.URL != "" {
		if !isURL(b.URL) {
			return "", "", "", notURL(b.URL)
		}
		return "", "", b.URL, nil
	}
	if b.MediaType != "application/pdf" {
		return "", "", "", fmt.Errorf("document of media type %q: the Responses API takes application/pdf files", b.MediaType)
	}
	name = b.Name
	if name == "" {
		name = "document.pdf"
	}
	return dataURL(b), name, "", nil
}
