package agentrt

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file checks a JSON input against its compiled schema in one pass
// over the bytes. The fast path (valid) stops at the first violation and
// allocates nothing for the usual inputs; the slow path (check) collects
// every violation with the JSON path at fault. Both run the same code, so
// what one accepts the other accepts.

// fieldError is one violation: the JSON path at fault ("" for the input
// itself) and the full message.
type fieldError struct {
	path string
	msg  string
}

// valid reports whether raw, which must be valid JSON, satisfies the
// schema.
func (n *schemaNode) valid(raw []byte) bool {
	c := checker{data: raw}
	c.skipSpace()
	return c.value(n, "", false) && !c.failed
}

// check returns every violation of the schema in raw, which must be valid
// JSON, in the order of the input (missing fields at the end of their
// object).
func (n *schemaNode) check(raw []byte) []fieldError {
	var errs []fieldError
	c := checker{data: raw, errs: &errs}
	c.skipSpace()
	if !c.value(n, "", false) && len(errs) == 0 {
		errs = append(errs, fieldError{msg: "input is not valid JSON"})
	}
	return errs
}

type checker struct {
	data   []byte
	i      int
	errs   *[]fieldError // nil: stop at the first violation
	failed bool
}

// fail records a violation; it returns false (stop) on the fast path.
func (c *checker) fail(path, msg string) bool {
	c.failed = true
	if c.errs == nil {
		return false
	}
	*c.errs = append(*c.errs, fieldError{path: path, msg: msg})
	return true
}

// failf records "field "path" <predicate>".
func (c *checker) failf(path, format string, args ...any) bool {
	if c.errs == nil {
		c.failed = true
		return false
	}
	return c.fail(path, subject(path)+" "+fmt.Sprintf(format, args...))
}

func subject(path string) string {
	if path == "" {
		return "input"
	}
	return fmt.Sprintf("field %q", path)
}

func (c *checker) child(path string, key []byte) string {
	if c.errs == nil {
		return ""
	}
	return joinPath(path, string(key))
}

