package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terms returns the words of a text worth searching for, in order and
// without repeats: lower-cased runs of letters and digits, without common
// English stop words. Chinese, Japanese and Korean, written without spaces
// between words, become pairs of adjacent characters ("芒果" in
// "是芒果" gives "是芒" and "芒果"; a lone character stays one), which
// match the pairs back ends index ([CJKGrams]). Back ends build their
// full-text queries from [QueryTerms], a bounded choice of these (any term
// may match; more matching terms rank higher).
func Terms(text string) []string {
	var terms []string
	seen := map[string]bool{}
	eachTerm(text, func(w string) {
		if !seen[w] {
			seen[w] = true
			terms = append(terms, w)
		}
	})
	return terms
}

// eachTerm calls yield with each term of text, repeats included.
func eachTerm(text string, yield func(term string)) {
	for _, w := range words(strings.ToLower(text)) {
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case isCJK(r):
			cjk := []rune(w)
			if len(cjk) == 1 {
				yield(w)
			}
			for i := 0; i+1 < len(cjk); i++ {
				yield(string(cjk[i : i+2]))
			}
		case stopWords[w] || (len(w) < 2 && !unicode.IsDigit(r)):
		default:
			yield(w)
		}
	}
}

// MaxQueryTerms is the most terms a back end of this module searches for
// in one query ([QueryTerms]): a pasted log or document of any size costs
// the same as a question of a few dozen words.
const MaxQueryTerms = 32

// QueryTerms returns the terms a back end searches for: the [Terms] of the
// text, or, when there are more than [MaxQueryTerms], the longest words
// (long words are the rarer ones; a Chinese, Japanese or Korean character
// counts as three letters), then the longest of the other terms: those
// written only next to a digit, in a string such as
// "trace=4f2a-dcaf-9b1e" or "2026-12-03T11:54:37Z" (the ids, hashes and
// numbers of a pasted log say little). Ties go to the earlier term. They
// are returned in the order of the text.
func QueryTerms(text string) []string {
	type term struct {
		text   string
		weight int
	}
	var terms []term
	index := map[string]int{}
	for _, field := range strings.Fields(text) {
		numeric := strings.ContainsFunc(field, unicode.IsDigit)
		eachTerm(field, func(w string) {
			i, ok := index[w]
			if !ok {
				i = len(terms)
				index[w] = i
				terms = append(terms, term{text: w, weight: -1 << 20})
			}
			if !numeric && terms[i].weight < 0 {
				terms[i].weight = 0
			}
		})
	}
	if len(terms) > MaxQueryTerms {
		for i := range terms {
			for _, r := range terms[i].text {
				if isCJK(r) {
					terms[i].weight += 3
				} else {
					terms[i].weight++
				}
			}
		}
		order := make([]int, len(terms))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return terms[b].weight - terms[a].weight })
		order = order[:MaxQueryTerms]
		slices.Sort(order)
		kept := make([]term, len(order))
		for i, j := range order {
			kept[i] = terms[j]
		}
		terms = kept
	}
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t.text
	}
	return out
}

// CJKGrams returns what back ends index besides the words for text in
// Chinese, Japanese or Korean: every character and every pair of adjacent
// characters of each run of Han, Hiragana, Katakana or Hangul, and the
// other words written against such a run ("iphone" in "用iPhone手机"),
// lower-cased, each once, separated by spaces, at most [MaxGrams] bytes;
// "" when the text has none. A full-text index
// splits such a run into one token per clause, so that "芒果" would not
// find "用户最喜欢的水果是芒果。"; the pairs let [Terms] find it (as
// Lucene's CJK bigrams do). SQLite's trigram tokenizer and pg_trgm would
// not: most Chinese words are two characters, shorter than a trigram.
func CJKGrams(text string) string {
	var b strings.Builder
	seen := map[string]bool{}
	write := func(s string) {
		if seen[s] || b.Len()+1+len(s) > MaxGrams {
			return
		}
		seen[s] = true
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	for _, tok := range tokens(strings.ToLower(text)) {
		runs := scriptRuns(tok)
		if r, _ := utf8.DecodeRuneInString(tok); len(runs) == 1 && !isCJK(r) {
			continue // a word the index has already
		}
		for _, w := range runs {
			r := []rune(w)
			if !isCJK(r[0]) {
				write(w)
				continue
			}
			for i := range r {
				for n := 1; n <= 2 && i+n <= len(r); n++ {
					write(string(r[i : i+n]))
				}
			}
		}
	}
	return b.String()
}

// MaxGrams bounds what [CJKGrams] returns, in bytes: some 16,000
// distinct characters and pairs, which keeps the index of an item within
// PostgreSQL's limit of 1 MB per tsvector. The rest of a longer text is
// found by its words (those separated by spaces or punctuation) only.
// [SplitMarkdown] cuts documents far below it.
const MaxGrams = 100_000

// words splits text into runs of letters, digits and underscores, and
// splits those again where Chinese, Japanese or Korean characters meet
// others ("iphone手机" is "iphone" and "手机").
func words(text string) []string {
	var out []string
	for _, tok := range tokens(text) {
		out = append(out, scriptRuns(tok)...)
	}
	return out
}

// tokens splits text into runs of letters, digits and underscores.
func tokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// scriptRuns splits a token where Chinese, Japanese or Korean characters
// meet others.
func scriptRuns(tok string) []string {
	var out []string
	start, cjk := 0, false
	for i, r := range tok {
		if i == 0 {
			cjk = isCJK(r)
		} else if isCJK(r) != cjk {
			out = append(out, tok[start:i])
			start, cjk = i, !cjk
		}
	}
	return append(out, tok[start:])
}

// isCJK reports whether r is a character of a script written without
// spaces between words (Han, Hiragana, Katakana) or, for Hangul, with
// particles attached to them ("망고입니다": "망고" and "입니다").
func isCJK(r rune) bool {
	if r < 0x1100 { // where Hangul starts
		return false
	}
	return r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because
	been before being below between both but by can could did do does doing down during each few for from
	further had has have having he her here hers herself him himself his how i if in into is it its itself
	just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
	same she should so some such than that the their theirs them themselves then there these they this those
	through to too under until up very was we were what when where which while who whom why will with would
	you your yours yourself yourselves shall may might must let lets get gets got one ones use used using`) {
		stopWords[w] = true
	}
}
