package agentrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrt/agentrt/internal/jsonextract"
	"github.com/invopop/jsonschema"
)

// reflectSchema reflects the schema of a struct type: inlined (no $ref),
// type object, additionalProperties false, required from json tags without
// omitempty plus fields tagged validate:"required".
func reflectSchema(t reflect.Type) (json.RawMessage, error) {
	return reflectStructSchema(t, false)
}

// reflectInputSchema reflects a tool's input schema: reflectSchema's, plus
// the validate rules that have a JSON Schema form and the bounds of sized
// integers (see [NewTool]), without the formats the decoder does not check.
func reflectInputSchema(t reflect.Type) (json.RawMessage, error) {
	return reflectStructSchema(t, true)
}

func reflectStructSchema(t reflect.Type, rules bool) (schema json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil { // e.g. a recursive type
			err = fmt.Errorf("cannot reflect a JSON Schema from %v: %v", t, r)
		}
	}()
	r := &jsonschema.Reflector{
		DoNotReference: true,
		ExpandedStruct: true,
		Anonymous:      true,
	}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	s.Definitions = nil
	addValidateRules(s, t, rules)
	if rules {
		dropUncheckedFormats(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the JSON Schema of %v: %w", t, err)
	}
	return b, nil
}

// addValidateRules adds to the schema what the struct's validate tags
// require, where JSON Schema can say it: required fields, bounds, lengths,
// enums, formats and patterns, recursively for nested structs, slices,
// arrays and maps. It also bounds sized and unsigned integers.
func addValidateRules(s *jsonschema.Schema, t reflect.Type, rules bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Type == "array" {
			addValidateRules(s.Items, t.Elem(), rules)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.FalseSchema {
			addValidateRules(s.AdditionalProperties, t.Elem(), rules)
		}
		for _, p := range s.PatternProperties {
			addValidateRules(p, t.Elem(), rules)
		}
	case reflect.Struct:
		if s.Properties == nil {
			return
		}
		for i := range t.NumField() {
			addFieldRules(s, t.Field(i), rules)
		}
	default:
		if rules {
			addKindBounds(s, t)
		}
	}
}

// addFieldRules is addValidateRules for one field of a struct whose schema
// is s.
func addFieldRules(s *jsonschema.Schema, f reflect.StructField, rules bool) {
	if !f.IsExported() && !f.Anonymous {
		return
	}
	name := jsonName(f)
	if name == "-" {
		return
	}
	if f.Anonymous && f.Tag.Get("json") == "" {
		addValidateRules(s, f.Type, rules) // embedded struct: fields are promoted
		return
	}
	prop, ok := s.Properties.Get(name)
	if !ok {
		return
	}
	if len(prop.OneOf) == 2 && prop.OneOf[1].Type == "null" { // jsonschema:"nullable"
		prop = prop.OneOf[0]
	}
	addValidateRules(prop, f.Type, rules)
	tagRules := splitValidateTag(f.Tag.Get("validate"))
	if !slices.Contains(s.Required, name) && (slices.Contains(tagRules, "required") || rules && zeroFails(f)) {
		s.Required = append(s.Required, name)
	}
	if rules {
		applyRules(prop, f.Type, tagRules)
	}
}

// zeroFails reports whether the zero value of a field fails its validate
// tag: then the field cannot be left out, and the schema says it is
// required. Rules that look at other fields are not judged.
func zeroFails(f reflect.StructField) (fails bool) {
	tag := f.Tag.Get("validate")
	if tag == "" || tag == "-" {
		return false
	}
	for _, rule := range splitValidateTag(tag) {
		name, _, _ := strings.Cut(rule, "=")
		if strings.Contains(name, "field") || strings.HasPrefix(name, "required_") || strings.HasPrefix(name, "excluded_") || strings.Contains(rule, "|") {
			return false
		}
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return false // its fields carry their own rules
	}
	defer func() {
		if recover() != nil { // a custom or malformed rule
			fails = false
		}
	}()
	return zeroValidator().Var(reflect.Zero(f.Type).Interface(), tag) != nil
}

