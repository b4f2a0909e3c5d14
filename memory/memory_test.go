package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
	"github.com/agentrt/agentrt/memory"
	"github.com/agentrt/agentrt/memory/memorytest"
	"github.com/agentrt/agentrt/memory/sqlitemem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newMem(t *testing.T) *sqlitemem.Store {
	t.Helper()
	s, err := sqlitemem.Open(":memory:", nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// An agent with the memory tools and the hook, over two sessions of one
// user and one session of another: the fact remembered in the first
// session is shown to the model in the second (and recorded there), never
// to the other user, and every session keeps both invariants.
func TestAgentWithMemory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := newMem(t)
	_, err := mem.Put(ctx, "ann", memory.SplitMarkdown("travel.md", "# Travel policy\n\n## Seats\n\nEconomy on flights under six hours.\n")...)
	require.NoError(t, err)
	store := &agentrt.MemoryStore{}
	newAgent := func(user string, planner agentrt.Planner) *agentrt.Agent {
		return &agentrt.Agent{
			Instructions: "You are a travel assistant.",
			Planner:      planner,
			Tools:        memory.Tools(mem, user),
			Permission:   agentrt.AllowAll(), // remember is a write tool
			Store:        store,
			Hooks:        []agentrt.Hooks{memory.Hook(mem, user, &memory.HookOptions{Records: store})},
		}
	}

	// Session 1: the model remembers a preference.
	p1 := agenttest.Script(
		agenttest.CallTool("remember", `{"text":"Ann prefers window seats on flights."}`),
		agenttest.Reply("Noted: window seats."),
	)
	_, err = agenttest.Collect(newAgent("ann", p1).Run(ctx, "ann-1", "Please remember that I like window seats."))
	require.NoError(t, err)
	p1.AssertDone(t)

	// Session 2: the hook shows the fact; the model also searches the documents.
	var shown, system string
	p2 := agenttest.Script(
		agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			system = req.System
			last := req.Messages[len(req.Messages)-1]
			require.Equal(t, agentrt.RoleUser, last.Role)
			shown = last.Content
			return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
				agentrt.ToolUseBlock("s1", "search", json.RawMessage(`{"query":"flight seats policy"}`)))}, nil
		}),
		agenttest.Reply("A window seat in economy (travel.md § Travel policy › Seats)."),
	)
	events, err := agenttest.Collect(newAgent("ann", p2).Run(ctx, "ann-2", "Book my flight to Lisbon; which seat?"))
	require.NoError(t, err)
	p2.AssertDone(t)
	assert.Equal(t, "You are a travel assistant.", system, "the system prompt is left alone")
	assert.True(t, strings.HasPrefix(shown, memory.RecallHeading+"\n"), shown)
	assert.Contains(t, shown, "Ann prefers window seats on flights.")
	results := agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 1)
	assert.Contains(t, results[0].Message.Content, "[1] travel.md § Travel policy › Seats\nEconomy on flights under six hours.")

	// The records of session 2 say what the model was shown, each turn.
	var recalls []memory.RecallRecord
	recs, err := store.LoadRecords(t.Context(), "ann-2")
	require.NoError(t, err)
	for _, rec := range recs {
		if rec.Kind == memory.RecordKind {
			var r memory.RecallRecord
			require.NoError(t, json.Unmarshal(rec.Data, &r))
			recalls = append(recalls, r)
		}
	}
	require.Len(t, recalls, 2, "one record per planner call")
	assert.Equal(t, 1, recalls[0].Turn)
	assert.Equal(t, "ann", recalls[0].Scope)
	assert.Equal(t, "Book my flight to Lisbon; which seat?", recalls[0].Query)
	var texts []string
	for _, h := range recalls[0].Hits {
		texts = append(texts, h.Text)
	}
	assert.Contains(t, texts, "Ann prefers window seats on flights.")

	// Another user: nothing of Ann's.
	var shownBob string
	p3 := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		shownBob = req.System
		require.Len(t, req.Messages, 1, "nothing recalled, nothing added")
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(
			agentrt.ToolUseBlock("r1", "recall", json.RawMessage(`{"query":"window seats flights"}`)))}, nil
	}), agenttest.Reply("No preference known."))
	events, err = agenttest.Collect(newAgent("bob", p3).Run(ctx, "bob-1", "Book my flight; which seat do I like? window?"))
	require.NoError(t, err)
	assert.Equal(t, "You are a travel assistant.", shownBob)
	results = agenttest.Filter[agentrt.ToolResult](events)
	require.Len(t, results, 1)
	assert.Equal(t, "nothing found", results[0].Message.Content)
	recs, err = store.LoadRecords(t.Context(), "bob-1")
	require.NoError(t, err)
	for _, rec := range recs {
		assert.NotEqual(t, memory.RecordKind, rec.Kind, "nothing recalled, nothing recorded")
	}

	for _, id := range []string{"ann-1", "ann-2", "bob-1"} {
		msgs, err := store.Load(ctx, id)
		require.NoError(t, err)
		agenttest.AssertInvariants(t, msgs)
		for _, m := range msgs {
			assert.NotContains(t, m.Content, memory.RecallHeading, "%s: the session does not keep what was recalled", id)
		}
	}
}

