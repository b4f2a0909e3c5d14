package timeline

import (
	"slices"
	"strconv"
	"strings"
)

// Prefix is the fingerprint of a model call's request, as its model_call
// record gives it ("prefix", docs/jsonl-format.md): a CRC-32C of each
// part, 8 lowercase hex digits. Hashes lists only the messages from From
// on; the whole list is the previous call's up to From, then Hashes.
type Prefix struct {
	System string `json:"system"`
	Tools  string `json:"tools"`
	// ToolList is each tool's name and hash, in order; nil when the
	// record left it out (the same as the previous call's).
	ToolList []ToolHash `json:"tool_list,omitempty"`
	Messages int        `json:"messages"`
	From     int        `json:"from"`
	Hashes   []string   `json:"hashes"`
	// Tail is how many trailing messages were added for this call only
	// (a hook's recalled memory, a runtime note): not in the session.
	Tail int `json:"tail,omitempty"`
	// Changed says what made a part differ from what the runtime builds
	// from the Agent and the session: "hook N", "compaction" or
	// "runtime", by part ("system", "tools", "messages").
	Changed map[string]string `json:"changed,omitempty"`
}

// ToolHash is one tool of [Prefix.ToolList].
type ToolHash struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// Parts of a request, in [CacheBreak.Part], in the order a request is
// compared.
const (
	PartModel    = "model"
	PartSystem   = "system"
	PartTools    = "tools"
	PartMessages = "messages"
)

// CacheBreak is the first part of a model call's request that differs
// from the previous call's, which makes the provider's prompt cache miss
// from there on.
type CacheBreak struct {
	// Part is one of the Part constants.
	Part string `json:"part"`
	// Cause says it in words, the same for every renderer: "system prompt
	// changed by hook 1", "tool list changed: grep", "history rewritten at
	// message 4 by compaction", "model changed: a → b".
	Cause string `json:"cause"`
	// Message is the first message that differs (from 0), for
	// PartMessages.
	Message int `json:"message,omitempty"`
	// Tool is the first tool added, removed or changed, for PartTools,
	// when the tool lists tell.
	Tool string `json:"tool,omitempty"`
	// By is what changed the part, when the record says: "hook N",
	// "compaction" or "runtime"; "" when it does not.
	By string `json:"by,omitempty"`
}

// prefixState is the request of the session's last model call with a
// prefix, as far as the fingerprints tell.
type prefixState struct {
	provider, model string
	system, tools   string
	toolList        []ToolHash
	hashes          []string // every message's; nil when not known
	tail            int
	changed         map[string]string
}

// cacheBreak compares call m (at turn t) with the previous call's
// request, and makes m's request the previous one. It returns nil for the
// session's first call, a call that only appended, and whatever the
// fingerprints cannot tell.
func (b *builder) cacheBreak(t *Turn, m *ModelCall) *CacheBreak {
	p := m.Prefix
	prev := b.prefix
	if p == nil {
		b.prefix = nil // the next call has nothing to compare with
		return nil
	}
	// The first message of the previous request's session part (its
	// tail left out) that this one does not repeat, or -1.
	rewrote := -1
	known := prev != nil && prev.hashes != nil && p.From >= 0 && p.From <= len(prev.hashes)
	if known {
		kept := prev.hashes[:len(prev.hashes)-min(max(prev.tail, 0), len(prev.hashes))]
		for i := p.From; i < len(kept); i++ {
			if j := i - p.From; j >= len(p.Hashes) || p.Hashes[j] != kept[i] {
				rewrote = i
				break
			}
		}
	}
	cur := &prefixState{provider: m.Provider, model: m.Model, system: p.System, tools: p.Tools,
		toolList: p.ToolList, tail: p.Tail, changed: p.Changed}
	switch {
	case p.From == 0:
		cur.hashes = slices.Clone(p.Hashes)
	case known:
		// prev is done with: its list grows in place.
		cur.hashes = append(prev.hashes[:p.From], p.Hashes...)
	}
	if cur.toolList == nil && prev != nil {
		cur.toolList = prev.toolList
	}
	b.prefix = cur
	if prev == nil {
		return nil
	}
	if prev.model != "" && m.Model != "" && (prev.model != m.Model || prev.provider != m.Provider) {
		from, to := prev.model, m.Model
		if prev.provider != m.Provider {
			from, to = prev.provider+"/"+from, m.Provider+"/"+to
		}
		return &CacheBreak{Part: PartModel, Cause: "model changed: " + from + " → " + to}
	}
	if cur.system != prev.system {
		by := changedBy(PartSystem, cur, prev)
		return &CacheBreak{Part: PartSystem, Cause: "system prompt changed" + byText(by), By: by}
	}
	if cur.tools != prev.tools {
		by := changedBy(PartTools, cur, prev)
		name := firstToolDiff(prev.toolList, cur.toolList)
		cause := "tool list changed"
		if name != "" {
			cause += ": " + name
		}
		return &CacheBreak{Part: PartTools, Cause: cause + byText(by), Tool: name, By: by}
	}
	if rewrote < 0 {
		return nil
	}
	by := p.Changed[PartMessages]
	if by == "" && t.Compaction != nil {
		by = "compaction"
	}
	return &CacheBreak{Part: PartMessages, Message: rewrote, By: by,
		Cause: "history rewritten at message " + strconv.Itoa(rewrote) + byText(by)}
}

// changedBy is what changed part: the call's own record says, or else the
// previous call's (a hook's change that went away).
func changedBy(part string, cur, prev *prefixState) string {
	if by := cur.changed[part]; by != "" {
		return by
	}
	return prev.changed[part]
}

func byText(by string) string {
	if by == "" {
		return ""
	}
	return " by " + by
}

// firstToolDiff names the first tool added, removed or changed from a to
// b, or "" when the lists do not tell.
func firstToolDiff(a, b []ToolHash) string {
	if a == nil || b == nil {
		return ""
	}
	has := func(l []ToolHash, name string) bool {
		return slices.ContainsFunc(l, func(t ToolHash) bool { return t.Name == name })
	}
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return b[i].Name // added at the end
		case i >= len(b):
			return a[i].Name // removed from the end
		case a[i] == b[i]:
			continue
		case a[i].Name == b[i].Name:
			return b[i].Name // its spec changed
		case !has(a, b[i].Name):
			return b[i].Name // added
		}
		return a[i].Name // removed, or moved
	}
	return ""
}

// validHash reports whether h is 8 lowercase hex digits.
func validHash(h string) bool {
	if len(h) != 8 {
		return false
	}
	return strings.Trim(h, "0123456789abcdef") == ""
}

// validChange reports whether v is a "changed" value: "hook N",
// "compaction" or "runtime".
func validChange(v string) bool {
	if n, ok := strings.CutPrefix(v, "hook "); ok {
		i, err := strconv.Atoi(n)
		return err == nil && i >= 0 && strconv.Itoa(i) == n
	}
	return v == "compaction" || v == "runtime"
}
