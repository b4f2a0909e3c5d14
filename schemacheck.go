package agentrt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/jsonextract"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file checks a JSON value against a JSON Schema with
// github.com/santhosh-tekuri/jsonschema (draft 2020-12 unless the schema
// names another), after repairing what models get wrong, and words each
// violation for the model with the JSON path at fault.

// fieldError is one violation: the JSON path at fault ("" for the input
// itself) and the full message.
type fieldError struct {
	path string
	msg  string
}

// checkedSchema is a JSON Schema compiled once. It is safe for concurrent
// use.
type checkedSchema struct {
	root  *jsonschema.Schema
	types map[*jsonschema.Schema]typeSet // the "type" of each subschema
	byLoc map[string]*jsonschema.Schema  // each subschema by its location
}

// schemaURL names the schema being compiled; nothing is ever loaded from
// it, nor from any $ref (see noLoader).
const schemaURL = "https://agentrt.invalid/input.json"

// compileSchema compiles a JSON Schema whose top level is an object
// schema. A $ref must point inside the schema: nothing is loaded from
// files or the network.
func compileSchema(schema json.RawMessage) (*checkedSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	upgradeExclusiveBounds(doc)
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.AssertFormat()
	for name, f := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: f.check})
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	root, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	cs := &checkedSchema{root: root, types: map[*jsonschema.Schema]typeSet{}, byLoc: map[string]*jsonschema.Schema{}}
	cs.index(root)
	if cs.types[deref(root)]&tObject == 0 {
		return nil, errors.New(`invalid input schema: top level must have "type": "object"`)
	}
	return cs, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a $ref must point inside the schema", url)
}

// upgradeExclusiveBounds rewrites the draft-4 form of exclusive bounds
// ("minimum": 0, "exclusiveMinimum": true) in the 2020-12 form, in a
// schema that names no draft.
func upgradeExclusiveBounds(doc any) {
	if m, ok := doc.(map[string]any); ok && m["$schema"] != nil {
		return
	}
	upgradeBounds(doc)
}

func upgradeBounds(doc any) {
	switch x := doc.(type) {
	case map[string]any:
		for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			ex, isBool := x[b[0]].(bool)
			bound, isNum := x[b[1]].(json.Number)
			if isBool && isNum {
				delete(x, b[0])
				if ex {
					x[b[0]] = bound
					delete(x, b[1])
				}
			}
		}
		for _, v := range x {
			upgradeBounds(v)
		}
	case []any:
		for _, v := range x {
			upgradeBounds(v)
		}
	}
}

// index records the type and the location of s and its subschemas.
func (cs *checkedSchema) index(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, ok := cs.byLoc[s.Location]; ok {
		return
	}
	cs.byLoc[s.Location] = s
	if s.Types != nil {
		cs.types[s] = typeSetOf(s.Types.ToStrings())
	}
	subs := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else, s.Items2020, s.Contains, s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties}
	subs = append(subs, s.AllOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.PrefixItems...)
	for _, p := range s.Properties {
		subs = append(subs, p)
	}
	for _, p := range s.PatternProperties {
		subs = append(subs, p)
	}
	for _, p := range s.DependentSchemas {
		subs = append(subs, p)
	}
	for _, d := range s.Dependencies {
		if ds, ok := d.(*jsonschema.Schema); ok {
			subs = append(subs, ds)
		}
	}
	if s.DynamicRef != nil {
		subs = append(subs, s.DynamicRef.Ref)
	}
	for _, v := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := v.(type) {
		case *jsonschema.Schema:
			subs = append(subs, x)
		case []*jsonschema.Schema:
			subs = append(subs, x...)
		}
	}
	for _, sub := range subs {
		cs.index(sub)
	}
}

// deref follows a schema that is only a $ref to the schema it names.
func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for range 32 {
		if s == nil || s.Ref == nil || s.Types != nil {
			break
		}
		s = s.Ref
	}
	return s
}

