package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/retryafter"
)

// convertError maps an error of the SDK to what Plan returns: an error
// wrapping ctx.Err() once ctx is done, a *agentrt.ProviderError otherwise.
func convertError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return fromAPIError(apiErr)
	}
	pe := &agentrt.ProviderError{Provider: providerName, Err: err}
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// The SDK's own timeout of one attempt (10 minutes by default
		// for a non-streaming call), not the caller's context.
		pe.Kind, pe.Message = agentrt.ErrOverloaded, "request timed out"
	case isBodyError(err):
		pe.Kind = agentrt.ErrBadResponse // truncated or unparsable body
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		pe.Kind = agentrt.ErrOverloaded // no answer: unreachable or dropped
	}
	return pe
}

// isBodyError reports whether err is the SDK failing to read or parse the
// body of a successful response.
func isBodyError(err error) bool {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	msg := err.Error()
	return errors.As(err, &syntaxErr) || errors.As(err, &typeErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.HasPrefix(msg, "error parsing response json") ||
		strings.HasPrefix(msg, "error reading response body")
}

// fromAPIError classifies an error response of the API, or an "error"
// event inside a stream (which arrives with the stream's HTTP 200).
func fromAPIError(e *sdk.Error) *agentrt.ProviderError {
	pe := &agentrt.ProviderError{
		Provider: providerName,
		Code:     string(e.Type()),
		Message:  e.Message,
		Err:      e,
	}
	if pe.Code == "" {
		pe.Code = string(e.ErrorCode())
	}
	if e.StatusCode >= 400 {
		pe.StatusCode = e.StatusCode
	}
	if pe.Message == "" {
		pe.Message = strings.TrimSpace(e.RawJSON())
	}
	if e.Response != nil {
		pe.RetryAfter, _ = retryafter.Parse(e.Response.Header)
	}
	pe.Kind = errorKind(pe.StatusCode, pe.Code, pe.Message)
	return pe
}

// errorBody returns the error of a response body of type "error",
// {"type":"error","error":{"type":…,"message":…}}, received with HTTP 200.
func errorBody(raw string) *agentrt.ProviderError {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(raw), &body)
	pe := &agentrt.ProviderError{Provider: providerName, Code: body.Error.Type, Message: body.Error.Message}
	if pe.Message == "" {
		pe.Message = strings.TrimSpace(raw)
	}
	pe.Kind = errorKind(0, pe.Code, pe.Message)
	return pe
}

// errorKind classifies an API error by its HTTP status (0 for an error
// event inside a stream), its error type and its message.
func errorKind(status int, typ, msg string) error {
	switch {
	case status == http.StatusTooManyRequests || typ == "rate_limit_error":
		return agentrt.ErrRateLimited
	case status == 529 || typ == "overloaded_error" || typ == "api_error" ||
		typ == "timeout_error" || status >= 500 || status == http.StatusRequestTimeout:
		return agentrt.ErrOverloaded
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		typ == "authentication_error" || typ == "permission_error":
		return agentrt.ErrAuth
	case status == http.StatusRequestEntityTooLarge || typ == "request_too_large" || isContextLength(msg):
		return agentrt.ErrContextLength
	case status >= 400 || typ == "invalid_request_error" || typ == "not_found_error":
		return agentrt.ErrInvalidRequest
	default:
		// An error event in a stream with a type this adapter does not
		// know: the stream failed.
		return agentrt.ErrBadResponse
	}
}

// isContextLength reports whether an invalid_request_error message says
// the input does not fit the model's context window, as in
//
//	prompt is too long: 208656 tokens > 200000 maximum
//	input length and `max_tokens` exceed context limit: 197202 + 8192 > 200000, ...
func isContextLength(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{
		"prompt is too long",
		"exceed context limit",
		"exceeds context limit",
		"context window",
		"context length",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// badResponse returns the error for a malformed or truncated response.
func badResponse(msg string, err error) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrBadResponse, Message: msg, Err: err}
}

// invalidRequest returns the error for a request the adapter cannot send.
func invalidRequest(msg string) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrInvalidRequest, Message: msg}
}

// unsupported is the error for content the API cannot take, returned
// before anything is sent.
func unsupported(msg string) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrUnsupportedContent, Message: msg}
}
