// Package memorytest checks [memory.Store] implementations: a contract
// suite ([TestStore], scopes never leaking and Chinese, Japanese and Korean
// text included), a long pasted message through the hook and the tools
// ([TestLongMessage]), a retrieval quality test ([Recall]) on a labelled
// set of questions over a snapshot of this repository's documentation
// ([Corpus]), and a retrieval benchmark of remembered facts ([Facts],
// [FactQuestions], [BenchmarkRetrieval]).
package memorytest

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/memory"
)

//go:embed corpus
var corpus embed.FS

// Corpus returns the snapshot of this repository's Markdown documentation
// (README.md, docs/, temporal/README.md, examples/*/README.md) that the
// labelled questions are about.
func Corpus() fs.FS {
	sub, err := fs.Sub(corpus, "corpus")
	if err != nil {
		panic(err)
	}
	return sub
}

// TestStore checks that a store keeps the contract of [memory.Store].
// newStore must return a new, empty store each time. It checks: put and
// query of facts and documents, kinds, replacing by ID, delete, limits, a
// query that matches nothing, invalid scopes, concurrent puts, Chinese,
// Japanese and Korean text, and that a scope never sees another's items
// (through every method).
func TestStore(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s memory.Store)
	}{
		{"PutQuery", testPutQuery},
		{"Kinds", testKinds},
		{"ReplaceAndDelete", testReplaceDelete},
		{"Limit", testLimit},
		{"NoMatch", testNoMatch},
		{"InvalidScope", testInvalidScope},
		{"ScopesDoNotLeak", testScopes},
		{"Concurrent", testConcurrent},
		{"CJK", testCJK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			if s == nil {
				t.Fatal("newStore returned nil")
			}
			tt.fn(t, s)
		})
	}
}

func put(t *testing.T, s memory.Store, scope string, items ...memory.Item) []string {
	t.Helper()
	ids, err := s.Put(t.Context(), scope, items...)
	if err != nil {
		t.Fatalf("Put(%q): %v", scope, err)
	}
	if len(ids) != len(items) {
		t.Fatalf("Put(%q) returned %d ids for %d items", scope, len(ids), len(items))
	}
	return ids
}

func query(t *testing.T, s memory.Store, scope string, q memory.Query) []memory.Hit {
	t.Helper()
	hits, err := s.Query(t.Context(), scope, q)
	if err != nil {
		t.Fatalf("Query(%q, %q): %v", scope, q.Text, err)
	}
	return hits
}

func ids(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

var facts = []string{
	"The user prefers metric units and temperatures in Celsius.",
	"The user's dog is called Biscuit and is a beagle.",
	"Deployments happen on Tuesdays after the standup.",
	"The staging database runs PostgreSQL 15 on port 5433.",
	"The user is allergic to peanuts.",
}

func testPutQuery(t *testing.T, s memory.Store) {
	var items []memory.Item
	for _, f := range facts {
		items = append(items, memory.Item{Kind: memory.KindFact, Text: f, Source: "session-1"})
	}
	got := put(t, s, "user-1", items...)
	seen := map[string]bool{}
	for _, id := range got {
		if id == "" || seen[id] {
			t.Fatalf("Put returned empty or repeated ids: %q", got)
		}
		seen[id] = true
	}
	hits := query(t, s, "user-1", memory.Query{Text: "what is the name of my dog?", Limit: 3})
	if len(hits) == 0 || hits[0].ID != got[1] {
		t.Fatalf("query for the dog: got %q, want %q first", ids(hits), got[1])
	}
	h := hits[0]
	if h.Text != facts[1] || h.Kind != memory.KindFact || h.Source != "session-1" || h.Created.IsZero() {
		t.Errorf("hit does not carry the item: %+v", h)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not best first: %+v", hits)
		}
	}
	hits = query(t, s, "user-1", memory.Query{Text: "Which port does the staging database use?"})
	if len(hits) == 0 || hits[0].ID != got[3] {
		t.Errorf("query for the database: got %q, want %q first", ids(hits), got[3])
	}
	// Stemming or not, the exact words find it.
	hits = query(t, s, "user-1", memory.Query{Text: "peanuts"})
	if len(hits) != 1 || hits[0].ID != got[4] {
		t.Errorf("query peanuts: got %q, want only %q", ids(hits), got[4])
	}
}

func testKinds(t *testing.T, s memory.Store) {
	put(t, s, "k",
		memory.Item{ID: "fact-1", Kind: memory.KindFact, Text: "The office wifi password rotates monthly."},
		memory.Item{ID: "doc-1", Kind: memory.KindDocument, Text: "Wifi: connect to the office network.", Source: "it.md", Heading: "Wifi"},
	)
	check := func(kinds []memory.Kind, want []string) {
		t.Helper()
		got := ids(query(t, s, "k", memory.Query{Text: "office wifi", Kinds: kinds}))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("kinds %v: got %q, want %q", kinds, got, want)
		}
	}
	check(nil, []string{"doc-1", "fact-1"})
	check([]memory.Kind{memory.KindFact}, []string{"fact-1"})
	check([]memory.Kind{memory.KindDocument}, []string{"doc-1"})
	check([]memory.Kind{memory.KindFact, memory.KindDocument}, []string{"doc-1", "fact-1"})
	hits := query(t, s, "k", memory.Query{Text: "wifi", Kinds: []memory.Kind{memory.KindDocument}})
	if len(hits) != 1 || hits[0].Source != "it.md" || hits[0].Heading != "Wifi" || hits[0].Citation() != "it.md § Wifi" {
		t.Errorf("document hit: %+v", hits)
	}
}

