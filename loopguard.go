package agentrt

import (
	"encoding/json"
	"fmt"
)

// LoopGuard detects a model that calls the same tool with the same input
// and gets the same result again and again, alone or alternating with
// another such call (ping-pong). Calls whose results differ never count as
// repeats. Its zero value is on, with the defaults below.
type LoopGuard struct {
	// Disabled turns the guard off.
	Disabled bool
	// Warn is the number of identical calls (same tool, same input once
	// the white space between its JSON tokens is removed, same result)
	// after which the result tells the model that it repeats itself; 0
	// means 3.
	Warn int
	// Stop is the number of identical calls after which the run ends with
	// StopLoopDetected; 0 means 5.
	Stop int
}

func (g LoopGuard) limits() (warn, stop int) {
	warn, stop = g.Warn, g.Stop
	if warn <= 0 {
		warn = 3
	}
	if stop <= 0 {
		stop = 5
	}
	return warn, stop
}

// loopWindow is how many recent calls the guard remembers.
const loopWindow = 16

// loopState is the guard's memory for one run: hashes of recent calls.
type loopState struct {
	ring [loopWindow]uint64
	n    int
}

// observe records a finished call and returns how many times it has been
// seen among the recent calls, itself included.
func (s *loopState) observe(name string, input json.RawMessage, result Message) int {
	h := fnvString(fnvOffset, name)
	h = fnvByte(h, 0)
	h = fnvCompactJSON(h, input)
	h = fnvByte(h, 0)
	if result.IsError {
		h = fnvByte(h, 1)
	}
	sig := fnvString(h, result.Content)
	for _, b := range result.Blocks { // a screenshot that changed is new
		sig = fnvByte(sig, 0)
		sig = fnvString(sig, b.Text)
		sig = fnvString(sig, b.URL)
		for _, c := range b.Data {
			sig = (sig ^ uint64(c)) * fnvPrime
		}
	}
	count := 1
	for i := 0; i < s.n && i < loopWindow; i++ {
		if s.ring[i] == sig {
			count++
		}
	}
	s.ring[s.n%loopWindow] = sig
	s.n++
	return count
}

// FNV-1a, inline so that hashing does not allocate.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// fnvCompactJSON hashes JSON text without the whitespace between tokens,
// so that {"a": 1} and {"a":1} are the same call.
func fnvCompactJSON(h uint64, p []byte) uint64 {
	inStr, esc := false, false
	for _, b := range p {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			continue
		}
		h = (h ^ uint64(b)) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func loopNote(count int) string {
	return fmt.Sprintf("\n\n[agentrt: this is the %s identical call of this tool with this input, with the same result. Do not call it again: try something else, or answer with what you have.]", ordinal(count))
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
