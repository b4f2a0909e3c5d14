// Command coder is an interactive terminal coding assistant built on
// agentrt: an agent with five file tools confined to one directory, whose
// write tools ask you first, showing the diff of the change.
//
//	go run ./examples/coder                      # interactive, in the current directory
//	go run ./examples/coder -root ~/src/project  # another directory
//	go run ./examples/coder -p "summarize the README" -permission read-only
//	go run ./examples/coder -list                # past sessions
//	go run ./examples/coder -continue            # pick up the latest one
//
// It runs offline by default, with a scripted demo planner that calls no
// model. With OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or
// OLLAMA_HOST set (or -provider), it asks a real model instead. See
// README.md for the flags and the safety model.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/agentrt/agentrt"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "coder:", err)
		os.Exit(1)
	}
}

// run is the whole program: main only adds the exit status. It handles
// Ctrl-C itself (SIGINT cancels the current turn; a second one within two
// seconds quits) and reads the model's keys from the environment.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	return runWith(ctx, env{
		getenv:     os.Getenv,
		interrupts: sigs,
		now:        time.Now,
		tty:        isTerminal(stderr),
	}, args, stdin, stdout, stderr)
}

// env is what run takes from the process; tests supply their own.
type env struct {
	getenv     func(string) string
	interrupts <-chan os.Signal // Ctrl-C; nil means none arrive
	now        func() time.Time
	tty        bool // stderr is a terminal: show a status line and colors
}

// quitWindow is how soon a second Ctrl-C must follow the first to quit.
const quitWindow = 2 * time.Second

// instructions is the system prompt given to a real model.
const instructions = `You are a careful coding assistant working on the files of one directory, the root.
Look before you change anything: use list_dir, read_file and grep.
Change files with edit_file (one exact, unique replacement; prefer it for small changes) or write_file (the whole file).
All paths are relative to the root; paths outside it are refused.
The user approves each write and may refuse it: if a write is refused, do not try it again; say what you wanted to do and why.
Keep answers short.`

// cli is one invocation of the program.
type cli struct {
	env    env
	stdout io.Writer
	stderr io.Writer
	ws     *workspace
	store  *agentrt.JSONLStore
	agent  *agentrt.Agent
	id     string // the session

	lines   <-chan string // lines of stdin, read by one goroutine
	lastInt time.Time     // when the last Ctrl-C arrived

	create       bool // the session is new: create it before the first turn
	policyDenied bool // the policy refused a write tool (for the -p hint)

	statusMu sync.Mutex
	status   bool // a status line is shown on the terminal
}

