package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3/packages/respjson"
)

// Opaque reasoning data that OpenAI-compatible servers want back in the
// next requests of a tool loop:
//
//   - "reasoning_details" (OpenRouter, for every reasoning model behind
//     it, and MiniMax with reasoning_split): a list of items
//     {"type":"reasoning.text"|"reasoning.summary"|"reasoning.encrypted",
//     "text"|"summary"|"data":..., "signature", "format", "index", "id"},
//     kept whole as the Signature of the thinking block and sent back
//     unchanged on the assistant message;
//   - Gemini's thought signature, in each tool call's
//     "extra_content":{"google":{"thought_signature":...}}, kept as the
//     Signature of the tool_use block and sent back on that tool call.

// detailsOf returns the reasoning_details list of a whole message, as the
// server sent it, or nil if there is none (no field, null, an empty list,
// not a list).
func detailsOf(extra map[string]respjson.Field) json.RawMessage {
	f, ok := extra["reasoning_details"]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal([]byte(f.Raw()), &items) != nil || len(items) == 0 {
		return nil
	}
	return json.RawMessage(f.Raw())
}

// reasoningDetails assembles the reasoning_details of a stream, whose
// items arrive in fragments across deltas. A fragment continues the last
// item of its type when both have the same index (or the same id, for a
// fragment without an index), or when it has neither index nor id; any
// other fragment starts a new item. Continuing an item concatenates
// "text", "summary" and "data" and takes the other fields (signature,
// id, format...) when present and not empty.
type reasoningDetails struct {
	items []map[string]json.RawMessage
}

func (d *reasoningDetails) add(extra map[string]respjson.Field) {
	f, ok := extra["reasoning_details"]
	if !ok {
		return
	}
	var frags []map[string]json.RawMessage
	if json.Unmarshal([]byte(f.Raw()), &frags) != nil {
		return // null, or not a list of objects
	}
	for _, frag := range frags {
		if frag == nil {
			continue
		}
		if item := d.continued(frag); item != nil {
			mergeDetail(item, frag)
		} else {
			d.items = append(d.items, frag)
		}
	}
}

// continued returns the item frag continues, or nil if it starts one.
func (d *reasoningDetails) continued(frag map[string]json.RawMessage) map[string]json.RawMessage {
	typ := rawString(frag["type"])
	for i := len(d.items) - 1; i >= 0; i-- {
		item := d.items[i]
		if rawString(item["type"]) != typ {
			continue
		}
		switch {
		case present(frag["index"]):
			if !bytes.Equal(item["index"], frag["index"]) || conflicting(item["id"], frag["id"]) {
				return nil
			}
		case present(frag["id"]):
			if rawString(item["id"]) != rawString(frag["id"]) {
				return nil
			}
		}
		return item
	}
	return nil
}

// mergeDetail adds a fragment to the item it continues.
func mergeDetail(item, frag map[string]json.RawMessage) {
	for k, v := range frag {
		switch {
		case !present(v):
		case k == "text" || k == "summary" || k == "data":
			item[k] = marshalRaw(rawString(item[k]) + rawString(v))
		case bytes.Equal(bytes.TrimSpace(v), []byte(`""`)):
			// An empty string does not replace a value.
			if _, ok := item[k]; !ok {
				item[k] = v
			}
		default:
			item[k] = v
		}
	}
}

// json returns the assembled list, or nil if there is no item.
func (d *reasoningDetails) json() json.RawMessage {
	if len(d.items) == 0 {
		return nil
	}
	return marshalRaw(d.items) // raw values that were decoded from JSON always encode
}

// detailsText returns the reasoning text a reasoning_details list holds:
// the text of its reasoning.text items and the summary of its
// reasoning.summary items, for a server that sends no reasoning text
// besides (MiniMax); "" when it holds encrypted reasoning only.
func detailsText(details json.RawMessage) string {
	var items []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Summary string `json:"summary"`
	}
	if json.Unmarshal(details, &items) != nil {
		return ""
	}
	var s strings.Builder
	for _, it := range items {
		switch it.Type {
		case "reasoning.text":
			s.WriteString(it.Text)
		case "reasoning.summary":
			s.WriteString(it.Summary)
		}
	}
	return s.String()
}

// detailItems returns the items of a reasoning_details list kept as a
// thinking block's Signature, each as the server sent it; nil if it is
// not a list.
func detailItems(sig []byte) []json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(sig, &items) != nil {
		return nil
	}
	return items
}

// thoughtSignatureOf returns the thought signature in the
// extra_content of a tool call's raw JSON (Gemini's OpenAI-compatible
// endpoint), or "".
func thoughtSignatureOf(raw string) string {
	var tc struct {
		ExtraContent struct {
			Google struct {
				ThoughtSignature string `json:"thought_signature"`
			} `json:"google"`
		} `json:"extra_content"`
	}
	_ = json.Unmarshal([]byte(raw), &tc) // a field of another shape stays empty
	return tc.ExtraContent.Google.ThoughtSignature
}

// thoughtSignatureExtra is the extra_content that sends a thought
// signature back on a tool call.
func thoughtSignatureExtra(sig []byte) map[string]any {
	return map[string]any{"extra_content": map[string]any{"google": map[string]any{"thought_signature": string(sig)}}}
}

// present reports whether a raw field is there and not null.
func present(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && !bytes.Equal(v, []byte("null"))
}

// conflicting reports whether two raw ids are both there and differ.
func conflicting(a, b json.RawMessage) bool {
	return present(a) && present(b) && rawString(a) != rawString(b)
}

// rawString decodes a raw JSON string; "" for anything else.
func rawString(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// marshalRaw encodes v as JSON without escaping HTML, so that the text
// the server sent goes back as it came ("<" stays "<").
func marshalRaw(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSpace(buf.Bytes())
}
