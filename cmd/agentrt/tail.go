package main

import (
	"context"
	"fmt"
	"io"
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

// tail prints the timeline of the session, then, with follow, the lines
// that change as the session grows, until ctx is done.
func tail(ctx context.Context, arg string, follow bool, interval time.Duration, o textOptions, w io.Writer) error {
	var shown []string
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
			now := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
			// The first line (the headline) changes as the run goes: print
			// it again with what is new, and every line after the first
			// that changed.
			i := 1
			for i < len(now) && i < len(shown) && now[i] == shown[i] {
				i++
			}
			if shown != nil && now[0] != shown[0] {
				fmt.Fprintln(w, now[0])
			}
			if shown == nil {
				i = 0
			}
			for _, l := range now[i:] {
				if _, err := fmt.Fprintln(w, l); err != nil {
					return err
				}
			}
			shown = now
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
