package agentrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
)

// This file checks a JSON value against a JSON Schema with
// github.com/santhosh-tekuri/jsonschema (draft 2020-12 unless the schema
// names another), after repairing what models get wrong; schemaerrors.go
// words each violation for the model.

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