// Each request the hook sees is the session's history plus one message of
// what was recalled: the system prompt and every message before that tail
// are the bytes of the previous request's, so a provider's prompt cache
// keeps serving them. The hook never changes the session's messages.
func TestHookKeepsThePrefix(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := newMem(t)
	_, err := memory.Remember(ctx, mem, "ann", "Ann keeps her notes in notes.md.", "")
	require.NoError(t, err)
	_, err = memory.Remember(ctx, mem, "ann", "Ann's notes are in Portuguese.", "")
	require.NoError(t, err)
	type request struct {
		system string
		msgs   []byte // the messages, as JSON
		n      int
		last   agentrt.Message
	}
	var reqs []request
	record := func(_ context.Context, req *agentrt.ModelRequest) {
		b, err := json.Marshal(req.Messages)
		require.NoError(t, err)
		reqs = append(reqs, request{req.System, b, len(req.Messages), req.Messages[len(req.Messages)-1]})
	}
	step := func(resp *agentrt.ModelResponse) agenttest.Step {
		return agenttest.Func(func(ctx context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
			record(ctx, req)
			return resp, nil
		})
	}
	call := func(id, query string) *agentrt.ModelResponse {
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.ToolUseBlock(id, "recall", json.RawMessage(`{"query":"`+query+`"}`)))}
	}
	planner := agenttest.Script(
		step(call("r1", "notes")),
		step(call("r2", "Portuguese")),
		step(&agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("In notes.md, in Portuguese."))}),
		step(&agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("Yes."))}),
	)
	store := &agentrt.MemoryStore{}
	ag := &agentrt.Agent{
		Instructions: "You help Ann.",
		Planner:      planner,
		Store:        store,
		Tools:        memory.Tools(mem, "ann"),
		Hooks:        []agentrt.Hooks{memory.Hook(mem, "ann", &memory.HookOptions{Records: store})},
	}
	_, err = agenttest.Collect(ag.Run(ctx, "s", "Where are my notes kept?"))
	require.NoError(t, err)
	_, err = agenttest.Collect(ag.Run(ctx, "s", "Are they in Portuguese, my notes?"))
	require.NoError(t, err)
	planner.AssertDone(t)
	require.Len(t, reqs, 4)

	for i, r := range reqs {
		assert.Equal(t, "You help Ann.", r.system, "call %d: the system prompt is the Agent's", i+1)
		assert.Equal(t, agentrt.RoleUser, r.last.Role, "call %d", i+1)
		assert.True(t, strings.HasPrefix(r.last.Content, memory.RecallHeading+"\n"), "call %d ends with what was recalled: %q", i+1, r.last.Content)
		if i == 0 {
			continue
		}
		// The previous request without its tail is a prefix of this one.
		var prev, cur []json.RawMessage
		require.NoError(t, json.Unmarshal(reqs[i-1].msgs, &prev))
		require.NoError(t, json.Unmarshal(r.msgs, &cur))
		require.Greater(t, len(cur), len(prev)-1, "call %d", i+1)
		assert.Equal(t, prev[:len(prev)-1], cur[:len(prev)-1], "call %d repeats the history of call %d byte for byte", i+1, i)
	}
	msgs, err := store.Load(ctx, "s")
	require.NoError(t, err)
	agenttest.AssertInvariants(t, msgs)
	assert.Equal(t, reqs[3].n-1, len(msgs)-1, "the session holds the last request without its tail, and the answer")
	for _, m := range msgs {
		assert.NotContains(t, m.Content, memory.RecallHeading, "the session does not keep what was recalled")
	}
}

