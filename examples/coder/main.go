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
// OLLAMA_HOST set (or -provider), it asks a real model instead.
//
// On a terminal it has a line editor (history, multi-line input), a
// thinking indicator, and two rules that keep the person in control:
// nothing from the model or a file is interpreted by the terminal (control
// characters show as escapes, see visible), and a question is answered
// only by a line typed after it appeared (see console). See README.md for
// the flags and the safety model.
package main

import (
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

	"golang.org/x/term"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/jsonl"
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
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	return runWith(ctx, env{
		getenv:     os.Getenv,
		interrupts: sigs,
		now:        time.Now,
		tty:        isTerminal(stderr),
		stdinTerm:  isTerminal(stdin) && isTerminal(stderr),
		stdoutTerm: isTerminal(stdout),
		width:      func() int { return termWidth(stderr) },
	}, args, stdin, stdout, stderr)
}

// env is what run takes from the process; tests supply their own.
type env struct {
	getenv func(string) string
	// interrupts receives Ctrl-C: the signal, or the key read from a raw
	// terminal (which the console sends here). Nil means none arrive.
	interrupts chan os.Signal
	now        func() time.Time
	tty        bool // stderr is a terminal: show a status line and colors
	// stdinTerm: stdin and stderr are a terminal, so input goes through the
	// line editor (the terminal is in raw mode while the program runs).
	stdinTerm  bool
	stdoutTerm bool       // stdout is that terminal too
	width      func() int // the terminal's width now, 0 if unknown; nil: 80
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
	con    *console

	lastInt time.Time // when the last Ctrl-C arrived

	create       bool // the session is new: create it before the first turn
	policyDenied bool // the policy refused a write tool (for the -p hint)
	rawStdout    bool // stdout is not a terminal and the program runs -p: the reply is written as is

	statusMu sync.Mutex
	status   bool // a status line is shown on the terminal

	ind indicator
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
	c := &cli{env: e}
	interactive := *task == ""
	c.rawStdout = !interactive && !e.stdoutTerm

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
		c.stdout, c.stderr = stdout, stderr
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
	planner, desc, err := choosePlanner(*provider, *model, e.getenv)
	if err != nil {
		return err
	}

	if *permission == "" {
		*permission = "read-only"
		if interactive {
			*permission = "ask"
		}
	}
	var checker agentrt.PermissionChecker
	switch *permission {
	case "ask":
		// Calls the tool would refuse are refused before anyone is asked.
		checker = c.precheck(agentrt.AskOnWrite(c.ask))
	case "read-only":
		checker = agentrt.AllowReadOnly()
	case "allow-all":
		checker = agentrt.AllowAll()
	default:
		return fmt.Errorf("unknown -permission %q (want ask, read-only or allow-all)", *permission)
	}

	// The console owns stdin. On a terminal everything shown goes through
	// its line editor.
	if interactive || *permission == "ask" {
		if e.stdinTerm {
			con, err := newTerminalConsole(stdin, stderr, e.interrupts, e.width)
			if err != nil {
				return err
			}
			stderr = con.out
			if e.stdoutTerm {
				stdout = con.out
			}
			c.con = con
		} else {
			c.con = newPlainConsole(stdin, stderr)
		}
		defer c.con.close()
	}
	c.stdout, c.stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}

	if len(history) > 0 {
		if was := c.sessionRoot(ctx); was != "" && was != c.ws.dir {
			fmt.Fprintf(c.stderr, "note: session %s was started with -root %s; the tools now work in %s\n", c.id, oneLine(was), oneLine(c.ws.dir))
		}
	} else {
		c.create = true
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
	fmt.Fprintf(c.stderr, "coder: root %s\n       session %s (%s)\n       planner: %s\n       write tools: %s\n", oneLine(c.ws.dir), c.id, state, oneLine(desc), *permission)
	if len(history) > 0 {
		c.recap(ctx)
	}
	if !interactive {
		err := c.turn(ctx, *task)
		if c.policyDenied {
			fmt.Fprintf(c.stderr, "note: write tools were refused by -permission %s; use -permission ask or allow-all to let the agent change files\n", *permission)
		}
		fmt.Fprintf(c.stderr, "session %s (continue it with -resume %s)\n", c.id, c.id)
		return err
	}
	return c.repl(ctx)
}

