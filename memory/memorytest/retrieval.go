package memorytest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/memory"
)

// Distractors returns n facts that answer none of the [FactQuestions] but
// look like the [Facts]: about the user's colleagues, neighbours and
// friends, a fifth of them in Chinese, with words the questions use
// ("user", "prefers", "office", "database", "coffee", 用户, 喜欢, 每天).
// It is deterministic.
func Distractors(n int) []memory.Item {
	r := rand.New(rand.NewPCG(7, 8))
	pick := func(words []string) string { return words[r.IntN(len(words))] }
	roles := []string{"colleague", "neighbour", "client", "cousin", "friend", "supplier", "contractor", "intern", "landlord", "teacher"}
	things := []string{"green tea", "jazz records", "chess puzzles", "tennis", "sushi", "long walks", "the red notebook",
		"spreadsheets", "podcasts", "window seats", "dark chocolate", "running shoes", "the shared printer",
		"sailing", "gardening", "the night shift", "espresso", "board games", "the old database", "a standing desk",
		"paper maps", "the quiet room", "vinyl", "crossword puzzles", "the blue mug", "cold brew coffee", "a mechanical keyboard"}
	when := []string{"on Mondays", "on Fridays", "at weekends", "in the morning", "after lunch", "in winter", "every evening", "before meetings"}
	places := []string{"the office", "the garage", "the third floor", "the cafeteria", "a locker", "the archive", "the cloud drive"}
	zhRoles := []string{"同事", "邻居", "客户", "表哥", "朋友", "老师", "房东"}
	zhThings := []string{"苹果", "香蕉", "火锅", "篮球", "电影", "跑步", "音乐", "书法", "咖啡", "钓鱼", "围棋", "游泳", "红茶", "饺子"}
	zhWhen := []string{"每天", "周末", "晚上", "每周五", "冬天", "早上"}
	templates := []func(who string) string{
		func(who string) string {
			return fmt.Sprintf("The user's %s prefers %s %s.", who, pick(things), pick(when))
		},
		func(who string) string {
			return fmt.Sprintf("The user's %s keeps %s in %s.", who, pick(things), pick(places))
		},
		func(who string) string {
			return fmt.Sprintf("The user's %s asked about %s %s.", who, pick(things), pick(when))
		},
		func(who string) string {
			return fmt.Sprintf("The user's %s moved to %s and meets the team %s.", who, pick(places), pick(when))
		},
	}
	items := make([]memory.Item, n)
	for i := range items {
		var text string
		if i%5 == 4 {
			text = fmt.Sprintf("用户的%s%d号%s喜欢%s。", pick(zhRoles), i, pick(zhWhen), pick(zhThings))
		} else {
			text = templates[r.IntN(len(templates))](fmt.Sprintf("%s %d", pick(roles), i))
		}
		items[i] = memory.Item{ID: fmt.Sprintf("distractor-%d", i), Kind: memory.KindFact, Text: text}
	}
	return items
}

