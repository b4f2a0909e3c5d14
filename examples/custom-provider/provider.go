package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentrt/agentrt"
)

// The in-house model server's API: POST {base}/generate.
type wireRequest struct {
	System   string        `json:"system"`
	Messages []wireMessage `json:"messages"`
	Tools    []wireTool    `json:"tools,omitempty"`
}

type wireMessage struct {
	Role      string     `json:"role"` // user, assistant, tool
	Text      string     `json:"text,omitempty"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
	CallID    string     `json:"call_id,omitempty"`
	IsError   bool       `json:"is_error,omitempty"`
}

type wireCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireResponse struct {
	Text      string     `json:"text"`
	ToolCalls []wireCall `json:"tool_calls"`
	Usage     struct {
		In  int `json:"in"`
		Out int `json:"out"`
	} `json:"usage"`
}

// InHouse is an agentrt.Planner for the in-house server: the whole
// adapter is this page.
type InHouse struct {
	BaseURL string
	Client  *http.Client
}

var _ agentrt.Planner = (*InHouse)(nil)

// Plan implements agentrt.Planner. It does not stream, so it ignores
// req.OnText; the runtime then shows the text when the message arrives.
func (p *InHouse) Plan(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
	wreq := wireRequest{System: req.System}
	for _, t := range req.Tools {
		wreq.Tools = append(wreq.Tools, wireTool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	for i, m := range req.Messages {
		// The server reads text only. An image or document is refused here,
		// before anything is sent, with ErrUnsupportedContent: the caller
		// learns which message the model could not have seen, instead of a
		// model answering without it. Thinking blocks are another vendor's
		// (this server produces none) and are left out, as every adapter
		// leaves out what another vendor produced.
		for _, b := range m.Blocks {
			if b.Type == agentrt.BlockImage || b.Type == agentrt.BlockDocument {
				return nil, &agentrt.ProviderError{Provider: "inhouse", Kind: agentrt.ErrUnsupportedContent,
					Message: fmt.Sprintf("message %d: the in-house server takes text only, not %s (%s)", i, b.Type, b.MediaType)}
			}
		}
		wm := wireMessage{Role: string(m.Role), Text: m.Text(), CallID: m.ToolUseID, IsError: m.IsError}
		for _, u := range m.ToolUses() {
			wm.ToolCalls = append(wm.ToolCalls, wireCall{ID: u.ID, Name: u.Name, Arguments: u.Input})
		}
		wreq.Messages = append(wreq.Messages, wm)
	}
	body, err := json.Marshal(wreq)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.BaseURL+"/generate", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &agentrt.ProviderError{Provider: "inhouse", Kind: agentrt.ErrOverloaded, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		kind := agentrt.ErrInvalidRequest
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			kind = agentrt.ErrRateLimited
		case resp.StatusCode >= 500:
			kind = agentrt.ErrOverloaded
		}
		return nil, &agentrt.ProviderError{Provider: "inhouse", StatusCode: resp.StatusCode, Kind: kind}
	}
	var wresp wireResponse
	if err := json.NewDecoder(resp.Body).Decode(&wresp); err != nil {
		return nil, &agentrt.ProviderError{Provider: "inhouse", StatusCode: resp.StatusCode, Kind: agentrt.ErrBadResponse, Err: fmt.Errorf("decode response: %w", err)}
	}
	var blocks []agentrt.Block
	if wresp.Text != "" {
		blocks = append(blocks, agentrt.TextBlock(wresp.Text))
	}
	finish := agentrt.FinishStop
	for _, c := range wresp.ToolCalls {
		blocks = append(blocks, agentrt.ToolUseBlock(c.ID, c.Name, c.Arguments))
		finish = agentrt.FinishToolUse
	}
	return &agentrt.ModelResponse{
		Message: agentrt.NewAssistantMessage(blocks...),
		Usage:   agentrt.Usage{InputTokens: wresp.Usage.In, OutputTokens: wresp.Usage.Out},
		Finish:  finish,
	}, nil
}