func TestHookFailureEndsRun(t *testing.T) {
	t.Parallel()
	mem := newMem(t)
	require.NoError(t, mem.Close()) // every query fails
	ag := &agentrt.Agent{
		Planner: agenttest.Script(agenttest.Reply("unreachable")),
		Hooks:   []agentrt.Hooks{memory.Hook(mem, "u", nil)},
	}
	_, err := agenttest.Collect(ag.Run(t.Context(), "s", "hello there"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "memory:")
}

func TestSplitMarkdown(t *testing.T) {
	t.Parallel()
	doc := "Intro text.\n\n# Title\n\nBody.\n\n## Part: One!\n\n```sh\n# not a heading\n```\n\n### Deep\n\nDeeper.\n\n## Part: One!\n\nAgain.\n\n#NoSpace is text\n"
	items := memory.SplitMarkdown("d.md", doc)
	var got [][3]string
	for _, it := range items {
		got = append(got, [3]string{it.ID, it.Heading, it.Text})
		assert.Equal(t, memory.KindDocument, it.Kind)
		assert.Equal(t, "d.md", it.Source)
	}
	assert.Equal(t, [][3]string{
		{"d.md#top", "", "Intro text."},
		{"d.md#title", "Title", "Title\n\nBody."},
		{"d.md#part-one", "Title › Part: One!", "Title › Part: One!\n\n```sh\n# not a heading\n```"},
		{"d.md#deep", "Title › Part: One! › Deep", "Title › Part: One! › Deep\n\nDeeper."},
		{"d.md#part-one-1", "Title › Part: One!", "Title › Part: One!\n\nAgain.\n\n#NoSpace is text"},
	}, got)

	long := "# L\n\n" + strings.Repeat(strings.Repeat("word ", 100)+"\n\n", 10)
	parts := memory.SplitMarkdown("l.md", long)
	require.Greater(t, len(parts), 1)
	assert.Equal(t, "l.md#l", parts[0].ID)
	assert.Equal(t, "l.md#l-part2", parts[1].ID)
	for _, p := range parts {
		assert.LessOrEqual(t, len(p.Text), memory.MaxChunk+len("L\n\n"))
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"jsonl", "store", "fsync", "o_append", "2"}, memory.Terms(`When does the JSONL store fsync? (O_APPEND, "store", 2 a)`))
	assert.Empty(t, memory.Terms(`"" AND OR * ^ -`))
	assert.Equal(t, []string{"芒果"}, memory.Terms("芒果"))
	assert.Equal(t, []string{"猫"}, memory.Terms("猫?"))
	assert.Equal(t, []string{"用户", "户喜", "喜欢", "欢什", "什么", "么水", "水果"}, memory.Terms("用户喜欢什么水果？"))
	assert.Equal(t, []string{"iphone", "手机", "マン", "ンゴ", "ゴー", "망고", "고입", "입니", "니다"},
		memory.Terms("iPhone手机 マンゴー 망고입니다"))
}

func TestCJKGrams(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", memory.CJKGrams("Only English words, 42 of them."))
	assert.Equal(t, "水 水果 果 果是 是 是芒 芒 芒果", memory.CJKGrams("水果是芒果。"), "each once")
	assert.Equal(t, "用 iphone 手 手机 机", memory.CJKGrams("He said 用iPhone手机 today"), "a word against Chinese is indexed on its own")
	assert.Equal(t, "망 망고 고 고입 입 입니 니 니다 다", memory.CJKGrams("망고입니다"))
	var long strings.Builder
	r := rand.New(rand.NewPCG(1, 2))
	for range 300_000 {
		long.WriteRune(rune(0x4e00 + r.IntN(20000)))
	}
	assert.LessOrEqual(t, len(memory.CJKGrams(long.String())), memory.MaxGrams)
	for _, q := range []string{"芒果", "水果", "是"} {
		for _, term := range memory.Terms(q) {
			assert.Contains(t, strings.Fields(memory.CJKGrams("用户最喜欢的水果是芒果。")), term)
		}
	}
}

