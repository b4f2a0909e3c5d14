package mcptool

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors returned by a [Client] and by the tools it makes. Use errors.Is.
var (
	// ErrDisconnected: the connection to the server broke (the process
	// exited, the HTTP session was lost) before a call returned. The call's
	// outcome is unknown; the next call starts a new connection.
	ErrDisconnected = errors.New("mcptool: connection to the MCP server was lost")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("mcptool: client is closed")
	// ErrBadResult: the server answered a call with a result that cannot
	// be read (content of an unknown type, an image whose data is not
	// base64, a result that is not a JSON object). The connection is
	// kept: the server still answers.
	ErrBadResult = errors.New("mcptool: the MCP server sent a result that cannot be read")
)

// pingTimeout bounds the ping that tells an unreadable result from a
// broken connection.
const pingTimeout = 5 * time.Second

// A Dialer returns a new, unconnected [mcp.Transport] each time it is
// called. A [Client] calls it once in [Connect] and again each time it
// reconnects after the server went away, so it must not return a transport
// that was already used (an [exec.Cmd] runs only once).
//
// [Stdio], [Command] and [StreamableHTTP] make the usual ones; any function
// returning a fresh mcp.Transport will do, for example
//
//	func() mcp.Transport {
//		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: authClient}
//	}
type Dialer func() mcp.Transport

// Stdio returns a Dialer that runs command with args and talks MCP with it
// over its stdin and stdout. The server gets the few variables of the
// host's environment listed at [DefaultEnv], not the whole of it; use
// [Command] to give it more, to see its stderr as it goes, or to set its
// working directory.
//
//	mcptool.Stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", dir)
func Stdio(command string, args ...string) Dialer {
	return Command(func() *exec.Cmd { return exec.Command(command, args...) })
}

// Command returns a Dialer that starts the command built by newCmd (called
// once per connection) and talks MCP with it over its stdin and stdout.
// newCmd must return a new, unstarted *exec.Cmd whose Stdin and Stdout are
// unset; its Env, Stderr and Dir are the caller's to set:
//   - Env nil (as exec.Command leaves it) means [DefaultEnv], not the
//     host's whole environment: set it to pass a server what it needs,
//     such as append(mcptool.DefaultEnv(), "API_KEY="+key), or
//     os.Environ() to pass everything.
//   - Whatever the server writes to stderr is copied to Stderr, if set;
//     its last 4 KiB are kept in any case and added to the text of the
//     error when the server fails to start or goes away during a call.
//
// Unless the Cmd already has a SysProcAttr, on Unix the server is started
// in a process group of its own, which is signalled as a whole when the
// server is stopped and killed once the server is gone: launchers such as
// npx leave no orphan behind. See [Client.Close] for how a server is
// stopped.
func Command(newCmd func() *exec.Cmd) Dialer {
	if newCmd == nil {
		panic("mcptool: Command: nil newCmd")
	}
	return func() mcp.Transport { return &commandTransport{newCmd: newCmd} }
}

// StreamableHTTP returns a Dialer for an MCP server at url that speaks the
// Streamable HTTP transport, using http.DefaultClient. For another
// *http.Client (authentication, timeouts), write the Dialer yourself with
// an [mcp.StreamableClientTransport].
func StreamableHTTP(url string) Dialer {
	return func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }
}

// Options configures a [Client]. The zero value (or a nil *Options) is
// ready to use: no prefix, client name "agentrt".
type Options struct {
	// Prefix is prepended, as is, to the name of each of the server's tools
	// as the model sees it ("fs_" turns read_file into fs_read_file), so
	// that tools of several servers do not clash. The server is always
	// called with the tool's own name. Empty means no prefix.
	Prefix string

	// Name and Version identify this client to the server. Empty means
	// "agentrt" and the version of the agentrt module in the binary.
	Name, Version string

	// OnToolsChanged, when non-nil, is called after the server announced
	// (notifications/tools/list_changed) that its list of tools changed,
	// and after a reconnect. It runs in a goroutine of its own and may call
	// [Client.Tools] to get the new list. Calls may overlap.
	OnToolsChanged func()
}

// Client is a connection to one MCP server whose tools an agent can call.
// Create it with [Connect]; call [Client.Tools] to get the server's tools
// as agentrt Tools; call [Client.Close] when done, which stops a stdio
// server's process.
//
// The Client owns its connection: when the server goes away (the process
// exits, the network fails) the calls in progress fail with
// [ErrDisconnected], and the next call dials again with the Dialer given to
// Connect.
//
// A Client is safe for concurrent use, and its tools may be called
// concurrently.
type Client struct {
	dial   Dialer
	opts   Options
	client *mcp.Client

	// life is cancelled, with cause ErrClosed, by Close: it interrupts
	// every dial, listing and call in progress.
	life     context.Context
	shutdown context.CancelCauseFunc

	// changes counts tool-list change notifications and reconnects. It is
	// written by the SDK's reading goroutine, which must never block.
	changes atomic.Uint64

	mu     sync.Mutex // guards the fields below; held while dialing and listing
	sess   *session   // the live connection, or nil
	dials  int
	closed bool
	tools  []agentrt.Tool
	listed uint64 // the value of changes when tools was listed
}

