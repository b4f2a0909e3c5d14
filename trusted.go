package agentrt

import (
	"encoding"
	"encoding/json"
	"reflect"
)

// The decoders of this package's tools and its ready permission policies
// run no user code, so the runtime calls them on the run's own goroutine,
// with a recover, instead of on the worker that contains user callbacks
// (see contain.go). That keeps the JSON decode of a tool's input off the
// worker's small stack. A tool whose input type decodes with a method of
// the program's own (a json.Unmarshaler outside the standard library) is
// decoded on the worker, like any user code.

// builtinDecoder marks a Tool whose Decode is this package's; builtinDecode
// reports whether it runs no user code.
type builtinDecoder interface{ builtinDecode() bool }

func (t *typedTool[In, Out]) builtinDecode() bool { return !t.userDecode }
func (*rawTool) builtinDecode() bool              { return true }
func (*agentTool) builtinDecode() bool            { return true }

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// userDecoding reports whether decoding JSON into t may call a method of a
// type outside the standard library (a json.Unmarshaler or an
// encoding.TextUnmarshaler), anywhere in t.
func userDecoding(t reflect.Type) bool {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type) bool
	walk = func(t reflect.Type) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if !stdDecoders[t.PkgPath()] {
			for _, u := range []reflect.Type{jsonUnmarshalerType, textUnmarshalerType} {
				if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
					return true
				}
			}
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			return walk(t.Elem())
		case reflect.Map:
			return walk(t.Key()) || walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if walk(t.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	return walk(t)
}

// stdDecoders are the packages whose unmarshalers are trusted: the
// standard library's that input types use (time.Time, big.Int, netip.Addr,
// json.RawMessage, slog.Level, ...), and "" (types of no package).
var stdDecoders = map[string]bool{"": true, "time": true, "math/big": true, "net": true, "net/netip": true,
	"net/url": true, "encoding/json": true, "log/slog": true}

// builtinChecker marks a PermissionChecker of this package that calls no
// user code.
type builtinChecker interface{ builtinCheck() }

func (allowReadOnly) builtinCheck() {}
func (allowAll) builtinCheck()      {}