func runWith(ctx context.Context, e env, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("coder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		root       = fs.String("root", ".", "the directory the agent may read and write; nothing outside it is reachable")
		task       = fs.String("p", "", "run this one task non-interactively, print the answer and exit")
		permission = fs.String("permission", "", "policy for write tools: ask, read-only or allow-all (default: ask when interactive, read-only with -p)")
		sessions   = fs.String("sessions", "", "directory of the JSONL session files (default $XDG_STATE_HOME/agentrt-coder or ~/.local/state/agentrt-coder)")
		resume     = fs.String("resume", "", "continue the session with this id (see -list)")
		cont       = fs.Bool("continue", false, "continue the most recently updated session")
		list       = fs.Bool("list", false, "list past sessions and exit")
		provider   = fs.String("provider", "auto", "auto, scripted, openai, anthropic, gemini or ollama; auto means $AGENTRT_PROVIDER, else the first provider whose key is set")
		model      = fs.String("model", "", "model name (default $AGENTRT_MODEL, else one per provider)")
	)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: coder [flags]\n\nAn interactive coding assistant confined to -root.\nOffline (%s)\nunless OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OLLAMA_HOST is set.\n\nflags:\n", demoLabel)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (a task goes after -p, in quotes)", fs.Args())
	}
	if *resume != "" && *cont {
		return errors.New("-resume and -continue cannot be used together")
	}
	if e.now == nil {
		e.now = time.Now
	}
	stdout, stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	c := &cli{env: e, stdout: stdout, stderr: stderr}

	dir := *sessions
	if dir == "" {
		var err error
		if dir, err = defaultSessionsDir(e.getenv); err != nil {
			return err
		}
	}
	store, err := agentrt.NewJSONLStore(dir, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	c.store = store
	if *list {
		return c.list(ctx)
	}

	// The session: a new one, or an existing one to continue.
	var history []agentrt.Message
	switch {
	case *cont:
		infos, err := store.List(ctx)
		if err != nil {
			return err
		}
		if len(infos) == 0 {
			return fmt.Errorf("-continue: no sessions in %s", dir)
		}
		*resume = infos[0].ID
		fallthrough
	case *resume != "":
		c.id = *resume
		if history, err = store.Load(ctx, c.id); err != nil {
			return err
		}
		if len(history) == 0 {
			return fmt.Errorf("no session %q in %s (see -list)", c.id, dir)
		}
	default:
		c.id = newSessionID(e.now())
	}

	if c.ws, err = openWorkspace(*root); err != nil {
		return err
	}
	defer c.ws.Close()
	if len(history) > 0 {
		if was := c.sessionRoot(ctx); was != "" && was != c.ws.dir {
			fmt.Fprintf(stderr, "note: session %s was started with -root %s; the tools now work in %s\n", c.id, was, c.ws.dir)
		}
	} else {
		c.create = true
	}
	planner, desc, err := choosePlanner(*provider, *model, e.getenv)
	if err != nil {
		return err
	}

	interactive := *task == ""
	if *permission == "" {
		*permission = "read-only"
		if interactive {
			*permission = "ask"
		}
	}
	var checker agentrt.PermissionChecker
	switch *permission {
	case "ask":
		checker = agentrt.AskOnWrite(c.ask)
	case "read-only":
		checker = agentrt.AllowReadOnly()
	case "allow-all":
		checker = agentrt.AllowAll()
	default:
		return fmt.Errorf("unknown -permission %q (want ask, read-only or allow-all)", *permission)
	}
	if interactive || *permission == "ask" {
		lines := make(chan string)
		stop := make(chan struct{})
		defer close(stop)
		go readLines(stdin, lines, stop)
		c.lines = lines
	}

	c.agent = &agentrt.Agent{
		Name:         "coder",
		Instructions: instructions + "\nThe root directory is " + c.ws.dir + ".",
		Tools:        c.ws.tools(),
		Planner:      planner,
		Permission:   checker,
		Store:        store,
		MaxTurns:     40,
		ToolTimeout:  time.Minute,
	}

	state := "new session"
	if len(history) > 0 {
		state = fmt.Sprintf("resumed session, %d messages", len(history))
	}
	fmt.Fprintf(stderr, "coder: root %s\n       session %s (%s)\n       planner: %s\n       write tools: %s\n", c.ws.dir, c.id, state, desc, *permission)
	if !interactive {
		err := c.turn(ctx, *task)
		if c.policyDenied {
			fmt.Fprintf(stderr, "note: write tools were refused by -permission %s; use -permission ask or allow-all to let the agent change files\n", *permission)
		}
		fmt.Fprintf(stderr, "session %s (continue it with -resume %s)\n", c.id, c.id)
		return err
	}
	return c.repl(ctx)
}

// repl reads tasks from stdin until end of input, /quit, or two Ctrl-C.
func (c *cli) repl(ctx context.Context) error {
	fmt.Fprintln(c.stderr, "Type a task and press Enter; /quit (or end of input) exits. Ctrl-C cancels a turn; twice quits.")
	for {
		fmt.Fprint(c.stderr, "> ")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.env.interrupts:
			if c.interrupted() {
				fmt.Fprintln(c.stderr, "\nbye")
				return nil
			}
			fmt.Fprintln(c.stderr, "\n(press Ctrl-C again within 2s to quit, or type /quit)")
		case line, ok := <-c.lines:
			if !ok {
				fmt.Fprintln(c.stderr)
				return nil
			}
			line = strings.TrimSpace(line)
			switch line {
			case "":
				continue
			case "/quit", "/exit":
				return nil
			}
			err := c.turn(ctx, line)
			var q errQuit
			if errors.As(err, &q) {
				fmt.Fprintln(c.stderr, "bye")
				return nil
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintln(c.stderr, "error:", err)
			}
		}
	}
}

// errQuit is returned by turn when the user pressed Ctrl-C twice.
type errQuit struct{}

func (errQuit) Error() string { return "quit" }

