package mcptool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerOptions configures [NewServer]. The zero value (or a nil
// *ServerOptions) serves read-only tools only, as "agentrt".
type ServerOptions struct {
	// Name and Version identify the server to its clients. Empty means
	// "agentrt" and the version of the agentrt module in the binary.
	Name, Version string

	// Instructions, if set, are sent to clients when they connect; many
	// show them to their model.
	Instructions string

	// Permission decides whether each call may run, after its input was
	// decoded and validated, exactly as for an Agent. nil means
	// agentrt.AllowReadOnly(): write tools are listed but every call of
	// one is refused, because an MCP client may be a model with no human
	// watching. Set agentrt.AllowAll() when the client is trusted with
	// every tool, or a checker of your own. The ToolCall has the
	// MCP session's id as SessionID (empty over stdio) and no ToolUseID.
	// The reason of a denial is sent to the client as the call's isError
	// result; the default checker's reason is worded for the client.
	Permission agentrt.PermissionChecker
}

// NewServer returns an MCP server that serves tools: each is listed with
// its name, description, input schema and readOnlyHint (a tool that is not
// read-only is listed as a destructive write tool, the MCP default), and
// each call is decoded and validated by the tool's Decode, checked by
// opts.Permission, and run by its Execute within the tool's Timeout.
// Invalid input, a denial, an error from Execute and a panic in the tool
// all become a result with isError set and the reason as text, which the
// client's model sees; the server keeps running.
//
// Run it over stdio, as a subprocess of Claude Desktop, an IDE or another
// agent:
//
//	err := mcptool.NewServer(tools, nil).Run(ctx, &mcp.StdioTransport{})
//
// or over Streamable HTTP:
//
//	srv := mcptool.NewServer(tools, nil)
//	http.Handle("/mcp", mcp.NewStreamableHTTPHandler(
//		func(*http.Request) *mcp.Server { return srv }, nil))
//
// The returned server is the go-sdk's own: more tools, prompts and
// resources can be added to it. NewServer panics if two tools have the
// same name or a tool's schema is not a JSON object schema, as these are
// programming errors.
func NewServer(tools []agentrt.Tool, opts *ServerOptions) *mcp.Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "agentrt"
	}
	if o.Version == "" {
		o.Version = moduleVersion()
	}
	perm := o.Permission
	if perm == nil {
		perm = agentrt.AllowReadOnly()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version},
		&mcp.ServerOptions{
			Instructions: o.Instructions,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		})
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			panic("mcptool: NewServer: nil tool")
		}
		spec := t.Spec()
		if seen[spec.Name] {
			panic(fmt.Sprintf("mcptool: NewServer: two tools named %q", spec.Name))
		}
		seen[spec.Name] = true
		schema := spec.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		def := &mcp.Tool{
			Name:        spec.Name,
			Description: spec.Description,
			InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: spec.ReadOnly},
		}
		srv.AddTool(def, serveTool(t, spec, perm))
	}
	return srv
}

// serveTool returns the MCP handler of one agentrt tool.
func serveTool(t agentrt.Tool, spec agentrt.ToolSpec, perm agentrt.PermissionChecker) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.Arguments
		in, err := safeDecode(t, raw)
		if err != nil {
			return errorResult(fmt.Sprintf("invalid input for %q: %v", spec.Name, err)), nil
		}
		preq := &agentrt.ToolCall{Tool: spec, Input: in, RawInput: raw}
		if req.Session != nil {
			preq.SessionID = req.Session.ID()
		}
		d, err := perm.Check(ctx, preq)
		switch {
		case err != nil:
			return errorResult(fmt.Sprintf("permission denied: %v", err)), nil
		case !d.Allow:
			return errorResult(denialForClient(ctx, preq, d.Reason)), nil
		}
		if d.Input != nil {
			if rawIn, ok := d.Input.(json.RawMessage); ok {
				if in, err = safeDecode(t, rawIn); err != nil {
					return errorResult(fmt.Sprintf("invalid input for %q (as rewritten by the permission checker): %v", spec.Name, err)), nil
				}
			} else {
				in = d.Input
			}
		}
		if spec.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
			defer cancel()
		}
		out, err := safeExecute(ctx, t, in)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded && spec.Timeout > 0 {
				return errorResult(fmt.Sprintf("tool %q timed out after %v: %v", spec.Name, spec.Timeout, err)), nil
			}
			return errorResult(err.Error()), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	}
}

// denialForClient returns the reason of a denial as a remote client should
// read it. agentrt.AllowReadOnly words its denial for the model of an
// agent and the programmer reading its session ("this agent", "the
// program"); served to an MCP client, whether by the default checker or
// by one that delegates to it, that denial is reworded for the client.
func denialForClient(ctx context.Context, req *agentrt.ToolCall, reason string) string {
	switch {
	case reason == "":
		return fmt.Sprintf("permission denied: the call of %q was refused", req.Tool.Name)
	case !req.Tool.ReadOnly:
		if d, err := agentrt.AllowReadOnly().Check(ctx, req); err == nil && !d.Allow && d.Reason == reason {
			return fmt.Sprintf("permission denied: %q is a write tool, and this MCP server lets its clients run read-only tools only", req.Tool.Name)
		}
	}
	return reason
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func safeDecode(t agentrt.Tool, raw json.RawMessage) (in any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while decoding: %v", r)
		}
	}()
	return t.Decode(raw)
}

func safeExecute(ctx context.Context, t agentrt.Tool, in any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tool %q panicked: %v", t.Spec().Name, r)
		}
	}()
	return t.Execute(ctx, in)
}