func (c *checker) skipSpace() {
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// value checks one value at c.i against n and leaves c.i after it. It
// returns false to stop: on the fast path at the first violation, on
// either path at malformed JSON. A null for an optional property counts
// as absent.
func (c *checker) value(n *schemaNode, path string, optional bool) bool {
	start := c.i
	if c.i >= len(c.data) {
		return false
	}
	if n == nil { // no schema: anything goes
		return c.skip()
	}
	if n.never {
		return c.skip() && c.failf(path, "is not allowed")
	}
	switch b := c.data[c.i]; {
	case b == '{':
		if n.types != 0 && n.types&tObject == 0 {
			return c.skip() && c.typeError(n, path, "object")
		}
		return c.object(n, path) && c.valueRules(n, path, start, nil, 0, false)
	case b == '[':
		if n.types != 0 && n.types&tArray == 0 {
			return c.skip() && c.typeError(n, path, "array")
		}
		return c.array(n, path) && c.valueRules(n, path, start, nil, 0, false)
	case b == '"':
		return c.stringValue(n, path, start)
	case b == 't' || b == 'f':
		if !c.literal() {
			return false
		}
		if n.types != 0 && n.types&tBoolean == 0 {
			return c.typeError(n, path, "boolean")
		}
		return c.valueRules(n, path, start, nil, 0, false)
	case b == 'n':
		if !c.literal() {
			return false
		}
		if optional {
			return true
		}
		if n.types != 0 && n.types&tNull == 0 {
			return c.typeError(n, path, "null")
		}
		return c.valueRules(n, path, start, nil, 0, false)
	default:
		return c.numberValue(n, path, start)
	}
}

// stringValue checks the string at c.i, its opening quote at start.
func (c *checker) stringValue(n *schemaNode, path string, start int) bool {
	escaped, ok := c.str()
	if !ok {
		return false
	}
	if n.types != 0 && n.types&tString == 0 {
		return c.typeError(n, path, "string")
	}
	var str []byte // the string's contents, when its rules need them
	if n.textual {
		if str, ok = c.contents(start, escaped); !ok {
			return false
		}
		if !c.stringRules(n, path, str) {
			return false
		}
	}
	return c.valueRules(n, path, start, str, 0, false)
}

// contents is the decoded contents of the string from start to c.i.
func (c *checker) contents(start int, escaped bool) ([]byte, bool) {
	if !escaped {
		return c.data[start+1 : c.i-1], true
	}
	var s string
	if json.Unmarshal(c.data[start:c.i], &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// numberValue checks the number at c.i, which starts at start.
func (c *checker) numberValue(n *schemaNode, path string, start int) bool {
	integral := c.scanNumber()
	if c.i == start {
		return false
	}
	var num float64 // the number's value, when it was parsed
	if n.numeric || !integral {
		var err error
		num, err = strconv.ParseFloat(string(c.data[start:c.i]), 64)
		if err != nil && !isRangeError(err) {
			return false
		}
		integral = num == math.Trunc(num)
	}
	if n.types != 0 && n.types&tNumber == 0 && (n.types&tInteger == 0 || !integral) {
		return c.typeError(n, path, "number")
	}
	if n.numeric && !c.numberRules(n, path, num) {
		return false
	}
	return c.valueRules(n, path, start, nil, num, true)
}

// scanNumber scans the number at c.i; integral reports that it has no
// fraction or exponent (an integer as written).
func (c *checker) scanNumber() (integral bool) {
	integral = true
	for ; c.i < len(c.data); c.i++ {
		switch c.data[c.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return integral
		case '.', 'e', 'E':
			integral = false
		}
	}
	return integral
}

// valueRules checks the rules for a value of any type (enum, const, the
// combinators) on the value from start to c.i; str and num are its string
// contents or number value if its type's own rules needed them, isNum
// tells that it is a number.
func (c *checker) valueRules(n *schemaNode, path string, start int, str []byte, num float64, isNum bool) bool {
	if n.enum != nil && !c.matchAny(n.enum, start, str, num, isNum) {
		if !c.failf(path, "must be one of %s", listValues(n.Enum)) {
			return false
		}
	}
	if n.hasConst && !c.matchAny([]any{n.constVal}, start, str, num, isNum) {
		if !c.failf(path, "must be %s", n.Const) {
			return false
		}
	}
	if n.combined {
		return c.combinators(n, path, c.data[start:c.i])
	}
	return true
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (c *checker) typeError(n *schemaNode, path, got string) bool {
	if c.errs == nil {
		c.failed = true
		return false
	}
	var want []string
	for _, tn := range typeNames {
		if n.types&tn.bit != 0 {
			want = append(want, tn.word)
		}
	}
	if got == "number" && n.types&tInteger != 0 {
		got = "number " + string(c.lastValue())
	}
	return c.failf(path, "must be %s, got %s", strings.Join(want, " or "), got)
}

// lastValue is the scalar that ends at c.i.
func (c *checker) lastValue() []byte {
	j := c.i
	for j > 0 && !strings.ContainsRune(",:[{ \t\n\r", rune(c.data[j-1])) {
		j--
	}
	return c.data[j:c.i]
}

func (c *checker) object(n *schemaNode, path string) bool {
	c.i++ // '{'
	var seen seenSet
	if len(n.Required) > 64 {
		seen.many = make([]bool, len(n.Required))
	}
	firstErr := 0 // missing fields are reported before the object's other errors
	if c.errs != nil {
		firstErr = len(*c.errs)
	}
	count := 0
	for more := !c.closes('}'); more; {
		if !c.property(n, path, &seen) {
			return false
		}
		count++
		var ok bool
		if more, ok = c.next('}'); !ok {
			return false
		}
	}
	if seen.many == nil && seen.mask == n.reqMask {
		return c.countRules(n, path, count)
	}
	return c.missing(n, path, &seen, firstErr) && c.countRules(n, path, count)
}

// seenSet records which of an object's required properties it has: a bit
// mask for up to 64 of them, a slice beyond.
type seenSet struct {
	mask uint64
	many []bool
}

func (s *seenSet) add(i int) {
	if s.many != nil {
		s.many[i] = true
	} else {
		s.mask |= 1 << i
	}
}

func (s *seenSet) has(i int) bool {
	return s.many != nil && s.many[i] || s.many == nil && s.mask&(1<<i) != 0
}

// closes scans the space after a list's opening bracket and, if the list
// is empty, its closing one (end); it reports whether it did.
func (c *checker) closes(end byte) bool {
	c.skipSpace()
	if c.i < len(c.data) && c.data[c.i] == end {
		c.i++
		return true
	}
	return false
}

// next scans past the space and the comma after an element of a list
// closed by end, to the next element; more is false past the end of the
// list, ok false at malformed JSON.
func (c *checker) next(end byte) (more, ok bool) {
	c.skipSpace()
	if c.i >= len(c.data) {
		return false, false
	}
	if c.data[c.i] == end {
		c.i++
		return false, true
	}
	if c.data[c.i] != ',' {
		return false, false
	}
	c.i++
	c.skipSpace()
	return true, true
}

// property checks one member of an object (key, colon, value) and marks
// it in seen if it is required.
func (c *checker) property(n *schemaNode, path string, seen *seenSet) bool {
	start := c.i
	escaped, ok := c.str()
	if !ok {
		return false
	}
	key, ok := c.contents(start, escaped)
	if !ok {
		return false
	}
	info, found := n.lookup(key)
	optional := true
	if found && info.req >= 0 {
		optional = false
		seen.add(info.req)
	}
	c.skipSpace()
	if c.i >= len(c.data) || c.data[c.i] != ':' {
		return false
	}
	c.i++
	c.skipSpace()
	if info.declared && n.patterns == nil { // the usual case, in short
		return c.value(info.node, c.child(path, key), optional)
	}
	return c.member(n, path, key, info, optional)
}

// missing reports the required properties not in seen, ahead of the
// object's other errors (which start at firstErr).
func (c *checker) missing(n *schemaNode, path string, seen *seenSet, firstErr int) bool {
	var missing []fieldError
	for i, name := range n.Required {
		if seen.has(i) {
			continue
		}
		if c.errs == nil {
			c.failed = true
			return false
		}
		p := joinPath(path, name)
		missing = append(missing, fieldError{path: p, msg: subject(p) + " is required"})
	}
	if len(missing) > 0 {
		c.failed = true
		*c.errs = slices.Insert(*c.errs, firstErr, missing...)
	}
	return true
}

// countRules checks minProperties and maxProperties.
func (c *checker) countRules(n *schemaNode, path string, count int) bool {
	if n.MinProperties != nil && count < *n.MinProperties {
		if !c.failf(path, "must have at least %s", plural(*n.MinProperties, "entry", "entries")) {
			return false
		}
	}
	if n.MaxProperties != nil && count > *n.MaxProperties {
		if !c.failf(path, "must have at most %s", plural(*n.MaxProperties, "entry", "entries")) {
			return false
		}
	}
	return true
}

// member checks the value of key in an object of schema n: against its
// property, every matching patternProperties schema, or else
// additionalProperties.
func (c *checker) member(n *schemaNode, path string, key []byte, info propInfo, optional bool) bool {
	start := c.i
	matched := info.declared
	if info.declared && !c.value(info.node, c.child(path, key), optional) {
		return false
	}
	for _, pp := range n.patterns {
		if !pp.re.Match(key) {
			continue
		}
		matched = true
		c.i = start
		if !c.value(pp.node, c.child(path, key), optional) {
			return false
		}
	}
	if matched {
		return true
	}
	switch {
	case n.closed:
		if !c.skip() {
			return false
		}
		if c.errs == nil {
			c.failed = true
			return false
		}
		list := n.fieldList()
		for _, pp := range n.patterns {
			list += fmt.Sprintf("; names must match %q", pp.re.String())
		}
		return c.fail(joinPath(path, string(key)), fmt.Sprintf("unknown field %q (valid fields: %s)", joinPath(path, string(key)), list))
	case n.AdditionalProperties != nil:
		return c.value(n.AdditionalProperties, c.child(path, key), optional)
	}
	return c.skip()
}

func (c *checker) array(n *schemaNode, path string) bool {
	start := c.i
	c.i++ // '['
	count := 0
	for more := !c.closes(']'); more; {
		var p string
		if c.errs != nil {
			p = path + "[" + strconv.Itoa(count) + "]"
		}
		if !c.value(n.Items, p, false) {
			return false
		}
		count++
		var ok bool
		if more, ok = c.next(']'); !ok {
			return false
		}
	}
	return c.itemRules(n, path, start, count)
}

// itemRules checks the rules on an array's items: their number, and that
// none repeats. The array runs from start to c.i.
func (c *checker) itemRules(n *schemaNode, path string, start, count int) bool {
	if n.MinItems != nil && count < *n.MinItems {
		if !c.failf(path, "must have at least %s", plural(*n.MinItems, "item", "items")) {
			return false
		}
	}
	if n.MaxItems != nil && count > *n.MaxItems {
		if !c.failf(path, "must have at most %s", plural(*n.MaxItems, "item", "items")) {
			return false
		}
	}
	if !n.UniqueItems || count <= 1 {
		return true
	}
	var items []any
	if v, err := decodeValue(c.data[start:c.i]); err == nil {
		items, _ = v.([]any)
	}
	for i := range items {
		for j := range i {
			if jsonEqual(items[i], items[j]) {
				return c.failf(path, "must not repeat an item (items %d and %d are equal)", j, i)
			}
		}
	}
	return true
}

func (c *checker) stringRules(n *schemaNode, path string, s []byte) bool {
	if n.MinLength != nil || n.MaxLength != nil {
		l := utf8.RuneCount(s)
		if n.MinLength != nil && n.MaxLength != nil && *n.MinLength == *n.MaxLength && l != *n.MinLength {
			if !c.failf(path, "must have exactly %s", plural(*n.MinLength, "character", "characters")) {
				return false
			}
		} else if n.MinLength != nil && l < *n.MinLength && *n.MinLength == 1 {
			if !c.failf(path, "must not be empty") {
				return false
			}
		} else if n.MinLength != nil && l < *n.MinLength {
			if !c.failf(path, "must have at least %s", plural(*n.MinLength, "character", "characters")) {
				return false
			}
		} else if n.MaxLength != nil && l > *n.MaxLength {
			if !c.failf(path, "must have at most %s", plural(*n.MaxLength, "character", "characters")) {
				return false
			}
		}
	}
	if n.pattern != nil && !n.pattern.Match(s) {
		if !c.failf(path, "must match the pattern %q", n.Pattern) {
			return false
		}
	}
	if n.format != nil && !n.format.valid(string(s)) {
		if !c.failf(path, "must be %s", n.format.word) {
			return false
		}
	}
	return true
}

func (c *checker) numberRules(n *schemaNode, path string, f float64) bool {
	if n.Minimum != nil && f < *n.Minimum {
		if !c.failf(path, "must be at least %s", fmtNum(*n.Minimum)) {
			return false
		}
	}
	if n.Maximum != nil && f > *n.Maximum {
		if !c.failf(path, "must be at most %s", fmtNum(*n.Maximum)) {
			return false
		}
	}
	if n.exMin != nil && f <= *n.exMin {
		if !c.failf(path, "must be greater than %s", fmtNum(*n.exMin)) {
			return false
		}
	}
	if n.exMax != nil && f >= *n.exMax {
		if !c.failf(path, "must be less than %s", fmtNum(*n.exMax)) {
			return false
		}
	}
	if m := n.MultipleOf; m != nil {
		q := f / *m
		if math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			if !c.failf(path, "must be a multiple of %s", fmtNum(*m)) {
				return false
			}
		}
	}
	return true
}

// matchAny reports whether the value that starts at start and ends at c.i
// equals one of vals. Scalars are compared without decoding; objects and
// arrays are decoded.
func (c *checker) matchAny(vals []any, start int, str []byte, num float64, isNum bool) bool {
	first := c.data[start]
	var decoded any
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			if first == '"' && string(str) == x {
				return true
			}
		case float64:
			if isNum && num == x {
				return true
			}
		case bool:
			if (first == 't') == x && (first == 't' || first == 'f') {
				return true
			}
		case nil:
			if first == 'n' {
				return true
			}
		default:
			if first != '{' && first != '[' {
				continue
			}
			if decoded == nil {
				var err error
				if decoded, err = decodeValue(c.data[start:c.i]); err != nil {
					return false
				}
			}
			if jsonEqual(decoded, x) {
				return true
			}
		}
	}
	return false
}

// combinators checks allOf, anyOf, oneOf and not on the value raw.
func (c *checker) combinators(n *schemaNode, path string, raw []byte) bool {
	fits := func(s *schemaNode) bool {
		sub := checker{data: raw}
		return sub.value(s, "", false) && !sub.failed
	}
	for _, s := range n.AllOf {
		if !fits(s) {
			if c.errs == nil {
				c.failed = true
				return false
			}
			// Report why, with this value's path.
			sub := checker{data: raw, errs: c.errs}
			sub.value(s, path, false)
			return true
		}
	}
	if len(n.AnyOf) > 0 && !slicesAny(n.AnyOf, fits) {
		if !c.noAlternative(n.AnyOf, path, raw) {
			return false
		}
	}
	if len(n.OneOf) > 0 {
		matches := 0
		for _, s := range n.OneOf {
			if fits(s) {
				matches++
			}
		}
		switch {
		case matches == 0:
			if !c.noAlternative(n.OneOf, path, raw) {
				return false
			}
		case matches > 1:
			if !c.failf(path, "matches more than one of its %d allowed forms; it must match exactly one", len(n.OneOf)) {
				return false
			}
		}
	}
	if n.Not != nil && fits(n.Not) {
		if !c.failf(path, "must not be %s", describeAlternatives([]*schemaNode{n.Not})) {
			return false
		}
	}
	return true
}

// noAlternative reports a value that fits none of list. When only one
// alternative takes values of its type (as for a nullable field), its own
// errors say best what is wrong.
func (c *checker) noAlternative(list []*schemaNode, path string, raw []byte) bool {
	if c.errs == nil {
		c.failed = true
		return false
	}
	var only *schemaNode
	for _, s := range list {
		if s.takes(raw[0]) {
			if only != nil {
				only = nil
				break
			}
			only = s
		}
	}
	if only != nil && only.types != 0 {
		before := len(*c.errs)
		sub := checker{data: raw, errs: c.errs}
		sub.value(only, path, false)
		if len(*c.errs) > before {
			return true
		}
	}
	return c.failf(path, "must be %s", describeAlternatives(list))
}

// takes reports whether the schema's type admits a value starting with b.
func (n *schemaNode) takes(b byte) bool {
	if n.types == 0 {
		return true
	}
	switch b {
	case '{':
		return n.types&tObject != 0
	case '[':
		return n.types&tArray != 0
	case '"':
		return n.types&tString != 0
	case 't', 'f':
		return n.types&tBoolean != 0
	case 'n':
		return n.types&tNull != 0
	}
	return n.types&(tNumber|tInteger) != 0
}

func slicesAny(list []*schemaNode, f func(*schemaNode) bool) bool {
	for _, s := range list {
		if f(s) {
			return true
		}
	}
	return false
}

// describeAlternatives names schemas for an error message: by their
// constant, enum or type where they have one.
func describeAlternatives(list []*schemaNode) string {
	words := make([]string, 0, len(list))
	for _, s := range list {
		switch {
		case s.hasConst:
			words = append(words, string(s.Const))
		case len(s.Enum) > 0:
			words = append(words, "one of "+listValues(s.Enum))
		case s.types != 0:
			var w []string
			for _, tn := range typeNames {
				if s.types&tn.bit != 0 {
					w = append(w, tn.word)
				}
			}
			words = append(words, strings.Join(w, " or "))
		default:
			return fmt.Sprintf("one of the %d allowed forms", len(list))
		}
	}
	return strings.Join(words, " or ")
}

func listValues(vals []json.RawMessage) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// jsonEqual compares two values decoded by encoding/json.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// skip scans over one value.
func (c *checker) skip() bool {
	if c.i >= len(c.data) {
		return false
	}
	switch c.data[c.i] {
	case '{', '[':
		depth := 0
		for c.i < len(c.data) {
			switch c.data[c.i] {
			case '"':
				if _, ok := c.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					c.i++
					return true
				}
			}
			c.i++
		}
		return false
	case '"':
		_, ok := c.str()
		return ok
	default:
		return c.literal()
	}
}

