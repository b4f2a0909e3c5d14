package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// maxSchemaDepth bounds the nesting the transform follows, which also
// stops recursive $refs.
const maxSchemaDepth = 32

// ToolParameters converts a tool's JSON Schema ([agentrt.ToolSpec]
// InputSchema) to the parameters of a Gemini function declaration, the
// OpenAPI 3.0 subset the API accepts. Plan uses it for every tool; it is
// exported so that a program can see what the model is shown.
//
// The transform:
//
//   - inlines $ref (to "#/$defs/..." or "#/definitions/...") and merges
//     allOf; a recursive $ref becomes a JSON-string field below 32 levels;
//   - drops additionalProperties, $schema, $id, $comment, default, examples
//     and the keywords Gemini does not know; a format Gemini does not know
//     ("email", "uri", ...) and numeric bounds it cannot express
//     (exclusiveMinimum, multipleOf) move into the description;
//   - maps "type": ["T", "null"], and anyOf/oneOf with a {"type": "null"}
//     branch, to T with nullable; an anyOf/oneOf of string constants to a
//     string enum; other anyOf/oneOf to anyOf; const to a one-value enum;
//   - keeps enum on strings, and moves a non-string enum into the
//     description ("One of: 1, 2.") since Gemini takes string enums only;
//   - filters required to the properties that exist;
//   - turns an object without properties (a Go map, or an open object)
//     into a string field described as "a JSON object encoded as a
//     string", because Gemini refuses an OBJECT without properties; the
//     runtime's lenient decoding (see [agentrt.NewTool]) turns the string
//     back into the object before the tool sees it. A schema that allows
//     anything becomes a string in the same way;
//   - returns nil for a top-level object without properties: the function
//     declaration then has no parameters, as Gemini requires.
//
// It returns an error only for a schema that is not JSON, whose top level
// is not an object schema, or whose $ref points nowhere.
func ToolParameters(schema json.RawMessage) (*genai.Schema, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("input schema is not valid JSON: %w", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	c := &schemaConverter{root: obj}
	s, err := c.convert(obj, 0)
	if err != nil {
		return nil, err
	}
	if s.Type != genai.TypeObject {
		if isJSONStringObject(s) {
			return nil, nil // an object without properties: no parameters
		}
		return nil, fmt.Errorf(`input schema must have "type": "object" at its top level`)
	}
	return s, nil
}

// jsonObjectNote is the description of an object without properties, sent
// as a string.
const jsonObjectNote = "A JSON object encoded as a string"

func isJSONStringObject(s *genai.Schema) bool {
	return s.Type == genai.TypeString && strings.Contains(s.Description, jsonObjectNote)
}

type schemaConverter struct {
	root map[string]any
}

// resolve returns the schema a local $ref points to.
func (c *schemaConverter) resolve(ref string) (any, error) {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only local references (#/...) are supported", ref)
	}
	var cur any = c.root
	for _, tok := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q points nowhere", ref)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q points nowhere", ref)
		}
	}
	return cur, nil
}

