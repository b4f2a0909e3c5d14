package agentrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

// reflectSchema reflects the canonical input schema of a struct type:
// inlined (no $ref), type object, additionalProperties false, required from
// json tags without omitempty plus fields tagged validate:"required".
func reflectSchema(t reflect.Type) (schema json.RawMessage, err error) {
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
	addValidateRequired(s, t)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the JSON Schema of %v: %w", t, err)
	}
	return b, nil
}

// addValidateRequired adds the fields tagged validate:"required" to the
// schema's required list, recursively for nested structs.
func addValidateRequired(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || s == nil || s.Properties == nil {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "-" {
			continue
		}
		if f.Anonymous && name == f.Name && f.Tag.Get("json") == "" {
			addValidateRequired(s, f.Type) // embedded struct: fields are promoted
			continue
		}
		prop, ok := s.Properties.Get(name)
		if !ok {
			continue
		}
		for _, rule := range strings.Split(f.Tag.Get("validate"), ",") {
			if rule == "required" && !slices.Contains(s.Required, name) {
				s.Required = append(s.Required, name)
			}
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
			ft = ft.Elem()
			if prop.Items != nil {
				prop = prop.Items
			}
		}
		addValidateRequired(prop, ft)
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

// schemaNode is the part of a JSON Schema the decoder needs to repair a
// model's input: types, properties, items, required, additionalProperties.
type schemaNode struct {
	Types                []string               `json:"-"`
	RawType              json.RawMessage        `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	Items                *schemaNode            `json:"items"`
	Required             []string               `json:"required"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	closed               bool
}

// UnmarshalJSON also accepts the boolean schemas true and false (as for an
// `any` field): they constrain nothing the decoder repairs.
func (n *schemaNode) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		*n = schemaNode{}
		return nil
	}
	type plain schemaNode
	return json.Unmarshal(b, (*plain)(n))
}

func parseSchema(schema json.RawMessage) (*schemaNode, error) {
	var n schemaNode
	if err := json.Unmarshal(schema, &n); err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	n.prepare()
	if !n.is("object") {
		return nil, fmt.Errorf(`invalid input schema: top level must have "type": "object"`)
	}
	return &n, nil
}

func (n *schemaNode) prepare() {
	if n == nil {
		return
	}
	var one string
	if json.Unmarshal(n.RawType, &one) == nil {
		n.Types = []string{one}
	} else {
		_ = json.Unmarshal(n.RawType, &n.Types)
	}
	n.closed = bytes.Equal(bytes.TrimSpace(n.AdditionalProperties), []byte("false"))
	for _, p := range n.Properties {
		p.prepare()
	}
	n.Items.prepare()
}

func (n *schemaNode) is(typ string) bool { return n != nil && slices.Contains(n.Types, typ) }

// normalize parses a model's input against the schema, repairs what can
// be repaired (numbers and booleans sent as strings, an object sent as a
// JSON string) and reports what cannot, naming JSON fields.
func (n *schemaNode) normalize(raw []byte, checkRequired bool) ([]byte, error) {
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
				v = inner
			}
		}
	}
	if v == nil {
		return nil, errors.New("input is null; expected a JSON object")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("input must be a JSON object, got %s", jsonKind(v))
	}
	var errs []string
	v = n.fix(v, "", checkRequired, &errs)
	if len(errs) > 0 {
		return nil, errors.New("invalid input: " + strings.Join(errs, "; "))
	}
	return json.Marshal(v)
}

func (n *schemaNode) fix(v any, path string, req bool, errs *[]string) any {
	if n == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		switch {
		case n.is("integer") || n.is("number"):
			num := json.Number(strings.TrimSpace(x))
			if _, err := strconv.ParseFloat(string(num), 64); err == nil && json.Valid([]byte(num)) {
				return num
			}
		case n.is("boolean"):
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b
			}
		case n.is("object") && !n.is("string"):
			var inner map[string]any
			d := json.NewDecoder(strings.NewReader(x))
			d.UseNumber()
			if d.Decode(&inner) == nil && inner != nil {
				return n.fix(inner, path, req, errs)
			}
		}
	case map[string]any:
		if !n.is("object") {
			return v
		}
		for _, name := range n.Required {
			if _, ok := x[name]; !ok && req {
				*errs = append(*errs, fmt.Sprintf("field %q is required", joinPath(path, name)))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p, ok := n.Properties[k]
			if !ok {
				if n.closed {
					*errs = append(*errs, fmt.Sprintf("unknown field %q (valid fields: %s)", joinPath(path, k), n.fieldList()))
				}
				continue
			}
			x[k] = p.fix(x[k], joinPath(path, k), req, errs)
		}
	case []any:
		for i := range x {
			x[i] = n.Items.fix(x[i], fmt.Sprintf("%s[%d]", path, i), req, errs)
		}
	}
	return v
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

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	default:
		return "an object"
	}
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
