package mcptool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How closing a stdio connection stops the server: its stdin is closed,
// and if it has not exited stopGrace later it is sent SIGTERM, and
// killGrace after that SIGKILL. Together they keep Close under 200 ms for
// a server that ignores its stdin (a well-behaved server exits within a
// few milliseconds of the end of its input).
const (
	stopGrace = 100 * time.Millisecond
	killGrace = 50 * time.Millisecond
	// reapWait bounds the wait for the process after SIGKILL, which only
	// an uninterruptible system call delays.
	reapWait = 2 * time.Second
	// stderrDrain is how long stopping waits for the end of the server's
	// stderr once the server is gone (a child that escaped the process
	// group may hold it open).
	stderrDrain = 50 * time.Millisecond
	// stderrTail is how many of the last bytes of a server's stderr are
	// kept for error messages.
	stderrTail = 4 << 10
)

// DefaultEnv returns the environment a stdio server started by [Stdio] or
// [Command] gets when its Cmd.Env is nil: the variables of the host's
// environment that a program needs to run and that carry no secret, as
// in the MCP TypeScript SDK. On Unix they are HOME, LOGNAME, PATH, SHELL,
// TERM, USER and the locale (LANG, LANGUAGE and LC_*); on Windows APPDATA,
// HOMEDRIVE, HOMEPATH, LOCALAPPDATA, PATH, PROCESSOR_ARCHITECTURE,
// PROGRAMFILES, SYSTEMDRIVE, SYSTEMROOT, TEMP, USERNAME and USERPROFILE.
// A value that starts with "()" (an exported shell function) is left out.
//
// To give a server more, such as the API key it needs, set Env in the
// Cmd that [Command] builds:
//
//	cmd.Env = append(mcptool.DefaultEnv(), "GITHUB_TOKEN="+token)
//
// and cmd.Env = os.Environ() to pass the whole environment.
func DefaultEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.HasPrefix(value, "()") {
			continue
		}
		if inheritedVar(runtime.GOOS, name) {
			env = append(env, kv)
		}
	}
	return env
}

// inheritedVar reports whether DefaultEnv keeps the variable name on goos.
func inheritedVar(goos, name string) bool {
	if goos == "windows" {
		switch strings.ToUpper(name) {
		case "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
			"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE":
			return true
		}
		return false
	}
	switch name {
	case "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// commandTransport runs a server process and talks MCP with it over its
// stdin and stdout. Unlike mcp.CommandTransport it keeps the tail of the
// server's stderr, stops the server within a fraction of a second, and
// kills its process group.
type commandTransport struct {
	newCmd func() *exec.Cmd
	// proc is the process started by Connect, for the Client's error
	// messages; nil until then.
	proc *process
}

func (t *commandTransport) Connect(context.Context) (mcp.Connection, error) {
	cmd := t.newCmd()
	if cmd == nil {
		return nil, errors.New("mcptool: Command: newCmd returned nil")
	}
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("mcptool: Command: newCmd must leave the Cmd's Stdin and Stdout unset")
	}
	if cmd.Env == nil {
		cmd.Env = DefaultEnv()
	}
	p, err := startProcess(cmd)
	if err != nil {
		return nil, err
	}
	t.proc = p
	conn, err := (&mcp.IOTransport{Reader: noClose{p.stdout}, Writer: p.stdin}).Connect(context.Background())
	if err != nil { // IOTransport.Connect does not fail; be safe anyway
		p.stop()
		return nil, err
	}
	return &procConn{Connection: conn, p: p, writing: make(chan struct{}, 1)}, nil
}

// noClose leaves the closing of the server's stdout to process.stop, once
// the server is gone, so that the server never writes into a closed pipe.
type noClose struct{ io.Reader }

func (noClose) Close() error { return nil }

// procConn stops the server process when the connection is closed, and
// when a write is cut short by its context.
type procConn struct {
	mcp.Connection
	p *process
	// writing holds a token while a message is written, so that a write
	// waiting for another one still ends with its context.
	writing chan struct{}
}

// Write writes msg to the server's stdin. A server that does not read its
// stdin blocks the write once the pipe is full (64 KiB on Linux); when ctx
// is done first, the write is cut short where the pipe supports deadlines
// (Unix). Half a message may then be written: the connection cannot be
// used again, so the server is stopped (its end closes the session, and
// the Client's next call starts a new one) and ctx's error returned.
func (c *procConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case c.writing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.writing }()
	if err := ctx.Err(); err != nil {
		return err
	}
	_ = c.p.stdin.SetWriteDeadline(time.Time{}) // a deadline left by the last write
	cut := context.AfterFunc(ctx, func() { _ = c.p.stdin.SetWriteDeadline(time.Unix(1, 0)) })
	err := c.Connection.Write(ctx, msg)
	if !cut() && errors.Is(err, os.ErrDeadlineExceeded) {
		c.p.cut.Store(true)
		go c.p.stop()
		return ctx.Err()
	}
	return err
}

// Close closes the connection and starts stopping the server, without
// waiting: the go-sdk calls Close while holding the connection's lock, in
// whichever goroutine happens to end the connection (a call that was just
// cancelled, say), which must not wait for a process. The Client waits
// where it means to (Client.Close, a broken connection's error). A
// shutdown mcptool caused is not an error: Close returns nil whatever the
// server's exit status.
func (c *procConn) Close() error {
	_ = c.Connection.Close()
	go c.p.stop()
	return nil
}

