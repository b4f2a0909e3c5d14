package agentrt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file words the schema check's errors for the model: one message per
// violation, naming the JSON path at fault, in the order of the input.

// fieldError is one violation: the JSON path at fault ("" for the input
// itself) and the full message.
type fieldError struct {
	path string
	msg  string
}

// worder words the library's errors for the model, one fieldError per
// violation.
type worder struct {
	cs   *checkedSchema
	root any // the value checked
	errs []sortedError
}

// sortedError is a fieldError with the place in the input it is reported
// at: the value at path, before (its start) or after its contents (its
// end: the rules on a whole list). Errors at one place come in the order
// of the first message of their group (one library error), then in the
// group's order.
type sortedError struct {
	fieldError
	at    string
	atEnd bool
	group string
	seq   int
}

func (w *worder) add(e *jsonschema.ValidationError) {
	s := w.cs.byLoc[e.SchemaURL]
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			w.add(c)
		}
	case *kind.OneOf:
		if len(k.Subschemas) > 0 && s != nil { // the value matches two alternatives
			w.fail(e, true, "matches more than one of its %d allowed forms; it must match exactly one", len(s.OneOf))
		} else if s != nil {
			w.noAlternative(e, s.OneOf)
		} else {
			w.fail(e, true, "must match one of its allowed forms")
		}
	case *kind.AnyOf:
		if s != nil {
			w.noAlternative(e, s.AnyOf)
		} else {
			w.fail(e, true, "must match one of its allowed forms")
		}
	default:
		w.leaf(e, s)
	}
}

// noAlternative reports a value that fits none of list. When only one
// alternative takes values of its type (as for a nullable field), its own
// errors say best what is wrong.
func (w *worder) noAlternative(e *jsonschema.ValidationError, list []*jsonschema.Schema) {
	v := w.valueAt(e.InstanceLocation)
	only := -1
	for i, s := range list {
		if w.takes(s, v) {
			if only >= 0 {
				only = -1
				break
			}
			only = i
		}
	}
	if only >= 0 && w.cs.types[deref(list[only])] != 0 && len(e.Causes) == len(list) {
		before := len(w.errs)
		w.add(e.Causes[only])
		if len(w.errs) > before {
			return
		}
	}
	w.fail(e, true, "must be %s", w.describe(list))
}

// takes reports whether the schema's type admits v.
func (w *worder) takes(s *jsonschema.Schema, v any) bool {
	types := w.cs.types[deref(s)]
	if types == 0 {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		return types&tObject != 0
	case []any:
		return types&tArray != 0
	case string:
		return types&tString != 0
	case bool:
		return types&tBoolean != 0
	case nil:
		return types&tNull != 0
	case json.Number:
		f, err := x.Float64()
		return types&tNumber != 0 || types&tInteger != 0 && err == nil && f == math.Trunc(f)
	}
	return false
}

// describe names schemas for an error message: by their constant, enum or
// type where they have one.
func (w *worder) describe(list []*jsonschema.Schema) string {
	words := make([]string, 0, len(list))
	for _, s := range list {
		s = deref(s)
		switch {
		case s.Const != nil:
			words = append(words, string(encodeJSON(*s.Const)))
		case s.Enum != nil:
			words = append(words, "one of "+listValues(s.Enum.Values))
		case w.cs.types[s] != 0:
			words = append(words, typeWords(w.cs.types[s]))
		default:
			return fmt.Sprintf("one of the %d allowed forms", len(list))
		}
	}
	return strings.Join(words, " or ")
}

