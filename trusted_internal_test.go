package agentrt

import (
	"encoding/json"
	"math/big"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type ownText struct{}

func (*ownText) UnmarshalText([]byte) error { return nil }

type ownJSON struct{}

func (ownJSON) UnmarshalJSON([]byte) error { return nil }

type recursive struct {
	Next     *recursive           `json:"next"`
	Children map[string]recursive `json:"children"`
}

func TestUserDecoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    any
		user bool
	}{
		{struct{ A int }{}, false},
		{struct {
			T time.Time
			D time.Duration
			B *big.Int
			I netip.Addr
			R json.RawMessage
		}{}, false},
		{recursive{}, false},
		{struct{ X ownJSON }{}, true},
		{struct{ X *ownText }{}, true},
		{struct{ X []map[ownText]int }{}, true}, // a map key decodes with UnmarshalText
		{struct{ X [2]ownJSON }{}, true},
		{struct{ X map[string]*ownJSON }{}, true},
	} {
		typ := reflect.TypeOf(tc.v)
		assert.Equal(t, tc.user, userDecoding(typ), "%v", typ)
	}
}
