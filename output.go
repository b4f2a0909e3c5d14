package agentrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/agentrt/agentrt/internal/jsonextract"
	"github.com/agentrt/agentrt/internal/textcut"
	"github.com/invopop/jsonschema"
)

// OutputError is the error of a typed run whose final answer never
// matched the expected type: Raw is the last answer, Err what was wrong.
type OutputError struct {
	Raw string
	Err error
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("agentrt: the final answer does not match the expected output: %v (answer: %q)", e.Err, textcut.Ellipsis(e.Raw, 300))
}

func (e *OutputError) Unwrap() error { return e.Err }

// TypedOptions configures [RunTyped]. The zero value is ready to use.
type TypedOptions struct {
	// MaxRetries is how many times an invalid final answer is sent back to
	// the model with what was wrong; 0 means 2, negative means none.
	MaxRetries int
	// OnEvent, if set, sees every event of the run.
	OnEvent func(Event)
}

const outputRetryText = "Your final answer is not valid: %v. Reply again with only a JSON value that matches the schema given in the instructions, and nothing else."

// outputSpec is how a run checks its final answer.
type outputSpec struct {
	schema       json.RawMessage
	instructions string
	maxRetries   int
	check        func(text string) error
}

func (o *outputSpec) retries() int {
	switch {
	case o.maxRetries == 0:
		return 2
	case o.maxRetries < 0:
		return 0
	}
	return o.maxRetries
}

// RunTyped runs the agent like [Agent.Run] and returns its final answer
// decoded into T. The answer must be a JSON value for T: its JSON Schema is
// reflected once from T (like a tool's input) and sent with every planner
// call, as ModelRequest.ResponseSchema (providers with native structured
// output use it) and in the system prompt (for those without). An answer
// that does not decode strictly into T or fails its `validate` tags is sent
// back with what was wrong, up to opts.MaxRetries times; then RunTyped
// returns an [*OutputError] holding the last raw answer. Other errors are
// those of Run; a run that stopped for a limit returns Done.Err().
func RunTyped[T any](ctx context.Context, ag *Agent, sessionID, input string, opts *TypedOptions) (T, error) {
	var zero T
	if opts == nil {
		opts = &TypedOptions{}
	}
	spec, value, err := newOutputSpec[T]()
	if err != nil {
		return zero, err
	}
	spec.maxRetries = opts.MaxRetries
	var done *Done
	for ev, err := range ag.run(ctx, sessionID, input, runOptions{output: spec}) {
		if err != nil {
			return zero, err
		}
		if opts.OnEvent != nil {
			opts.OnEvent(ev)
		}
		if d, ok := ev.(Done); ok {
			done = &d
		}
	}
	if done == nil {
		return zero, errors.New("agentrt: run ended without a Done event")
	}
	if err := done.Err(); err != nil {
		return zero, err
	}
	return *value, nil
}

// newOutputSpec reflects T's schema and returns the check that decodes an
// answer into the returned pointer: the answer must match the schema (the
// same check a durable runtime makes, see durableLoop.ExpectOutput), then
// decode strictly into T and pass its validate tags (the validator is made
// once per run).
func newOutputSpec[T any]() (*outputSpec, *T, error) {
	schema, err := outputSchema(reflect.TypeFor[T]())
	if err != nil {
		return nil, nil, err
	}
	spec, err := schemaOutputSpec(schema)
	if err != nil {
		return nil, nil, err
	}
	value := new(T)
	sv := outputValidator(reflect.TypeFor[T]()) // once, not per answer
	schemaCheck := spec.check
	spec.check = func(text string) error {
		if err := schemaCheck(text); err != nil {
			return err
		}
		var out T
		if err := decodeOutput(text, &out, sv); err != nil {
			return err
		}
		*value = out
		return nil
	}
	return spec, value, nil
}

// outputSchema returns the JSON Schema of t that [RunTyped] sends to the
// model (package temporal's RunTyped too, through internal/durable).
func outputSchema(t reflect.Type) (json.RawMessage, error) {
	st := t
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	var schema json.RawMessage
	var err error
	if st.Kind() == reflect.Struct {
		schema, err = reflectSchema(st)
	} else {
		r := &jsonschema.Reflector{DoNotReference: true, Anonymous: true}
		s := r.ReflectFromType(t)
		s.Version = ""
		schema, err = json.Marshal(s)
	}
	if err != nil {
		return nil, fmt.Errorf("agentrt: output schema of %v: %w", t, err)
	}
	return schema, nil
}

// parseOutput decodes a final answer into out, a pointer to the output
// type, as [RunTyped] does: the JSON value in text (an object may come
// with prose or a code fence around it), decoded strictly, then checked
// against the type's validate tags.
func parseOutput(text string, out any) error {
	return decodeOutput(text, out, outputValidator(reflect.TypeOf(out).Elem()))
}

// outputValidator returns the validator of an output type's validate tags,
// or nil when it has none.
func outputValidator(t reflect.Type) *structValidator {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return newStructValidator(t)
}

// decodeOutput is parseOutput with the type's validator made beforehand.
func decodeOutput(text string, out any, sv *structValidator) error {
	if err := decodeStrict(answerJSON(text), out); err != nil {
		return describeDecodeError(err)
	}
	if sv != nil {
		return sv.validate(reflect.ValueOf(out).Elem().Interface())
	}
	return nil
}

// answerJSON is the JSON value of a final answer: the first object found
// in text, or text itself (a bare list or string).
func answerJSON(text string) json.RawMessage {
	raw, err := jsonextract.Extract(text)
	if err != nil {
		return json.RawMessage(text)
	}
	return raw
}

// schemaOutputSpec returns the output check for a JSON Schema: the answer
// must be a JSON value that matches it. A schema whose top level is not an
// object is shown to the model but only checked for being JSON.
func schemaOutputSpec(schema json.RawMessage) (*outputSpec, error) {
	if !json.Valid(schema) {
		return nil, errors.New("agentrt: the output schema is not valid JSON")
	}
	node, err := compileSchema(schema, false)
	if err != nil {
		node = nil // not an object schema: shown, not enforced
	}
	return &outputSpec{
		schema: schema,
		instructions: "\n\nWhen you give your final answer (a reply without tool calls), reply with only a JSON value that matches this JSON Schema, with no other text:\n" +
			string(schema),
		check: func(text string) error {
			raw := answerJSON(text)
			if !json.Valid(raw) {
				return errors.New("the answer is not valid JSON")
			}
			if node == nil {
				return nil
			}
			if errs := node.check(raw); len(errs) > 0 {
				return joinFieldErrors(errs)
			}
			return nil
		},
	}, nil
}