// QueryTerms keeps a question's terms as they are and bounds a paste of
// any size to MaxQueryTerms: the longest words first, then the longest
// terms written next to digits (ids, numbers); the question after a pasted
// log keeps all its words.
func TestQueryTermsBounded(t *testing.T) {
	t.Parallel()
	q := "Which port does the staging database use, and why 5433?"
	assert.Equal(t, memory.Terms(q), memory.QueryTerms(q))

	paste := memorytest.LongMessage(200<<10, "Why does the reconciliation controller crash?")
	require.GreaterOrEqual(t, len(paste), 200<<10)
	require.Greater(t, len(memory.Terms(paste)), 20000, "the paste has tens of thousands of distinct terms")
	terms := memory.QueryTerms(paste)
	assert.Len(t, terms, memory.MaxQueryTerms)
	words := []string{"info", "warn", "debug", "error", "job", "processed", "retrying", "flushed", "queued", "cancelled",
		"reconciliation", "controller", "crash"}
	assert.Subset(t, terms, words, "words come before ids and numbers")
	for _, w := range terms {
		if !slices.Contains(words, w) {
			assert.Len(t, w, 12, "the longest parts of the UUIDs: %q", w)
		}
	}
	for _, q := range memorytest.FactQuestions {
		assert.Subset(t, memory.QueryTerms(memorytest.LongMessage(20<<10, q.Text)), memory.Terms(q.Text), q.Text)
	}

	var many []string
	for i := range 40 {
		many = append(many, strings.Repeat("x", i%7+2)+string(rune('a'+i%26))+fmt.Sprint(i/26))
	}
	many = append(many, "longestword", "tiny")
	got := memory.QueryTerms(strings.Join(many, " "))
	require.Len(t, got, memory.MaxQueryTerms)
	assert.Equal(t, []string{"longestword", "tiny"}, got[len(got)-2:], "words first, kept in the order of the text")
	assert.NotContains(t, got, "xxa0", "the shortest terms with a digit are dropped")
	assert.Contains(t, got, "xxxxxxxxg0")
}

func TestFuseAndCosine(t *testing.T) {
	t.Parallel()
	a := []memory.Hit{{Item: memory.Item{ID: "x"}}, {Item: memory.Item{ID: "y"}}}
	b := []memory.Hit{{Item: memory.Item{ID: "y"}}, {Item: memory.Item{ID: "z"}}}
	got := memory.Fuse(2, a, b)
	require.Len(t, got, 2)
	assert.Equal(t, "y", got[0].ID, "in both lists")
	assert.Equal(t, "x", got[1].ID)
	assert.InDelta(t, 1.0/62+1.0/61, got[0].Score, 1e-12)

	v := []float32{1, -2.5, 0, 3e-7}
	d, err := memory.DecodeVector(memory.EncodeVector(v))
	require.NoError(t, err)
	assert.Equal(t, v, d)
	_, err = memory.DecodeVector([]byte{1, 2, 3})
	assert.Error(t, err)
	assert.InDelta(t, 1, memory.Cosine(v, v), 1e-9)
	assert.InDelta(t, 0, memory.Cosine([]float32{1, 0}, []float32{0, 1}), 1e-9)
	assert.Zero(t, memory.Cosine([]float32{1}, []float32{1, 2}))
}

func TestFormatHits(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "nothing found", memory.FormatHits(nil, 0))
	hits := []memory.Hit{
		{Item: memory.Item{Text: "héllo world", Source: "a.md", Heading: "H"}},
		{Item: memory.Item{Text: "fact"}},
	}
	assert.Equal(t, "[1] a.md § H\nhél…\n\n[2] fact", memory.FormatHits(hits, 4))
	assert.Equal(t, "[1] a.md § H\nh…\n\n[2] fa…", memory.FormatHits(hits, 2), "never cuts a rune")
	doc := []memory.Hit{{Item: memory.Item{Text: "A › B\n\nbody", Source: "x.md", Heading: "A › B"}}}
	assert.Equal(t, "[1] x.md § A › B\nbody", memory.FormatHits(doc, 0), "the heading is not repeated")
}