func (w *worder) leaf(e *jsonschema.ValidationError, s *jsonschema.Schema) {
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		w.missing(e, k.Missing, "")
	case *kind.DependentRequired:
		w.missing(e, k.Missing, fmt.Sprintf(" when %q is present", k.Prop))
	case *kind.Dependency:
		w.missing(e, k.Missing, fmt.Sprintf(" when %q is present", k.Prop))
	case *kind.AdditionalProperties:
		path := w.path(e.InstanceLocation)
		list := "none"
		var patterns []string
		if s != nil {
			list = fieldList(s)
			for re := range s.PatternProperties {
				patterns = append(patterns, fmt.Sprintf("; names must match %q", re.String()))
			}
			slices.Sort(patterns)
		}
		for _, name := range k.Properties {
			p := joinPath(path, name)
			msg := fmt.Sprintf("unknown field %q (valid fields: %s%s)", p, list, strings.Join(patterns, ""))
			w.errs = append(w.errs, sortedError{fieldError{p, msg}, p, false, msg, 0})
		}
	case *kind.Type:
		want := typeSetOf(k.Want)
		got := k.Got
		if got == "number" && want&tInteger != 0 {
			if n, ok := w.valueAt(e.InstanceLocation).(json.Number); ok {
				got = "number " + string(n)
			}
		}
		w.fail(e, false, "must be %s, got %s", typeWords(want), got)
	case *kind.Enum:
		w.fail(e, true, "must be one of %s", listValues(k.Want))
	case *kind.Const:
		w.fail(e, true, "must be %s", encodeJSON(k.Want))
	case *kind.Format:
		if f, ok := formats[k.Want]; ok {
			w.fail(e, false, "must be %s", f.word)
		} else {
			w.fail(e, false, "must be a valid %s", k.Want)
		}
	case *kind.MinLength:
		switch {
		case s != nil && s.MaxLength != nil && *s.MaxLength == k.Want:
			w.fail(e, false, "must have exactly %s", plural(k.Want, "character", "characters"))
		case k.Want == 1:
			w.fail(e, false, "must not be empty")
		default:
			w.fail(e, false, "must have at least %s", plural(k.Want, "character", "characters"))
		}
	case *kind.MaxLength:
		if s != nil && s.MinLength != nil && *s.MinLength == k.Want {
			w.fail(e, false, "must have exactly %s", plural(k.Want, "character", "characters"))
		} else {
			w.fail(e, false, "must have at most %s", plural(k.Want, "character", "characters"))
		}
	case *kind.Pattern:
		w.fail(e, false, "must match the pattern %q", k.Want)
	case *kind.Minimum:
		w.fail(e, false, "must be at least %s", ratText(k.Want))
	case *kind.Maximum:
		w.fail(e, false, "must be at most %s", ratText(k.Want))
	case *kind.ExclusiveMinimum:
		w.fail(e, false, "must be greater than %s", ratText(k.Want))
	case *kind.ExclusiveMaximum:
		w.fail(e, false, "must be less than %s", ratText(k.Want))
	case *kind.MultipleOf:
		w.fail(e, false, "must be a multiple of %s", ratText(k.Want))
	case *kind.MinItems:
		w.fail(e, true, "must have at least %s", plural(k.Want, "item", "items"))
	case *kind.MaxItems:
		w.fail(e, true, "must have at most %s", plural(k.Want, "item", "items"))
	case *kind.UniqueItems:
		w.fail(e, true, "must not repeat an item (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		w.fail(e, true, "must have at least %s", plural(k.Want, "entry", "entries"))
	case *kind.MaxProperties:
		w.fail(e, true, "must have at most %s", plural(k.Want, "entry", "entries"))
	case *kind.PropertyNames: // its InstanceLocation is not reliable in v6.0.3
		msg := fmt.Sprintf("property name %q is not allowed", k.Property)
		w.errs = append(w.errs, sortedError{fieldError{"", msg}, "", false, msg, 0})
	case *kind.FalseSchema:
		w.fail(e, false, "is not allowed")
	case *kind.Not:
		if s != nil && s.Not != nil {
			w.fail(e, true, "must not be %s", w.describe([]*jsonschema.Schema{s.Not}))
		} else {
			w.fail(e, true, "must not match the schema under \"not\"")
		}
	default: // the keywords NewTool never reflects: the library's words
		w.fail(e, true, "%s", e.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
	}
}

// missing records the properties missing from the object e is about.
func (w *worder) missing(e *jsonschema.ValidationError, names []string, when string) {
	path := w.path(e.InstanceLocation)
	group := ""
	for i, name := range names {
		p := joinPath(path, name)
		msg := subject(p) + " is required" + when
		if i == 0 {
			group = msg
		}
		w.errs = append(w.errs, sortedError{fieldError{p, msg}, path, false, group, i})
	}
}

// fail records "field "path" <predicate>" for the value e is about.
func (w *worder) fail(e *jsonschema.ValidationError, atEnd bool, format string, args ...any) {
	path := w.path(e.InstanceLocation)
	msg := subject(path) + " " + fmt.Sprintf(format, args...)
	w.errs = append(w.errs, sortedError{fieldError{path, msg}, path, atEnd, msg, 0})
}

// path is the JSON path of an instance location: "items[2].name".
func (w *worder) path(loc []string) string {
	var b strings.Builder
	v := w.root
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i < len(x) {
				v = x[i]
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			v = x[tok]
		}
	}
	return b.String()
}

func (w *worder) valueAt(loc []string) any {
	v := w.root
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		case map[string]any:
			v = x[tok]
		}
	}
	return v
}

// sorted returns the errors in the order of the input raw: each where its
// value starts, a rule on a whole list after the list's items, a missing
// field at the start of its object.
func (w *worder) sorted(raw []byte) []fieldError {
	if len(w.errs) > 1 {
		order := inputOrder(raw)
		place := func(e sortedError) int {
			at := e.at
			for {
				if o, ok := order[at]; ok {
					if e.atEnd {
						return o[1]
					}
					return o[0]
				}
				if at == "" {
					return 0
				}
				at = parentPath(at)
			}
		}
		slices.SortFunc(w.errs, func(a, b sortedError) int {
			return cmp.Or(place(a)-place(b), strings.Compare(a.group, b.group), a.seq-b.seq)
		})
	}
	out := make([]fieldError, len(w.errs))
	for i, e := range w.errs {
		out[i] = e.fieldError
	}
	return out
}

// inputOrder numbers the start and the end of each value of raw, by its
// path.
func inputOrder(raw []byte) map[string][2]int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	order := map[string][2]int{}
	n := 0
	var walk func(path string) bool
	walk = func(path string) bool {
		start := n
		n++
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			for i := 0; dec.More(); i++ {
				p := path + "[" + strconv.Itoa(i) + "]"
				if d == '{' {
					key, err := dec.Token()
					if err != nil {
						return false
					}
					k, _ := key.(string)
					p = joinPath(path, k)
				}
				if !walk(p) {
					return false
				}
			}
			if _, err := dec.Token(); err != nil {
				return false
			}
		}
		order[path] = [2]int{start, n}
		n++
		return true
	}
	walk("")
	return order
}

// parentPath is the path of the object or array holding path.
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// joinFieldErrors makes one error of violations, in order.
func joinFieldErrors(errs []fieldError) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.msg
	}
	return errors.New("invalid input: " + strings.Join(msgs, "; "))
}

func subject(path string) string {
	if path == "" {
		return "input"
	}
	return fmt.Sprintf("field %q", path)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldList(s *jsonschema.Schema) string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, strconv.Quote(k))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func listValues(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(encodeJSON(v))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ratText writes a bound as the schema did: 5, -50, 0.5.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
