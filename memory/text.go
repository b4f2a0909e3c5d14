package memory

import (
	"strings"
	"unicode"
)

// Terms returns the words of a query worth searching for: lower-cased runs
// of letters and digits, without common English stop words and without
// repeats, in order. Back ends build their full-text queries from them
// (any term may match; more matching terms rank higher).
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