var zeroValidator = sync.OnceValue(newValidate)

// splitValidateTag splits a validate tag into its rules; an escaped comma
// (0x2C) stays inside its rule.
func splitValidateTag(tag string) []string {
	if tag == "" {
		return nil
	}
	return strings.Split(tag, ",")
}

var (
	oneofParamRE = regexp.MustCompile(`'[^']*'|\S+`)
	// go-playground/validator's own patterns for these rules.
	validatePatterns = map[string]string{
		"alpha":    `^[a-zA-Z]+$`,
		"alphanum": `^[a-zA-Z0-9]+$`,
		"numeric":  `^[-+]?[0-9]+(?:\.[0-9]+)?$`,
		"number":   `^[0-9]+$`,
	}
	validateFormats = map[string]string{
		"email": "email", "url": "uri", "uri": "uri", "http_url": "uri",
		"uuid": "uuid", "uuid4": "uuid", "ipv4": "ipv4", "ipv6": "ipv6",
		"hostname": "hostname", "hostname_rfc1123": "hostname",
	}
)

// applyRules shows one field's validate rules in its schema s. Rules
// without a JSON Schema form are left to the validator alone (see
// [NewTool]).
func applyRules(s *jsonschema.Schema, t reflect.Type, rules []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i, rule := range rules {
		name, param, _ := strings.Cut(rule, "=")
		if strings.Contains(rule, "|") {
			continue // alternatives have no simple form
		}
		if name == "dive" {
			rest := rules[i+1:]
			if slices.Contains(rest, "keys") {
				return
			}
			switch {
			case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && s.Type == "array" && s.Items != nil:
				applyRules(s.Items, t.Elem(), rest)
			case t.Kind() == reflect.Map && s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.FalseSchema:
				applyRules(s.AdditionalProperties, t.Elem(), rest)
			}
			return
		}
		switch {
		case s.Type == "string" && t.Kind() == reflect.String:
			stringRule(s, name, param)
		case (s.Type == "integer" || s.Type == "number") && isNumberKind(t.Kind()):
			numberRule(s, name, param)
		case s.Type == "array" && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			sizeRule(&s.MinItems, &s.MaxItems, name, param)
			if name == "unique" {
				s.UniqueItems = true
			}
		case s.Type == "object" && t.Kind() == reflect.Map:
			sizeRule(&s.MinProperties, &s.MaxProperties, name, param)
		}
	}
}

func isNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func stringRule(s *jsonschema.Schema, name, param string) {
	switch name {
	case "required":
		if s.MinLength == nil || *s.MinLength < 1 {
			s.MinLength = ptr(uint64(1))
		}
	case "eq":
		s.Const = param
	case "oneof":
		if s.Enum == nil {
			for _, v := range oneofParamRE.FindAllString(param, -1) {
				s.Enum = append(s.Enum, strings.ReplaceAll(v, "'", ""))
			}
		}
	case "startswith", "endswith", "contains":
		if s.Pattern == "" {
			s.Pattern = map[string]string{"startswith": "^", "contains": ""}[name] + regexp.QuoteMeta(param)
			if name == "endswith" {
				s.Pattern += "$"
			}
		}
	default:
		if p, ok := validatePatterns[name]; ok && s.Pattern == "" {
			s.Pattern = p
		} else if f, ok := validateFormats[name]; ok && s.Format == "" {
			s.Format = f
		} else {
			sizeRule(&s.MinLength, &s.MaxLength, name, param)
		}
	}
}

