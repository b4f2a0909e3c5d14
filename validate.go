package agentrt

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-playground/validator/v10"
)

// structValidator validates a tool's decoded input with go-playground's
// validator, reporting JSON field names and rules in plain words.
type structValidator struct {
	v *validator.Validate
}

// newStructValidator returns nil when t has no validate tags at all, so
// that tools without rules pay nothing.
func newStructValidator(t reflect.Type) *structValidator {
	if !hasValidateTags(t, map[reflect.Type]bool{}) {
		return nil
	}
	return &structValidator{v: newValidate()}
}

// newValidate returns a validator that names fields as the JSON does: by
// their json names, with the fields of embedded structs promoted.
func newValidate() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled(), validator.WithTagNameFuncBlankOmit())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		if f.Anonymous && f.Tag.Get("json") == "" {
			return "" // embedded: its fields are promoted
		}
		name := jsonName(f)
		if name == "-" {
			return f.Name
		}
		return name
	})
	return v
}

// checkValidateTags reports a validate tag in t, or in a struct inside it,
// that go-playground does not know or cannot apply to its field: the
// validator would panic on it at the first call. It validates the zero
// value of each struct type, which makes go-playground parse every tag.
func checkValidateTags(t reflect.Type) error {
	v := newValidate()
	for _, st := range structTypes(t) {
		if err := validateZero(v, st); err != nil {
			return err
		}
	}
	return nil
}

func validateZero(v *validator.Validate, st reflect.Type) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid validate tag in %v: %v", st, r)
		}
	}()
	_ = v.Struct(reflect.New(st).Elem().Interface()) // a zero value may well be invalid
	return nil
}

// structTypes lists the struct types in t, t first if it is one.
func structTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		for i := range t.NumField() {
			walk(t.Field(i).Type)
		}
	}
	walk(t)
	return out
}

func hasValidateTags(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if _, ok := f.Tag.Lookup("validate"); ok {
			return true
		}
		if hasValidateTags(f.Type, seen) {
			return true
		}
	}
	return false
}

// validate checks in against its validate tags; the error names JSON
// fields.
func (s *structValidator) validate(in any) error {
	if errs := s.collect(in, nil); len(errs) > 0 {
		return joinFieldErrors(errs)
	}
	return nil
}

// collect appends to errs the violations of validate tags in in, except
// for the fields errs already names (the schema check found those first).
func (s *structValidator) collect(in any, errs []fieldError) []fieldError {
	err := s.v.Struct(in)
	if err == nil {
		return errs
	}
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) {
		return append(errs, fieldError{msg: err.Error()})
	}
	reported := len(errs)
	for _, fe := range ve {
		path := fieldPath(fe)
		if slices.ContainsFunc(errs[:reported], func(e fieldError) bool { return e.path == path }) {
			continue
		}
		errs = append(errs, fieldError{path: path, msg: describeFieldError(fe)})
	}
	return errs
}

// fieldPath turns the validator's namespace ("AddIn.items[0].name") into the
// JSON path the model wrote ("items[0].name").
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return fe.Field()
}

func describeFieldError(fe validator.FieldError) string {
	field := fmt.Sprintf("field %q", fieldPath(fe))
	p := fe.Param()
	switch tag := fe.Tag(); {
	case tag == "required":
		// The schema check has already reported a missing key: the value
		// is there, but zero.
		return field + requiredMessage(fe.Kind())
	case tag == "oneof":
		return fmt.Sprintf("%s must be one of: %s", field, strings.Join(strings.Fields(p), ", "))
	case ruleMessages[tag] != "":
		return field + ruleMessages[tag]
	case paramRuleFormats[tag] != "":
		return fmt.Sprintf(paramRuleFormats[tag], field, p)
	case sizeRuleFormats[tag] != [2]string{}:
		if unit := sizeUnit(fe.Kind()); unit != "" {
			return fmt.Sprintf(sizeRuleFormats[tag][0], field, p, unit)
		}
		return fmt.Sprintf(sizeRuleFormats[tag][1], field, p)
	}
	if p != "" {
		return fmt.Sprintf("%s failed the %q rule (%s)", field, fe.Tag(), p)
	}
	return fmt.Sprintf("%s failed the %q rule", field, fe.Tag())
}

// requiredMessage is what a failed "required" says of a field of the kind:
// that its value must not be the kind's zero.
func requiredMessage(kind reflect.Kind) string {
	switch kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return " is required and must not be 0"
	case reflect.Bool:
		return " is required and must be true"
	case reflect.String:
		return " is required and must not be empty"
	}
	return " is required"
}

// sizeUnit is what min, max and len count for a field of the kind, or ""
// if they bound its value.
func sizeUnit(kind reflect.Kind) string {
	switch kind {
	case reflect.String:
		return " characters"
	case reflect.Slice, reflect.Array, reflect.Map:
		return " items"
	}
	return ""
}

// ruleMessages is what a failed rule without a parameter says after the
// field's name.
var ruleMessages = map[string]string{
	"required_if":      " is required",
	"required_unless":  " is required",
	"required_with":    " is required",
	"required_without": " is required",
	"email":            " must be a valid email address",
	"url":              " must be a valid URL",
	"uri":              " must be a valid URL",
	"http_url":         " must be a valid URL",
	"uuid":             " must be a valid UUID",
	"uuid4":            " must be a valid UUID",
	"alpha":            " must contain only letters",
	"alphanum":         " must contain only letters and digits",
	"numeric":          " must be numeric",
	"number":           " must be numeric",
	"dive":             " has an invalid item",
}

// paramRuleFormats formats what a failed rule says from the field's name
// and the rule's parameter.
var paramRuleFormats = map[string]string{
	"gte":        "%s must be greater than or equal to %s",
	"gt":         "%s must be greater than %s",
	"lte":        "%s must be less than or equal to %s",
	"lt":         "%s must be less than %s",
	"eq":         "%s must be equal to %s",
	"ne":         "%s must not be equal to %s",
	"startswith": "%s must start with %q",
	"endswith":   "%s must end with %q",
	"contains":   "%s must contain %q",
	"excludes":   "%s must not contain %q",
}

// sizeRuleFormats formats what a failed min, max or len says: of a size
// (from the field's name, the parameter and the unit), or of a value (from
// the field's name and the parameter).
var sizeRuleFormats = map[string][2]string{
	"min": {"%s must have at least %s%s", "%s must be at least %s"},
	"max": {"%s must have at most %s%s", "%s must be at most %s"},
	"len": {"%s must have exactly %s%s", "%s must be %s"},
}
