package agentrt

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"time"
)

// ToolSpec describes a tool to the model and to the runtime.
//
// A provider adapter turns Name, Description and InputSchema into its API's
// tool declaration; the runtime uses ReadOnly and Timeout. A ToolSpec is
// read once per Agent and shared by every request of its runs, so its
// InputSchema bytes must not be modified.
type ToolSpec struct {
	// Name is what the model calls the tool by; it matches
	// ^[a-zA-Z0-9_-]{1,64}$.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the tool's input: an object schema
	// with no top-level $ref. It is the canonical form; each provider adapts
	// it to what its API accepts.
	InputSchema json.RawMessage `json:"input_schema"`
	// ReadOnly marks a tool without side effects. Read-only tools may run
	// concurrently and are allowed by the default permission policy; all
	// others are write tools.
	ReadOnly bool `json:"read_only,omitempty"`
	// Timeout bounds one call of the tool; 0 means the Agent's ToolTimeout.
	Timeout time.Duration `json:"-"`
}

// Tool is a capability the model can call.
//
// The runtime calls Spec once per Agent (the result must not change), then
// for every tool_use: Decode the model's input, ask the permission checker
// with the decoded value, and Execute it. Decode errors and Execute errors
// become is_error tool results that the model sees; neither ends the run.
//
// Most tools are built with [NewTool] from a typed Go function; [NewRawTool]
// takes a hand-written schema. Implement Tool directly for anything else
// (an MCP server's tool, an agent used as a tool).
//
// Decode and Execute must be safe for concurrent use: read-only tools run in
// parallel.
type Tool interface {
	// Spec describes the tool.
	Spec() ToolSpec
	// Decode parses and validates the model's input. Its error text is
	// shown to the model, so it should name the JSON field at fault and
	// what was expected.
	Decode(input json.RawMessage) (any, error)
	// Execute runs the tool on a value returned by Decode (or a value of
	// the same type from a permission checker that rewrote the input). The
	// returned text is the tool result the model sees; an error becomes an
	// is_error result with the error's text. Execute must return promptly
	// once ctx is done: the runtime waits for it.
	Execute(ctx context.Context, input any) (string, error)
}

// ToolOption configures a tool built by [NewTool] or [NewRawTool].
type ToolOption func(*toolOptions)

type toolOptions struct {
	readOnly bool
	timeout  time.Duration
}

// ReadOnly marks the tool as free of side effects: it may run concurrently
// with other read-only tools and is allowed by the default permission
// policy. Without it a tool is a write tool.
func ReadOnly() ToolOption { return func(o *toolOptions) { o.readOnly = true } }

