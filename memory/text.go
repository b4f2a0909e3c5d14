package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terms returns the words of a query worth searching for: lower-cased runs
// of letters and digits, without common English stop words and without
// repeats, in order. Back ends build their full-text queries from
// [QueryTerms], a bounded choice of these (any term may match; more
// matching terms rank higher).
func Terms(query string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if stopWords[w] || seen[w] || (len(w) < 2 && !unicode.IsDigit(rune(w[0]))) {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
	}
	return terms
}

// MaxQueryTerms is the most terms a back end of this module searches for
// in one query ([QueryTerms]): a pasted log or document of any size costs
// the same as a question of a few dozen words.
const MaxQueryTerms = 32

// QueryTerms returns the terms a back end searches for: the [Terms] of the
// text, or, when there are more than [MaxQueryTerms], the longest words
// (long words are the rarer ones), then the longest terms with a digit
// (numbers, ids and hashes in a pasted log say little), ties going to the
// earlier term. They are returned in the order of the text.
func QueryTerms(text string) []string {
	terms := Terms(text)
	if len(terms) <= MaxQueryTerms {
		return terms
	}
	weight := func(w string) int {
		if strings.ContainsFunc(w, unicode.IsDigit) {
			return utf8.RuneCountInString(w) - 1<<20
		}
		return utf8.RuneCountInString(w)
	}
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return weight(terms[b]) - weight(terms[a]) })
	order = order[:MaxQueryTerms]
	slices.Sort(order)
	out := make([]string, len(order))
	for i, j := range order {
		out[i] = terms[j]
	}
	return out
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