// interrupted records a Ctrl-C and reports whether it follows the previous
// one closely enough to quit.
func (c *cli) interrupted() bool {
	now := c.env.now()
	quit := !c.lastInt.IsZero() && now.Sub(c.lastInt) < quitWindow
	c.lastInt = now
	return quit
}

// turn runs the agent on one input and shows its events as they come: the
// reply streamed to stdout, tool calls on stderr. A Ctrl-C cancels it.
// It returns nil when the run completed, errQuit after a double Ctrl-C,
// and the run's error otherwise.
func (c *cli) turn(ctx context.Context, input string) error {
	if c.create {
		// The session's header records the root, so that a later -resume
		// can tell when it is run elsewhere.
		meta, _ := json.Marshal(sessionMeta{Program: "agentrt coder", Root: c.ws.dir})
		if err := c.store.Create(ctx, c.id, meta); err != nil {
			return err
		}
		c.create = false
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		done = make(chan struct{})
		quit bool
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-c.env.interrupts:
				if c.interrupted() {
					quit = true
				}
				cancel()
				c.clearStatus()
				fmt.Fprintln(c.stderr, "\n^C cancelling this turn (Ctrl-C again within 2s quits)")
			}
		}
	})

	var (
		calls    = map[string]agentrt.Block{}
		streamed bool   // this turn's text arrived as deltas
		last     string // the last text written to stdout
		end      agentrt.Done
		runErr   error
	)
	for ev, err := range c.agent.Run(ctx, c.id, input) {
		if err != nil {
			runErr = err
			break
		}
		switch e := ev.(type) {
		case agentrt.TextDelta:
			c.clearStatus()
			io.WriteString(c.stdout, e.Text)
			streamed, last = true, e.Text
		case agentrt.AssistantMessage:
			if t := e.Message.Text(); !streamed && t != "" {
				io.WriteString(c.stdout, t)
				last = t
			}
			if last != "" && !strings.HasSuffix(last, "\n") {
				io.WriteString(c.stdout, "\n")
			}
			streamed, last = false, ""
		case agentrt.ToolCall:
			calls[e.ToolUse.ID] = e.ToolUse
			c.showStatus("running: " + describeCall(e.ToolUse))
		case agentrt.PermissionDecision:
			if !e.Decision.Allow && e.Decision.Source == "policy" {
				c.policyDenied = true
			}
			if e.Decision.Source == "remembered" {
				c.clearStatus()
				fmt.Fprintf(c.stderr, "  (%s allowed: you answered \"always\" in this session)\n", e.Tool)
			}
		case agentrt.ToolResult:
			c.clearStatus()
			desc := describeCall(calls[e.Message.ToolUseID])
			if e.Message.IsError {
				fmt.Fprintf(c.stderr, "  ✗ %s: %s\n", desc, firstLine(e.Message.Content, 200))
			} else {
				fmt.Fprintf(c.stderr, "  ✓ %s\n", desc)
			}
		case agentrt.Done:
			end = e
		}
	}
	close(done)
	wg.Wait()
	c.clearStatus()
	switch {
	case quit:
		return errQuit{}
	case end.Reason == agentrt.StopCancelled:
		fmt.Fprintln(c.stderr, "(turn cancelled; the session is saved and valid)")
		if runErr != nil {
			return runErr
		}
		return end.Err()
	case runErr != nil:
		return runErr
	case end.Reason != agentrt.StopComplete:
		return end.Err()
	}
	return nil
}

// ask is the AskFunc of the "ask" policy: it shows the change a write
// tool call would make as a unified diff and asks y / n / always on the
// terminal. Ctrl-C (a cancelled ctx) and end of input mean no.
func (c *cli) ask(ctx context.Context, req *agentrt.PermissionRequest) (agentrt.Answer, error) {
	c.clearStatus()
	w := c.stderr
	name, before, after, created, err := c.ws.preview(req)
	fmt.Fprintf(w, "\n%s wants to change %s:\n", req.Tool.Name, name)
	switch d := unifiedDiff(name, before, after, created); {
	case err != nil:
		fmt.Fprintf(w, "(cannot show the change: %v)\n", err)
	case d == "":
		fmt.Fprintln(w, "(no change to the file's content)")
	default:
		c.printDiff(d)
	}
	for {
		fmt.Fprintf(w, "Apply? [y]es / [n]o / [a]lways allow %s in this session: ", req.Tool.Name)
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return agentrt.AnswerNo, context.Cause(ctx)
		case line, ok := <-c.lines:
			if !ok {
				fmt.Fprintln(w, "\n(end of input: no)")
				return agentrt.AnswerNo, nil
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return agentrt.AnswerYes, nil
			case "n", "no":
				return agentrt.AnswerNo, nil
			case "a", "always":
				return agentrt.AnswerAlways, nil
			}
			fmt.Fprintln(w, "Please answer y, n or a.")
		}
	}
}