// parseInput parses a model's input: a JSON object, or one sent as a
// JSON-encoded string. It returns the object and its JSON text.
func parseInput(raw []byte) (map[string]any, []byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("input is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("input is not valid JSON: unexpected data after the top-level value")
	}
	if s, ok := v.(string); ok { // an object sent as a JSON-encoded string
		if inner, err := jsonschema.UnmarshalJSON(strings.NewReader(s)); err == nil {
			if _, ok := inner.(map[string]any); ok {
				v, raw = inner, []byte(s)
			}
		}
	}
	if v == nil {
		return nil, nil, errors.New("input is null; expected a JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("input must be a JSON object, got %s", jsonextract.Kind(v))
	}
	return obj, raw, nil
}

// normalize parses a model's input, repairs what can be repaired (see
// repair) and checks it: it returns the input as JSON, re-encoded if it
// was repaired, or an error naming every violation.
func (cs *checkedSchema) normalize(raw []byte) ([]byte, error) {
	obj, raw, err := parseInput(raw)
	if err != nil {
		return nil, err
	}
	changed, errs := cs.repairAndCheck(obj, raw, true)
	if len(errs) > 0 {
		return nil, joinFieldErrors(errs)
	}
	if changed {
		return encodeJSON(obj), nil
	}
	return raw, nil
}

// check returns every violation of the schema in raw, which must be valid
// JSON, without repairing it.
func (cs *checkedSchema) check(raw []byte) []fieldError {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []fieldError{{msg: "input is not valid JSON"}}
	}
	_, errs := cs.repairAndCheck(v, raw, false)
	return errs
}

// repairAndCheck repairs v in place (with coerce; see repair) and checks
// it against the schema; raw is v's JSON text, for the order of errors.
// A null for an optional property counts as absent.
func (cs *checkedSchema) repairAndCheck(v any, raw []byte, coerce bool) (changed bool, errs []fieldError) {
	r := repair{cs: cs, coerce: coerce}
	r.value(v, cs.root)
	for _, n := range r.nulls {
		delete(n.obj, n.key)
	}
	err := cs.root.Validate(v)
	for _, n := range r.nulls {
		n.obj[n.key] = nil
	}
	if err == nil {
		return r.changed, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return r.changed, []fieldError{{msg: err.Error()}}
	}
	w := worder{cs: cs, root: v}
	w.add(ve)
	return r.changed, w.sorted(raw)
}

// repair coerces, in a decoded input, what models send as strings into
// what the schema asks for (numbers, booleans, objects) and an integral
// number like 3.0 into 3 where the schema asks for an integer (Go's
// decoder wants 3). It records the nulls of optional properties.
type repair struct {
	cs      *checkedSchema
	coerce  bool
	changed bool
	nulls   []nullMember
}

type nullMember struct {
	obj map[string]any
	key string
}

// value repairs v, of schema s, in place.
func (r *repair) value(v any, s *jsonschema.Schema) {
	s = deref(s)
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			sub, allowed := member(s, k)
			if e == nil && s != nil && allowed && !slices.Contains(s.Required, k) {
				r.nulls = append(r.nulls, nullMember{x, k})
				continue
			}
			if fixed, ok := r.scalar(e, sub); ok {
				x[k] = fixed
			}
		}
	case []any:
		var items *jsonschema.Schema
		if s != nil {
			items = s.Items2020
			if it, ok := s.Items.(*jsonschema.Schema); ok {
				items = it
			}
		}
		for i, e := range x {
			if fixed, ok := r.scalar(e, items); ok {
				x[i] = fixed
			}
		}
	}
}

// scalar repairs the value v of schema s: it returns the value to put in
// its place and true, or repairs an object or array in place and returns
// false.
func (r *repair) scalar(v any, s *jsonschema.Schema) (any, bool) {
	s = deref(s)
	switch x := v.(type) {
	case string:
		if r.coerce && s != nil {
			return r.str(x, s)
		}
	case json.Number:
		if r.coerce && s != nil {
			return r.number(x, s)
		}
	default:
		r.value(v, s)
	}
	return nil, false
}

func (r *repair) str(x string, s *jsonschema.Schema) (any, bool) {
	types := r.cs.types[s]
	switch {
	case types == 0 || types&tString != 0:
	case types&(tInteger|tNumber) != 0:
		num := strings.TrimSpace(x)
		if _, err := strconv.ParseFloat(num, 64); err == nil && json.Valid([]byte(num)) {
			if n, ok := r.number(json.Number(num), s); ok {
				return n, true
			}
			r.changed = true
			return json.Number(num), true
		}
	case types&tBoolean != 0:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			r.changed = true
			return b, true
		}
	case types&tObject != 0:
		if inner, err := jsonschema.UnmarshalJSON(strings.NewReader(x)); err == nil {
			if obj, ok := inner.(map[string]any); ok {
				r.changed = true
				r.value(obj, s)
				return obj, true
			}
		}
	}
	return nil, false
}

