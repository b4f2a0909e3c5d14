package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/timeline"
)

// cmdVerify checks each session and returns exit code 1 when any has an
// error finding.
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("verify", stderr)
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	maxLine := fs.Int("max-line", 0, "the longest line allowed, in bytes, as the store was configured (default: agentrt.DefaultMaxLineSize)")
	rest, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if len(rest) == 0 {
		fmt.Fprint(stderr, usage)
		return 0, errUsage
	}
	all := []timeline.Finding{}
	failed := false
	for _, arg := range rest {
		dir, id, err := timeline.Resolve(arg)
		if err != nil {
			return 0, err
		}
		fs, err := timeline.Verify(ctx, dir, id, &timeline.VerifyOptions{MaxLineSize: *maxLine})
		if err != nil {
			return 0, err
		}
		for _, f := range fs {
			failed = failed || !f.Warning
		}
		all = append(all, fs...)
		if !*asJSON {
			for _, f := range fs {
				// The message may quote the file's content.
				fmt.Fprintln(stdout, termtext.Safe(f.String()))
			}
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, all); err != nil {
			return 0, err
		}
	} else if !failed {
		fmt.Fprintf(stdout, "ok: %d session(s)\n", len(rest))
	}
	if failed {
		return 1, nil
	}
	return 0, nil
}