// help is what /help prints.
const help = `Type a task and press Enter. The model reads the files under the root
directory; every change it wants to make is shown as a diff and waits for
your answer: y (yes, this once), n (no: the model is told you refused) or
a (always allow that tool in this session, also when it is resumed).

Commands:
  /help          this text
  /quit, /exit   leave (so does Ctrl-D on an empty line, or end of input)

Input:
  line\          a line ending with a backslash continues on the next line
  paste          a pasted block of lines is one input
  Up, Down       earlier tasks (history)
  Left, Right, Home, End, Ctrl-A, Ctrl-E, Alt-Left, Alt-Right   move
  Ctrl-U, Ctrl-K, Ctrl-W, Backspace   delete

While the model works:
  Ctrl-C         cancels the turn (the session stays valid); twice within 2s quits
  typing         what you type is kept for the next prompt: it never answers
                 a question that was not on the screen when you typed it

Control characters from the model or from files (escape sequences,
carriage returns, bidi overrides) are shown as escapes such as \x1b, \r or
\u202e, never interpreted by the terminal.
`

// repl reads tasks until end of input, /quit, or two Ctrl-C.
func (c *cli) repl(ctx context.Context) error {
	fmt.Fprintln(c.stderr, "Type a task and press Enter; /help for help, /quit (or end of input) exits. Ctrl-C cancels a turn; twice quits.")
	for {
		task, err := c.readTask(ctx)
		switch {
		case errors.Is(err, errInterrupted):
			if c.interrupted() {
				fmt.Fprintln(c.stderr, "\nbye")
				return nil
			}
			fmt.Fprintln(c.stderr, "\n(press Ctrl-C again within 2s to quit, or type /quit)")
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(c.stderr)
			return nil
		case err != nil:
			return err
		}
		task = strings.TrimSpace(task)
		switch {
		case task == "":
			continue
		case task == "/quit", task == "/exit":
			return nil
		case task == "/help", task == "/?":
			io.WriteString(c.stderr, help)
			continue
		case strings.HasPrefix(task, "/") && !strings.ContainsAny(task[1:], " \n/"):
			fmt.Fprintf(c.stderr, "unknown command %s (/help lists them)\n", oneLine(task))
			continue
		}
		err = c.turn(ctx, task)
		var q errQuit
		if errors.As(err, &q) {
			fmt.Fprintln(c.stderr, "bye")
			return nil
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(c.stderr, "error:", oneLine(err.Error()))
		}
	}
}

