package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// This file adapts the canonical JSON Schema of a tool (agentrt.ToolSpec
// InputSchema) to OpenAI's strict mode, which accepts a subset of JSON
// Schema in a stricter form:
//
//   - every object has "additionalProperties": false and lists every
//     property in "required"; a property that was optional becomes nullable
//     (the model sends null for it instead of leaving it out);
//   - the keywords strict mode refuses are absent.
//
// A schema that cannot be expressed this way without changing what it
// accepts (a map, an open object, a length limit, allOf, ...) is sent as is
// with "strict": false. Property order is kept, because the model writes
// properties in schema order.

// strictSchema returns schema rewritten for OpenAI's strict mode, or an
// error saying why the schema cannot be strict.
func strictSchema(schema json.RawMessage) (json.RawMessage, error) {
	v, err := parseOrdered(schema)
	if err != nil {
		return nil, err
	}
	root, ok := v.(object)
	if !ok {
		return nil, errors.New("schema is not a JSON object")
	}
	if _, ok := root.get("anyOf"); ok {
		return nil, errors.New("anyOf at the top level")
	}
	if _, ok := root.get("oneOf"); ok {
		return nil, errors.New("oneOf at the top level")
	}
	if !isObjectSchema(root) {
		return nil, errors.New(`top level is not "type": "object"`)
	}
	out, err := strictNode(root, "#")
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// Keywords that strict mode refuses and that change what a schema accepts:
// a schema using one cannot be strict.
var strictUnsupported = []string{
	"allOf", "not", "if", "then", "else",
	"dependentRequired", "dependentSchemas", "dependencies",
	"patternProperties", "unevaluatedProperties", "propertyNames",
	"minProperties", "maxProperties",
	"prefixItems", "additionalItems", "unevaluatedItems",
	"contains", "minContains", "maxContains", "uniqueItems",
	"minLength", "maxLength",
	"contentEncoding", "contentMediaType", "contentSchema",
}

// Annotations that strict mode refuses but that do not change what a
// schema accepts: they are dropped.
var strictDropped = []string{
	"$schema", "$id", "$comment", "$anchor", "default", "examples",
	"deprecated", "readOnly", "writeOnly",
}

// The string formats strict mode knows; other formats are dropped (a
// format is an annotation in JSON Schema 2020-12).
var strictFormats = []string{
	"date-time", "time", "date", "duration", "email", "hostname",
	"ipv4", "ipv6", "uuid",
}

// strictNode rewrites one schema object in place and returns it.
func strictNode(v any, path string) (any, error) {
	n, ok := v.(object)
	if !ok {
		// A boolean schema (true: anything, false: nothing) has no strict form.
		return nil, fmt.Errorf("%s: schema %s is not an object", path, compactJSON(v))
	}
	out := make(object, 0, len(n))
	for _, m := range n {
		switch {
		case slices.Contains(strictUnsupported, m.key):
			return nil, fmt.Errorf("%s: keyword %q is not supported in strict mode", path, m.key)
		case slices.Contains(strictDropped, m.key):
			continue
		case m.key == "format":
			if f, ok := m.val.(string); !ok || !slices.Contains(strictFormats, f) {
				continue
			}
		case m.key == "properties":
			props, ok := m.val.(object)
			if !ok {
				return nil, fmt.Errorf("%s: properties is not an object", path)
			}
			np := make(object, 0, len(props))
			for _, p := range props {
				s, err := strictNode(p.val, path+"/properties/"+p.key)
				if err != nil {
					return nil, err
				}
				np = append(np, member{p.key, s})
			}
			m.val = np
		case m.key == "items":
			s, err := strictNode(m.val, path+"/items")
			if err != nil {
				return nil, err
			}
			m.val = s
		case m.key == "anyOf" || m.key == "oneOf":
			// oneOf is refused; anyOf accepts the same values whenever the
			// branches do not overlap, which is how oneOf is used in tool
			// schemas.
			list, ok := m.val.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not an array", path, m.key)
			}
			nl := make([]any, len(list))
			for i, s := range list {
				ns, err := strictNode(s, fmt.Sprintf("%s/%s/%d", path, m.key, i))
				if err != nil {
					return nil, err
				}
				nl[i] = ns
			}
			m = member{"anyOf", nl}
		case m.key == "$defs" || m.key == "definitions":
			defs, ok := m.val.(object)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not an object", path, m.key)
			}
			nd := make(object, 0, len(defs))
			for _, d := range defs {
				s, err := strictNode(d.val, path+"/"+m.key+"/"+d.key)
				if err != nil {
					return nil, err
				}
				nd = append(nd, member{d.key, s})
			}
			m.val = nd
		}
		out = append(out, m)
	}
	if isObjectSchema(out) {
		return strictObject(out, path)
	}
	if !hasAny(out, "type", "anyOf", "$ref", "enum", "const") {
		return nil, fmt.Errorf("%s: a schema without a type (any value) cannot be strict", path)
	}
	return out, nil
}

