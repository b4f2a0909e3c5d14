package agentrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

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
