// Package window finds where the window of recent messages that a
// Compressor keeps begins: agentrt.Window and summarize.Compressor share
// it. It is generic only so that it need not import package agentrt.
package window

// Cut returns the index from which msgs[from:] is kept: the smallest
// index i >= from, at an assistant message (assistant says which are), such that msgs[i:] fits in
// budget tokens (when budget > 0) and holds at most max messages (when
// max > 0). It walks back from the end only as far as it keeps. When not
// even the last turn fits, the last assistant message is kept anyway.
func Cut[M any](msgs []M, from, budget, max int, count func([]M) int, assistant func(*M) bool) int {
	tokens := 0
	best := -1
	for i := len(msgs) - 1; i >= from; i-- {
		tokens += count(msgs[i : i+1])
		if budget > 0 && tokens > budget {
			break
		}
		if max > 0 && len(msgs)-i > max {
			break
		}
		if assistant(&msgs[i]) {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	// Keep at least the last assistant message and what follows it.
	for i := len(msgs) - 1; i >= from; i-- {
		if assistant(&msgs[i]) {
			return i
		}
	}
	return from
}
