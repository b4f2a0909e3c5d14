package openai

import (
	"fmt"

	"github.com/openai/openai-go/v3/packages/respjson"
)

// field is a field of a reply the adapter reads, with its name for the
// error.
type field struct {
	name string
	f    respjson.Field
}

// wrongType returns an ErrBadResponse for the first field that is
// present with a value of another type than the API's (the SDK then
// leaves the field empty and marks it invalid, which would make an
// answer silently lose what the field held), or nil. Null and absent
// fields are fine.
func wrongType(what string, fields ...field) error {
	for _, f := range fields {
		if !f.f.Valid() && f.f.Raw() != respjson.Omitted && f.f.Raw() != respjson.Null {
			return badResponse(fmt.Sprintf("%s: %s is not of the API's type: %s", what, f.name, truncate(f.f.Raw(), 100)), nil)
		}
	}
	return nil
}

// checkUsage refuses negative token counts.
func checkUsage(counts ...int64) error {
	for _, n := range counts {
		if n < 0 {
			return badResponse(fmt.Sprintf("the usage has a negative token count, %d", n), nil)
		}
	}
	return nil
}
