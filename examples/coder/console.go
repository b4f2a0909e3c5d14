package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// promptKind says what the prompt on screen is for, and so what a line
// typed at it means.
type promptKind int

const (
	promptBusy     promptKind = iota // a turn is running: a line typed now is kept for the next task prompt
	promptTask                       // the task prompt ("> ")
	promptQuestion                   // a question: only a line typed after it appeared answers it
)

// anySeq marks a line read from a pipe or a file: there is no screen, so
// the next line answers whatever is asked next, in order.
const anySeq = -1

// typed is one line of input and the prompt that was on screen when its
// Enter was read.
type typed struct {
	text string
	seq  int  // the prompt's number (see console.show), or anySeq
	eof  bool // end of input (Ctrl-D at the task prompt, or stdin closed)
}

// errInterrupted is returned by console.read when Ctrl-C arrives.
var errInterrupted = errors.New("interrupted")

// console is the person at the keyboard. One goroutine owns stdin and
// turns it into lines; each line carries the number of the prompt that
// was on screen when it was entered, so a question is answered only by a
// line typed after the question appeared, never by one that holds pasted
// text (a bracketed paste). What was typed earlier (while
// the model was thinking, say) is kept and offered at the next task
// prompt, never taken as an answer.
//
// On a terminal the line editor is golang.org/x/term's Terminal: the
// terminal is in raw mode for the whole session, every byte the program
// shows goes through [console.out] (which keeps the line being typed at
// the bottom, below the output), and the prompt during a turn is the
// thinking indicator. When stdin is not a terminal (a pipe, a file, a
// test), lines are read in order and prompts are printed as they are.
//
// A console is safe for concurrent use.
type console struct {
	out  io.Writer        // where to write what the person sees
	ints chan<- os.Signal // Ctrl-C read as a key on a raw terminal is sent here

	mu      sync.Mutex
	queue   []typed       // lines entered and not yet read
	changed chan struct{} // closed and replaced when queue or closed changes
	closed  bool          // stdin ended
	kept    []string      // lines typed ahead, for the next task prompts
	seq     int           // the number of the prompt on screen
	cur     promptKind    // what the prompt on screen is for

	// On a terminal only.
	term     *term.Terminal
	keys     chan []byte     // raw input, from the goroutine reading stdin
	ctl      chan *promptReq // prompt changes, for the line goroutine
	lineDone chan struct{}   // closed when the line goroutine ends
	req      *promptReq      // the change the line goroutine is making
	redraw   bool            // the next read reports errRedraw
	held     []byte          // keys read and not yet given to the editor
	ctrlD    bool            // Ctrl-D was typed on an empty line
	stashed  string          // the half-typed line just kept, to say so
	hist     history         // task lines, for the up and down keys
	restore  func()          // puts the terminal back as it was
	paste    []string        // lines of a bracketed paste, so far
	pasted   bool            // the line being typed holds pasted text
	tail     bool            // the last paste left text after its last newline
	stop     chan struct{}   // closed by close
	width    func() int      // the screen's width now
	stopOnce sync.Once
}

// promptReq asks the line goroutine to show another prompt.
type promptReq struct {
	prompt string
	kind   promptKind
	done   chan int // receives the prompt's number once it is shown
}

// stashKey is a private-use character that the console feeds to the line
// editor to take the line being typed out of it (and to put a kept line
// in), through the editor's completion callback.
const stashKey = '\uf8ff'

// ctrlDKey stands for Ctrl-D in the editor's input (see pump).
const ctrlDKey = '\uf8fe'

// errCtrlD makes the line editor return on Ctrl-D typed on an empty line.
var errCtrlD = errors.New("ctrl-d")

// errRedraw makes the line editor return, so that its prompt can change.
var errRedraw = errors.New("redraw the prompt")

// errInputEnded is what the editor's reader returns when stdin has ended
// (io.EOF from the editor means Ctrl-D).
var errInputEnded = errors.New("end of input")

// newPlainConsole reads lines from r in order; prompts are written to out.
func newPlainConsole(r io.Reader, out io.Writer) *console {
	c := &console{out: out, changed: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			c.push(typed{text: sc.Text(), seq: anySeq})
			select {
			case <-c.stop:
				return
			default:
			}
		}
		c.end()
	}()
	return c
}