// session is one connection to the server.
type session struct {
	cs *mcp.ClientSession
	// ctx is cancelled when the session is dropped (cause ErrDisconnected)
	// or the Client closed (cause ErrClosed): the calls in progress are
	// abandoned, so that closing the session does not wait for them.
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the connection is closed, by either side
	proc   *process      // the stdio server's process, or nil
}

func (s *session) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return s.ctx.Err() == nil
	}
}

// Connect connects to the MCP server that dial reaches, initializes the
// MCP session and lists the server's tools. opts may be nil.
//
// ctx bounds the connection and the listing only: the connection outlives
// it, until [Client.Close].
func Connect(ctx context.Context, dial Dialer, opts *Options) (*Client, error) {
	if dial == nil {
		panic("mcptool: Connect: nil Dialer")
	}
	c := &Client{dial: dial}
	if opts != nil {
		c.opts = *opts
	}
	c.life, c.shutdown = context.WithCancelCause(context.Background())
	name, version := c.opts.Name, c.opts.Version
	if name == "" {
		name = "agentrt"
	}
	if version == "" {
		version = moduleVersion()
	}
	c.client = mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, &mcp.ClientOptions{
		// No roots: a server that supports roots (server-filesystem) would
		// otherwise ask for them and replace the directories it was
		// started with by our empty list.
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.toolsChanged() },
	})
	if _, err := c.Tools(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// toolsChanged records a change of the server's tool list. It is called on
// the SDK's reading goroutine and must not block.
func (c *Client) toolsChanged() {
	c.changes.Add(1)
	if f := c.opts.OnToolsChanged; f != nil {
		go f()
	}
}

// Tools returns the server's tools as agentrt Tools, in the server's
// order, with names as described in the package documentation.
//
// The list is fetched from the server on the first call and again after
// the server announced a change or the Client reconnected; otherwise the
// last list is returned. An Agent indexes its tools once: to give a model
// the new tools, call Tools again and build a new Agent with them (see
// [Options.OnToolsChanged]). Tools from an older list keep working as long
// as the server still has them; if it removed one, calling it gives the
// model the server's error.
//
// The returned slice is the caller's; the tools in it are shared.
func (c *Client) Tools(ctx context.Context) ([]agentrt.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sessionLocked(ctx)
	if err != nil {
		return nil, err
	}
	gen := c.changes.Load()
	if c.tools != nil && c.listed == gen {
		return append([]agentrt.Tool(nil), c.tools...), nil
	}
	lctx, stop := merge(ctx, s.ctx)
	defer stop()
	var defs []*mcp.Tool
	for def, err := range s.cs.Tools(lctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcptool: listing tools: %w", c.failed(ctx, s, err, true))
		}
		defs = append(defs, def)
	}
	if err := checkDefs(defs); err != nil {
		return nil, fmt.Errorf("mcptool: the MCP server's tool list cannot be used: %w", err)
	}
	tools := make([]agentrt.Tool, 0, len(defs))
	for _, def := range defs {
		tools = append(tools, &Tool{client: c, def: def})
	}
	assignNames(tools, c.opts.Prefix)
	c.tools, c.listed = tools, gen
	return append([]agentrt.Tool(nil), tools...), nil
}

// Close closes the connection. Calls in progress are abandoned and fail
// with [ErrClosed], as do calls made after Close.
//
// For a stdio server, Close closes the server's stdin and waits for it to
// exit; a server still running 100 ms later is sent SIGTERM, and SIGKILL
// 50 ms after that (on Unix, to its whole process group, and what is left
// of the group is then killed; a stopped server gets SIGCONT with the
// SIGTERM). So Close returns within about 150 ms even when the server is
// stuck in a call or does not read its stdin, once the process is gone:
// it stops the server before it closes the session. A
// shutdown Close caused is not an error: Close returns nil whatever the
// server's exit status.
//
// Close is idempotent.
func (c *Client) Close() error {
	c.shutdown(ErrClosed) // first: it interrupts what holds c.mu
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.sess == nil {
		return nil
	}
	s := c.sess
	c.sess = nil
	s.proc.stop() // first: closing the session waits for a write the server may block
	return s.cs.Close()
}

