// Package terminal asks a person at a terminal whether the agent may run
// a tool call:
//
//	ag.Permission = agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout))
package terminal

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/termtext"
)

// Asker returns an asker for [agentrt.AskOnWrite] that prints the tool
// call to w and reads the answer from r: y (yes, this call), n (no) or a
// (always, for this tool in this session: a decision with Always set).
// Anything else asks again; end of input is no.
// Calls are serialized, so concurrent questions do not interleave.
//
// The input is printed exactly as the model sent it (ToolCall.RawInput;
// without it, Input as indented JSON), byte for byte, in the form of the
// timeline of `agentrt show`: every character that a terminal would
// interpret or not show (control characters but the newline, bidi
// controls, zero-width and other format characters, tag characters) and
// every byte of invalid UTF-8 shown escaped in Go's notation (\x1b, \r,
// \u202e, \u200b, \U000e0041, \xff), and every line after the first
// indented by two spaces. So the person sees every byte of what will run,
// and the input can neither rewrite the screen, hide text, nor pass for a
// line of the question.
//
// Reading from r does not stop when ctx is cancelled; a program that needs
// that reads its terminal in its own goroutine and feeds r through a pipe.
func Asker(r io.Reader, w io.Writer) agentrt.PermissionFunc {
	br := bufio.NewReader(r)
	var mu sync.Mutex
	return func(ctx context.Context, req *agentrt.ToolCall) (agentrt.Decision, error) {
		no := agentrt.Decision{Source: "user", Reason: fmt.Sprintf("permission denied: the user refused this call of %q", req.Tool.Name)}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "\nThe agent wants to run the write tool %q with input:\n  %s\n", req.Tool.Name, showInput(req))
		for {
			if err := ctx.Err(); err != nil {
				return no, err
			}
			fmt.Fprint(w, "Allow? [y]es / [n]o / [a]lways for this tool: ")
			line, err := br.ReadString('\n')
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return agentrt.Decision{Allow: true, Source: "user"}, nil
			case "n", "no":
				return no, nil
			case "a", "always":
				return agentrt.Decision{Allow: true, Source: "user", Always: true}, nil
			}
			if err != nil { // EOF or a broken terminal: the safe answer
				fmt.Fprintln(w)
				return no, nil
			}
		}
	}
}

// showInput returns the input of req as it is printed: safe to print on a
// terminal (termtext.Safe, newlines kept) and with every line after the
// first indented by two spaces, so that no line of the input can pass for
// a line of the question.
func showInput(req *agentrt.ToolCall) string {
	input := string(req.RawInput)
	if len(req.RawInput) == 0 {
		if d, ok := req.Input.(json.RawMessage); ok {
			input = string(d)
		} else if b, err := json.MarshalIndent(req.Input, "", "  "); err == nil && req.Input != nil {
			input = string(b)
		}
	}
	return strings.ReplaceAll(termtext.Safe(input, '\n'), "\n", "\n  ")
}