// newTerminalConsole runs a line editor on in (the keyboard) and screen.
// If in is a terminal it is put in raw mode until close. Ctrl-C typed on it
// is sent to ints. width returns the screen's width, read again at each
// task prompt and question (nil or 0: 80 columns).
func newTerminalConsole(in io.Reader, screen io.Writer, ints chan<- os.Signal, width func() int) (*console, error) {
	c := &console{
		ints:     ints,
		changed:  make(chan struct{}),
		keys:     make(chan []byte, 16),
		ctl:      make(chan *promptReq),
		lineDone: make(chan struct{}),
		stop:     make(chan struct{}),
		restore:  func() {},
		width:    width,
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return nil, err
		}
		c.restore = func() { term.Restore(int(f.Fd()), old) }
	}
	c.term = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{(*keyReader)(c), screen}, "")
	c.term.History = &c.hist
	c.term.AutoCompleteCallback = c.complete
	c.resize()
	c.term.SetBracketedPasteMode(true)
	c.out = c.term
	c.seq = 1
	go c.pump(in)
	go c.lines()
	return c, nil
}

// close puts the terminal back as it was. The goroutine reading stdin may
// stay blocked in a read until stdin ends.
func (c *console) close() {
	c.stopOnce.Do(func() {
		close(c.stop)
		if c.term != nil {
			c.term.SetBracketedPasteMode(false)
			c.restore()
		}
	})
}

// push adds a line to the queue.
func (c *console) push(l typed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, l)
	close(c.changed)
	c.changed = make(chan struct{})
}

// end records the end of input.
func (c *console) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	close(c.changed)
	c.changed = make(chan struct{})
}

// keep puts a line typed ahead aside for the next task prompt.
func (c *console) keep(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	c.mu.Lock()
	c.kept = append(c.kept, line)
	c.mu.Unlock()
	io.WriteString(c.out, keptNote(line))
}

// keptNote tells the person that a line was kept for the next prompt.
func keptNote(line string) string {
	return fmt.Sprintf("  (kept for the next prompt, not taken as an answer: %s)\n", oneLine(line))
}

// show puts prompt on screen for kind and returns its number: lines
// entered at it carry that number. On a terminal, showing a question takes
// what is being typed out of the editor (it is kept for the next task
// prompt) and showing the task prompt puts the first kept line in, for
// the person to send with Enter, change or clear (Ctrl-U). Without a
// terminal a question or task prompt is printed and anySeq returned.
func (c *console) show(prompt string, kind promptKind) int {
	if c.term == nil {
		if kind != promptBusy {
			io.WriteString(c.out, prompt)
		}
		return anySeq
	}
	req := &promptReq{prompt: prompt, kind: kind, done: make(chan int, 1)}
	select {
	case c.ctl <- req:
	case <-c.lineDone:
		return -2 // matches no line: input has ended
	}
	select {
	case n := <-req.done:
		return n
	case <-c.lineDone:
		return -2
	}
}

// read waits for a line entered at the prompt numbered seq. Lines entered
// at an earlier prompt are kept for the next task prompt. It returns
// io.EOF at end of input, errInterrupted when Ctrl-C arrives on intr, and
// the context's error when ctx ends.
func (c *console) read(ctx context.Context, intr <-chan os.Signal, seq int) (string, error) {
	for {
		c.mu.Lock()
		for len(c.queue) > 0 {
			l := c.queue[0]
			c.queue = c.queue[1:]
			if l.seq == seq || l.seq == anySeq {
				c.mu.Unlock()
				if l.eof {
					return "", io.EOF
				}
				return l.text, nil
			}
			if !l.eof {
				c.mu.Unlock()
				c.keep(l.text)
				c.mu.Lock()
			}
		}
		closed, ch := c.closed, c.changed
		c.mu.Unlock()
		if closed {
			return "", io.EOF
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-intr:
			return "", errInterrupted
		}
	}
}

// ask shows prompt as kind and reads the line entered at it.
func (c *console) ask(ctx context.Context, intr <-chan os.Signal, prompt string, kind promptKind) (string, error) {
	return c.read(ctx, intr, c.show(prompt, kind))
}

// keptCount returns the number of lines kept for the next task prompts.
func (c *console) keptCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.kept)
}

