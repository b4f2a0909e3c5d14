package memory

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a new random item ID ("m-" and 16 hex digits), for back
// ends to give items stored without one.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return "m-" + hex.EncodeToString(b[:])
}

// Prepare checks scope and items for Put and fills in what is missing:
// new IDs, KindFact for an empty kind, the creation time. It returns the
// items to store (a copy) and their IDs. Back ends call it.
func Prepare(scope string, items []Item) ([]Item, []string, error) {
	if err := ValidateScope(scope); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	out := make([]Item, len(items))
	ids := make([]string, len(items))
	for i, it := range items {
		if it.ID == "" {
			it.ID = NewID()
		}
		if it.Created.IsZero() {
			it.Created = now
		}
		if it.Kind == "" {
			it.Kind = KindFact
		}
		out[i], ids[i] = it, it.ID
	}
	return out, ids, nil
}