// process is a running stdio server.
type process struct {
	cmd    *exec.Cmd
	group  bool     // the server leads a process group of its own
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	stderr *os.File // our end of the server's stderr
	tail   tailBuffer

	exited     chan struct{} // closed when the process was reaped
	stderrDone chan struct{} // closed when the stderr copy ended

	// cut is set when a write to stdin was cut short: the connection is
	// unusable, and the server is being stopped.
	cut atomic.Bool

	stopOnce  sync.Once
	signalled bool // set by stop before it signals the server; read after exited
}

// startProcess starts cmd with pipes of its own for stdin, stdout and
// stderr. What the server writes to stderr is kept in p.tail and copied to
// the Cmd's Stderr, if set. The pipes are *os.File, so cmd.Wait copies
// nothing and returns as soon as the process exits.
func startProcess(cmd *exec.Cmd) (_ *process, err error) {
	var closers []*os.File
	defer func() {
		if err != nil {
			for _, f := range closers {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			closers = append(closers, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	userStderr := cmd.Stderr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &process{
		cmd: cmd, group: startInGroup(cmd),
		stdin: inW, stdout: outR, stderr: errR,
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The server has its ends of the pipes now; ours must go, or the
	// server's exit would not end our reads.
	inR.Close()
	outW.Close()
	errW.Close()
	go func() {
		_ = cmd.Wait() // the exit status is in cmd.ProcessState
		close(p.exited)
	}()
	go func() {
		defer close(p.stderrDone)
		var w io.Writer = &p.tail
		if userStderr != nil {
			w = io.MultiWriter(&p.tail, userStderr)
		}
		_, _ = io.Copy(w, errR)
	}()
	return p, nil
}

// stop closes the server's stdin and waits for it to exit, terminating it
// if it does not (see stopGrace), then kills what is left of its process
// group and closes the pipes. It returns once the process is reaped and
// its stderr read. It is idempotent, and concurrent calls all wait. A nil
// p (no process: not a stdio connection) is already stopped.
func (p *process) stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		if !p.waitExit(stopGrace) {
			p.signalled = true
			terminate(p.cmd.Process, p.group)
			if !p.waitExit(killGrace) {
				kill(p.cmd.Process, p.group)
				p.waitExit(reapWait)
			}
		}
		if p.group {
			killGroup(p.cmd.Process.Pid)
		}
		select {
		case <-p.stderrDone:
		case <-time.After(stderrDrain):
		}
		_ = p.stderr.Close() // ends the copy, where pipes are pollable (Unix)
		select {
		case <-p.stderrDone:
		case <-time.After(stderrDrain):
		}
		_ = p.stdout.Close()
	})
}

// waitExit waits up to d for the process to exit, and reports whether it
// did.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// writeCut reports whether a write to the server's stdin was cut short
// (see procConn.Write). A nil p reports false.
func (p *process) writeCut() bool { return p != nil && p.cut.Load() }

// report stops the server if it still runs and describes how it ended, for
// an error message: its exit status, unless mcptool stopped it, and the
// tail of its stderr. It returns "" when there is nothing to say.
func (p *process) report() string {
	if p == nil {
		return ""
	}
	p.stop()
	var parts []string
	select {
	case <-p.exited:
		if st := p.cmd.ProcessState; st != nil && !p.signalled && !st.Success() {
			parts = append(parts, "the server "+exitText(st))
		}
	default:
	}
	if s := p.tail.String(); s != "" {
		whose := "the server's"
		if len(parts) > 0 {
			whose = "its"
		}
		parts = append(parts, whose+" stderr ends with:\n"+s)
	}
	return strings.Join(parts, ", and ")
}

// exitText describes how a process ended: "exited with status 1", or
// "ended with signal: segmentation fault".
func exitText(st *os.ProcessState) string {
	if code := st.ExitCode(); code >= 0 {
		return fmt.Sprintf("exited with status %d", code)
	}
	return "ended with " + st.String()
}

// withReport returns err with the report of p appended to its text, after
// a semicolon; errors.Is and errors.As see err as before. The stderr tail
// comes last, as it may run over several lines.
func withReport(err error, p *process) error {
	r := p.report()
	if r == "" {
		return err
	}
	return &reportError{err: err, report: r}
}

type reportError struct {
	err    error
	report string
}

func (e *reportError) Error() string { return e.err.Error() + "; " + e.report }
func (e *reportError) Unwrap() error { return e.err }

// tailBuffer keeps the last stderrTail bytes written to it. It is safe
// for concurrent use.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	total int64
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if len(p) >= stderrTail {
		b.buf = append(b.buf[:0], p[len(p)-stderrTail:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - stderrTail; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// String returns the kept text, trimmed of surrounding space, with "..."
// in front when earlier output was dropped, and with control and format
// characters other than newline and tab (and invalid UTF-8) shown as Go
// escapes (termtext.Safe), so that printing an error never lets the
// server drive a terminal or hide text.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	buf := b.buf
	cut := b.total > int64(len(buf))
	b.mu.Unlock()
	if cut { // skip a rune cut in half at the start
		for i := 0; i < utf8.UTFMax && i < len(buf) && !utf8.RuneStart(buf[0]); i++ {
			buf = buf[1:]
		}
	}
	s := strings.TrimSpace(termtext.Safe(string(buf), '\n', '\t'))
	if cut && s != "" {
		s = "..." + s
	}
	return s
}