// convert converts one schema node.
func (c *schemaConverter) convert(node any, depth int) (*genai.Schema, error) {
	s, ok := node.(map[string]any)
	if !ok {
		// true, false, or garbage: nothing to hold on to.
		return anyValue(""), nil
	}
	desc, _ := s["description"].(string)
	if depth > maxSchemaDepth {
		return anyValue(desc), nil
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := c.resolve(ref)
		if err != nil {
			return nil, err
		}
		t, ok := target.(map[string]any)
		if !ok {
			return anyValue(desc), nil
		}
		merged := maps.Clone(t)
		for k, v := range s { // siblings of $ref (description, ...) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		return c.convert(merged, depth+1)
	}
	if all, ok := s["allOf"].([]any); ok {
		merged, err := c.mergeAllOf(s, all, depth)
		if err != nil {
			return nil, err
		}
		return c.convert(merged, depth+1)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[key].([]any); ok && len(branches) > 0 {
			return c.union(s, branches, desc, depth)
		}
	}

	types, nullable := schemaTypes(s)
	if len(types) > 1 {
		out := &genai.Schema{Description: desc}
		for _, t := range types {
			b := maps.Clone(s)
			b["type"] = t
			delete(b, "description")
			sub, err := c.convert(b, depth+1)
			if err != nil {
				return nil, err
			}
			out.AnyOf = append(out.AnyOf, sub)
		}
		if nullable {
			out.Nullable = genai.Ptr(true)
		}
		return out, nil
	}
	var typ string
	if len(types) == 1 {
		typ = types[0]
	}

	out := &genai.Schema{Description: desc}
	out.Title, _ = s["title"].(string)
	var notes []string

	// enum and const
	var values []any
	if e, ok := s["enum"].([]any); ok {
		values = e
	}
	if cv, ok := s["const"]; ok {
		values = []any{cv}
	}
	if typ == "" && len(values) > 0 {
		typ = typeOfValues(values)
	}
	if len(values) > 0 {
		if strs, ok := allStrings(values); ok && typ == "string" {
			out.Enum = strs
		} else {
			notes = append(notes, "One of: "+listValues(values)+".")
		}
	}

	switch typ {
	case "string":
		out.Type = genai.TypeString
		if f, _ := s["format"].(string); f != "" {
			if f == "date-time" || f == "enum" {
				out.Format = f
			} else {
				notes = append(notes, "Format: "+f+".")
			}
		}
		out.MinLength = intKeyword(s, "minLength")
		out.MaxLength = intKeyword(s, "maxLength")
		out.Pattern, _ = s["pattern"].(string)
	case "integer", "number":
		out.Type = genai.TypeNumber
		if typ == "integer" {
			out.Type = genai.TypeInteger
		}
		if f, _ := s["format"].(string); f != "" {
			if f == "int32" || f == "int64" || f == "float" || f == "double" {
				out.Format = f
			} else {
				notes = append(notes, "Format: "+f+".")
			}
		}
		out.Minimum = floatKeyword(s, "minimum")
		out.Maximum = floatKeyword(s, "maximum")
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
			if v, ok := s[k]; ok {
				if _, isBool := v.(bool); !isBool {
					notes = append(notes, fmt.Sprintf("%s: %v.", k, v))
				}
			}
		}
	case "boolean":
		out.Type = genai.TypeBoolean
	case "array":
		out.Type = genai.TypeArray
		items, err := c.convert(s["items"], depth+1)
		if err != nil {
			return nil, err
		}
		out.Items = items
		out.MinItems = intKeyword(s, "minItems")
		out.MaxItems = intKeyword(s, "maxItems")
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return objectAsString(c, s, desc, nullable, depth)
		}
		out.Type = genai.TypeObject
		out.Properties = make(map[string]*genai.Schema, len(props))
		for _, name := range slices.Sorted(maps.Keys(props)) {
			sub, err := c.convert(props[name], depth+1)
			if err != nil {
				return nil, err
			}
			out.Properties[name] = sub
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok && out.Properties[name] != nil && !slices.Contains(out.Required, name) {
					out.Required = append(out.Required, name)
				}
			}
		}
		out.MinProperties = intKeyword(s, "minProperties")
		out.MaxProperties = intKeyword(s, "maxProperties")
	case "null":
		out.Type = genai.TypeString
		nullable = true
		notes = append(notes, "Always null.")
	default:
		if _, ok := s["properties"]; ok {
			b := maps.Clone(s)
			b["type"] = "object"
			return c.convert(b, depth+1)
		}
		if _, ok := s["items"]; ok {
			b := maps.Clone(s)
			b["type"] = "array"
			return c.convert(b, depth+1)
		}
		return anyValue(desc), nil
	}
	if nullable {
		out.Nullable = genai.Ptr(true)
	}
	out.Description = joinNotes(out.Description, notes...)
	return out, nil
}

