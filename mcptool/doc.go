// Package mcptool connects agentrt to the Model Context Protocol, in both
// directions: an agent uses the tools of any MCP server, and a program
// serves its agentrt tools to any MCP client. It is built on the official
// Go SDK, github.com/modelcontextprotocol/go-sdk.
//
// # Using an MCP server's tools
//
// [Connect] starts (or dials) the server and lists its tools;
// [Client.Tools] returns them as agentrt Tools, ready for an Agent:
//
//	c, err := mcptool.Connect(ctx,
//		mcptool.Stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", dir),
//		&mcptool.Options{Prefix: "fs_"})
//	if err != nil { ... }
//	defer c.Close() // stops the server process
//	tools, err := c.Tools(ctx)
//	if err != nil { ... }
//	ag := &agentrt.Agent{
//		Tools:      tools,
//		Planner:    planner,
//		Permission: agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout)),
//	}
//
// [Stdio] and [Command] run a local server as a subprocess; [StreamableHTTP]
// reaches a remote one. A [Dialer] is any function returning a fresh
// [mcp.Transport], for other transports or settings.
//
// A subprocess does not inherit the host's environment, where API keys
// often live: it gets only the variables [DefaultEnv] lists (PATH, HOME,
// the locale and a few more), as with the MCP TypeScript SDK. Give a
// server what it needs in the Cmd that [Command] builds:
//
//	mcptool.Command(func() *exec.Cmd {
//		cmd := exec.Command("npx", "-y", "@modelcontextprotocol/server-github")
//		cmd.Env = append(mcptool.DefaultEnv(), "GITHUB_PERSONAL_ACCESS_TOKEN="+token)
//		return cmd
//	})
//
// Each server tool becomes a [*Tool]:
//   - Name: the server's name after [Options.Prefix], with every character
//     outside [a-zA-Z0-9_-] replaced by '_'; a name longer than 64 is cut to
//     55 characters plus '_' and 8 hex digits of a hash of the full name, as
//     is a name that clashes with an earlier one of the same list. The
//     server is always called with its own name.
//   - Description: the server's description (or title).
//   - InputSchema: the server's input schema, as is (it may carry "$schema"
//     and other keywords; provider adapters adapt schemas to their API). A
//     tool without one gets {"type":"object","properties":{}}, and an
//     object schema without a "type" gets "type": "object".
//   - ReadOnly: the readOnlyHint annotation, unless the tool is also
//     annotated destructiveHint. Without annotations a tool is a write
//     tool, so the Agent's permission checker decides about it (the
//     default, agentrt.AllowReadOnly, refuses it).
//
// A tool list agentrt cannot use is refused, not trimmed: when two tools
// have the same name, or a tool's input schema is not a JSON object or
// has a "type" other than "object", Connect and [Client.Tools] fail with an error naming
// each tool at fault. (The go-sdk itself leaves out of the list, with a
// log line, a null entry and a tool whose x-mcp-header annotations are
// invalid.)
//
// The model's input must be a JSON object (an object sent as a JSON string
// is unwrapped); the server validates it against its schema. A Tool is an
// [agentrt.ContentTool]: the result reaches the model as content
// ([ResultContent]): its text (text content joined by newlines, resource
// links and embedded text resources described with their text, structured
// content as JSON when there is no text) and, as parts, its images (image
// blocks), audio and embedded binary resources (document blocks). A caller
// of Execute, which returns text only, gets [ResultText], where images and
// audio are described ("[image image/png, 1234 bytes]"). A result the
// server flags isError is
// returned as a [*ResultError], which the runtime turns into an is_error
// tool result.
//
// # Failures and reconnection
//
// If the server exits or the connection breaks during a call, the call
// fails with an error wrapping [ErrDisconnected] (the model sees an
// is_error result; the run goes on), and the next call dials again: a
// stdio server is started anew. An error response from the server (an
// unknown tool) and a cancelled context leave the connection as it is; a
// cancelled or expired call returns at once, without waiting for the
// server. A result the go-sdk cannot read (content of an unknown type, an
// image whose data is not base64) fails the call with an error wrapping
// [ErrBadResult], which the model sees; the connection is kept once the
// server has answered a ping. A reply that never comes ends with the
// call's context (Agent.ToolTimeout). A reply cut short breaks the
// stream: the call fails with [ErrDisconnected], or, when the reader is
// left waiting for the rest, ends with its context, as may the next call,
// whose reply is read as that rest.
//
// When a stdio server fails to start or goes away, the error says how it
// exited and ends with the last 4 KiB it wrote to stderr, where servers
// explain themselves ("Error: None of the specified directories are
// accessible"), with control characters shown as escapes.
//
// # Tool list changes
//
// An Agent indexes its tools once, at its first Run. When the server sends
// notifications/tools/list_changed, or after a reconnect, the Client marks
// its list stale: the next [Client.Tools] lists the tools again, and
// [Options.OnToolsChanged] is called. To give the model the new tools,
// build a new Agent with the new list (an Agent is cheap; sessions live in
// its Store, so the conversation goes on):
//
//	tools, err := c.Tools(ctx) // before each Run, or in OnToolsChanged
//	ag = &agentrt.Agent{Tools: tools, Planner: planner, Store: store}
//
// Tools of an older list keep working while the server still has them;
// calling one the server removed gives the model the server's error.
//
// # Shutting down
//
// [Client.Close] closes the connection. A stdio server gets its stdin
// closed and 100 ms to exit (a well-behaved server takes a few), then
// SIGTERM, then SIGKILL 50 ms later: Close returns within about 150 ms
// even when the server is stuck in a call.
//
// A server that stops reading its stdin blocks a request bigger than the
// pipe (64 KiB on Linux). On Unix the call still ends with its context
// (its deadline, Agent.ToolTimeout): the write is cut short, the server,
// left with half a request, is stopped, and the next call starts a new
// one. On Unix the server runs in a
// process group of its own, which is signalled as a whole and killed once
// the server is gone, so a launcher such as npx leaves no orphan behind.
// A shutdown Close caused is not an error: it returns nil.
//
// # Serving agentrt tools over MCP
//
// [NewServer] returns a go-sdk [mcp.Server] that serves agentrt tools, with
// their schemas and read-only flags (as readOnlyHint), to Claude Desktop,
// an IDE or another agent. Over stdio:
//
//	srv := mcptool.NewServer(tools, &mcptool.ServerOptions{Name: "notes"})
//	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil { ... }
//
// Over Streamable HTTP:
//
//	http.Handle("/mcp", mcp.NewStreamableHTTPHandler(
//		func(*http.Request) *mcp.Server { return srv }, nil))
//
// An MCP client is often a model with nobody watching, so the server
// applies a permission checker to every call, as an Agent does:
// [ServerOptions.Permission], by default agentrt.AllowReadOnly(), which
// refuses write tools, telling the client so in words meant for it. Set it
// to agentrt.AllowAll() only for clients trusted with every tool.
package mcptool