func (r *repair) number(x json.Number, s *jsonschema.Schema) (any, bool) {
	types := r.cs.types[s]
	if types&tInteger != 0 && types&tNumber == 0 && strings.ContainsAny(string(x), ".eE") {
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			r.changed = true
			return json.Number(strconv.FormatInt(int64(f), 10)), true
		}
	}
	return nil, false
}

// member is the schema of the value of key in an object of schema s, and
// whether s allows the key at all.
func member(s *jsonschema.Schema, key string) (*jsonschema.Schema, bool) {
	if s == nil {
		return nil, true
	}
	if p, ok := s.Properties[key]; ok {
		return p, true
	}
	for re, p := range s.PatternProperties {
		if re.MatchString(key) {
			return p, true
		}
	}
	switch ap := s.AdditionalProperties.(type) {
	case bool:
		return nil, ap
	case *jsonschema.Schema:
		return ap, true
	}
	return nil, true
}

// encodeJSON encodes a decoded input without escaping HTML characters.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a decoded input always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
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

type typeSet uint8

const (
	tObject typeSet = 1 << iota
	tArray
	tString
	tNumber
	tInteger
	tBoolean
	tNull
)

var typeNames = []struct {
	bit  typeSet
	name string
	word string
}{
	{tObject, "object", "an object"},
	{tArray, "array", "an array"},
	{tString, "string", "a string"},
	{tNumber, "number", "a number"},
	{tInteger, "integer", "an integer"},
	{tBoolean, "boolean", "a boolean"},
	{tNull, "null", "null"},
}

func typeSetOf(names []string) typeSet {
	var types typeSet
	for _, tn := range typeNames {
		if slices.Contains(names, tn.name) {
			types |= tn.bit
		}
	}
	return types
}

// typeWords is "a string or null".
func typeWords(types typeSet) string {
	var words []string
	for _, tn := range typeNames {
		if types&tn.bit != 0 {
			words = append(words, tn.word)
		}
	}
	return strings.Join(words, " or ")
}

// formatCheck is a "format" checked as this package defines it, with the
// words that say what a value must be.
type formatCheck struct {
	word  string
	valid func(string) bool
}

// check is valid as the library calls it: on a value of any type.
func (f *formatCheck) check(v any) error {
	if s, ok := v.(string); ok && !f.valid(s) {
		return errors.New("must be " + f.word)
	}
	return nil
}

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hostnameRE = regexp.MustCompile(`^(?i)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

// formats are the JSON Schema formats NewTool shows; they mean what
// go-playground's rules of the same names accept. NewTool leaves any other
// format out of the reflected schema; a hand-written schema's other
// formats are checked as the library defines them.
var formats = map[string]*formatCheck{
	"date-time": {"a date-time in RFC 3339 form (like 2006-01-02T15:04:05Z)", func(s string) bool {
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	}},
	"date": {"a date in the form YYYY-MM-DD", func(s string) bool {
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	}},
	"time": {"a time in RFC 3339 form (like 15:04:05Z)", func(s string) bool {
		_, err := time.Parse("15:04:05Z07:00", s)
		if err != nil {
			_, err = time.Parse("15:04:05.999999999Z07:00", s)
		}
		return err == nil
	}},
	"email": {"a valid email address", func(s string) bool {
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	}},
	"uri": {"an absolute URI (like https://example.com/x)", func(s string) bool {
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	}},
	"uri-reference": {"a URI reference", func(s string) bool {
		_, err := url.Parse(s)
		return err == nil
	}},
	"uuid": {"a UUID (like 123e4567-e89b-12d3-a456-426614174000)", uuidRE.MatchString},
	"ipv4": {"an IPv4 address", func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	}},
	"ipv6": {"an IPv6 address", func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6()
	}},
	"hostname": {"a host name", func(s string) bool {
		return len(s) <= 253 && hostnameRE.MatchString(s)
	}},
}