// WithTimeout bounds each call of the tool. When it expires the tool's
// context is cancelled and the model gets an is_error result saying so. A
// tool that ignores its context and returns later still gets that result:
// its late output is discarded. Run waits for it to return all the same.
// A negative d makes the Agent invalid ([ErrInvalidAgent]).
func WithTimeout(d time.Duration) ToolOption { return func(o *toolOptions) { o.timeout = d } }

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewTool returns a Tool that calls fn with its input decoded into In.
//
// The input's JSON Schema is reflected once, here, from In (a struct, or a
// pointer to one) with github.com/invopop/jsonschema: property names from
// `json` tags, descriptions, enums, bounds, patterns and formats from
// `jsonschema` tags, additional properties refused. A field is required
// when its json tag has no omitempty, when it is tagged
// jsonschema:"required" or validate:"required", or when its zero value
// fails its validate tag (validate:"oneof=a b" without omitempty). The
// validate rules that JSON Schema can express are shown too: min, max, len,
// gt, gte, lt and lte as minimum/maximum (numbers), minLength/maxLength
// (strings), minItems/maxItems (slices) or minProperties/maxProperties
// (maps); oneof as enum; eq as const; email, url, uri, uuid, ipv4, ipv6 and
// hostname as format; alpha, alphanum, numeric, number, startswith,
// endswith and contains as pattern (one pattern per field); required on a
// string as minLength 1; unique as uniqueItems; rules after dive on the
// items or map values. Sized and unsigned integers get their range as
// minimum and maximum. Patterns are Go (RE2) regular expressions.
//
// Each call's input is checked against that schema, then decoded, then
// validated with go-playground/validator (`validate` tags), and every
// error names the JSON field at fault (`field "ship.city" is required`,
// `field "unit" must be one of "c", "f"`). The schema and the decoder
// agree: an input the schema allows passes the check, and every rule the
// schema shows (type, required, enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength,
// pattern, the formats date-time, date, time, email, uri, uri-reference,
// uuid, ipv4, ipv6 and hostname, minItems, maxItems, uniqueItems,
// minProperties, maxProperties, properties, patternProperties,
// additionalProperties, items, allOf, anyOf, oneOf, not) is enforced; a
// format the decoder does not check is left out of the schema.
//
// Required means present, as in JSON Schema: {"a":0} has a. The validate
// rules keep go-playground's meaning, which the schema cannot always show:
// validate:"required" on a number or a bool also refuses 0 or false (the
// model is told `field "a" is required and must not be 0`); omitempty in a
// validate tag lets the zero value skip the rules, but the schema's bounds
// apply to any value sent; rules that compare fields (eqfield, required_if,
// ...), alternatives (a|b), ne, excludes and custom validators are checked
// but not shown.
//
// The decoder is lenient where models slip: a number or boolean sent as a
// string is coerced when the schema asks for one, an integral number like
// 3.0 is accepted for an integer, an input object sent as a JSON-encoded
// string is unwrapped, and null for an optional field counts as absent.
//
// For a hand-written schema, use [NewRawTool].
//
// The result of fn is given to the model as is if Out is a string, as
// content if Out is a [Block] or []Block (an image, a document, several
// parts: the leading text blocks become the result's text, the rest its
// Blocks; the tool is a [ContentTool]), and as JSON otherwise. An error
// from fn becomes an is_error result carrying its text.
//
// NewTool panics on a programmer error: an invalid name (it must match
// ^[a-zA-Z0-9_-]{1,64}$), a nil fn, an In that is not a struct, tags that
// give an invalid schema (a pattern that does not compile, a keyword such
// as $ref that the decoder cannot enforce), a validate tag go-playground
// does not know, or an Out that encoding/json cannot encode (a chan, a func
// or a complex number anywhere in it).
func NewTool[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...ToolOption) Tool {
	if !toolNameRE.MatchString(name) {
		panic(fmt.Sprintf("agentrt: NewTool: invalid tool name %q: must match ^[a-zA-Z0-9_-]{1,64}$", name))
	}
	if fn == nil {
		panic(fmt.Sprintf("agentrt: NewTool %q: nil function", name))
	}
	var o toolOptions
	for _, opt := range opts {
		opt(&o)
	}
	inType := reflect.TypeFor[In]()
	st := inType
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		panic(fmt.Sprintf("agentrt: NewTool %q: input type %v is not a struct", name, inType))
	}
	schema, err := reflectInputSchema(st)
	var node *schemaNode
	if err == nil {
		node, err = compileSchema(schema, true)
	}
	if err != nil {
		panic(fmt.Sprintf("agentrt: NewTool %q: %v", name, err))
	}
	t := &typedTool[In, Out]{
		spec: ToolSpec{Name: name, Description: description, InputSchema: schema, ReadOnly: o.readOnly, Timeout: o.timeout},
		fn:   fn,
		node: node,
	}
	if err := checkValidateTags(st); err != nil {
		panic(fmt.Sprintf("agentrt: NewTool %q: %v", name, err))
	}
	if err := checkEncodable(reflect.TypeFor[Out]()); err != nil {
		panic(fmt.Sprintf("agentrt: NewTool %q: %v", name, err))
	}
	t.validator = newStructValidator(st)
	return t
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// checkEncodable reports an output type that encoding/json cannot encode:
// one with a chan, a func, a complex number or an unsafe.Pointer where
// encoding/json would reach it, or a map whose keys it cannot write. A
// type with its own MarshalJSON or MarshalText is taken at its word, and
// an interface cannot be judged before it holds a value.
func checkEncodable(t reflect.Type) error {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, at string) error
	walk = func(t reflect.Type, at string) error {
		if seen[t] || marshals(t) {
			return nil
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
			return fmt.Errorf("output type cannot be encoded as JSON: %s is %v", at, t)
		case reflect.Pointer, reflect.Slice, reflect.Array:
			return walk(t.Elem(), at)
		case reflect.Map:
			switch k := t.Key(); k.Kind() {
			case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			default:
				if !k.Implements(textMarshalerType) {
					return fmt.Errorf("output type cannot be encoded as JSON: %s is a map with keys of type %v", at, k)
				}
			}
			return walk(t.Elem(), at)
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if f.Tag.Get("json") == "-" || !f.IsExported() && !embedsStruct(f) {
					continue
				}
				if err := walk(f.Type, at+"."+f.Name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(t, t.String())
}

// embedsStruct reports an embedded struct, whose exported fields
// encoding/json encodes even when its type is unexported.
func embedsStruct(f reflect.StructField) bool {
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return f.Anonymous && t.Kind() == reflect.Struct
}

func marshals(t reflect.Type) bool {
	for _, m := range []reflect.Type{jsonMarshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

type typedTool[In, Out any] struct {
	spec      ToolSpec
	fn        func(context.Context, In) (Out, error)
	node      *schemaNode
	validator *structValidator // nil when In has no validate tags
}

func (t *typedTool[In, Out]) Spec() ToolSpec { return t.spec }

func (t *typedTool[In, Out]) Decode(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = emptyObject
	}
	var in In
	var errs []fieldError
	if err := json.Unmarshal(raw, &in); err != nil || !t.node.valid(raw) {
		// Slow path: repair what models are known to get wrong, then
		// check and decode again; report everything still wrong by JSON
		// field name.
		fixed, ferr := t.node.normalize(raw, false)
		if ferr != nil {
			return nil, ferr
		}
		errs = t.node.check(fixed)
		in = *new(In)
		if err := decodeStrict(fixed, &in); err != nil {
			if len(errs) > 0 {
				return nil, joinFieldErrors(errs)
			}
			return nil, describeDecodeError(err)
		}
	}
	boxed := any(in) // boxed once: validated and returned as is
	if t.validator != nil {
		errs = t.validator.collect(boxed, errs)
	}
	if len(errs) > 0 {
		return nil, joinFieldErrors(errs)
	}
	return boxed, nil
}

func (t *typedTool[In, Out]) Execute(ctx context.Context, input any) (string, error) {
	text, parts, err := t.ExecuteContent(ctx, input)
	if err != nil || len(parts) == 0 {
		return text, err
	}
	if text != "" {
		return text + "\n" + describeParts(parts), nil
	}
	return describeParts(parts), nil
}

// ExecuteContent runs the function. A [Block] or []Block result gives its
// leading text blocks as text and the rest as parts; any other result is
// text only.
func (t *typedTool[In, Out]) ExecuteContent(ctx context.Context, input any) (string, []Block, error) {
	in, ok := input.(In)
	if !ok {
		return "", nil, fmt.Errorf("internal error: input of type %T, want %v", input, reflect.TypeFor[In]())
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return "", nil, err
	}
	switch v := any(out).(type) {
	case string:
		return v, nil, nil
	case int:
		return strconv.Itoa(v), nil, nil
	case int64:
		return strconv.FormatInt(v, 10), nil, nil
	case float64:
		if b, err := json.Marshal(v); err == nil {
			return string(b), nil, nil
		}
	case bool:
		return strconv.FormatBool(v), nil, nil
	case Block:
		text, parts := splitParts([]Block{v})
		return text, parts, nil
	case []Block:
		text, parts := splitParts(v)
		return text, parts, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", nil, fmt.Errorf("cannot encode result: %w", err)
	}
	return string(b), nil, nil
}

// NewRawTool returns a Tool with a hand-written JSON Schema whose function
// receives the input as raw JSON (always an object). The input is coerced
// like NewTool's and checked against the whole schema, with the keywords
// listed on [NewTool]; others (such as $ref) are shown to the model but not
// enforced. Errors name the JSON field at fault.
//
// NewRawTool panics on an invalid name, a nil fn, or a schema that is not a
// JSON object schema or does not compile (an invalid pattern).
func NewRawTool(name, description string, schema json.RawMessage, fn func(context.Context, json.RawMessage) (string, error), opts ...ToolOption) Tool {
	if !toolNameRE.MatchString(name) {
		panic(fmt.Sprintf("agentrt: NewRawTool: invalid tool name %q: must match ^[a-zA-Z0-9_-]{1,64}$", name))
	}
	if fn == nil {
		panic(fmt.Sprintf("agentrt: NewRawTool %q: nil function", name))
	}
	var o toolOptions
	for _, opt := range opts {
		opt(&o)
	}
	node, err := parseSchema(schema)
	if err != nil {
		panic(fmt.Sprintf("agentrt: NewRawTool %q: %v", name, err))
	}
	return &rawTool{
		spec: ToolSpec{Name: name, Description: description, InputSchema: schema, ReadOnly: o.readOnly, Timeout: o.timeout},
		fn:   fn,
		node: node,
	}
}

type rawTool struct {
	spec ToolSpec
	fn   func(context.Context, json.RawMessage) (string, error)
	node *schemaNode
}

func (t *rawTool) Spec() ToolSpec { return t.spec }

func (t *rawTool) Decode(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = emptyObject
	}
	fixed, err := t.node.normalize(raw, true)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(fixed), nil
}

func (t *rawTool) Execute(ctx context.Context, input any) (string, error) {
	raw, ok := input.(json.RawMessage)
	if !ok {
		return "", fmt.Errorf("internal error: input of type %T, want json.RawMessage", input)
	}
	return t.fn(ctx, raw)
}

var emptyObject = json.RawMessage(`{}`)