func numberRule(s *jsonschema.Schema, name, param string) {
	if _, err := strconv.ParseFloat(param, 64); err != nil && name != "oneof" {
		return
	}
	n := json.Number(param)
	switch name {
	case "min", "gte":
		s.Minimum = maxNumber(s.Minimum, n)
	case "max", "lte":
		s.Maximum = minNumber(s.Maximum, n)
	case "gt":
		s.ExclusiveMinimum = maxNumber(s.ExclusiveMinimum, n)
	case "lt":
		s.ExclusiveMaximum = minNumber(s.ExclusiveMaximum, n)
	case "eq", "len":
		s.Const = n
	case "oneof":
		if s.Enum == nil {
			for _, v := range strings.Fields(param) {
				if _, err := strconv.ParseFloat(v, 64); err == nil {
					s.Enum = append(s.Enum, json.Number(v))
				}
			}
		}
	}
}

// sizeRule shows min, max, len, gt, gte, lt and lte of a string, slice or
// map as the matching pair of JSON Schema bounds.
func sizeRule(lo, hi **uint64, name, param string) {
	n, err := strconv.ParseUint(param, 10, 64)
	if err != nil {
		return
	}
	setLo := func(v uint64) {
		if *lo == nil || **lo < v {
			*lo = ptr(v)
		}
	}
	setHi := func(v uint64) {
		if *hi == nil || **hi > v {
			*hi = ptr(v)
		}
	}
	switch name {
	case "min", "gte":
		setLo(n)
	case "gt":
		setLo(n + 1)
	case "max", "lte":
		setHi(n)
	case "lt":
		if n > 0 {
			setHi(n - 1)
		}
	case "len":
		setLo(n)
		setHi(n)
	}
}

func maxNumber(cur, n json.Number) json.Number {
	a, errA := cur.Float64()
	b, _ := n.Float64()
	if cur == "" || errA != nil || b > a {
		return n
	}
	return cur
}

func minNumber(cur, n json.Number) json.Number {
	a, errA := cur.Float64()
	b, _ := n.Float64()
	if cur == "" || errA != nil || b < a {
		return n
	}
	return cur
}

func ptr[T any](v T) *T { return &v }

// addKindBounds bounds the integers that Go cannot hold outside a range:
// unsigned ones from 0, sized ones to their width.
func addKindBounds(s *jsonschema.Schema, t reflect.Type) {
	if s.Type != "integer" {
		return
	}
	var lo, hi string
	switch t.Kind() {
	case reflect.Int8:
		lo, hi = strconv.Itoa(math.MinInt8), strconv.Itoa(math.MaxInt8)
	case reflect.Int16:
		lo, hi = strconv.Itoa(math.MinInt16), strconv.Itoa(math.MaxInt16)
	case reflect.Int32:
		lo, hi = strconv.Itoa(math.MinInt32), strconv.Itoa(math.MaxInt32)
	case reflect.Uint8:
		lo, hi = "0", strconv.Itoa(math.MaxUint8)
	case reflect.Uint16:
		lo, hi = "0", strconv.Itoa(math.MaxUint16)
	case reflect.Uint32:
		lo, hi = "0", strconv.Itoa(math.MaxUint32)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		lo = "0"
	default:
		return
	}
	s.Minimum = maxNumber(s.Minimum, json.Number(lo))
	if hi != "" {
		s.Maximum = minNumber(s.Maximum, json.Number(hi))
	}
}