// literal scans a number, true, false or null.
func (c *checker) literal() bool {
	start := c.i
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return c.i > start
		}
		c.i++
	}
	return c.i > start
}

// str scans a string starting at the quote at c.i, leaving c.i after the
// closing quote.
func (c *checker) str() (escaped, ok bool) {
	if c.i >= len(c.data) || c.data[c.i] != '"' {
		return false, false
	}
	c.i++
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case '\\':
			escaped = true
			c.i += 2
			continue
		case '"':
			c.i++
			return escaped, true
		}
		c.i++
	}
	return escaped, false
}

// formatCheck is a "format" the decoder enforces.
type formatCheck struct {
	word  string // what the value must be, for the error message
	valid func(string) bool
}

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hostnameRE = regexp.MustCompile(`^(?i)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

// formats are the JSON Schema formats the decoder checks. NewTool leaves
// any other format out of the reflected schema; in a hand-written schema it
// is an annotation only.
var formats = map[string]*formatCheck{
	"date-time": {"a date-time in RFC 3339 form (like 2006-01-02T15:04:05Z)", func(s string) bool {
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	}},
	"date": {"a date in the form YYYY-MM-DD", func(s string) bool {
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	}},
	"time": {"a time in RFC 3339 form (like 15:04:05Z)", func(s string) bool {
		_, err := time.Parse("15:04:05Z07:00", s)
		if err != nil {
			_, err = time.Parse("15:04:05.999999999Z07:00", s)
		}
		return err == nil
	}},
	"email": {"a valid email address", func(s string) bool {
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	}},
	"uri": {"an absolute URI (like https://example.com/x)", func(s string) bool {
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	}},
	"uri-reference": {"a URI reference", func(s string) bool {
		_, err := url.Parse(s)
		return err == nil
	}},
	"uuid": {"a UUID (like 123e4567-e89b-12d3-a456-426614174000)", uuidRE.MatchString},
	"ipv4": {"an IPv4 address", func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	}},
	"ipv6": {"an IPv6 address", func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6()
	}},
	"hostname": {"a host name", func(s string) bool {
		return len(s) <= 253 && hostnameRE.MatchString(s)
	}},
}