// union converts anyOf/oneOf branches.
func (c *schemaConverter) union(s map[string]any, branches []any, desc string, depth int) (*genai.Schema, error) {
	var rest []any
	nullable := false
	for _, b := range branches {
		if bm, ok := b.(map[string]any); ok {
			if t, _ := bm["type"].(string); t == "null" && len(bm) == 1 {
				nullable = true
				continue
			}
		}
		rest = append(rest, b)
	}
	// Keywords beside anyOf (other than description) apply to every branch.
	base := maps.Clone(s)
	delete(base, "anyOf")
	delete(base, "oneOf")
	delete(base, "description")
	withBase := func(b any) any {
		bm, ok := b.(map[string]any)
		if !ok || len(base) == 0 {
			return b
		}
		m := maps.Clone(base)
		maps.Copy(m, bm)
		return m
	}
	if len(rest) == 1 {
		out, err := c.convert(withBase(rest[0]), depth+1)
		if err != nil {
			return nil, err
		}
		if desc != "" {
			out.Description = joinNotes(desc, out.Description)
		}
		if nullable {
			out.Nullable = genai.Ptr(true)
		}
		return out, nil
	}
	out := &genai.Schema{Description: desc}
	if nullable {
		out.Nullable = genai.Ptr(true)
	}
	// A union of string constants is a string enum.
	var enum []string
	for _, b := range rest {
		bm, _ := b.(map[string]any)
		if cv, ok := bm["const"].(string); ok {
			enum = append(enum, cv)
			continue
		}
		if e, ok := bm["enum"].([]any); ok {
			if strs, ok := allStrings(e); ok {
				enum = append(enum, strs...)
				continue
			}
		}
		enum = nil
		break
	}
	if len(enum) > 0 {
		out.Type = genai.TypeString
		out.Enum = enum
		return out, nil
	}
	for _, b := range rest {
		sub, err := c.convert(withBase(b), depth+1)
		if err != nil {
			return nil, err
		}
		out.AnyOf = append(out.AnyOf, sub)
	}
	return out, nil
}

// mergeAllOf merges the branches of allOf into one schema: properties and
// required are united; for other keywords the first one set wins.
func (c *schemaConverter) mergeAllOf(s map[string]any, all []any, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return map[string]any{}, nil
	}
	out := maps.Clone(s)
	delete(out, "allOf")
	props := map[string]any{}
	if p, ok := s["properties"].(map[string]any); ok {
		maps.Copy(props, p)
	}
	var required []any
	if r, ok := s["required"].([]any); ok {
		required = append(required, r...)
	}
	for _, b := range all {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		for range maxSchemaDepth {
			ref, ok := bm["$ref"].(string)
			if !ok {
				break
			}
			t, err := c.resolve(ref)
			if err != nil {
				return nil, err
			}
			next := map[string]any{}
			if tm, ok := t.(map[string]any); ok {
				maps.Copy(next, tm)
			}
			for k, v := range bm {
				if k != "$ref" {
					next[k] = v
				}
			}
			bm = next
		}
		delete(bm, "$ref") // a cycle: what was reached is kept
		if nested, ok := bm["allOf"].([]any); ok {
			m, err := c.mergeAllOf(bm, nested, depth+1)
			if err != nil {
				return nil, err
			}
			bm = m
		}
		for k, v := range bm {
			switch k {
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for name, ps := range p {
						if _, exists := props[name]; !exists {
							props[name] = ps
						}
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					required = append(required, r...)
				}
			default:
				if _, exists := out[k]; !exists {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
		if _, ok := out["type"]; !ok {
			out["type"] = "object"
		}
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out, nil
}

// objectAsString converts an object without properties (a map, or an open
// object) to a string field holding JSON, described with the type of its
// values when known.
func objectAsString(c *schemaConverter, s map[string]any, desc string, nullable bool, depth int) (*genai.Schema, error) {
	note := jsonObjectNote
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		if v, err := c.convert(ap, depth+1); err == nil && v.Type != "" {
			note += fmt.Sprintf(", mapping string keys to %s values", strings.ToLower(string(v.Type)))
		}
	}
	note += `, such as "{\"key\": ...}".`
	out := &genai.Schema{Type: genai.TypeString, Description: joinNotes(desc, note)}
	if nullable {
		out.Nullable = genai.Ptr(true)
	}
	return out, nil
}

// anyValue is the schema of a value the JSON Schema does not constrain:
// Gemini has no such type, so it is a string holding JSON.
func anyValue(desc string) *genai.Schema {
	return &genai.Schema{Type: genai.TypeString, Description: joinNotes(desc, "Any JSON value, encoded as a string.")}
}

// schemaTypes returns the types a schema names, without "null", and
// whether "null" was among them.
func schemaTypes(s map[string]any) (types []string, nullable bool) {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return []string{"null"}, false
		}
		return []string{t}, false
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok {
				if str == "null" {
					nullable = true
				} else if !slices.Contains(types, str) {
					types = append(types, str)
				}
			}
		}
		if len(types) == 0 && nullable {
			return []string{"null"}, false
		}
	}
	if n, ok := s["nullable"].(bool); ok && n {
		nullable = true
	}
	return types, nullable
}

