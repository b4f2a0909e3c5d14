// Package jsonextract finds and repairs the JSON object in a model's text
// answer; the JSON planner and typed output share it.
package jsonextract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors of Extract, in the words a model can act on.
var (
	errNoJSONObject  = errors.New("no JSON object found")
	errJSONNotClosed = errors.New("the JSON object is not closed: the text ends inside it")
)

// maxExtractRetries bounds the candidate objects that Extract tries
// again from a later '{' after one that never closed or closed with the
// wrong bracket. Each such try may scan to the end of the text, so the
// bound keeps Extract linear in the length of its input.
const maxExtractRetries = 32

// Extract returns the first JSON object in text, repaired, as a model
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
// was cut off), or invalid JSON with the decoder's message. Extract is
// safe for concurrent use.
func Extract(text string) (json.RawMessage, error) {
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
	s := objectScan{text: text, out: make([]byte, 0, 64), stack: make([]byte, 0, 8)}
	for s.i = start; s.i < len(text); s.i++ {
		c := text[s.i]
		if s.inString {
			if err := s.stringByte(c); err != nil {
				return nil, -1, err
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
			s.out = append(s.out, c)
		case '{':
			s.stack = append(s.stack, '}')
			s.out = append(s.out, c)
		case '[':
			s.stack = append(s.stack, ']')
			s.out = append(s.out, c)
		case '}', ']':
			if len(s.stack) == 0 || s.stack[len(s.stack)-1] != c {
				return nil, -1, fmt.Errorf("the JSON object is not valid JSON: unexpected %q at offset %d", c, s.i-start)
			}
			s.stack = s.stack[:len(s.stack)-1]
			s.out = append(dropTrailingComma(s.out), c)
			if len(s.stack) == 0 {
				if !json.Valid(s.out) {
					return nil, s.i + 1, fmt.Errorf("the JSON object is not valid JSON: %v", jsonSyntaxError(s.out))
				}
				return s.out, s.i + 1, nil
			}
		case '/':
			if err := s.slash(); err != nil {
				return nil, -1, err
			}
		default:
			s.out = append(s.out, c)
		}
	}
	return nil, -1, errJSONNotClosed
}

// objectScan is the state of scanJSONObject.
type objectScan struct {
	text     string
	i        int    // the byte being read
	out      []byte // the object so far, repaired
	stack    []byte // the closing brackets expected, innermost last
	inString bool
}

// stringByte copies c = text[i], inside a string, repairing it: a whole
// escape at a backslash, a control character escaped.
func (s *objectScan) stringByte(c byte) error {
	switch {
	case c == '"':
		s.inString = false
		s.out = append(s.out, c)
	case c == '\\':
		if s.i+1 >= len(s.text) {
			return errJSONNotClosed
		}
		s.i++
		switch e := s.text[s.i]; e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u':
			s.out = append(s.out, '\\', e)
		case '\'':
			s.out = append(s.out, '\'')
		default:
			// An invalid escape (a Windows path, say): keep the
			// backslash as a character; let the next byte be
			// read again as itself.
			s.out = append(s.out, '\\', '\\')
			s.i--
		}
	case c < 0x20:
		s.out = appendEscapedControl(s.out, c)
	default:
		s.out = append(s.out, c)
	}
	return nil
}

// slash copies the '/' at text[i] outside a string, or skips the comment
// it starts (leaving i on the comment's last byte).
func (s *objectScan) slash() error {
	text, i := s.text, s.i
	switch {
	case i+1 < len(text) && text[i+1] == '/':
		for i < len(text) && text[i] != '\n' {
			i++
		}
		if i < len(text) {
			s.out = append(s.out, '\n')
		}
	case i+1 < len(text) && text[i+1] == '*':
		j := strings.Index(text[i+2:], "*/")
		if j < 0 {
			return errJSONNotClosed
		}
		i += 2 + j + 1
		s.out = append(s.out, ' ')
	default:
		s.out = append(s.out, '/')
	}
	s.i = i
	return nil
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

// Kind names the JSON type of a value decoded into an any ("a string",
// "an array", ...), for error messages a model can act on.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
