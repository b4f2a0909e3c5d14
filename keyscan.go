package agentrt

// knownKeys reports whether every key of every object in raw (which must be
// valid JSON) is a property of the matching schema node wherever the schema
// closes the object (additionalProperties false). It does not allocate. A
// false answer sends the input down the slow path, which names the field.
func (n *schemaNode) knownKeys(raw []byte) bool {
	s := keyScanner{data: raw}
	s.skipSpace()
	return s.value(n) && s.ok
}

type keyScanner struct {
	data []byte
	i    int
	ok   bool
}

func (s *keyScanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at s.i; it returns false on an unknown key or
// anything unexpected.
func (s *keyScanner) value(n *schemaNode) bool {
	s.ok = true
	if s.i >= len(s.data) {
		return false
	}
	switch s.data[s.i] {
	case '{':
		s.i++
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == '}' {
			s.i++
			return true
		}
		for {
			start := s.i + 1
			escaped, ok := s.str()
			if !ok || escaped {
				return false // escaped keys are rare: let the slow path judge
			}
			key := s.data[start : s.i-1]
			var child *schemaNode
			if n != nil {
				child = n.Properties[string(key)]
				if child == nil && n.closed {
					return false
				}
			}
			s.skipSpace()
			if s.i >= len(s.data) || s.data[s.i] != ':' {
				return false
			}
			s.i++
			s.skipSpace()
			if !s.value(child) {
				return false
			}
			s.skipSpace()
			if s.i >= len(s.data) {
				return false
			}
			switch s.data[s.i] {
			case ',':
				s.i++
				s.skipSpace()
			case '}':
				s.i++
				return true
			default:
				return false
			}
		}
	case '[':
		s.i++
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == ']' {
			s.i++
			return true
		}
		var items *schemaNode
		if n != nil {
			items = n.Items
		}
		for {
			if !s.value(items) {
				return false
			}
			s.skipSpace()
			if s.i >= len(s.data) {
				return false
			}
			switch s.data[s.i] {
			case ',':
				s.i++
				s.skipSpace()
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	default: // number, true, false, null
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return true
			}
			s.i++
		}
		return true
	}
}

// str scans a string starting at the quote at s.i, leaving s.i after the
// closing quote.
func (s *keyScanner) str() (escaped, ok bool) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return false, false
	}
	s.i++
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			s.i++
			return escaped, true
		}
		s.i++
	}
	return escaped, false
}