func testReplaceDelete(t *testing.T, s memory.Store) {
	put(t, s, "r", memory.Item{ID: "x", Text: "The car is red."}, memory.Item{ID: "y", Text: "The bike is blue."})
	put(t, s, "r", memory.Item{ID: "x", Text: "The car is green now."})
	if got := ids(query(t, s, "r", memory.Query{Text: "red"})); len(got) != 0 {
		t.Errorf("a replaced text is still found: %q", got)
	}
	hits := query(t, s, "r", memory.Query{Text: "green car"})
	if len(hits) != 1 || hits[0].ID != "x" || hits[0].Text != "The car is green now." {
		t.Errorf("replaced item: %+v", hits)
	}
	if err := s.Delete(t.Context(), "r", "x", "missing"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := ids(query(t, s, "r", memory.Query{Text: "car bike"})); !slices.Equal(got, []string{"y"}) {
		t.Errorf("after Delete: %q, want [y]", got)
	}
}

func testLimit(t *testing.T, s memory.Store) {
	var items []memory.Item
	for i := range 12 {
		items = append(items, memory.Item{Text: fmt.Sprintf("Note %d about the garden.", i)})
	}
	put(t, s, "l", items...)
	if n := len(query(t, s, "l", memory.Query{Text: "garden"})); n != memory.DefaultLimit {
		t.Errorf("default limit: %d hits, want %d", n, memory.DefaultLimit)
	}
	if n := len(query(t, s, "l", memory.Query{Text: "garden", Limit: 10})); n != 10 {
		t.Errorf("limit 10: %d hits", n)
	}
}

func testNoMatch(t *testing.T, s memory.Store) {
	put(t, s, "n", memory.Item{Text: "Only this."})
	for _, q := range []string{"", "   ", "?!", "the of and", "zebra", `"quoted" AND (NEAR OR) * -x :col ^`} {
		hits, err := s.Query(t.Context(), "n", memory.Query{Text: q})
		if err != nil {
			t.Errorf("Query(%q): %v", q, err)
		}
		if len(hits) != 0 {
			t.Errorf("Query(%q) matched %q", q, ids(hits))
		}
	}
	if hits := query(t, s, "empty-scope", memory.Query{Text: "only"}); len(hits) != 0 {
		t.Errorf("a scope never written has hits: %q", ids(hits))
	}
}

func testInvalidScope(t *testing.T, s memory.Store) {
	for _, scope := range []string{"", strings.Repeat("s", memory.MaxScopeLen+1), "bad-\xff"} {
		if _, err := s.Put(t.Context(), scope, memory.Item{Text: "x"}); err == nil {
			t.Errorf("Put(%q) accepted an invalid scope", scope)
		}
		if _, err := s.Query(t.Context(), scope, memory.Query{Text: "x"}); err == nil {
			t.Errorf("Query(%q) accepted an invalid scope", scope)
		}
		if err := s.Delete(t.Context(), scope, "x"); err == nil {
			t.Errorf("Delete(%q) accepted an invalid scope", scope)
		}
	}
}

// testScopes: what one scope remembers is never returned in another, not
// even when IDs, texts and queries are the same, nor after a delete or a
// replace in the other scope.
func testScopes(t *testing.T, s memory.Store) {
	scopes := []string{"alice", "bob", "Alice", "alice ", "tenant/1:alice"}
	for i, sc := range scopes {
		put(t, s, sc,
			memory.Item{ID: "shared-id", Text: fmt.Sprintf("The secret code of %s is %d-omega.", sc, i)},
			memory.Item{ID: "doc", Kind: memory.KindDocument, Text: fmt.Sprintf("Secret handbook of %s, edition %d.", sc, i), Source: sc + ".md"},
		)
	}
	put(t, s, "carol", memory.Item{Text: "Carol keeps the only copy of the plans."})
	for i, sc := range scopes {
		hits := query(t, s, sc, memory.Query{Text: "secret code handbook omega edition plans copy", Limit: 20})
		if len(hits) != 2 {
			t.Errorf("scope %q: %d hits, want its own 2: %+v", sc, len(hits), hits)
		}
		for _, h := range hits {
			if !strings.Contains(h.Text, fmt.Sprintf("%d", i)) || !strings.Contains(h.Text, sc) {
				t.Errorf("scope %q got another scope's item: %+v", sc, h)
			}
		}
	}
	if hits := query(t, s, "dave", memory.Query{Text: "secret code plans", Limit: 20}); len(hits) != 0 {
		t.Errorf("an empty scope sees %q", ids(hits))
	}
	// Deleting and replacing in one scope leaves the others alone.
	if err := s.Delete(t.Context(), "alice", "shared-id"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bob", memory.Item{ID: "doc", Kind: memory.KindDocument, Text: "Bob's handbook, rewritten."})
	if hits := query(t, s, "Alice", memory.Query{Text: "secret code", Limit: 20}); len(hits) != 2 {
		t.Errorf("a delete in alice reached Alice: %+v", hits)
	}
	if hits := query(t, s, "alice", memory.Query{Text: "handbook", Limit: 20}); len(hits) != 1 || !strings.Contains(hits[0].Text, "alice,") {
		t.Errorf("a replace in bob reached alice: %+v", hits)
	}
}

func testConcurrent(t *testing.T, s memory.Store) {
	const writers, each = 4, 10
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				scope := fmt.Sprintf("w%d", g)
				if _, err := s.Put(context.Background(), scope, memory.Item{Text: fmt.Sprintf("writer %d wrote line %d of the log", g, i)}); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				if _, err := s.Query(context.Background(), scope, memory.Query{Text: "log line"}); err != nil {
					t.Errorf("Query: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	for g := range writers {
		if n := len(query(t, s, fmt.Sprintf("w%d", g), memory.Query{Text: "log", Limit: 50})); n != each {
			t.Errorf("writer %d: %d items, want %d", g, n, each)
		}
	}
}

// CJKFacts are facts in Chinese, Japanese and Korean (and one mixed with
// English), whose words are not separated by spaces (or, in Korean, carry
// particles).
var CJKFacts = []memory.Item{
	{ID: "zh-fruit", Text: "用户最喜欢的水果是芒果。"},
	{ID: "zh-cat", Text: "我的猫叫小白，今年三岁。"},
	{ID: "zh-phone", Text: "他用iPhone手机给客户打电话。"},
	{ID: "ja-city", Text: "ユーザーは東京に住んでいます。"},
	{ID: "ja-fruit", Text: "好きな果物はマンゴーです。"},
	{ID: "ko-fruit", Text: "사용자가 가장 좋아하는 과일은 망고입니다."},
	{ID: "en", Text: "The user drinks green tea every morning."},
}

// testCJK: a word of Chinese, Japanese or Korean finds the text it is in,
// a single character too, and a whole sentence its own fact first.
func testCJK(t *testing.T, s memory.Store) {
	put(t, s, "cjk", CJKFacts...)
	put(t, s, "other", memory.Item{ID: "other-fruit", Text: "另一个用户也喜欢芒果。"})
	for _, c := range []struct{ query, want string }{
		{"芒果", "zh-fruit"},
		{"用户最喜欢什么水果？", "zh-fruit"},
		{"用户最喜欢的水果是芒果。", "zh-fruit"},
		{"猫", "zh-cat"},
		{"小白几岁了", "zh-cat"},
		{"手机", "zh-phone"},
		{"iphone", "zh-phone"},
		{"东京 東京", "ja-city"},
		{"マンゴー", "ja-fruit"},
		{"果物", "ja-fruit"},
		{"망고", "ko-fruit"},
		{"좋아하는 과일", "ko-fruit"},
		{"green tea", "en"},
	} {
		hits := query(t, s, "cjk", memory.Query{Text: c.query, Limit: 3})
		if len(hits) == 0 || hits[0].ID != c.want {
			t.Errorf("Query(%q): got %q, want %q first", c.query, ids(hits), c.want)
		}
		for _, h := range hits {
			if h.ID == "other-fruit" {
				t.Errorf("Query(%q) leaked another scope's item", c.query)
			}
		}
	}
	// A long text (300,000 random characters without punctuation: 900 KB)
	// is kept, and found by the words at its start.
	var long strings.Builder
	long.WriteString("长篇小说的开头。")
	r := rand.New(rand.NewPCG(9, 10))
	for range 300_000 {
		long.WriteRune(rune(0x4e00 + r.IntN(20000)))
	}
	put(t, s, "cjk", memory.Item{ID: "zh-long", Text: long.String()})
	if hits := query(t, s, "cjk", memory.Query{Text: "长篇小说", Limit: 1}); len(hits) != 1 || hits[0].ID != "zh-long" {
		t.Errorf("the long Chinese text: got %q", ids(hits))
	}
	put(t, s, "cjk", memory.Item{ID: "zh-fruit", Text: "用户最喜欢的水果是荔枝。"})
	if got := ids(query(t, s, "cjk", memory.Query{Text: "芒果"})); slices.Contains(got, "zh-fruit") {
		t.Errorf("a replaced Chinese text is still found: %q", got)
	}
	if got := ids(query(t, s, "cjk", memory.Query{Text: "荔枝"})); !slices.Equal(got, []string{"zh-fruit"}) {
		t.Errorf("the replacement: got %q", got)
	}
}
