package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/agentrt/agentrt/timeline"
)

func cmdTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tail", stderr)
	follow := fs.Bool("f", false, "follow: print what is appended until interrupted")
	interval := fs.Duration("interval", 500*time.Millisecond, "how often to look for new lines with -f")
	var o textOptions
	var color string
	o.flags(fs, &color)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	if err := o.settle(stdout, color); err != nil {
		return err
	}
	return tail(ctx, rest[0], *follow, *interval, o, stdout)
}

// tail prints the timeline of the session, then, with follow, what
// changes as the session grows, as a log: each line once (a message, a
// turn, a call, a run's end), and again when it changes (a call that was
// running ends, a turn's trace arrives, the headline), until ctx is done.
func tail(ctx context.Context, arg string, follow bool, interval time.Duration, o textOptions, w io.Writer) error {
	shown := map[string]string{} // line key → the text printed
	lines := -1
	for {
		s, err := timeline.Open(ctx, arg)
		switch {
		case err != nil && !follow:
			return err
		case err == nil && s.Lines != lines:
			lines = s.Lines
			var b strings.Builder
			if err := renderText(&b, s, o); err != nil {
				return err
			}
			pos := linePos{run: "0"}
			for i, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
				key, update := lineKey(i, ansiRE.ReplaceAllString(l, ""), &pos)
				if key == "" {
					continue
				}
				if old, ok := shown[key]; ok && (old == l || !update) {
					continue
				}
				shown[key] = l
				if _, err := fmt.Fprintln(w, l); err != nil {
					return err
				}
			}
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

var (
	ansiRE   = regexp.MustCompile("\x1b\\[[0-9;]*m")
	runRE    = regexp.MustCompile(`^run (\d+) ·`)
	turnRE   = regexp.MustCompile(`^  turn (\d+) ·`)
	callRE   = regexp.MustCompile(`^    [✓✗⊘…] \S+ (\S+) (\w+)`) // mark, tool, id, outcome
	retryRE  = regexp.MustCompile(`^    ↻ attempt (\d+)`)
	resumeRE = regexp.MustCompile(`^  ↻ resumed [✓✗⊘…] \S+ (\S+) of turn \d+ (\w+)`) // id, outcome
	endLineR = regexp.MustCompile(`^  ■ end:`)
)

// linePos is where a line of a rendered timeline is: the run and the
// turn of the lines before it.
type linePos struct{ run, turn string }

// lineKey names the i-th line l of a rendered timeline for tail, and says
// whether a change of its text is printed again; pos tracks the run and
// turn the lines belong to. Blank lines get "".
func lineKey(i int, l string, pos *linePos) (key string, update bool) {
	run := &pos.run
	switch {
	case strings.TrimSpace(l) == "":
		return "", false
	case i == 0:
		return "head", true
	case i == 1:
		return "meta", false
	}
	if m := runRE.FindStringSubmatch(l); m != nil {
		*run, pos.turn = m[1], ""
		return "run " + m[1], false
	}
	if m := turnRE.FindStringSubmatch(l); m != nil {
		pos.turn = m[1]
		return *run + " turn " + m[1], true
	}
	if m := retryRE.FindStringSubmatch(l); m != nil {
		return *run + " retry " + m[1], false
	}
	if m := resumeRE.FindStringSubmatch(l); m != nil {
		return *run + " resumed " + m[1] + " " + m[2], false
	}
	if m := callRE.FindStringSubmatch(l); m != nil {
		// Once per outcome: the times of a call change when its trace
		// arrives, which is not news.
		return *run + " call " + m[1] + " " + m[2], false
	}
	if endLineR.MatchString(l) {
		return *run + " end", true
	}
	// Another line (an input, an answer, a cache break): the same text in
	// two turns is two lines.
	return *run + " " + pos.turn + " " + l, false
}