// printDiff writes a diff to stderr, in color on a terminal.
func (c *cli) printDiff(d string) {
	if !c.env.tty {
		io.WriteString(c.stderr, d)
		return
	}
	var sb strings.Builder
	for _, l := range splitLines(d) {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			sb.WriteString("\x1b[1m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(l, "+"):
			sb.WriteString("\x1b[32m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(l, "-"):
			sb.WriteString("\x1b[31m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(l, "@@"):
			sb.WriteString("\x1b[36m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n")
		default:
			sb.WriteString(l)
		}
	}
	io.WriteString(c.stderr, sb.String())
}

// showStatus shows a one-line status on a terminal; elsewhere it does
// nothing (the result line follows anyway).
func (c *cli) showStatus(s string) {
	if !c.env.tty {
		return
	}
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	fmt.Fprintf(c.stderr, "\r\x1b[K\x1b[2m%s\x1b[0m", s)
	c.status = true
}

// clearStatus erases the status line, if one is shown.
func (c *cli) clearStatus() {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	if c.status {
		io.WriteString(c.stderr, "\r\x1b[K")
		c.status = false
	}
}

// sessionMeta is the metadata of the sessions coder creates, kept in the
// JSONL file's header.
type sessionMeta struct {
	Program string `json:"program"`
	Root    string `json:"root"`
}

// sessionRoot returns the root directory recorded in the session's
// header, or "" if there is none.
func (c *cli) sessionRoot(ctx context.Context) string {
	for r, err := range c.store.Records(ctx, c.id) {
		if err != nil || r.Header == nil {
			return ""
		}
		var m sessionMeta
		if json.Unmarshal(r.Header.Metadata, &m) != nil {
			return ""
		}
		return m.Root
	}
	return ""
}

// list prints the stored sessions, most recent first.
func (c *cli) list(ctx context.Context) error {
	infos, err := c.store.List(ctx)
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		fmt.Fprintf(c.stderr, "no sessions in %s\n", c.store.Dir())
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tTITLE")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.ID, in.Updated.Local().Format("2006-01-02 15:04"), in.Messages, in.Title)
	}
	return tw.Flush()
}

// describeCall names a tool call for the status line: the tool and the
// path (and pattern) it works on, not the whole input.
func describeCall(b agentrt.Block) string {
	if b.Name == "" {
		return "tool"
	}
	var in struct {
		Path    string `json:"path"`
		Pattern string `json:"pattern"`
	}
	_ = json.Unmarshal(b.Input, &in)
	s := b.Name
	if in.Pattern != "" {
		s += fmt.Sprintf(" %q", in.Pattern)
	}
	if in.Path != "" {
		s += " " + in.Path
	}
	return s
}

// firstLine returns the first line of s, cut to n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// readLines sends the lines of r to lines, and closes lines at end of
// input. It stops early when stop is closed; a Read in progress cannot be
// interrupted, so the goroutine may outlive run until stdin is closed.
func readLines(r io.Reader, lines chan<- string, stop <-chan struct{}) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		select {
		case lines <- sc.Text():
		case <-stop:
			return
		}
	}
}

// defaultSessionsDir is $XDG_STATE_HOME/agentrt-coder, or
// ~/.local/state/agentrt-coder.
func defaultSessionsDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "agentrt-coder"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "agentrt-coder"), nil
	}
	return "", errors.New("cannot find a directory for sessions: set -sessions, XDG_STATE_HOME or HOME")
}

// newSessionID returns a new session id that sorts by creation time, such
// as "20261129-231205-3f9a1c".
func newSessionID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// lockedWriter serializes writes: the event loop, the permission prompt
// and the Ctrl-C handler all write to the terminal.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