// LoadFacts puts the [Facts] and n-len(Facts) [Distractors] (none when n
// is smaller) into scope, in batches of 1,000.
func LoadFacts(t testing.TB, s memory.Store, scope string, n int) {
	t.Helper()
	items := append(slices.Clone(Facts), Distractors(max(0, n-len(Facts)))...)
	for start := 0; start < len(items); start += 1000 {
		if _, err := s.Put(t.Context(), scope, items[start:min(start+1000, len(items))]...); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
}

// FactRecall asks every one of the [FactQuestions] of scope (where
// [LoadFacts] put the facts) and returns recall@k by kind of question
// ("all" for every question): the share of questions whose fact is among
// the first k hits. It logs the misses.
func FactRecall(t testing.TB, s memory.Store, scope string, k int) map[string]float64 {
	t.Helper()
	return factRecall(t, s, scope, k, func(q string) string { return q })
}

// factRecall is FactRecall of the questions as wrap turns them into
// queries.
func factRecall(t testing.TB, s memory.Store, scope string, k int, wrap func(string) string) map[string]float64 {
	t.Helper()
	found, asked := map[string]int{}, map[string]int{}
	for _, q := range FactQuestions {
		hits, err := memory.Recall(t.Context(), s, scope, wrap(q.Text), k)
		if err != nil {
			t.Fatalf("Recall(%q): %v", q.Text, err)
		}
		got := ids(hits)
		asked[q.Kind]++
		asked["all"]++
		if slices.Contains(got, q.Answer) {
			found[q.Kind]++
			found["all"]++
		} else {
			t.Logf("miss (%s): %q: want %q, got %q", q.Kind, q.Text, q.Answer, got)
		}
	}
	out := map[string]float64{}
	for kind, n := range asked {
		out[kind] = float64(found[kind]) / float64(n)
	}
	return out
}

// BenchmarkRetrieval measures retrieval of facts at scale: s holds the
// [Facts] among n facts in all (the rest [Distractors]). Its
// sub-benchmarks time a query in turn for each of the [FactQuestions]:
//
//   - "question": the question alone;
//   - "paste20KB" and "paste200KB": the question after a pasted log
//     ([LongMessage]) of 20 KB and 200 KB. Both are searched with
//     [memory.MaxQueryTerms] terms, so the time does not grow with the
//     paste (only choosing the terms does, linearly). It is above that of
//     the question where a term matches most facts ("user" does here):
//     the back ends rank every matching fact against every term.
//
// "question" and "paste200KB" report recall@3 (overall and by kind, as
// the metrics recall@3 and KIND-recall@3); all report ms/query and the
// time the load took (load-s).
func BenchmarkRetrieval(b *testing.B, s memory.Store, n int) {
	benchmarkRetrieval(b, s, n)
}

// BenchmarkRetrievalSizes runs BenchmarkRetrieval among 10,000 and 100,000
// facts (100,000 is skipped with -short), with and without embeddings
// ([HashEmbedder]: a hashed bag of words, no synonyms; it measures the cost
// of the vector route, not the quality of a real embedding model). open
// returns a new store, with emb as its Embedder when emb is not nil.
func BenchmarkRetrievalSizes(b *testing.B, open func(b *testing.B, emb memory.Embedder) memory.Store) {
	for _, withEmb := range []bool{false, true} {
		for _, n := range []int{10000, 100000} {
			name := fmt.Sprintf("facts=%d", n)
			var emb memory.Embedder
			if withEmb {
				name = "embeddings/dim=256/" + name
				emb = &HashEmbedder{Dim: 256}
			}
			b.Run(name, func(b *testing.B) {
				if n > 10000 && testing.Short() {
					b.Skip("100,000 facts: not with -short")
				}
				benchmarkRetrieval(b, open(b, emb), n)
			})
		}
	}
}

func benchmarkRetrieval(b *testing.B, s memory.Store, n int) {
	start := time.Now()
	LoadFacts(b, s, "bench", n)
	load := time.Since(start)
	queries := map[string]map[string]string{"question": {}, "paste20KB": {}, "paste200KB": {}}
	for _, q := range FactQuestions {
		queries["question"][q.Text] = q.Text
		queries["paste20KB"][q.Text] = LongMessage(20<<10, q.Text)
		queries["paste200KB"][q.Text] = LongMessage(200<<10, q.Text)
	}
	recalls := map[string]map[string]float64{
		"question":   FactRecall(b, s, "bench", 3),
		"paste200KB": factRecall(b, s, "bench", 3, func(q string) string { return queries["paste200KB"][q] }),
	}
	for _, name := range []string{"question", "paste20KB", "paste200KB"} {
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				q := queries[name][FactQuestions[i%len(FactQuestions)].Text]
				if _, err := memory.Recall(b.Context(), s, "bench", q, 3); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
			b.ReportMetric(load.Seconds(), "load-s")
			for kind, r := range recalls[name] {
				metric := "recall@3"
				if kind != "all" {
					metric = strings.ReplaceAll(kind, "-", "") + "-recall@3"
				}
				b.ReportMetric(r, metric)
			}
		})
	}
}
