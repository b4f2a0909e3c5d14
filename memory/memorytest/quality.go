package memorytest

import (
	"slices"
	"testing"

	"github.com/agentrt/agentrt/memory"
)

// Question is a labelled question about the [Corpus]: the IDs of the
// sections that answer it (file#anchor, as [memory.SplitMarkdown] names
// them). Any one of them counts as a hit.
type Question struct {
	Text    string
	Answers []string
}

// Questions are the labelled questions, written by reading the documents
// and phrased as a user would ask, not copied from the headings.
var Questions = []Question{
	{"How do I install the library with go get, and which Go version does it need?", []string{"README.md#agentrt"}},
	{"Which commands run the quickstart and the tests?", []string{"README.md#set-up-two-commands"}},
	{"What happens after the planner returns tool_use blocks: lookup, decode, permission, execute?", []string{"README.md#the-loop"}},
	{"Must every tool_use id get exactly one tool result right after the assistant message?", []string{"README.md#the-two-invariants"}},
	{"Does a failing tool end the run, or only planner and store errors?", []string{"README.md#errors-what-ends-a-run"}},
	{"How are tool inputs decoded leniently and validated, and what error names the JSON field?", []string{"README.md#tools", "examples/custom-tool/README.md#custom-tool-a-typed-tool-and-what-the-model-sees-when-it-is-wrong"}},
	{"How can a permission callback refuse writing under /etc?", []string{"README.md#permissions"}},
	{"How do I resume a conversation by id after the process crashed?", []string{"README.md#sessions", "examples/sessions/README.md#sessions-a-conversation-that-outlives-the-process"}},
	{"How do I switch the model between OpenAI, Anthropic, Gemini and Ollama?", []string{"README.md#providers-one-line-to-switch", "examples/quickstart/README.md#quickstart-the-smallest-complete-agent"}},
	{"How does the loop guard notice the same tool called again and again with the same input?", []string{"README.md#dependable-runs-limits-loops-long-contexts-retries", "README.md#dependable-runs-limits-loops-long-contexts-retries-part2"}},
	{"How does the summarizer compress a long context, and what happens on a context length error?", []string{"README.md#dependable-runs-limits-loops-long-contexts-retries", "README.md#dependable-runs-limits-loops-long-contexts-retries-part2"}},
	{"How do I stop deploys on Fridays from a hook before a tool runs?", []string{"README.md#extending-hooks-logging-tracing"}},
	{"How do I give my agent the tools of an MCP server over stdio, and serve my own tools?", []string{"README.md#mcp-use-any-mcp-servers-tools-serve-yours", "examples/mcp/README.md#the-code-that-matters"}},
	{"How do I get a structured answer validated into a Go struct like a spam verdict?", []string{"README.md#typed-answers-and-sub-agents"}},
	{"How does a coordinator agent delegate to a specialist sub-agent?", []string{"README.md#typed-answers-and-sub-agents", "examples/delegate/README.md#delegate-a-coordinator-and-a-specialist"}},
	{"Should I run agents in-process or as durable Temporal workflows?", []string{"README.md#in-process-or-temporal", "temporal/README.md#choosing-a-runtime"}},
	{"How do I test my agent offline with a scripted fake planner?", []string{"README.md#testing-your-agent", "examples/testing/README.md#testing-how-to-test-your-own-agent"}},
	{"How does agentrt compare with LangChainGo, Eino and Google ADK?", []string{"README.md#how-it-compares"}},
	{"Are API keys ever logged, and what does the model see of errors?", []string{"README.md#security-model"}},
	{"How many microseconds does one tool turn cost compared with a bare loop?", []string{"README.md#performance"}},
	{"What is the .lock file next to a session file, and where are temporary files kept?", []string{"docs/jsonl-format.md#files"}},
	{"Which fields does the first line of a session file carry, such as version and created?", []string{"docs/jsonl-format.md#the-header-kindheader-first-line-only"}},
	{"What does the seq number of a record mean, and can it have gaps?", []string{"docs/jsonl-format.md#records-every-other-line"}},
	{"What is kept in the audit record of a permission decision?", []string{"docs/jsonl-format.md#permission"}},
	{"How are input and output tokens of a planner call stored in the session?", []string{"docs/jsonl-format.md#usage"}},
	{"What must a reader do with a record kind it does not know, like compaction?", []string{"docs/jsonl-format.md#kinds-added-later"}},
	{"Is a record appended with a single write to a file opened with O_APPEND?", []string{"docs/jsonl-format.md#writing"}},
	{"What happens to a truncated last line after a crash, and when is it repaired?", []string{"docs/jsonl-format.md#reading-and-what-a-crash-leaves"}},
	{"When does the store fsync, and what can a power loss lose?", []string{"docs/jsonl-format.md#durability"}},
	{"How does flock keep two processes off one session file?", []string{"docs/jsonl-format.md#locking", "README.md#sessions"}},
	{"How do I rewind a conversation into a new session, copying the first messages?", []string{"docs/jsonl-format.md#forks", "README.md#sessions"}},
	{"Which jq command prints everything the user typed?", []string{"docs/jsonl-format.md#jq", "README.md#sessions"}},
	{"Which activity does a planner call become in Temporal, and how are events polled?", []string{"temporal/README.md#how-a-run-maps-to-temporal"}},
	{"How do I run the end-to-end tests against temporal server start-dev?", []string{"temporal/README.md#testing", "README.md#in-process-or-temporal"}},
	{"In the coding assistant, how does edit_file replace old_string with new_string, and which tools are read-only?", []string{"examples/coder/README.md#what-it-does"}},
	{"How do I write a provider for my own in-house model server?", []string{"examples/custom-provider/README.md#custom-provider-your-own-model-server-in-a-page-of-code", "README.md#providers-one-line-to-switch"}},
}

// Recall returns the share of [Questions] for which one of the answers is
// among the first k hits of a document search of the corpus (already put
// in scope), and logs the misses.
func Recall(t testing.TB, s memory.Store, scope string, k int) float64 {
	t.Helper()
	found := 0
	for _, q := range Questions {
		hits, err := memory.Search(t.Context(), s, scope, q.Text, k)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		got := make([]string, len(hits))
		for i, h := range hits {
			got[i] = h.ID
		}
		if slices.ContainsFunc(q.Answers, func(a string) bool { return slices.Contains(got, a) }) {
			found++
		} else {
			t.Logf("miss: %q\n\twant one of %q\n\tgot %q", q.Text, q.Answers, got)
		}
	}
	return float64(found) / float64(len(Questions))
}