// readTask reads one task at the "> " prompt: a line, or several when
// each but the last ends with a backslash.
func (c *cli) readTask(ctx context.Context) (string, error) {
	var parts []string
	prompt := "> "
	for {
		line, err := c.con.ask(ctx, c.env.interrupts, prompt, promptTask)
		if err != nil {
			return "", err
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			parts = append(parts, s)
			prompt = "… "
			continue
		}
		return strings.Join(append(parts, line), "\n"), nil
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

// recordInterrupted is the kind of the session record left by a turn
// cancelled with Ctrl-C. Its data is an interruption.
const recordInterrupted = "coder.interrupted"

// interruption is the body of a recordInterrupted record.
type interruption struct {
	// Partial is the part of the reply that was streamed to the screen
	// and never completed (so it is not in the session's messages).
	Partial string `json:"partial,omitempty"`
	// During is what was running: "thinking", "asking" or a tool call.
	During string `json:"during,omitempty"`
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
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ind.start(c.env.now())
	c.setBusy()
	var (
		done = make(chan struct{})
		quit bool
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		var tick <-chan time.Time
		if c.con != nil && c.con.term != nil {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-done:
				return
			case <-tick:
				c.setBusy()
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
		streamed bool            // this turn's text arrived as deltas
		last     string          // the last text written to stdout
		partial  strings.Builder // the text streamed since the last assistant message
		sv       streamVisible
		end      agentrt.Done
		runErr   error
	)
	lineMode := c.con != nil && c.con.term != nil && c.env.stdoutTerm
	var pend string // on the terminal, the line of the reply being written
	show := func(s string) string {
		if c.rawStdout {
			return s
		}
		return sv.next(s)
	}
	for ev, err := range c.agent.Run(ctx, c.id, input) {
		if err != nil {
			runErr = err
			break
		}
		switch e := ev.(type) {
		case agentrt.TextDelta:
			c.clearStatus()
			partial.WriteString(e.Text)
			streamed, last = true, e.Text
			if !lineMode {
				io.WriteString(c.stdout, show(e.Text))
				break
			}
			// On the terminal, complete lines are written out and the
			// line being written is part of the indicator (the prompt),
			// so that what is typed meanwhile follows it.
			pend += show(e.Text)
			if i := strings.LastIndexByte(pend, '\n'); i >= 0 {
				io.WriteString(c.stdout, pend[:i+1])
				pend = pend[i+1:]
			}
			c.ind.set(func(in *indicator) { in.partial = pend })
			c.setBusy()
		case agentrt.AssistantMessage:
			if t := e.Message.Text(); !streamed && t != "" {
				if lineMode {
					pend += show(t)
				} else {
					io.WriteString(c.stdout, show(t))
				}
				last = t
			}
			if !c.rawStdout {
				if lineMode {
					pend += sv.flush()
				} else {
					io.WriteString(c.stdout, sv.flush())
				}
			}
			if lineMode {
				if pend != "" {
					io.WriteString(c.stdout, pend+"\n")
				}
				pend = ""
			} else if last != "" && !strings.HasSuffix(last, "\n") {
				io.WriteString(c.stdout, "\n")
			}
			streamed, last = false, ""
			partial.Reset()
			c.ind.set(func(in *indicator) { in.tokens += e.Usage.Total(); in.partial = "" })
			c.setBusy()
		case agentrt.ToolCall:
			u := agentrt.ToolUseBlock(e.ToolUseID, e.Tool.Name, e.RawInput)
			calls[e.ToolUseID] = u
			desc := describeCall(u)
			c.ind.set(func(in *indicator) { in.activity = "running " + desc })
			c.showStatus("running: " + desc)
			c.setBusy()
		case agentrt.PermissionDecision:
			if !e.Decision.Allow && e.Decision.Source == "policy" {
				c.policyDenied = true
			}
			if e.Decision.Source == "remembered" {
				c.clearStatus()
				fmt.Fprintf(c.stderr, "  (%s allowed: you answered \"always\" in this session)\n", oneLine(e.Tool))
			}
		case agentrt.ToolResult:
			c.clearStatus()
			desc := describeCall(calls[e.Message.ToolUseID])
			if e.Message.IsError {
				fmt.Fprintf(c.stderr, "  ✗ %s: %s\n", desc, oneLine(firstLine(e.Message.Content, 200)))
			} else {
				fmt.Fprintf(c.stderr, "  ✓ %s\n", desc)
			}
			c.ind.set(func(in *indicator) { in.activity = "thinking" })
			c.setBusy()
		case agentrt.Done:
			end = e
		}
	}
	close(done)
	wg.Wait()
	c.clearStatus()
	c.ind.set(func(in *indicator) { in.partial = "" })
	if !c.rawStdout {
		pend += sv.flush()
	}
	if lineMode && pend != "" {
		io.WriteString(c.stdout, pend+"\n")
	} else if !lineMode {
		io.WriteString(c.stdout, pend)
		if partial.Len() > 0 && !strings.HasSuffix(partial.String(), "\n") {
			io.WriteString(c.stdout, "\n")
		}
	}
	if end.Reason == agentrt.StopCancelled {
		// A marker in the session, with what the person saw of the
		// reply: the session's messages cannot hold it (the assistant
		// message was never completed).
		var during string
		c.ind.set(func(in *indicator) { during = in.activity })
		data, _ := json.Marshal(interruption{Partial: partial.String(), During: during})
		if err := c.store.AppendRecord(context.WithoutCancel(parent), c.id, agentrt.Record{Kind: recordInterrupted, Data: data}); err != nil {
			fmt.Fprintln(c.stderr, "note: the interruption could not be recorded:", err)
		}
	}
	c.ind.set(func(in *indicator) { in.running = false })
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

// indicator is the state shown, on a terminal, by the prompt while a turn
// runs: what is happening, for how long, how many tokens.
type indicator struct {
	mu       sync.Mutex
	running  bool
	began    time.Time
	activity string // "thinking", "running read_file x", "asking"
	tokens   int    // tokens of the turn's planner calls so far
	partial  string // the line of the reply being written (made visible)
	asking   bool   // a question is on screen
}

func (in *indicator) start(now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.running, in.began, in.activity = true, now, "thinking"
	in.tokens, in.partial, in.asking = 0, "", false
}

func (in *indicator) set(f func(*indicator)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f(in)
}

// setBusy shows the indicator as the prompt, unless a question is on
// screen or no turn runs. On a terminal only.
func (c *cli) setBusy() {
	if c.con == nil || c.con.term == nil {
		return
	}
	c.ind.mu.Lock()
	defer c.ind.mu.Unlock()
	if !c.ind.running || c.ind.asking {
		return
	}
	c.con.show(c.ind.prompt(c.env.now()), promptBusy)
}

// prompt renders the indicator: "thinking 12s · 3.1k tokens · Ctrl-C to
// cancel › ". While a line of the reply is being written it is short, as
// it follows that line.
func (in *indicator) prompt(now time.Time) string {
	if in.partial != "" {
		return in.partial + "\x1b[2m▍\x1b[0m"
	}
	secs := int(now.Sub(in.began).Seconds())
	tokens := ""
	if in.tokens > 0 {
		tokens = " · " + formatTokens(in.tokens)
	}
	return fmt.Sprintf("\x1b[2m%s %ds%s · Ctrl-C to cancel ›\x1b[0m ", in.activity, secs, tokens)
}

// formatTokens writes a token count as "850 tokens" or "12.3k tokens".
func formatTokens(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d tokens", n)
	}
	return fmt.Sprintf("%.1fk tokens", float64(n)/1000)
}

// precheck refuses, without asking anyone, a write tool call that the tool
// would refuse anyway (a path that leads outside the root, an edit whose
// text is not in the file), through the same os.Root checks the tool makes.
// Other calls go to next.
func (c *cli) precheck(next agentrt.PermissionChecker) agentrt.PermissionChecker {
	return agentrt.PermissionFunc(func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		if !req.Tool.ReadOnly {
			if err := c.ws.check(req); err != nil {
				return agentrt.Decision{Reason: "refused without asking the user: " + err.Error(), Source: "precheck"}, nil
			}
		}
		return next.Check(ctx, req)
	})
}

// ask is the asker of the "ask" policy (AskOnWrite): it shows the change a write
// tool call would make as a unified diff and asks y / n / always on the
// terminal. Only a line typed after the question appeared answers it.
// Ctrl-C (a cancelled ctx) and end of input mean no.
func (c *cli) ask(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
	c.clearStatus()
	c.ind.set(func(in *indicator) { in.asking = true })
	defer func() {
		c.ind.set(func(in *indicator) { in.asking = false })
		c.setBusy()
	}()
	w := c.stderr
	name, before, after, created, err := c.ws.preview(req)
	fmt.Fprintf(w, "\n%s wants to change %s:\n", oneLine(req.Tool.Name), oneLine(name))
	switch d := unifiedDiff(name, before, after, created); {
	case err != nil:
		fmt.Fprintf(w, "(cannot show the change: %s)\n", oneLine(err.Error()))
	case d == "":
		fmt.Fprintln(w, "(no change to the file's content)")
	default:
		c.printDiff(d)
	}
	for {
		line, err := c.con.ask(ctx, nil, fmt.Sprintf("Apply? [y]es / [n]o / [a]lways allow %s in this session: ", oneLine(req.Tool.Name)), promptQuestion)
		switch {
		case errors.Is(err, io.EOF):
			fmt.Fprintln(w, "\n(end of input: no)")
			return agentrt.Decision{}, nil
		case err != nil:
			fmt.Fprintln(w)
			return agentrt.Decision{}, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return agentrt.Decision{Allow: true}, nil
		case "n", "no":
			return agentrt.Decision{}, nil
		case "a", "always":
			return agentrt.Decision{Allow: true, Always: true}, nil
		}
		if c.con.term != nil {
			// Not an answer: perhaps the next task, typed a little late.
			c.con.keep(line)
		}
		fmt.Fprintln(w, "Please answer y, n or a.")
	}
}

// printDiff writes a diff to stderr, in color on a terminal. Every line is
// made visible first: a control character in the file or in the model's
// proposal shows as an escape, so no line can hide another.
func (c *cli) printDiff(d string) {
	var sb strings.Builder
	for _, l := range splitLines(d) {
		body := visible(strings.TrimSuffix(l, "\n"))
		color := ""
		if c.env.tty {
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				color = "\x1b[1m"
			case strings.HasPrefix(l, "+"):
				color = "\x1b[32m"
			case strings.HasPrefix(l, "-"):
				color = "\x1b[31m"
			case strings.HasPrefix(l, "@@"):
				color = "\x1b[36m"
			}
		}
		if color != "" {
			sb.WriteString(color + body + "\x1b[0m\n")
		} else {
			sb.WriteString(body + "\n")
		}
	}
	io.WriteString(c.stderr, sb.String())
}

// showStatus shows a one-line status on a terminal when there is no line
// editor (stdin is not the terminal); elsewhere it does nothing (the
// result line follows anyway, and the editor's prompt shows the status).
func (c *cli) showStatus(s string) {
	if !c.env.tty || c.con != nil && c.con.term != nil {
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

// recap prints the last exchange of a resumed session: the last task, the
// last answer, and whether the turn was interrupted, each cut to a few
// lines.
func (c *cli) recap(ctx context.Context) {
	var (
		task, answer string
		intr         *interruption
	)
	for r, err := range c.store.Lines(ctx, c.id) {
		if err != nil {
			return
		}
		var m agentrt.Message
		if r.Kind == jsonl.KindMessage && json.Unmarshal(r.Message, &m) != nil {
			return
		}
		switch {
		case m.Role == agentrt.RoleUser:
			task, answer, intr = m.Text(), "", nil
		case m.Role == agentrt.RoleAssistant:
			if t := m.Text(); t != "" {
				answer = t
			}
		case r.Kind == recordInterrupted:
			var in interruption
			if json.Unmarshal(r.Data, &in) == nil {
				intr = &in
			}
		}
	}
	if task == "" {
		return
	}
	fmt.Fprintln(c.stderr, "Last exchange:")
	fmt.Fprintf(c.stderr, "  you:   %s\n", clip(task, 3, "         "))
	if answer != "" {
		fmt.Fprintf(c.stderr, "  coder: %s\n", clip(answer, 4, "         "))
	}
	if intr != nil {
		fmt.Fprintf(c.stderr, "  (interrupted with Ctrl-C while %s", intr.During)
		if intr.Partial != "" {
			fmt.Fprintf(c.stderr, "; the reply so far: %s", clip(intr.Partial, 2, "   "))
		}
		fmt.Fprintln(c.stderr, ")")
	}
}

// clip returns s made visible and cut to n lines of at most 160
// characters, each line after the first indented by indent.
func clip(s string, n int, indent string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	more := len(lines) > n
	if more {
		lines = lines[:n]
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > 160 {
			l = string(r[:160]) + "…"
		}
		lines[i] = visible(l)
	}
	out := strings.Join(lines, "\n"+indent)
	if more {
		out += " …"
	}
	return out
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
	for r, err := range c.store.Lines(ctx, c.id) {
		if err != nil || r.Kind != jsonl.KindHeader {
			return ""
		}
		var h struct {
			Metadata sessionMeta `json:"metadata"`
		}
		if json.Unmarshal(r.Raw, &h) != nil {
			return ""
		}
		return h.Metadata.Root
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.ID, in.Updated.Local().Format("2006-01-02 15:04"), in.Messages, oneLine(strings.Join(strings.Fields(in.Title), " ")))
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
	s := oneLine(b.Name)
	if in.Pattern != "" {
		s += fmt.Sprintf(" %q", in.Pattern)
	}
	if in.Path != "" {
		s += " " + oneLine(in.Path)
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

// isTerminal reports whether f (stdin, stdout or stderr) is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// termWidth returns the width of the terminal w, or 0.
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
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