func typeOfValues(values []any) string {
	if _, ok := allStrings(values); ok {
		return "string"
	}
	allInt, allNum, allBool := true, true, true
	for _, v := range values {
		f, isNum := v.(float64)
		_, isBool := v.(bool)
		allNum = allNum && isNum
		allInt = allInt && isNum && f == float64(int64(f))
		allBool = allBool && isBool
	}
	switch {
	case allInt:
		return "integer"
	case allNum:
		return "number"
	case allBool:
		return "boolean"
	}
	return ""
}

func allStrings(values []any) ([]string, bool) {
	out := make([]string, 0, len(values))
	for _, v := range values {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func listValues(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func intKeyword(s map[string]any, key string) *int64 {
	if f, ok := s[key].(float64); ok && f >= 0 {
		return genai.Ptr(int64(f))
	}
	return nil
}

func floatKeyword(s map[string]any, key string) *float64 {
	if f, ok := s[key].(float64); ok {
		return genai.Ptr(f)
	}
	return nil
}

// joinNotes appends sentences to a description.
func joinNotes(desc string, notes ...string) string {
	parts := make([]string, 0, len(notes)+1)
	if d := strings.TrimSpace(desc); d != "" {
		parts = append(parts, d)
	}
	for _, n := range notes {
		if n = strings.TrimSpace(n); n != "" {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, " ")
}

// responseSchema prepares a ModelRequest.ResponseSchema for
// responseJsonSchema, which takes JSON Schema as is (including $ref, anyOf
// and additionalProperties): only the keywords that identify the document
// ($schema, $id) are removed. The request body's objects lose the order
// of their keys (the API would order the properties alphabetically), so
// every object schema with properties gets "propertyOrdering": their
// names in the order of the schema's text, which is a Go struct's field
// order for a schema reflected from one. An existing propertyOrdering is
// kept.
func responseSchema(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	schema, _, err := decodeOrdered(dec, kindSchema)
	if err != nil {
		return nil, err
	}
	if m, ok := schema.(map[string]any); ok {
		delete(m, "$schema")
		delete(m, "$id")
	}
	return schema, nil
}

// What a JSON value is, for decodeOrdered.
const (
	kindData    = iota // a value that is not a schema (enum values, defaults...)
	kindSchema         // a schema
	kindSchemas        // an object or array whose values are schemas (properties, $defs, anyOf...)
)

// decodeOrdered decodes the next JSON value of dec, of the given kind,
// adding propertyOrdering to the object schemas with properties. For an
// object it also returns its keys in order.
func decodeOrdered(dec *json.Decoder, kind int) (any, []string, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		var keys, order []string
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, nil, err
			}
			key := keyTok.(string)
			v, childKeys, err := decodeOrdered(dec, childKind(kind, key))
			if err != nil {
				return nil, nil, err
			}
			if kind == kindSchema && key == "properties" {
				order = childKeys
			}
			m[key] = v
			keys = append(keys, key)
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, nil, err
		}
		if _, ok := m["propertyOrdering"]; !ok && len(order) > 0 {
			m["propertyOrdering"] = order
		}
		return m, keys, nil
	case json.Delim('['):
		child := kindData
		if kind != kindData { // anyOf: [...], or the old tuple form of items
			child = kindSchema
		}
		a := []any{}
		for dec.More() {
			v, _, err := decodeOrdered(dec, child)
			if err != nil {
				return nil, nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, nil, err
		}
		return a, nil, nil
	}
	return tok, nil, nil
}

// childKind is the kind of the value at key of a value of kind kind.
func childKind(kind int, key string) int {
	switch kind {
	case kindSchemas:
		return kindSchema
	case kindSchema:
		switch key {
		case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas", "anyOf", "oneOf", "allOf", "prefixItems":
			return kindSchemas
		case "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems":
			return kindSchema
		}
	}
	return kindData
}