func TestTopK(t *testing.T) {
	t.Parallel()
	top := memory.NewTopK(3)
	for i, s := range []float64{0.5, 0.1, 0.9, 0.3, 0.7, 0.9, -1} {
		top.Push(memory.Hit{Item: memory.Item{ID: string(rune('a' + i))}, Score: s})
	}
	var got []string
	for _, h := range top.Hits() {
		got = append(got, h.ID)
	}
	assert.Equal(t, []string{"c", "f", "e"}, got)
	assert.Empty(t, memory.NewTopK(0).Hits())
	v := []float32{0.5, -1, 2}
	assert.InDelta(t, memory.Cosine(v, []float32{1, 1, 1}), memory.CosineEncoded(v, memory.EncodeVector([]float32{1, 1, 1})), 1e-12)
	assert.Zero(t, memory.CosineEncoded(v, []byte{1, 2, 3, 4}))
}

// storeWithoutRecords keeps messages only.
type storeWithoutRecords struct{ agentrt.SessionStore }

func TestHookRefusesAStoreThatCannotKeepRecords(t *testing.T) {
	s, err := sqlitemem.Open(":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	assert.PanicsWithValue(t,
		"memory: Hook: HookOptions.Records is a memory_test.storeWithoutRecords, which cannot keep records (it is not an agentrt.RecordStore)",
		func() {
			memory.Hook(s, "u", &memory.HookOptions{Records: storeWithoutRecords{&agentrt.MemoryStore{}}})
		})
	assert.NotPanics(t, func() { memory.Hook(s, "u", &memory.HookOptions{Records: &agentrt.MemoryStore{}}) })
	assert.NotPanics(t, func() { memory.Hook(s, "u", nil) })
	assert.PanicsWithValue(t, "memory: Hook: negative HookOptions.Limit (-1) or MaxText (0)", func() { memory.Hook(s, "u", &memory.HookOptions{Limit: -1}) })
	assert.PanicsWithValue(t, "memory: Hook: negative HookOptions.Limit (0) or MaxText (-5)", func() { memory.Hook(s, "u", &memory.HookOptions{MaxText: -5}) })
}

// BenchmarkQueryTerms: choosing the terms of a message is linear in its
// size (the search that follows is not: it gets at most MaxQueryTerms).
func BenchmarkQueryTerms(b *testing.B) {
	for _, size := range []int{1 << 10, 10 << 10, 200 << 10} {
		msg := memorytest.LongMessage(size, "What is the name of the user's dog?")
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			for b.Loop() {
				memory.QueryTerms(msg)
			}
		})
	}
}

// Two hooks (facts of the user, documents of the team): each queries with
// the user's message, not with what the other added, and each adds its
// own message after the history.
func TestTwoHooks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := newMem(t)
	_, err := memory.Remember(ctx, mem, "ann", "Ann deploys on Fridays.", "")
	require.NoError(t, err)
	_, err = mem.Put(ctx, "team", memory.SplitMarkdown("deploy.md", "# Deploys\n\nDeploys run from main on Fridays.\n")...)
	require.NoError(t, err)
	store := &agentrt.MemoryStore{}
	var tail []string
	planner := agenttest.Script(agenttest.Func(func(_ context.Context, req *agentrt.ModelRequest) (*agentrt.ModelResponse, error) {
		for _, m := range req.Messages[1:] {
			tail = append(tail, m.Content)
		}
		return &agentrt.ModelResponse{Message: agentrt.NewAssistantMessage(agentrt.TextBlock("Fridays."))}, nil
	}))
	ag := &agentrt.Agent{Planner: planner, Store: store, Hooks: []agentrt.Hooks{
		memory.Hook(mem, "ann", &memory.HookOptions{Records: store}),
		memory.Hook(mem, "team", &memory.HookOptions{Records: store}),
	}}
	_, err = agenttest.Collect(ag.Run(ctx, "s", "When do deploys happen on Fridays?"))
	require.NoError(t, err)
	require.Len(t, tail, 2, "one message from each hook")
	assert.Contains(t, tail[0], "Ann deploys on Fridays.")
	assert.Contains(t, tail[1], "deploy.md § Deploys")
	recs, err := store.LoadRecords(ctx, "s")
	require.NoError(t, err)
	var queries []string
	for _, rec := range recs {
		if rec.Kind == memory.RecordKind {
			var r memory.RecallRecord
			require.NoError(t, json.Unmarshal(rec.Data, &r))
			queries = append(queries, r.Scope+": "+r.Query)
		}
	}
	assert.Equal(t, []string{"ann: When do deploys happen on Fridays?", "team: When do deploys happen on Fridays?"}, queries)
}
