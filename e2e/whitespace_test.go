package e2e_test

import (
	"strings"
	"testing"
)

// TestOffsetWhitespaceNoted: an offset znode whose data has whitespace around the number (as a
// shell's echo leaves it) is read as the number, and plan says so in the entry's reason.
func TestOffsetWhitespaceNoted(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the real stack")
	}
	e := newEnv(t)
	topic := e.topic(100)
	g := e.group()
	e.rawZnode(g, topic, 0, " 42\n")
	doc := decodeJSON[planDoc](t, e.mustCLI(0, "migrate", "plan", "-o", "json"))
	en := doc.groupPlan(t, g).Entries[0]
	if en.Class != "zk-only" || en.Target != 42 ||
		!strings.HasSuffix(en.Reason, `; znode data " 42\n" has whitespace around the offset: read as 42`) {
		t.Errorf("entry %+v, want zk-only, target 42, the reason ending with the whitespace note", en)
	}
}
