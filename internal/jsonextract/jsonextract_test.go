package jsonextract

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"a":1}`, `{"a":1}`},
		{"surrounding whitespace", "\n  {\"a\": 1}\n", `{"a": 1}`},
		{"fenced", "```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"fenced without language", "```\n{\"a\":1}\n```\n", `{"a":1}`},
		{"prose before and after", `Sure! Here is my decision: {"a":1} Hope this helps.`, `{"a":1}`},
		{"prose and fence", "I will call the tool.\n\n```json\n{\"a\":1}\n```\nDone.", `{"a":1}`},
		{"two objects: the first wins", `{"a":1} {"b":2}`, `{"a":1}`},
		{"two objects on two lines", "{\"a\":1}\n{\"b\":{\"c\":2}}", `{"a":1}`},
		{"nested", `x {"a":{"b":[{"c":1},{"d":[2,3]}]}} y`, `{"a":{"b":[{"c":1},{"d":[2,3]}]}}`},
		{"braces inside strings", `{"a":"}{ ]["} tail }`, `{"a":"}{ ]["}`},
		{"escaped quote inside string", `{"a":"say \"}\" now"} {"b":1}`, `{"a":"say \"}\" now"}`},
		{"escaped backslash before quote", `{"a":"dir\\"} {"b":1}`, `{"a":"dir\\"}`},
		{"trailing comma in object", `{"a":1,}`, `{"a":1}`},
		{"trailing comma with whitespace", "{\"a\":[1,2,\n],\n}", "{\"a\":[1,2\n]\n}"},
		{"line comment", "{\n\"a\": 1, // the answer\n\"b\": 2\n}", "{\n\"a\": 1, \n\"b\": 2\n}"},
		{"block comment", `{"a": /* one */ 1}`, `{"a":   1}`},
		{"comment before trailing comma's brace", "{\"a\":1, // last\n}", "{\"a\":1 \n}"},
		{"slashes inside a string are not a comment", `{"url":"http://x.y/z"}`, `{"url":"http://x.y/z"}`},
		{"raw newline and tab in a string", "{\"a\":\"line 1\nline 2\tend\"}", `{"a":"line 1\nline 2\tend"}`},
		{"other control character in a string", "{\"a\":\"x\x01y\"}", `{"a":"x\u0001y"}`},
		{"escaped single quote", `{"a":"it\'s"}`, `{"a":"it's"}`},
		{"invalid escape kept as a backslash", `{"path":"C:\temp\x"}`, `{"path":"C:\temp\\x"}`},
		{"prose braces that are not JSON are skipped", `Use {name} as the key: {"a":1}`, `{"a":1}`},
		{"an unclosed brace in prose is skipped", `The set {1, 2 is open; {"a":1}`, `{"a":1}`},
		{"a mismatched bracket is skipped", `{"a":[1} then {"b":2}`, `{"b":2}`},
		{"empty object", `{}`, `{}`},
		{"unicode", `« {"ville":"Zürich","emoji":"🌤"} »`, `{"ville":"Zürich","emoji":"🌤"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Extract(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got), "result is not valid JSON: %s", got)
		})
	}
}

func TestExtractJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "no JSON object found"},
		{"prose only", "I think the answer is 42.", "no JSON object found"},
		{"an array is not an object", `[1, 2, 3]`, "no JSON object found"},
		{"cut off", `{"action":"final_answer","answer":"It is`, "the JSON object is not closed"},
		{"cut off after a backslash", `{"a":"x\`, "the JSON object is not closed"},
		{"unclosed block comment", `{"a":1 /* note`, "the JSON object is not closed"},
		{"single quotes", `{'a': 1}`, "the JSON object is not valid JSON: invalid character '\\''"},
		{"unquoted key", `{a: 1}`, "the JSON object is not valid JSON: invalid character 'a'"},
		{"python literal", `{"a": True}`, "the JSON object is not valid JSON: invalid character 'T'"},
		{"mismatched bracket only", `{"a":[1}`, `the JSON object is not valid JSON: unexpected '}'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Extract(tt.in)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// A text full of unclosed braces costs a bounded number of rescans, and an
// object after them is still found when the budget allows.
func TestExtractJSONManyOpenBraces(t *testing.T) {
	t.Parallel()
	_, err := Extract(strings.Repeat("{", 1<<16))
	require.ErrorContains(t, err, "not closed")

	got, err := Extract(strings.Repeat("{", 10) + ` {"a":1}`)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(got))

	// Balanced prose that is not JSON is skipped in one pass, however long.
	got, err = Extract(strings.Repeat("{x} ", 10000) + `{"a":1}`)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(got))
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`,
		"```json\n{\"action\":\"tool_call\",\"name\":\"x\",\"arguments\":{\"a\":[1,2,],}}\n```",
		`prose {"a":"}{"} {"b":2}`,
		"{\"a\":\"line\nbreak\", // c\n /* d */ \"b\":'x'}",
		`{"a":"\'\q\u00e9\"}`,
		`{{{{ ]]] {"a":[}`,
		"{\"a\":\"\x00\x1f\"}",
		`[{"a":1}]`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := Extract(text)
		if err != nil {
			if got != nil {
				t.Fatalf("ExtractJSON(%q) returned %q with error %v", text, got, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q: not valid JSON", text, got)
		}
		if got[0] != '{' || got[len(got)-1] != '}' {
			t.Fatalf("ExtractJSON(%q) = %q: not an object", text, got)
		}
		// A text that is one valid JSON object comes back unchanged.
		if trimmed := bytes.TrimSpace([]byte(text)); json.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{' {
			if !bytes.Equal(got, trimmed) {
				t.Fatalf("ExtractJSON(%q) = %q, want the object unchanged", text, got)
			}
		}
	})
}

func TestExtractJSONFromProse(t *testing.T) {
	answer := "Sure, I will check the weather first.\n" +
		"```json\n" +
		`{"action": "tool_call", "name": "get_weather", "arguments": {"city": "Paris",},}` + "\n" +
		"```\n" +
		`Then I will answer: {"action": "final_answer"}`
	obj, err := Extract(answer)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}}`; string(obj) != want {
		t.Fatalf("got %s, want %s", obj, want)
	}
}