// sessionLocked returns the live session, dialing a new one if there is
// none or the last one was closed by the server. c.mu is held.
func (c *Client) sessionLocked(ctx context.Context) (*session, error) {
	if c.closed {
		return nil, ErrClosed
	}
	if c.sess != nil {
		if c.sess.alive() {
			return c.sess, nil
		}
		c.dropLocked(c.sess)
	}
	t := c.dial()
	if t == nil {
		return nil, errors.New("mcptool: the Dialer returned a nil transport")
	}
	dctx, stop := merge(ctx, c.life)
	defer stop()
	cs, err := c.client.Connect(dctx, t, nil)
	var proc *process
	if ct, ok := t.(*commandTransport); ok {
		proc = ct.proc
	}
	if err != nil {
		if errors.Is(context.Cause(dctx), ErrClosed) {
			proc.stop() // for Close, which waits for c.mu, to return once it is gone
			return nil, ErrClosed
		}
		return nil, withReport(fmt.Errorf("mcptool: connecting to the MCP server: %w", err), proc)
	}
	s := &session{cs: cs, done: make(chan struct{}), proc: proc}
	s.ctx, s.cancel = context.WithCancelCause(c.life)
	go func() {
		_ = cs.Wait()
		close(s.done)
	}()
	c.dials++
	if c.dials > 1 {
		c.toolsChanged() // the new server process may have other tools
	}
	c.sess = s
	return s, nil
}

// dropLocked abandons the calls in progress on s, closes it, stops a
// stdio server (waiting for it to be reaped) and forgets it, if it is
// still the current session. c.mu is held.
func (c *Client) dropLocked(s *session) {
	if c.sess == s {
		c.sess = nil
	}
	s.cancel(ErrDisconnected)
	s.proc.stop()
	_ = s.cs.Close()
}

func (c *Client) session(ctx context.Context) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionLocked(ctx)
}

// failed classifies err, the failure of a request on s made with the
// caller's ctx, and drops s if the connection is broken. locked says
// whether c.mu is held.
func (c *Client) failed(ctx context.Context, s *session, err error, locked bool) error {
	switch {
	case ctx.Err() != nil:
		if s.proc.writeCut() { // the server is being stopped: the next call dials again
			s.cancel(ErrDisconnected)
		}
		return ctx.Err()
	case errors.Is(context.Cause(s.ctx), ErrClosed):
		return ErrClosed
	case s.ctx.Err() != nil: // dropped because of another request's failure
		return disconnected(err, s)
	case isServerError(err):
		// The server answered with an error (such as an unknown tool):
		// the connection is fine.
		return err
	}
	if !locked {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	c.dropLocked(s)
	if c.closed {
		return ErrClosed
	}
	return disconnected(err, s)
}

// disconnected returns the error of a request that failed because the
// connection of s broke (err is the go-sdk's error), with what the server
// process left behind: its exit status and the tail of its stderr.
func disconnected(err error, s *session) error {
	return withReport(fmt.Errorf("%w: %v; the next call reconnects", ErrDisconnected, err), s.proc)
}

// call calls the server's tool name with args (a JSON object).
func (c *Client) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	cctx, stop := merge(ctx, s.ctx)
	defer stop()
	res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err == nil {
		return res, nil
	}
	if ctx.Err() == nil && s.ctx.Err() == nil && !isServerError(err) && c.answers(ctx, s) {
		// The go-sdk could not decode the result, but the connection is
		// fine: dropping it would restart a stdio server for nothing.
		return nil, fmt.Errorf("calling %q: %w: %v", name, ErrBadResult, err)
	}
	err = c.failed(ctx, s, err, false)
	switch {
	case isServerError(err):
		return nil, fmt.Errorf("the MCP server refused the call of %q: %w", name, err)
	}
	return nil, fmt.Errorf("calling %q: %w", name, err)
}

// answers reports whether the server of s answers a ping, bounded by ctx
// and pingTimeout. A call that failed on a connection that broke leaves
// the connection shutting down, and the ping fails at once; a call whose
// result the go-sdk could not decode leaves it working.
func (c *Client) answers(ctx context.Context, s *session) bool {
	pctx, stop := merge(ctx, s.ctx)
	defer stop()
	pctx, cancel := context.WithTimeout(pctx, pingTimeout)
	defer cancel()
	return s.cs.Ping(pctx, nil) == nil
}

// merge returns a context that is done when ctx or other is done, with
// other's cause in the second case, and a function to release it.
func merge(ctx, other context.Context) (context.Context, context.CancelFunc) {
	m, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return m, func() {
		stop()
		cancel(context.Canceled)
	}
}

// isServerError reports whether err is an error response sent by the
// server, as opposed to a failure of the connection.
func isServerError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr)
}

// moduleVersion returns the version of the agentrt module linked into the
// binary, or "devel".
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	const path = "github.com/agentrt/agentrt"
	if bi.Main.Path == path && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path && d.Version != "" {
			return d.Version
		}
	}
	return "devel"
}
