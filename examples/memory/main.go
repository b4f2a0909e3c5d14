// Command memory answers questions about a folder of Markdown files with
// citations of the file and heading, and remembers what the user tells it
// across sessions.
//
// It ingests every *.md file under -docs (default: this repository) into a
// memory store (SQLite full-text search, in memory; or Postgres with -pg),
// then runs an agent with the memory tools (remember, recall, search) and
// the memory hook, which shows the model the most relevant memories each
// turn and records them in the session.
//
// Offline: a scripted planner stands in for the model. It searches the
// documents with the question and answers with the best passage and its
// citation, so what you see is what retrieval found.
//
//	go -C examples/memory run .
//	go -C examples/memory run . -q "How does the session lock work?"
//	go -C examples/memory run . -docs ~/notes -q "what did we decide about the API?"
//	go -C examples/memory run . -pg postgres://localhost/agentrt
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/pgmem"
	"github.com/agentrt/agentrt/memory/sqlitemem"
)

func main() {
	docs := flag.String("docs", "", "folder of Markdown files (default: this repository)")
	pg := flag.String("pg", "", "Postgres URL: keep the memory there instead of SQLite in memory")
	var questions multi
	flag.Var(&questions, "q", "a question (repeatable; default: a few about this repository)")
	flag.Parse()
	if *docs == "" {
		root, err := repoRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, "memory:", err, "(pass -docs)")
			os.Exit(2)
		}
		*docs = root
	}
	if len(questions) == 0 {
		questions = defaultQuestions
	}
	ctx := context.Background()
	var (
		mem memory.Store
		err error
	)
	if *pg != "" {
		var s *pgmem.Store
		s, err = pgmem.Open(ctx, *pg, &pgmem.Options{Migrate: true})
		if err == nil {
			defer s.Close()
			mem = s
		}
	} else {
		var s *sqlitemem.Store
		s, err = sqlitemem.Open(":memory:", nil)
		if err == nil {
			defer s.Close()
			mem = s
		}
	}
	if err == nil {
		err = run(ctx, mem, os.DirFS(*docs), questions, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

var defaultQuestions = []string{
	"When does the JSONL store fsync, and what can a power loss lose?",
	"How do I test my agent offline with a scripted planner?",
	"How does the session lock work across processes?",
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, "; ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// repoRoot finds the repository from the working directory: the nearest
// directory up whose go.mod is the agentrt module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/agentrt/agentrt\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the agentrt repository")
		}
		dir = parent
	}
}

// scope is the namespace of this example's memory: the documents and the
// facts of one user.
const scope = "example-user"

// run ingests docs, then asks each question in a session of its own, and
// shows the remember/recall round trip across two sessions.
func run(ctx context.Context, mem memory.Store, docs fs.FS, questions []string, w io.Writer) error {
	n, files, err := ingest(ctx, mem, docs)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "planner: scripted (offline; no model is called)")
	fmt.Fprintf(w, "ingested %d sections from %d Markdown files\n", n, files)

	store := &agentrt.MemoryStore{}
	agent := func(planner agentrt.Planner) *agentrt.Agent {
		return &agentrt.Agent{
			Instructions: "Answer from the documents and cite file and heading.",
			Planner:      planner,
			Tools:        memory.Tools(mem, scope),
			Permission:   agentrt.AllowAll(), // remember writes to memory
			Store:        store,
			Hooks:        []agentrt.Hooks{memory.Hook(mem, scope, &memory.HookOptions{Records: store, Kinds: []memory.Kind{memory.KindFact}})},
		}
	}
	for i, q := range questions {
		answer, err := ask(ctx, agent(researcher()), fmt.Sprintf("q-%d", i+1), q)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nQ: %s\nA: %s\n", q, answer)
	}

	// Memory across sessions: told once, shown to the model next time.
	fmt.Fprintln(w)
	tell := agenttest.Script(
		agenttest.CallTool("remember", `{"text":"The user deploys agents on Kubernetes with three replicas."}`),
		agenttest.Reply("Noted."),
	)
	if _, err := ask(ctx, agent(tell), "chat-1", "Remember: we run three replicas on Kubernetes."); err != nil {
		return err
	}
	fmt.Fprintln(w, "session chat-1: the model remembered a fact")
	var shown string
	later := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		shown = req.Messages[len(req.Messages)-1].Content // the hook adds what it recalled after the history
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("With three replicas, use a shared session store."))}, nil
	}))
	if _, err := ask(ctx, agent(later), "chat-2", "How many replicas do we run?"); err != nil {
		return err
	}
	fmt.Fprintf(w, "session chat-2: the hook showed the model:\n%s\n", indent(shown))
	recs, err := store.LoadRecords(ctx, "chat-2")
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Kind == memory.RecordKind {
			fmt.Fprintf(w, "and recorded it in the session: %s record %s\n", rec.Kind, rec.Data)
		}
	}
	return nil
}

func ingest(ctx context.Context, mem memory.Store, docs fs.FS) (items, files int, err error) {
	var all []memory.Item
	err = fs.WalkDir(docs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case p != "." && strings.HasPrefix(name, "."), name == "node_modules", name == "testdata", name == "corpus":
				return fs.SkipDir
			}
			return nil
		}
		if filepath.Ext(p) != ".md" {
			return nil
		}
		b, err := fs.ReadFile(docs, p)
		if err != nil {
			return err
		}
		files++
		all = append(all, memory.SplitMarkdown(p, string(b))...)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if _, err := mem.Put(ctx, scope, all...); err != nil {
		return 0, 0, err
	}
	return len(all), files, nil
}

// researcher is the scripted stand-in for a model: it searches the
// documents with the question, then answers with the first sentences of
// the best passage and its citation.
func researcher() *agenttest.Planner {
	return agenttest.Script(
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			in, _ := json.Marshal(map[string]any{"query": req.Messages[len(req.Messages)-1].Content, "limit": 3})
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("search_1", "search", in))}, nil
		}),
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			result := req.Messages[len(req.Messages)-1].Content
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock(answerFrom(result)))}, nil
		}),
	)
}

// answerFrom turns search results (see memory.FormatHits: "[1] file §
// heading" then the passage) into an answer: the gist of the best passage,
// its citation, and the citations of the others.
func answerFrom(result string) string {
	if result == "nothing found" {
		return "The documents do not say."
	}
	var cites, bodies []string
	for line := range strings.Lines(result) {
		if n, cite, ok := strings.Cut(line, "] "); ok && strings.HasPrefix(n, "[") && isNumber(n[1:]) {
			cites = append(cites, strings.TrimSpace(cite))
			bodies = append(bodies, "")
			continue
		}
		if len(bodies) > 0 {
			bodies[len(bodies)-1] += line
		}
	}
	if len(cites) == 0 {
		return "The documents do not say."
	}
	answer := fmt.Sprintf("%s\n   source: %s", gist(bodies[0]), cites[0])
	if len(cites) > 1 {
		answer += "\n   see also: " + strings.Join(cites[1:], "; ")
	}
	return answer
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// gist returns about the first 240 bytes of a passage, on one line, cut
// at a word.
func gist(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 240 {
		cut := strings.LastIndex(text[:240], " ")
		text = text[:max(cut, 0)] + " …"
	}
	return text
}

func ask(ctx context.Context, ag *agentrt.Agent, session, question string) (string, error) {
	for ev, err := range ag.Run(ctx, session, question) {
		if err != nil {
			return "", err
		}
		if d, ok := ev.(agentrt.Done); ok {
			return d.FinalText, nil
		}
	}
	return "", errors.New("the run ended without Done")
}

func indent(s string) string {
	return "   " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n   ")
}
