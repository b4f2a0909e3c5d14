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
	kind := fe.Kind()
	var unit string
	switch kind {
	case reflect.String:
		unit = " characters"
	case reflect.Slice, reflect.Array, reflect.Map:
		unit = " items"
	}
	sized := unit != ""
	switch fe.Tag() {
	case "required":
		// The schema check has already reported a missing key: the value
		// is there, but zero.
		switch kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			return field + " is required and must not be 0"
		case reflect.Bool:
			return field + " is required and must be true"
		case reflect.String:
			return field + " is required and must not be empty"
		}
		return field + " is required"
	case "required_if", "required_unless", "required_with", "required_without":
		return field + " is required"
	case "min":
		if sized {
			return fmt.Sprintf("%s must have at least %s%s", field, p, unit)
		}
		return fmt.Sprintf("%s must be at least %s", field, p)
	case "max":
		if sized {
			return fmt.Sprintf("%s must have at most %s%s", field, p, unit)
		}
		return fmt.Sprintf("%s must be at most %s", field, p)
	case "len":
		if sized {
			return fmt.Sprintf("%s must have exactly %s%s", field, p, unit)
		}
		return fmt.Sprintf("%s must be %s", field, p)
	case "gte":
		return fmt.Sprintf("%s must be greater than or equal to %s", field, p)
	case "gt":
		return fmt.Sprintf("%s must be greater than %s", field, p)
	case "lte":
		return fmt.Sprintf("%s must be less than or equal to %s", field, p)
	case "lt":
		return fmt.Sprintf("%s must be less than %s", field, p)
	case "eq":
		return fmt.Sprintf("%s must be equal to %s", field, p)
	case "ne":
		return fmt.Sprintf("%s must not be equal to %s", field, p)
	case "oneof":
		return fmt.Sprintf("%s must be one of: %s", field, strings.Join(strings.Fields(p), ", "))
	case "email":
		return field + " must be a valid email address"
	case "url", "uri", "http_url":
		return field + " must be a valid URL"
	case "uuid", "uuid4":
		return field + " must be a valid UUID"
	case "alpha":
		return field + " must contain only letters"
	case "alphanum":
		return field + " must contain only letters and digits"
	case "numeric", "number":
		return field + " must be numeric"
	case "startswith":
		return fmt.Sprintf("%s must start with %q", field, p)
	case "endswith":
		return fmt.Sprintf("%s must end with %q", field, p)
	case "contains":
		return fmt.Sprintf("%s must contain %q", field, p)
	case "excludes":
		return fmt.Sprintf("%s must not contain %q", field, p)
	case "dive":
		return field + " has an invalid item"
	}
	if p != "" {
		return fmt.Sprintf("%s failed the %q rule (%s)", field, fe.Tag(), p)
	}
	return fmt.Sprintf("%s failed the %q rule", field, fe.Tag())
}