// pump reads the keyboard and passes what it reads to the line editor.
// On a raw terminal Ctrl-C arrives as a byte: it is sent to c.ints (as the
// signal it would have been) and taken out of the input.
func (c *console) pump(r io.Reader) {
	defer close(c.keys)
	buf := make([]byte, 4096)
	inPaste := false
	var split []byte // the start of a key or paste marker cut by the last read
	for {
		n, err := r.Read(buf)
		b := append(split, buf[:n]...)
		split = nil
		if err == nil {
			b, split = cutSplitKey(b)
		}
		if bytes.IndexByte(b, 3) >= 0 {
			select {
			case c.ints <- os.Interrupt:
			default:
			}
			b = bytes.ReplaceAll(b, []byte{3}, nil)
		}
		// Ctrl-D: the editor returns io.EOF for it without consuming it;
		// it goes through the completion callback instead.
		b = bytes.ReplaceAll(b, []byte{4}, []byte(string(ctrlDKey)))
		b, inPaste = homeEnd(b, inPaste)
		if len(b) > 0 {
			select {
			case c.keys <- bytes.Clone(b):
			case <-c.stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// cutSplitKey splits b before a paste marker or a key of homeEndKeys that
// it ends with the start of, so that the rest, read next, completes it.
func cutSplitKey(b []byte) (keys, split []byte) {
	i := bytes.LastIndexByte(b, 0x1b)
	if i < 0 {
		return b, nil
	}
	tail := b[i:]
	seqs := [][]byte{pasteStart, pasteEnd}
	for _, k := range homeEndKeys {
		seqs = append(seqs, []byte(k.from))
	}
	for _, seq := range seqs {
		if len(tail) < len(seq) && bytes.HasPrefix(seq, tail) {
			return b[:i], bytes.Clone(tail)
		}
	}
	return b, nil
}

// pasteTail reports whether, after the keys b, the line editor holds
// pasted text after the last newline of a paste; tail is what it was
// before b. A paste still open counts.
func pasteTail(b []byte, tail bool) bool {
	if i := bytes.LastIndex(b, pasteStart); i >= 0 && !bytes.Contains(b[i:], pasteEnd) {
		return true
	}
	end := bytes.LastIndex(b, pasteEnd)
	if end < 0 {
		return tail
	}
	seg := b[:end]
	if i := bytes.LastIndex(seg, pasteStart); i >= 0 {
		seg, tail = seg[i+len(pasteStart):], false
	}
	if k := bytes.LastIndexAny(seg, "\r\n"); k >= 0 {
		return k < len(seg)-1
	}
	return tail || len(seg) > 0
}

// homeEndKeys are the Home and End keys as tmux, the Linux console and
// rxvt send them, and in application mode, with the form the line editor
// knows.
var homeEndKeys = []struct{ from, to string }{
	{"\x1b[1~", "\x1b[H"}, {"\x1b[7~", "\x1b[H"}, {"\x1bOH", "\x1b[H"},
	{"\x1b[4~", "\x1b[F"}, {"\x1b[8~", "\x1b[F"}, {"\x1bOF", "\x1b[F"},
}

// homeEnd returns b with the keys of homeEndKeys rewritten, outside a
// bracketed paste. inPaste says whether b starts inside a paste; homeEnd
// returns whether it ends inside one. A key split between two reads is
// left as it is.
func homeEnd(b []byte, inPaste bool) ([]byte, bool) {
	out := make([]byte, 0, len(b))
next:
	for i := 0; i < len(b); {
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, pasteStart):
			inPaste = true
		case bytes.HasPrefix(rest, pasteEnd):
			inPaste = false
		case !inPaste && rest[0] == 0x1b:
			for _, k := range homeEndKeys {
				if bytes.HasPrefix(rest, []byte(k.from)) {
					out = append(out, k.to...)
					i += len(k.from)
					continue next
				}
			}
		}
		out = append(out, b[i])
		i++
	}
	return out, inPaste
}

// keyReader is the line editor's view of the keyboard: the keys from
// pump, and the prompt changes asked for by show.
type keyReader console

func (k *keyReader) Read(p []byte) (int, error) {
	c := (*console)(k)
	if c.redraw {
		c.redraw = false
		return 0, errRedraw
	}
	if c.ctrlD {
		c.ctrlD = false
		return 0, errCtrlD
	}
	if len(c.held) > 0 {
		n := copy(p, c.held)
		c.held = c.held[n:]
		return n, nil
	}
	// Keys already read were typed before any prompt change now pending:
	// they go to the editor first.
	select {
	case b, ok := <-c.keys:
		return c.give(p, b, ok)
	default:
	}
	select {
	case b, ok := <-c.keys:
		return c.give(p, b, ok)
	case req := <-c.ctl:
		c.req = req
		if req.kind == promptBusy {
			return 0, errRedraw
		}
		c.redraw = true
		return copy(p, string(stashKey)), nil
	case <-c.stop:
		return 0, errInputEnded
	}
}

// give passes keys to the editor, keeping what does not fit for the
// next read.
func (c *console) give(p, b []byte, ok bool) (int, error) {
	if !ok {
		return 0, errInputEnded
	}
	if bytes.Contains(b, pasteStart) {
		c.pasted = true
	}
	c.tail = pasteTail(b, c.tail)
	n := copy(p, b)
	c.held = b[n:]
	return n, nil
}

// complete is the editor's completion callback, used for stashKey only:
// it takes the line being typed out of the editor when a question is
// shown, and puts a kept line in when the task prompt is shown.
func (c *console) complete(line string, pos int, key rune) (string, int, bool) {
	if key == ctrlDKey {
		c.ctrlD = line == ""
		return line, pos, true
	}
	if key != stashKey || c.req == nil {
		return "", 0, false
	}
	switch c.req.kind {
	case promptQuestion:
		c.mu.Lock()
		if strings.TrimSpace(line) != "" {
			c.kept = append(c.kept, line)
			c.stashed = line
		}
		c.mu.Unlock()
		return "", 0, true
	case promptTask:
		if line != "" {
			return line, len(line), true
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.kept) == 0 {
			return "", 0, true
		}
		next := c.kept[0]
		c.kept = c.kept[1:]
		return next, len(next), true
	}
	return line, pos, true
}

// lines is the line goroutine: it runs the editor and queues the lines
// entered, each with the number of the prompt it was entered at.
func (c *console) lines() {
	defer close(c.lineDone)
	for {
		line, err := c.term.ReadLine()
		switch {
		case errors.Is(err, errRedraw):
			req := c.req
			c.mu.Lock()
			next := req.kind != promptBusy || c.cur != promptBusy
			if next {
				c.seq++
			}
			c.cur = req.kind
			n := c.seq
			c.mu.Unlock()
			if next {
				// Lines pasted at the last prompt and not yet sent with
				// Enter belong to it: they are kept, never joined to a
				// line typed at this one.
				if len(c.paste) > 0 {
					c.keep(strings.Join(c.paste, "\n"))
					c.paste = nil
				}
				c.pasted = false
			}
			if req.kind != promptBusy {
				c.resize()
			}
			if c.stashed != "" {
				fmt.Fprint(c.term, keptNote(c.stashed))
				c.stashed = ""
			}
			c.term.SetPrompt(req.prompt)
			c.term.Write(nil) // redraws the prompt and the line, if shown
			req.done <- n
			continue
		case errors.Is(err, term.ErrPasteIndicator):
			// A pasted line: the lines of one paste make one input, and
			// never an answer: at a question it is kept at once.
			c.mu.Lock()
			kind := c.cur
			c.mu.Unlock()
			if kind == promptQuestion {
				c.keep(line)
			} else {
				c.paste = append(c.paste, line)
			}
			c.pasted = c.tail // what the editor holds now was pasted too
			continue
		case errors.Is(err, errInputEnded):
			c.end()
			return
		case errors.Is(err, errCtrlD):
			c.mu.Lock()
			kind, n := c.cur, c.seq
			c.mu.Unlock()
			if kind == promptTask {
				c.push(typed{eof: true, seq: n})
			}
			continue
		case err != nil:
			c.end()
			return
		}
		pasted := len(c.paste) > 0 || c.pasted
		if len(c.paste) > 0 {
			line = strings.Join(append(c.paste, line), "\n")
			c.paste = nil
		}
		c.pasted = false
		c.mu.Lock()
		kind, n := c.cur, c.seq
		c.mu.Unlock()
		if kind != promptQuestion && !pasted {
			c.hist.add(line)
		}
		if kind == promptBusy || kind == promptQuestion && pasted {
			// Typed ahead, or pasted: an answer is typed.
			c.keep(line)
			continue
		}
		// Until the program shows its next prompt, none is on screen.
		c.term.SetPrompt("")
		c.push(typed{text: line, seq: n})
	}
}

// resize tells the editor the screen's width (the height is not used).
func (c *console) resize() {
	if c.width == nil {
		return
	}
	if w := c.width(); w > 0 {
		c.term.SetSize(w, 24)
	}
}

// history keeps the tasks entered, for the editor's up and down keys;
// answers to questions and pasted blocks are left out. Only the line
// goroutine uses it.
type history struct {
	lines []string // oldest first
}

const maxHistory = 500

// Add is called by the editor for every line; the console adds lines
// itself (add), once it knows what they were.
func (h *history) Add(string) {}

func (h *history) add(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(h.lines); n > 0 && h.lines[n-1] == s {
		return
	}
	h.lines = append(h.lines, s)
	if len(h.lines) > maxHistory {
		h.lines = h.lines[1:]
	}
}

func (h *history) Len() int { return len(h.lines) }

func (h *history) At(i int) string { return h.lines[len(h.lines)-1-i] }
