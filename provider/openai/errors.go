package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/retryafter"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// callError maps the error of a call that produced no chunk of an answer.
// raw is the last HTTP response the SDK saw, or nil.
func callError(ctx context.Context, err error, raw *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("openai: %w", ctxErr)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return eventError(se)
	}
	var ae *oai.Error
	switch {
	case errors.As(err, &ae):
		var header http.Header
		var body []byte
		if ae.Response != nil {
			header = ae.Response.Header
			body = readBody(ae.Response)
		}
		info := errorInfo{Code: ae.Code, Type: ae.Type, Message: ae.Message}
		if _, err := strconv.Atoi(info.Code); err == nil {
			info.Code = "" // a server that repeats the HTTP status as the code
		}
		if info.Message == "" {
			info = parseErrorBody(body)
		}
		return statusError(ae.StatusCode, header, info, err)
	case raw != nil && raw.StatusCode >= 400:
		// An error body the SDK could not read as OpenAI's, such as
		// Ollama's {"error":"..."}: the SDK put the bytes back in raw.
		return statusError(raw.StatusCode, raw.Header, parseErrorBody(readBody(raw)), err)
	case errors.Is(err, context.DeadlineExceeded):
		// A per-attempt timeout of the client (option.WithRequestTimeout).
		return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrOverloaded, Message: "request timed out", Err: err}
	case raw != nil:
		// The server answered 2xx but the body could not be read or parsed.
		return badResponse("cannot read the reply", err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrOverloaded, Message: "cannot reach the server", Err: err}
	}
	return &agentrt.ProviderError{Provider: providerName, Err: err}
}

// streamError maps an error that broke a stream after its first chunk.
func streamError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("openai: %w", ctxErr)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return eventError(se)
	}
	return badResponse("the stream broke", err)
}

// eventError maps an error event sent inside a stream
// (data: {"error": {...}}).
func eventError(se *ssestream.StreamError) error {
	info := parseErrorBody(se.Event.Data)
	if info.Message == "" {
		info.Message = se.Message
	}
	kind := agentrt.ErrBadResponse
	switch c := strings.ToLower(info.Code + " " + info.Type); {
	case isContextLength(info):
		kind = agentrt.ErrContextLength
	case info.Type == "invalid_request_error":
		// Groq, after streaming reasoning, refuses the model's tool call
		// (code tool_use_failed, "status_code":400): the error it
		// answers with HTTP 400 to the same request not streamed.
		kind = agentrt.ErrInvalidRequest
	case strings.Contains(c, "rate_limit"), strings.Contains(c, "quota"):
		kind = agentrt.ErrRateLimited
	case strings.Contains(c, "server_error"), strings.Contains(c, "overloaded"), strings.Contains(c, "unavailable"):
		kind = agentrt.ErrOverloaded
	}
	return &agentrt.ProviderError{Provider: providerName, Code: firstNonEmpty(info.Code, info.Type), Message: info.Message, Kind: kind, Err: se}
}

// statusError maps an HTTP error status and its body.
func statusError(status int, header http.Header, info errorInfo, err error) error {
	var kind error
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		kind = agentrt.ErrAuth
	case status == http.StatusTooManyRequests:
		kind = agentrt.ErrRateLimited
	case status == http.StatusRequestTimeout || status >= 500:
		kind = agentrt.ErrOverloaded
	case status == http.StatusRequestEntityTooLarge || isContextLength(info):
		kind = agentrt.ErrContextLength
	case status >= 400:
		kind = agentrt.ErrInvalidRequest
	default:
		kind = agentrt.ErrBadResponse
	}
	return &agentrt.ProviderError{
		Provider:   providerName,
		StatusCode: status,
		Code:       firstNonEmpty(info.Code, info.Type),
		Message:    info.Message,
		RetryAfter: retryAfterOf(header),
		Kind:       kind,
		Err:        err,
	}
}

// isContextLength recognises the error of a prompt longer than the model's
// context window: OpenAI's code context_length_exceeded, and the messages
// of compatible servers (vLLM and DeepSeek say "maximum context length",
// llama.cpp server "exceeds the available context size").
func isContextLength(info errorInfo) bool {
	if info.Code == "context_length_exceeded" || info.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(info.Message)
	for _, s := range []string{
		"maximum context length", "context length exceeded", "context_length_exceeded",
		"context window", "context size", "too many tokens in the prompt", "prompt is too long",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// errorInfo is what an error body says.
type errorInfo struct {
	Code    string
	Type    string
	Message string
}

// parseErrorBody reads the error bodies of OpenAI ({"error":{...}}),
// Ollama ({"error":"..."}), vLLM ({"object":"error","message":...}) and
// plain text.
func parseErrorBody(body []byte) errorInfo {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return errorInfo{}
	}
	type fields struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var top struct {
		fields
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &top) != nil {
		return errorInfo{Message: truncate(string(body), 300)}
	}
	f := top.fields
	if len(top.Error) > 0 {
		var s string
		if json.Unmarshal(top.Error, &s) == nil {
			return errorInfo{Message: s}
		}
		var inner fields
		if json.Unmarshal(top.Error, &inner) == nil {
			f = inner
		}
	}
	info := errorInfo{Type: f.Type, Message: f.Message}
	_ = json.Unmarshal(f.Code, &info.Code) // a string; a number (vLLM's status) is left out
	return info
}

// readBody reads an error response body that the SDK left readable, and
// puts the bytes back.
func readBody(res *http.Response) []byte {
	if res == nil || res.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// retryAfterOf is the wait the response's headers ask for, or 0.
func retryAfterOf(h http.Header) time.Duration {
	d, _ := retryafter.Parse(h)
	return d
}

func badResponse(msg string, err error) error {
	if err != nil {
		msg += ": " + err.Error()
	}
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrBadResponse, Message: msg, Err: err}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// invalidRequest is the error for a request the adapter cannot encode,
// returned before anything is sent.
func invalidRequest(msg string) error {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrInvalidRequest, Message: msg}
}

// unsupported is the error for content the API cannot take, returned
// before anything is sent.
func unsupported(msg string) error {
	return &agentrt.ProviderError{Provider: providerName, Kind: agentrt.ErrUnsupportedContent, Message: msg}
}
