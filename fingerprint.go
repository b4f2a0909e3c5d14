package agentrt

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"slices"
	"strconv"
)

// A prompt cache pays only while each request begins with the bytes of
// the one before it. So that a person can see which part of a request
// broke it, each planner call's trace record carries a fingerprint of the
// request's parts, in the order they are sent: the system prompt, the
// tools, each message (docs/caching.md, docs/jsonl-format.md). A part is
// hashed once: a message when it first appears, the system prompt and the
// tools when they change.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fingerprint is what the parts of one request hash to.
type fingerprint struct {
	ok         bool // hashed: the system prompt and tools below are set
	system     string
	systemHash uint32
	tools      toolPrint
	msgs       []Message // the messages from the session (the request's, without its tail)
	hashes     []uint32  // of msgs
}

// toolPrint is the fingerprint of a tool list, made once per Agent for
// its own tools.
type toolPrint struct {
	specs  []ToolSpec
	hash   uint32   // of them all
	hashes []uint32 // of each
}

func printTools(specs []ToolSpec) toolPrint {
	t := toolPrint{specs: specs, hashes: make([]uint32, len(specs))}
	var b []byte
	for i, s := range specs {
		b = append(b[:0], s.Name...)
		b = append(b, 0)
		b = append(b, s.Description...)
		b = append(b, 0)
		b = append(b, s.InputSchema...)
		if s.ReadOnly {
			b = append(b, 1)
		}
		t.hashes[i] = crc32.Checksum(b, castagnoli)
		t.hash = crc32.Update(t.hash, castagnoli, b)
	}
	return t
}

// fingerprints is the fingerprint state of a run's trace: the last
// recorded call's, and the call in progress.
type fingerprints struct {
	prev, cur  fingerprint
	from       int      // cur.hashes[from:] differ from prev's, or are new
	tail       []uint32 // the hashes of the request's messages after cur.msgs
	newTools   bool     // cur.toolHashes differ from prev's
	changed    [3]int   // the BeforePlan hook that changed the system, tools or messages, +1; 0 for none
	compaction bool     // the messages are the Compressor's view
	taken      bool     // cur is the call in progress's
	buf        []byte   // the bytes being hashed
}

// take fingerprints req, whose messages are view (the history, or the
// Compressor's view of it) followed by a tail only this request has: a
// hook's or the runtime's additions after the cached prefix. agent is the
// fingerprint of the Agent's tools.
func (f *fingerprints) take(req *ModelRequest, view []Message, agent toolPrint) {
	p, c := &f.prev, &f.cur
	c.ok, f.taken = true, true
	c.system, c.systemHash = req.System, p.systemHash
	if !p.ok || req.System != p.system {
		f.buf = append(f.buf[:0], req.System...)
		c.systemHash = crc32.Checksum(f.buf, castagnoli)
	}
	c.tools, f.newTools = p.tools, false
	if !p.ok || !sameSlice(req.Tools, p.tools.specs) {
		c.tools, f.newTools = agent, true
		if !sameSlice(req.Tools, agent.specs) { // a hook's tools
			c.tools = printTools(req.Tools)
		}
	}

	msgs := req.Messages
	f.tail = f.tail[:0]
	if n := len(view); len(msgs) > n && same(msgs, view) == n {
		for i := n; i < len(msgs); i++ {
			f.tail = append(f.tail, f.message(&msgs[i]))
		}
		msgs = msgs[:n]
	}
	// The messages the previous request had are kept as they were, as a
	// rule: only those after them are hashed.
	k := same(msgs, p.msgs)
	f.from = k
	if k == len(p.msgs) {
		c.hashes = slices.Grow(p.hashes[:k], len(msgs)-k+8) // and the next turns'
	} else {
		c.hashes = append(make([]uint32, 0, len(msgs)), p.hashes[:k]...)
	}
	for i := k; i < len(msgs); i++ {
		h := f.message(&msgs[i])
		if i == f.from && i < len(p.hashes) && h == p.hashes[i] {
			f.from++ // rebuilt, but the same bytes
		}
		c.hashes = append(c.hashes, h)
	}
	c.msgs = msgs
}

