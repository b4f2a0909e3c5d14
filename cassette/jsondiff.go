package cassette

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parsePath splits a JSON path such as "messages[*].content[0].id" into
// its segments: messages, *, content, 0, id.
func parsePath(p string) []string {
	p = strings.ReplaceAll(p, "[", ".")
	p = strings.ReplaceAll(p, "]", "")
	return strings.FieldsFunc(p, func(r rune) bool { return r == '.' })
}

// ignored reports whether path matches one of the patterns.
func ignored(path []string, patterns [][]string) bool {
	for _, p := range patterns {
		if len(p) != len(path) {
			continue
		}
		ok := true
		for i := range p {
			if p[i] != "*" && p[i] != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// diffBodies compares a recorded request body with a sent one, as JSON
// when both are JSON, and returns "" when they match or the first
// difference as "path: recorded X ≠ sent Y".
func diffBodies(recorded, sent []byte, ignore [][]string) string {
	var a, b any
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(sent, &b) != nil {
		if bytes.Equal(bytes.TrimSpace(recorded), bytes.TrimSpace(sent)) {
			return ""
		}
		return fmt.Sprintf("body: recorded %s ≠ sent %s", excerpt(string(recorded), string(sent)), excerpt(string(sent), string(recorded)))
	}
	return diffJSON(nil, a, b, ignore)
}

// diffJSON returns the first difference between a and b under path, keys
// in sorted order, or "".
func diffJSON(path []string, a, b any, ignore [][]string) string {
	if ignored(path, ignore) {
		return ""
	}
	switch a := a.(type) {
	case map[string]any:
		if b, ok := b.(map[string]any); ok {
			keys := slices.Sorted(maps.Keys(a))
			for k := range b {
				if _, ok := a[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := append(slices.Clip(path), k)
				va, ina := a[k]
				vb, inb := b[k]
				switch {
				case ina && inb:
					if d := diffJSON(p, va, vb, ignore); d != "" {
						return d
					}
				case !ignored(p, ignore):
					return mismatch(p, va, vb, ina, inb)
				}
			}
			return ""
		}
	case []any:
		if b, ok := b.([]any); ok {
			for i := range max(len(a), len(b)) {
				p := append(slices.Clip(path), strconv.Itoa(i))
				switch {
				case i < len(a) && i < len(b):
					if d := diffJSON(p, a[i], b[i], ignore); d != "" {
						return d
					}
				case !ignored(p, ignore):
					return mismatch(p, at(a, i), at(b, i), i < len(a), i < len(b))
				}
			}
			return ""
		}
	default:
		if a == b {
			return ""
		}
	}
	return mismatch(path, a, b, true, true)
}

func at(s []any, i int) any {
	if i < len(s) {
		return s[i]
	}
	return nil
}

// mismatch formats one difference.
func mismatch(path []string, a, b any, ina, inb bool) string {
	sa, sb := "(absent)", "(absent)"
	if ina {
		sa = encode(a)
	}
	if inb {
		sb = encode(b)
	}
	if ina && inb {
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok {
			sa, sb = encode(excerpt(as, bs)), encode(excerpt(bs, as))
		} else {
			sa, sb = excerpt(sa, sb), excerpt(sb, sa)
		}
	}
	return fmt.Sprintf("%s: recorded %s ≠ sent %s", formatPath(path), sa, sb)
}

func encode(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// formatPath writes path segments as messages[3].content[0].text.
func formatPath(path []string) string {
	if len(path) == 0 {
		return "(body)"
	}
	var sb strings.Builder
	for _, s := range path {
		if _, err := strconv.Atoi(s); err == nil {
			sb.WriteString("[" + s + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(s)
	}
	return sb.String()
}

// excerptContext is how many characters an excerpt keeps on each side of
// the first difference.
const excerptContext = 20

// excerpt returns s cut down to the neighbourhood of its first difference
// with other, with … where text was cut.
func excerpt(s, other string) string {
	if len(s) <= 2*excerptContext+10 {
		return s
	}
	i := 0
	for i < len(s) && i < len(other) && s[i] == other[i] {
		i++
	}
	start := max(0, i-excerptContext)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(len(s), i+excerptContext)
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}
