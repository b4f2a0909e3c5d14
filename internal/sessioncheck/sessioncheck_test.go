package sessioncheck

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	user := Msg{Role: "user"}
	text := Msg{Role: "assistant"}
	call := func(ids ...string) Msg { return Msg{Role: "assistant", Uses: ids} }
	res := func(id string) Msg { return Msg{Role: "tool", ToolUseID: id} }
	for _, tc := range []struct {
		name string
		msgs []Msg
		want string // "" for a good session
	}{
		{"empty", nil, ""},
		{"answered, any order", []Msg{user, call("a", "b"), res("b"), res("a"), text}, ""},
		{"open at the end", []Msg{user, call("a", "b"), res("a")}, ""},
		{"two results", []Msg{user, call("a"), res("a"), res("a")}, "a second result"},
		{"orphan after a later turn", []Msg{user, call("a"), res("a"), text, res("a")}, "orphaned result"},
		{"orphan without a call", []Msg{user, res("x")}, "orphaned result"},
		{"out of place", []Msg{user, call("a"), user, res("a")}, "out of place"},
		{"duplicate id", []Msg{call("a", "a")}, "twice"},
	} {
		err := Check(tc.msgs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
