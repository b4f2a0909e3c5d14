// Command mcp runs an agentrt agent on the tools of the reference MCP
// filesystem server (@modelcontextprotocol/server-filesystem), over stdio.
//
// It is offline by default: a scripted planner (agenttest.Script) plays the
// model's part, calling the server's tools in a fixed order, so no API key
// and no network are needed. With a provider key or OLLAMA_HOST set, a real
// model drives the tools instead. Writes go through the permission checker: you are
// asked on the terminal (or pass -yes).
//
//	npm ci --prefix mcptool/testdata/npm   # once: installs the pinned server
//	go run ./examples/mcp                  # on a new temporary directory
//	go run ./examples/mcp -dir ~/notes     # on a directory of yours
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/examples/internal/modelenv"
	"github.com/agentrt/agentrt/mcptool"
	"github.com/agentrt/agentrt/terminal"
)

// serverBin is where `npm ci --prefix mcptool/testdata/npm` installs the
// server, relative to the repository root.
var serverBin = filepath.Join("mcptool", "testdata", "npm", "node_modules", ".bin", "mcp-server-filesystem")

func main() {
	dir := flag.String("dir", "", "directory the server may access (default: a new temporary directory, removed at exit)")
	server := flag.String("server", "", "path of the mcp-server-filesystem executable (default: "+serverBin+" in this repository)")
	yes := flag.Bool("yes", false, "allow write tools without asking")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *dir, *server, *yes); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, server string, yes bool) error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New(`no "node" on PATH: Node.js is not installed.
This example runs the reference MCP filesystem server, which is a Node.js program.
Install Node.js 18 or later (https://nodejs.org, or e.g. "apt-get install nodejs npm"), then run:
    npm ci --prefix mcptool/testdata/npm`)
	}
	if server == "" {
		var err error
		if server, err = findServer(); err != nil {
			return err
		}
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "agentrt-mcp-example-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := os.WriteFile(filepath.Join(tmp, "todo.txt"), []byte("- try agentrt with an MCP server\n"), 0o644); err != nil {
			return err
		}
		dir = tmp
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil { // the server resolves symlinks too
		return err
	}

	fmt.Printf("MCP server: %s %s\n\n", server, dir)

	c, err := mcptool.Connect(ctx, mcptool.Stdio(server, dir), &mcptool.Options{Prefix: "fs_"})
	if err != nil {
		return err
	}
	defer c.Close() // stops the server process
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("The server has %d tools:", len(tools))
	for _, t := range tools {
		kind := "write"
		if t.Spec().ReadOnly {
			kind = "read"
		}
		fmt.Printf(" %s (%s)", t.Spec().Name, kind)
	}
	fmt.Print("\n\n")

	perm := agentrt.AskOnWrite(terminal.Asker(os.Stdin, os.Stdout))
	if yes {
		perm = agentrt.AllowAll()
	}
	notes := filepath.Join(dir, "agent-notes.txt")
	planner, label, err := modelenv.Planner(agenttest.Script(
		agenttest.CallTool("fs_list_directory", jsonInput(map[string]any{"path": dir})),
		agenttest.CallTool("fs_write_file", jsonInput(map[string]any{
			"path":    notes,
			"content": "Written by an agentrt agent through the MCP filesystem server.\n",
		})),
		agenttest.CallTool("fs_read_text_file", jsonInput(map[string]any{"path": notes})),
		agenttest.CallTool("fs_read_text_file", jsonInput(map[string]any{"path": "/etc/hostname"})),
		agenttest.Reply("I listed the directory, wrote agent-notes.txt (if you allowed it) and read it back; "+
			"the server refused a file outside its directory."),
	), "", "")
	if err != nil {
		return err
	}
	fmt.Println("planner:", label)
	ag := &agentrt.Agent{
		Instructions: "You manage the files of one directory.",
		Tools:        tools,
		Planner:      planner,
		Permission:   perm,
	}
	for ev, err := range ag.Run(ctx, "mcp-demo", "Take a note in my directory.") {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case agentrt.ToolCall:
			fmt.Printf("→ %s %s\n", e.Tool.Name, e.RawInput)
		case agentrt.PermissionDecision:
			if !e.Decision.Allow {
				fmt.Printf("  denied (%s)\n", e.Decision.Source)
			}
		case agentrt.ToolResult:
			status := "ok"
			if e.Message.IsError {
				status = "is_error"
			}
			fmt.Printf("  %s: %s\n", status, indent(e.Message.Content))
		case agentrt.Done:
			fmt.Printf("\n%s: %s\n", e.Reason, e.FinalText)
		}
	}
	return nil
}

// findServer looks for the npm-installed server from the working directory
// up to the file system's root, so that the example runs from anywhere in
// the repository.
func findServer() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, serverBin)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf(`the MCP filesystem server is not installed (no %s here or above).
Install it, at the version pinned in the repository, from the repository root:
    npm ci --prefix mcptool/testdata/npm
or pass -server with the path of an mcp-server-filesystem executable`, serverBin)
}

func jsonInput(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n    ")
}
