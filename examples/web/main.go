// Command web is an agent behind a web page: a small net/http server
// (standard library and agentrt only) whose page streams the answer over
// Server-Sent Events, shows each tool call as it happens, and asks the
// person to Approve or Deny every file write.
//
// An approval does not keep anything waiting on the server: the run stops
// (agentrt.Decision.Pending, StopPending) with the pending call recorded in the
// session file, and the click resumes it (Agent.Resume), from this
// process or from the next one after a restart. Sessions are listed on
// the page and can be resumed.
//
// It runs offline by default, with a scripted planner standing in for the
// model. With OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or
// OLLAMA_HOST set (or -provider), it asks a real model instead.
//
//	go run . -addr localhost:8080 -dir /tmp/agentrt-web
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/agentrt/agentrt/examples/internal/modelenv"
)

func main() {
	addr := flag.String("addr", "localhost:8080", "address to listen on")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "agentrt-web"), "directory of the sessions and the workspace")
	provider := flag.String("provider", "", "openai, anthropic, gemini, ollama or scripted (default: from the environment)")
	model := flag.String("model", "", "the model (default: the provider's usual small one)")
	flag.Parse()
	if err := run(*addr, *dir, *provider, *model); err != nil {
		log.Fatal(err)
	}
}

func run(addr, dir, provider, model string) error {
	planner, label, err := modelenv.Planner(scriptedPlanner(), provider, model)
	if err != nil {
		return err
	}
	s, err := newServer(dir, planner)
	if err != nil {
		return err
	}
	defer s.Close()
	srv := &http.Server{Addr: addr, Handler: s, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	fmt.Printf("agentrt web: http://%s (planner: %s; files in %s)\n", addr, label, dir)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