// strictObject closes an object schema and makes every property required,
// the optional ones nullable.
func strictObject(n object, path string) (object, error) {
	if ap, ok := n.get("additionalProperties"); ok && ap != false {
		return nil, fmt.Errorf("%s: an object with additionalProperties (a map) cannot be strict", path)
	}
	pv, hasProps := n.get("properties")
	if !hasProps {
		if ap, ok := n.get("additionalProperties"); !ok || ap != false {
			return nil, fmt.Errorf("%s: an object without properties (any object) cannot be strict", path)
		}
		pv = object{}
		n = n.set("properties", pv)
	}
	props := pv.(object)
	var required []string
	if rv, ok := n.get("required"); ok {
		list, ok := rv.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: required is not an array", path)
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("%s: required holds a non-string", path)
			}
			if _, ok := props.get(name); !ok {
				return nil, fmt.Errorf("%s: required property %q is not declared", path, name)
			}
			required = append(required, name)
		}
	}
	all := make([]any, 0, len(props))
	for i, p := range props {
		if !slices.Contains(required, p.key) {
			props[i].val = nullable(p.val)
		}
		all = append(all, p.key)
	}
	n = n.set("required", all)
	n = n.set("additionalProperties", false)
	return n, nil
}

// nullable returns schema s extended to accept null as well.
func nullable(s any) any {
	n, ok := s.(object)
	if !ok {
		return s
	}
	if acceptsNull(n) {
		return n
	}
	_, hasEnum := n.get("enum")
	_, hasConst := n.get("const")
	if t, ok := n.get("type"); ok && !hasEnum && !hasConst {
		switch t := t.(type) {
		case string:
			if t != "object" && t != "array" {
				return n.set("type", []any{t, "null"})
			}
		case []any:
			if !slices.Contains(t, any("object")) && !slices.Contains(t, any("array")) {
				return n.set("type", append(slices.Clip(t), "null"))
			}
		}
	}
	if list, ok := n.get("anyOf"); ok && len(n) == 1 {
		return n.set("anyOf", append(slices.Clip(list.([]any)), object{{"type", "null"}}))
	}
	// Objects, arrays, enums, consts and references: wrap, keeping the
	// description where the model reads it.
	wrapped := object{}
	if d, ok := n.get("description"); ok {
		wrapped = append(wrapped, member{"description", d})
		n = n.without("description")
	}
	return append(wrapped, member{"anyOf", []any{n, object{{"type", "null"}}}})
}

func acceptsNull(n object) bool {
	switch t, _ := n.get("type"); t := t.(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	if list, ok := n.get("anyOf"); ok {
		for _, s := range list.([]any) {
			if o, ok := s.(object); ok && acceptsNull(o) {
				return true
			}
		}
	}
	return false
}

func hasAny(n object, keys ...string) bool {
	for _, k := range keys {
		if _, ok := n.get(k); ok {
			return true
		}
	}
	return false
}

func isObjectSchema(n object) bool {
	switch t, _ := n.get("type"); t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, ok := n.get("properties")
	return ok
}

// object is a JSON object that keeps the order of its members.
type object []member

type member struct {
	key string
	val any // object, []any, string, json.Number, bool or nil
}

func (o object) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// set replaces the value of key, or appends the member.
func (o object) set(key string, val any) object {
	for i, m := range o {
		if m.key == key {
			o[i].val = val
			return o
		}
	}
	return append(o, member{key, val})
}

// without returns o without key.
func (o object) without(key string) object {
	out := make(object, 0, len(o))
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// parseOrdered decodes one JSON value, keeping the order of object members
// and the text of numbers.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON schema: data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{key, v})
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ']'
		return list, err
	}
	return tok, nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}
