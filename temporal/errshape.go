package temporal

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentrt/agentrt"
)

// Only an error's text crosses an activity's result or a workflow's: the
// typed errors a caller looks for with errors.As (*agentrt.ProviderError,
// *agentrt.OutputError, *agentrt.PanicError) travel as an errorShape in the
// error's details, and are rebuilt on the other side, so that the calling
// code checks a Temporal run's error as it checks an in-process run's.

// runErrorType is the error type of a run workflow that failed; its
// details, when it has any, are the error's errorShape.
const runErrorType = "agentrt.RunError"

// sentinelErrors are the agentrt errors that a run workflow's early
// failures stand for, by their error type: errors.Is finds them in the
// client's error, as in an in-process run's.
var sentinelErrors = map[string]error{
	"agentrt.EmptyInput":   agentrt.ErrEmptyInput,
	"agentrt.InvalidAgent": agentrt.ErrInvalidAgent,
}

// errorShape is the typed part of an error; nil when it has none.
type errorShape struct {
	Provider *providerShape `json:"provider,omitempty"`
	Output   *outputShape   `json:"output,omitempty"`
	Panic    *panicShape    `json:"panic,omitempty"`
}

type providerShape struct {
	Provider   string        `json:"provider,omitempty"`
	StatusCode int           `json:"status_code,omitempty"`
	Code       string        `json:"code,omitempty"`
	Message    string        `json:"message,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	Kind       string        `json:"kind,omitempty"` // the text of the Kind sentinel
	Err        string        `json:"err,omitempty"`  // the text of the underlying error
}

type outputShape struct {
	Raw string `json:"raw"`
	Err string `json:"err"`
}

type panicShape struct {
	Value string `json:"value"`
	Stack []byte `json:"stack,omitempty"`
}

// providerKinds are the ProviderError kinds, by their text.
var providerKinds = map[string]error{}

func init() {
	for _, k := range []error{agentrt.ErrRateLimited, agentrt.ErrOverloaded, agentrt.ErrAuth,
		agentrt.ErrContextLength, agentrt.ErrInvalidRequest, agentrt.ErrBadResponse} {
		providerKinds[k.Error()] = k
	}
}

// shapeOf returns the typed part of err, or nil.
func shapeOf(err error) *errorShape {
	var s errorShape
	var pe *agentrt.ProviderError
	if errors.As(err, &pe) {
		s.Provider = &providerShape{Provider: pe.Provider, StatusCode: pe.StatusCode, Code: pe.Code,
			Message: pe.Message, RetryAfter: pe.RetryAfter}
		if pe.Kind != nil {
			s.Provider.Kind = pe.Kind.Error()
		}
		if pe.Err != nil {
			s.Provider.Err = pe.Err.Error()
		}
	}
	var oe *agentrt.OutputError
	if errors.As(err, &oe) {
		s.Output = &outputShape{Raw: oe.Raw}
		if oe.Err != nil {
			s.Output.Err = oe.Err.Error()
		}
	}
	var xe *agentrt.PanicError
	if errors.As(err, &xe) {
		s.Panic = &panicShape{Value: fmt.Sprint(xe.Value), Stack: xe.Stack}
	}
	if s == (errorShape{}) {
		return nil
	}
	return &s
}

// typed returns the errors s stands for.
func (s *errorShape) typed() []error {
	if s == nil {
		return nil
	}
	var errs []error
	if p := s.Provider; p != nil {
		pe := &agentrt.ProviderError{Provider: p.Provider, StatusCode: p.StatusCode, Code: p.Code,
			Message: p.Message, RetryAfter: p.RetryAfter, Kind: providerKinds[p.Kind]}
		if p.Err != "" {
			pe.Err = errors.New(p.Err)
		}
		errs = append(errs, pe)
	}
	if o := s.Output; o != nil {
		errs = append(errs, &agentrt.OutputError{Raw: o.Raw, Err: errors.New(o.Err)})
	}
	if x := s.Panic; x != nil {
		errs = append(errs, &agentrt.PanicError{Value: x.Value, Stack: x.Stack})
	}
	return errs
}

// shapedError is an error as it crossed Temporal, with the typed errors
// of its shape: its text is the crossing's, and errors.As and errors.Is
// see both the crossing's chain and the typed errors.
type shapedError struct {
	err   error
	typed []error
}

func (e *shapedError) Error() string { return e.err.Error() }

func (e *shapedError) Unwrap() []error { return append([]error{e.err}, e.typed...) }

// withShape returns err with the typed errors of s, or err itself when s
// has none.
func withShape(err error, s *errorShape) error {
	typed := s.typed()
	if len(typed) == 0 {
		return err
	}
	return &shapedError{err: err, typed: typed}
}