// changedBy notes that hook i changed the request's system prompt, tools
// or messages.
func (f *fingerprints) changedBy(i int, system, tools, msgs bool) {
	for k, changed := range [...]bool{system, tools, msgs} {
		if changed {
			f.changed[k] = i + 1
		}
	}
}

// commit makes the call in progress the one the next is compared with.
func (f *fingerprints) commit() {
	f.prev = f.cur
	f.changed, f.compaction, f.taken = [3]int{}, false, false
}

// message returns the hash of the bytes of m a provider sends.
func (f *fingerprints) message(m *Message) uint32 {
	b := append(f.buf[:0], m.Role...)
	b = append(b, 0)
	b = append(b, m.Content...)
	b = append(b, 0)
	b = append(b, m.ToolUseID...)
	if m.IsError {
		b = append(b, 1)
	}
	for i := range m.Blocks {
		k := &m.Blocks[i]
		for _, s := range [...]string{string(k.Type), k.Text, k.ID, k.Name, k.MediaType, k.URL, k.Provider} {
			b = append(b, 0)
			b = append(b, s...)
		}
		b = append(b, 0)
		b = append(b, k.Input...)
		b = append(b, 0)
		b = append(b, k.Data...)
		b = append(b, 0)
		b = append(b, k.Signature...)
		if k.Redacted {
			b = append(b, 1)
		}
	}
	f.buf = b
	return crc32.Checksum(b, castagnoli)
}

// same returns how many of the first messages of a are those of b: the
// same values, whether or not the slice was copied (a growing history or a
// hook copies the slice, not the messages). A message rebuilt with the
// same bytes is not the same here; take compares its hash.
func same(a, b []Message) int {
	n := min(len(a), len(b))
	if n == 0 || &a[0] == &b[0] {
		return n
	}
	for i := range n {
		x, y := &a[i], &b[i]
		if x.Role != y.Role || x.Content != y.Content || x.ToolUseID != y.ToolUseID || x.IsError != y.IsError ||
			len(x.Blocks) != len(y.Blocks) || len(x.Blocks) > 0 && &x.Blocks[0] != &y.Blocks[0] {
			return i
		}
	}
	return n
}

// appendPrefix appends the call in progress's fingerprint to a model_call
// record: "prefix" in docs/jsonl-format.md.
func (f *fingerprints) appendPrefix(b []byte) []byte {
	c := &f.cur
	b = append(b, `,"prefix":{"system":"`...)
	b = appendHex(b, c.systemHash)
	b = append(b, `","tools":"`...)
	b = appendHex(b, c.tools.hash)
	b = append(b, '"')
	if f.newTools {
		b = append(b, `,"tool_list":[`...)
		for i, t := range c.tools.specs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, t.Name)
			b = append(b, `,"hash":"`...)
			b = appendHex(b, c.tools.hashes[i])
			b = append(b, `"}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(len(c.msgs)+len(f.tail)), 10)
	b = append(b, `,"from":`...)
	b = strconv.AppendInt(b, int64(f.from), 10)
	b = append(b, `,"hashes":[`...)
	sep := false
	for _, hashes := range [...][]uint32{c.hashes[f.from:], f.tail} {
		for _, h := range hashes {
			if sep {
				b = append(b, ',')
			}
			sep = true
			b = append(b, '"')
			b = appendHex(b, h)
			b = append(b, '"')
		}
	}
	b = append(b, ']')
	if len(f.tail) > 0 {
		b = append(b, `,"tail":`...)
		b = strconv.AppendInt(b, int64(len(f.tail)), 10)
	}
	if f.changed != [3]int{} || f.compaction {
		b = append(b, `,"changed":{`...)
		sep := false
		for i, part := range [...]string{"system", "tools", "messages"} {
			by := ""
			switch {
			case f.changed[i] > 0:
				by = "hook " + strconv.Itoa(f.changed[i]-1)
			case i == 2 && f.compaction:
				by = "compaction"
			default:
				continue
			}
			if sep {
				b = append(b, ',')
			}
			sep = true
			b = append(b, '"')
			b = append(b, part...)
			b = append(b, `":"`...)
			b = append(b, by...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendHex appends h as 8 lowercase hex digits.
func appendHex(b []byte, h uint32) []byte {
	var x [4]byte
	binary.BigEndian.PutUint32(x[:], h)
	return hex.AppendEncode(b, x[:])
}