// dropUncheckedFormats removes the formats that the decoder does not check,
// so that the schema shows no rule the decoder ignores.
func dropUncheckedFormats(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, ok := formats[s.Format]; !ok && s.Format != "" {
		s.Format = ""
	}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			dropUncheckedFormats(p.Value)
		}
	}
	for _, p := range s.PatternProperties {
		dropUncheckedFormats(p)
	}
	if s.AdditionalProperties != jsonschema.FalseSchema && s.AdditionalProperties != jsonschema.TrueSchema {
		dropUncheckedFormats(s.AdditionalProperties)
	}
	dropUncheckedFormats(s.Items)
	dropUncheckedFormats(s.Not)
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, p := range list {
			dropUncheckedFormats(p)
		}
	}
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// schemaNode is a JSON Schema as the decoder checks it. The keywords it
// reads are the fields below; [NewTool] refuses a reflected schema that
// uses one of unenforcedKeywords.
type schemaNode struct {
	RawType              json.RawMessage        `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	PatternProperties    map[string]*schemaNode `json:"patternProperties"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Required             []string               `json:"required"`
	Enum                 []json.RawMessage      `json:"enum"`
	Const                json.RawMessage        `json:"const"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	ExclusiveMinimum     json.RawMessage        `json:"exclusiveMinimum"` // a number, or a draft-4 boolean
	ExclusiveMaximum     json.RawMessage        `json:"exclusiveMaximum"`
	MultipleOf           *float64               `json:"multipleOf"`
	MinLength            *int                   `json:"minLength"`
	MaxLength            *int                   `json:"maxLength"`
	Pattern              string                 `json:"pattern"`
	Format               string                 `json:"format"`
	MinItems             *int                   `json:"minItems"`
	MaxItems             *int                   `json:"maxItems"`
	UniqueItems          bool                   `json:"uniqueItems"`
	MinProperties        *int                   `json:"minProperties"`
	MaxProperties        *int                   `json:"maxProperties"`
	AllOf                []*schemaNode          `json:"allOf"`
	AnyOf                []*schemaNode          `json:"anyOf"`
	OneOf                []*schemaNode          `json:"oneOf"`
	Not                  *schemaNode            `json:"not"`

	// Set by prepare.
	types     typeSet
	never     bool                // the schema false: no value is valid
	closed    bool                // additionalProperties false
	props     map[string]propInfo // by name; see lookup
	propList  []propEntry         // the same, for a linear lookup in small objects
	patterns  []patternProp
	pattern   *regexp.Regexp
	format    *formatCheck
	enum      []any // decoded enum values, numbers as float64
	hasConst  bool
	constVal  any
	exMin     *float64
	exMax     *float64
	reqMask   uint64   // one bit per required name, when there are at most 64
	numeric   bool     // has a rule that needs a number's value
	textual   bool     // has a rule that needs a string's contents
	combined  bool     // has allOf, anyOf, oneOf or not
	unchecked []string // keywords present that the decoder does not check
}

type propEntry struct {
	name string
	info propInfo
}

// lookup finds a property by name: linearly in small objects, where that
// beats hashing.
func (n *schemaNode) lookup(key []byte) (propInfo, bool) {
	if n.props == nil {
		return propInfo{}, false
	}
	if n.propList != nil {
		for i := range n.propList {
			if n.propList[i].name == string(key) {
				return n.propList[i].info, true
			}
		}
		return propInfo{}, false
	}
	info, ok := n.props[string(key)]
	return info, ok
}

type propInfo struct {
	node     *schemaNode // nil for a required name without a property
	req      int         // index in Required, or -1
	declared bool        // listed in properties
}

type patternProp struct {
	re   *regexp.Regexp
	node *schemaNode
}

// unenforcedKeywords are the validation keywords the decoder does not
// check. A reflected schema must not use them; a hand-written one may, and
// they are then shown but not enforced.
var unenforcedKeywords = []string{
	"$ref", "$dynamicRef", "if", "then", "else", "dependentRequired", "dependentSchemas",
	"dependencies", "prefixItems", "additionalItems", "contains", "minContains", "maxContains",
	"propertyNames", "unevaluatedItems", "unevaluatedProperties",
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

// UnmarshalJSON also accepts the boolean schemas true (anything) and false
// (nothing).
func (n *schemaNode) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("true")):
		*n = schemaNode{}
		return nil
	case bytes.Equal(b, []byte("false")):
		*n = schemaNode{never: true}
		return nil
	}
	type plain schemaNode
	if err := json.Unmarshal(b, (*plain)(n)); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for _, k := range unenforcedKeywords {
		if _, ok := keys[k]; ok {
			n.unchecked = append(n.unchecked, k)
		}
	}
	return nil
}

// parseSchema parses and compiles a hand-written input schema: keywords the
// decoder does not check are shown to the model but not enforced.
func parseSchema(schema json.RawMessage) (*schemaNode, error) {
	return compileSchema(schema, false)
}

// compileSchema parses and compiles an input schema. With strict, a
// keyword the decoder cannot enforce is an error.
func compileSchema(schema json.RawMessage, strict bool) (*schemaNode, error) {
	var n schemaNode
	if err := json.Unmarshal(schema, &n); err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	if err := n.prepare(strict); err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	if n.types&tObject == 0 {
		return nil, fmt.Errorf(`invalid input schema: top level must have "type": "object"`)
	}
	return &n, nil
}

func (n *schemaNode) prepare(strict bool) error {
	if n == nil {
		return nil
	}
	if strict && len(n.unchecked) > 0 {
		return fmt.Errorf("keyword %q is not checked by the decoder", n.unchecked[0])
	}
	n.prepareTypes()
	n.closed = n.AdditionalProperties != nil && n.AdditionalProperties.never
	n.prepareProps()
	if err := n.preparePatterns(); err != nil {
		return err
	}
	if n.Format != "" {
		n.format = formats[n.Format] // nil for a format the decoder does not know: an annotation
	}
	if err := n.prepareValues(); err != nil {
		return err
	}
	if err := n.prepareBounds(); err != nil {
		return err
	}
	n.numeric = n.Minimum != nil || n.Maximum != nil || n.exMin != nil || n.exMax != nil || n.MultipleOf != nil || n.enum != nil || n.hasConst
	n.textual = n.MinLength != nil || n.MaxLength != nil || n.pattern != nil || n.format != nil || n.enum != nil || n.hasConst
	n.combined = len(n.AllOf)+len(n.AnyOf)+len(n.OneOf) > 0 || n.Not != nil
	for _, c := range n.children() {
		if err := c.prepare(strict); err != nil {
			return err
		}
	}
	return nil
}

// prepareTypes sets the type bits from "type", one name or a list.
func (n *schemaNode) prepareTypes() {
	var names []string
	var one string
	if json.Unmarshal(n.RawType, &one) == nil {
		names = []string{one}
	} else {
		_ = json.Unmarshal(n.RawType, &names)
	}
	for _, name := range names {
		for _, tn := range typeNames {
			if tn.name == name {
				n.types |= tn.bit
			}
		}
	}
}

// prepareProps builds the property index: each declared or required
// property, the position of each required one (duplicates dropped), and
// for a few properties a sorted list to search instead of the map.
func (n *schemaNode) prepareProps() {
	if len(n.Properties) == 0 && len(n.Required) == 0 {
		return
	}
	n.props = make(map[string]propInfo, len(n.Properties)+len(n.Required))
	for k, p := range n.Properties {
		n.props[k] = propInfo{node: p, req: -1, declared: true}
	}
	req := n.Required[:0:0]
	for _, k := range n.Required {
		if !slices.Contains(req, k) {
			req = append(req, k)
		}
	}
	n.Required = req
	for i, k := range n.Required {
		info, ok := n.props[k]
		if !ok {
			info = propInfo{}
		}
		info.req = i
		n.props[k] = info
		if i < 64 {
			n.reqMask |= 1 << i
		}
	}
	if len(n.props) <= 8 {
		for k, info := range n.props {
			n.propList = append(n.propList, propEntry{k, info})
		}
		slices.SortFunc(n.propList, func(a, b propEntry) int { return strings.Compare(a.name, b.name) })
	}
}

// preparePatterns compiles the regular expressions of
// "patternProperties" and "pattern".
func (n *schemaNode) preparePatterns() error {
	for k, p := range n.PatternProperties {
		re, err := regexp.Compile(k)
		if err != nil {
			return fmt.Errorf("patternProperties %q: %w", k, err)
		}
		n.patterns = append(n.patterns, patternProp{re: re, node: p})
	}
	slices.SortFunc(n.patterns, func(a, b patternProp) int { return strings.Compare(a.re.String(), b.re.String()) })
	if n.Pattern != "" {
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", n.Pattern, err)
		}
		n.pattern = re
	}
	return nil
}

// prepareValues decodes the values of "enum" and "const".
func (n *schemaNode) prepareValues() error {
	for _, raw := range n.Enum {
		v, err := decodeValue(raw)
		if err != nil {
			return fmt.Errorf("enum: %w", err)
		}
		n.enum = append(n.enum, v)
	}
	if n.Const != nil {
		v, err := decodeValue(n.Const)
		if err != nil {
			return fmt.Errorf("const: %w", err)
		}
		n.hasConst, n.constVal = true, v
	}
	return nil
}

// prepareBounds reads the exclusive bounds, in either draft's form, and
// checks "multipleOf".
func (n *schemaNode) prepareBounds() error {
	var err error
	if n.exMin, err = exclusiveBound(n.ExclusiveMinimum, n.Minimum); err != nil {
		return fmt.Errorf("exclusiveMinimum: %w", err)
	}
	if n.exMax, err = exclusiveBound(n.ExclusiveMaximum, n.Maximum); err != nil {
		return fmt.Errorf("exclusiveMaximum: %w", err)
	}
	if n.exMin != nil && n.ExclusiveMinimum[0] != '-' && !isDigit(n.ExclusiveMinimum[0]) {
		n.Minimum = nil // draft 4: the bound moved to exMin
	}
	if n.exMax != nil && n.ExclusiveMaximum[0] != '-' && !isDigit(n.ExclusiveMaximum[0]) {
		n.Maximum = nil
	}
	if n.MultipleOf != nil && *n.MultipleOf <= 0 {
		return errors.New("multipleOf must be greater than 0")
	}
	return nil
}

// children are the schemas inside n (some of them nil).
func (n *schemaNode) children() []*schemaNode {
	children := []*schemaNode{n.AdditionalProperties, n.Items, n.Not}
	for _, p := range n.Properties {
		children = append(children, p)
	}
	for _, p := range n.PatternProperties {
		children = append(children, p)
	}
	children = append(children, n.AllOf...)
	children = append(children, n.AnyOf...)
	return append(children, n.OneOf...)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// exclusiveBound reads exclusiveMinimum or exclusiveMaximum: a number
// (JSON Schema 2020-12), or a draft-4 boolean that makes bound exclusive.
func exclusiveBound(raw json.RawMessage, bound *float64) (*float64, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0, bytes.Equal(raw, []byte("false")), bytes.Equal(raw, []byte("null")):
		return nil, nil
	case bytes.Equal(raw, []byte("true")):
		return bound, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, fmt.Errorf("not a number: %s", raw)
	}
	return &f, nil
}

// decodeValue decodes a JSON value with numbers as float64 and strings,
// booleans, null, []any and map[string]any as encoding/json does.
func decodeValue(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// normalize parses a model's input, repairs what can be repaired (numbers
// and booleans sent as strings, an object sent as a JSON string) and
// returns it re-encoded; it reports what is not a JSON object. With check,
// it also checks the result against the schema and reports every
// violation.
func (n *schemaNode) normalize(raw []byte, check bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("input is not valid JSON: unexpected data after the top-level value")
	}
	if s, ok := v.(string); ok { // an object sent as a JSON-encoded string
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var inner any
		if dec.Decode(&inner) == nil {
			if _, ok := inner.(map[string]any); ok {
				v, raw = inner, []byte(s)
			}
		}
	}
	if v == nil {
		return nil, errors.New("input is null; expected a JSON object")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("input must be a JSON object, got %s", jsonextract.Kind(v))
	}
	var out bytes.Buffer
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := n.fix(dec, &out); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %v", err)
	}
	fixed := out.Bytes()
	if check {
		if errs := n.check(fixed); len(errs) > 0 {
			return nil, joinFieldErrors(errs)
		}
	}
	return fixed, nil
}

// fix copies one JSON value from dec to out, keeping the order of keys,
// and coerces on the way what models send as strings into what the schema
// asks for: numbers, booleans, objects. It also writes an integral number
// like 3.0 as 3 where the schema asks for an integer (Go's decoder wants
// 3).
func (n *schemaNode) fix(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '{' {
			err = n.fixObject(dec, out)
		} else {
			err = n.fixArray(dec, out)
		}
		if err != nil {
			return err
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		return n.fixString(x, out)
	case json.Number:
		return n.fixNumber(x, out)
	default: // bool, nil
		writeJSON(out, x)
	}
	return nil
}

// fixObject copies the members of an object, after its '{', up to its
// closing delimiter.
func (n *schemaNode) fixObject(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := key.(string)
		writeJSON(out, k)
		out.WriteByte(':')
		if err := n.member(k).fix(dec, out); err != nil {
			return err
		}
	}
	out.WriteByte('}')
	return nil
}

// fixArray copies the items of an array, after its '[', up to its closing
// delimiter.
func (n *schemaNode) fixArray(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('[')
	var items *schemaNode
	if n != nil {
		items = n.Items
	}
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := items.fix(dec, out); err != nil {
			return err
		}
	}
	out.WriteByte(']')
	return nil
}

// fixString copies a string, or the number, boolean or object it holds
// where the schema wants one of those instead.
func (n *schemaNode) fixString(x string, out *bytes.Buffer) error {
	switch {
	case n == nil || n.types&tString != 0:
	case n.types&(tInteger|tNumber) != 0:
		num := strings.TrimSpace(x)
		if _, err := strconv.ParseFloat(num, 64); err == nil && json.Valid([]byte(num)) {
			return n.fixNumber(json.Number(num), out)
		}
	case n.types&tBoolean != 0:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			out.WriteString(strconv.FormatBool(b))
			return nil
		}
	case n.types&tObject != 0:
		var inner map[string]any
		if json.Unmarshal([]byte(x), &inner) == nil && inner != nil {
			d := json.NewDecoder(strings.NewReader(x))
			d.UseNumber()
			return n.fix(d, out)
		}
	}
	writeJSON(out, x)
	return nil
}

func (n *schemaNode) fixNumber(x json.Number, out *bytes.Buffer) error {
	if n != nil && n.types&tInteger != 0 && n.types&tNumber == 0 && strings.ContainsAny(string(x), ".eE") {
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			out.WriteString(strconv.FormatInt(int64(f), 10))
			return nil
		}
	}
	out.WriteString(string(x))
	return nil
}

// member is the schema of the value of key in an object of schema n, for
// coercion: its property, else additionalProperties.
func (n *schemaNode) member(key string) *schemaNode {
	if n == nil {
		return nil
	}
	if p, ok := n.Properties[key]; ok {
		return p
	}
	for _, pp := range n.patterns {
		if pp.re.MatchString(key) {
			return pp.node
		}
	}
	return n.AdditionalProperties
}

func writeJSON(out *bytes.Buffer, v any) {
	b, _ := json.Marshal(v)
	out.Write(b)
}

// joinFieldErrors makes one error of violations, in order.
func joinFieldErrors(errs []fieldError) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.msg
	}
	return errors.New("invalid input: " + strings.Join(msgs, "; "))
}

func (n *schemaNode) fieldList() string {
	names := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		names = append(names, strconv.Quote(k))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data.
func decodeStrict(raw []byte, v any) error {
	if bytes.Equal(raw, []byte("null")) {
		return errors.New("input is null; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the input object")
	}
	return nil
}

// describeDecodeError turns an encoding/json error into a text that names
// the JSON field and what was expected.
func describeDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return fmt.Errorf("invalid input: expected %s, got %s", goTypeWord(te.Type), te.Value)
		}
		return fmt.Errorf("invalid input: field %q must be %s, got %s", field, goTypeWord(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("input is not valid JSON: %v (at byte %d)", se, se.Offset)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("invalid input: unknown field %s", f)
	}
	return fmt.Errorf("invalid input: %s", strings.TrimPrefix(msg, "json: "))
}

func goTypeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return goTypeWord(t.Elem())
	}
	return t.String()
}
