package agentrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors of extractJSON, in the words a model can act on.
var (
	errNoJSONObject  = errors.New("no JSON object found")
	errJSONNotClosed = errors.New("the JSON object is not closed: the text ends inside it")
)

// maxExtractRetries bounds the candidate objects that extractJSON tries
// again from a later '{' after one that never closed or closed with the
// wrong bracket. Each such try may scan to the end of the text, so the
// bound keeps extractJSON linear in the length of its input.
const maxExtractRetries = 32

// extractJSON returns the first JSON object in text, repaired, as a model
// writes it around its answer: inside a ```json code fence, after or before
// prose, followed by a second object (which is ignored).
//
// The object is found by scanning, not by a regular expression: from the
// first '{' to the brace that balances it, skipping strings (with their
// escapes) and comments, so that braces inside strings do not count and two
// objects are never merged into one. A candidate that is not valid JSON
// even after repair (prose such as "{name}") is skipped, and the scan goes
// on after it; one that never closes, or closes with the wrong bracket, is
// skipped too and the scan goes on from its next '{', at most 32 times, so
// that the cost stays linear in the length of text.
//
// The repairs are the cheap and unambiguous ones: trailing commas before
// '}' or ']' are removed, // and /* */ comments outside strings are
// removed, raw control characters inside strings (a newline typed as is)
// are escaped, and \' inside a string becomes '. Nothing else is guessed:
// single-quoted strings, unquoted keys or Python literals make a candidate
// invalid.
//
// On success the result is a new slice, always a JSON object for which
// json.Valid reports true. Otherwise the error says what was wrong in terms
// a model can act on: no object, an object that is not closed (the answer
// was cut off), or invalid JSON with the decoder's message. extractJSON is
// safe for concurrent use.
func extractJSON(text string) (json.RawMessage, error) {
	var firstErr error
	retries := 0
	for start := 0; start < len(text); {
		i := strings.IndexByte(text[start:], '{')
		if i < 0 {
			break
		}
		i += start
		obj, end, err := scanJSONObject(text, i)
		if err == nil {
			return obj, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if end > i {
			// A balanced candidate that is not JSON: go on after it.
			start = end
			continue
		}
		// Not closed, or closed by the wrong bracket: an object may still
		// start inside it.
		retries++
		if retries > maxExtractRetries {
			break
		}
		start = i + 1
	}
	if firstErr == nil {
		return nil, errNoJSONObject
	}
	return nil, firstErr
}

// scanJSONObject scans the object that starts at text[start] == '{' and
// writes its repaired form. When the object balances, end is the index
// after its closing brace, and err is nil or says why the repaired bytes are
// not valid JSON. When it does not balance, end is -1.
func scanJSONObject(text string, start int) (obj json.RawMessage, end int, err error) {
	out := make([]byte, 0, 64)
	stack := make([]byte, 0, 8) // the closing brackets expected, innermost last
	inString := false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case c == '"':
				inString = false
				out = append(out, c)
			case c == '\\':
				if i+1 >= len(text) {
					return nil, -1, errJSONNotClosed
				}
				i++
				switch e := text[i]; e {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u':
					out = append(out, '\\', e)
				case '\'':
					out = append(out, '\'')
				default:
					// An invalid escape (a Windows path, say): keep the
					// backslash as a character; let the next byte be
					// read again as itself.
					out = append(out, '\\', '\\')
					i--
				}
			case c < 0x20:
				out = appendEscapedControl(out, c)
			default:
				out = append(out, c)
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{':
			stack = append(stack, '}')
			out = append(out, c)
		case '[':
			stack = append(stack, ']')
			out = append(out, c)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return nil, -1, fmt.Errorf("the JSON object is not valid JSON: unexpected %q at offset %d", c, i-start)
			}
			stack = stack[:len(stack)-1]
			out = dropTrailingComma(out)
			out = append(out, c)
			if len(stack) == 0 {
				if !json.Valid(out) {
					return nil, i + 1, fmt.Errorf("the JSON object is not valid JSON: %v", jsonSyntaxError(out))
				}
				return out, i + 1, nil
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '/' {
				for i < len(text) && text[i] != '\n' {
					i++
				}
				if i < len(text) {
					out = append(out, '\n')
				}
				continue
			}
			if i+1 < len(text) && text[i+1] == '*' {
				j := strings.Index(text[i+2:], "*/")
				if j < 0 {
					return nil, -1, errJSONNotClosed
				}
				i += 2 + j + 1
				out = append(out, ' ')
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return nil, -1, errJSONNotClosed
}

// dropTrailingComma removes a ',' that is followed only by whitespace at
// the end of out, keeping the whitespace.
func dropTrailingComma(out []byte) []byte {
	for j := len(out) - 1; j >= 0; j-- {
		switch out[j] {
		case ' ', '\t', '\n', '\r':
			continue
		case ',':
			return append(out[:j], out[j+1:]...)
		}
		break
	}
	return out
}

func appendEscapedControl(out []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// jsonSyntaxError returns the decoder's message for invalid JSON.
func jsonSyntaxError(b []byte) error {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}
