package gemini

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genai"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/retryafter"
)

// callInfoKey keys the *callInfo of one attempt in the request context.
type callInfoKey struct{}

// callInfo is what one attempt of Plan learns besides the SDK's
// result: whether any chunk arrived, and what the HTTP response said when
// the client's transport is a retryAfterTransport (NewFromAPIKey).
type callInfo struct {
	output     bool
	status     atomic.Int32
	retryAfter atomic.Int64 // nanoseconds plus one; 0 means no header
}

// retryAfterTransport records the status and the Retry-After headers of
// failed responses in the callInfo of the request's context, because the
// SDK's APIError carries neither.
type retryAfterTransport struct{ base http.RoundTripper }

func (t *retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	if info, ok := r.Context().Value(callInfoKey{}).(*callInfo); ok {
		info.status.Store(int32(resp.StatusCode))
		if d, ok := retryafter.Parse(resp.Header); ok {
			info.retryAfter.Store(int64(d) + 1)
		}
	}
	return resp, nil
}

// retryInfoDelay reads the delay of a google.rpc.RetryInfo error detail,
// the Gemini API's equivalent of Retry-After, such as
//
//	{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
func retryInfoDelay(details []map[string]any) (time.Duration, bool) {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		switch v := d["retryDelay"].(type) {
		case string:
			if dur, err := time.ParseDuration(v); err == nil && dur >= 0 {
				return dur, true
			}
		case map[string]any: // {"seconds": 37, "nanos": 0}
			s, _ := v["seconds"].(float64)
			n, _ := v["nanos"].(float64)
			if s >= 0 && n >= 0 {
				return time.Duration(s*float64(time.Second) + n), true
			}
		}
	}
	return 0, false
}

// errorReason returns the reason of a google.rpc.ErrorInfo detail, such as
// "API_KEY_INVALID".
func errorReason(details []map[string]any) string {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			r, _ := d["reason"].(string)
			return r
		}
	}
	return ""
}

// classify turns an error of the SDK (or of the response assembler) into a
// *ProviderError. hinted reports that the server said how long to wait
// (RetryAfter, possibly 0).
func classify(err error, info *callInfo) (pe *agentrt.ProviderError, hinted bool) {
	if errors.As(err, &pe) {
		return pe, false
	}
	pe = &agentrt.ProviderError{Provider: "gemini", Err: err}
	apiErr, ok := asAPIError(err)
	if !ok {
		var ue *url.Error
		if errors.As(err, &ue) {
			pe.Kind = agentrt.ErrOverloaded
			pe.Message = "cannot reach the API: " + ue.Err.Error()
			return pe, false
		}
		// Anything else failed after the response started: a body or an
		// SSE event that could not be read or parsed.
		pe.Kind = agentrt.ErrBadResponse
		return pe, false
	}
	pe.StatusCode = apiErr.Code
	if pe.StatusCode == 0 {
		pe.StatusCode = int(info.status.Load())
	}
	pe.Code = apiErr.Status
	pe.Message = apiErr.Message
	pe.Kind = kindOf(pe.StatusCode, apiErr.Status, apiErr.Message, errorReason(apiErr.Details))
	if d, ok := retryInfoDelay(apiErr.Details); ok {
		pe.RetryAfter, hinted = d, true
	} else if v := info.retryAfter.Load(); v > 0 {
		pe.RetryAfter, hinted = time.Duration(v-1), true
	}
	return pe, hinted
}

func asAPIError(err error) (genai.APIError, bool) {
	var v genai.APIError
	if errors.As(err, &v) {
		return v, true
	}
	var p *genai.APIError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return genai.APIError{}, false
}

// kindOf maps an API error to a Kind of agentrt.ProviderError, by HTTP
// status first and by the google.rpc status name when the status is
// missing (an error event inside a stream).
func kindOf(code int, status, message, reason string) error {
	switch {
	case (code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge || code == 0 && status == "INVALID_ARGUMENT") && isContextLength(message):
		return agentrt.ErrContextLength
	case code == http.StatusUnauthorized || code == http.StatusForbidden,
		status == "UNAUTHENTICATED" || status == "PERMISSION_DENIED",
		reason == "API_KEY_INVALID" || reason == "API_KEY_EXPIRED",
		strings.Contains(message, "API key not valid"), strings.Contains(message, "API key expired"):
		return agentrt.ErrAuth
	case code == http.StatusTooManyRequests, code == 0 && status == "RESOURCE_EXHAUSTED":
		return agentrt.ErrRateLimited
	case code == http.StatusRequestTimeout, code >= 500,
		code == 0 && (status == "UNAVAILABLE" || status == "INTERNAL" || status == "DEADLINE_EXCEEDED"):
		return agentrt.ErrOverloaded
	case code >= 400, code == 0 && status != "":
		return agentrt.ErrInvalidRequest
	}
	return agentrt.ErrBadResponse
}

// isContextLength recognizes the Gemini API's and Vertex AI's refusals of
// an input longer than the context window, such as "The input token count
// (1200293) exceeds the maximum number of tokens allowed (1048576)." and
// "The input token count is 1100000 but the model supports up to 1048576".
func isContextLength(message string) bool {
	m := strings.ToLower(message)
	switch {
	case strings.Contains(m, "input token count") &&
		(strings.Contains(m, "exceed") || strings.Contains(m, "supports up to") || strings.Contains(m, "maximum")),
		strings.Contains(m, "exceeds the maximum number of tokens"),
		strings.Contains(m, "context window"),
		strings.Contains(m, "context length"),
		strings.Contains(m, "prompt is too long"),
		strings.Contains(m, "request payload size exceeds"):
		return true
	}
	return false
}

// badResponse returns an ErrBadResponse ProviderError.
func badResponse(msg string) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: "gemini", Kind: agentrt.ErrBadResponse, Message: msg}
}

// invalidRequest returns an ErrInvalidRequest ProviderError for a request
// the adapter cannot encode; nothing was sent.
func invalidRequest(msg string, err error) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: "gemini", Kind: agentrt.ErrInvalidRequest, Message: msg, Err: err}
}

// unsupported is the error for content the API cannot take, returned
// before anything is sent.
func unsupported(msg string) *agentrt.ProviderError {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrUnsupportedContent, Message: msg}
}
