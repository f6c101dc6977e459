package mm2

import (
	"fmt"
	"strings"
)

// The replication policies MirrorMaker 2 ships (replication.policy.class).
const (
	// PolicyDefault is DefaultReplicationPolicy: the target names source topic t
	// "<source alias><separator>t" (separator "." unless replication.policy.separator says).
	PolicyDefault = "default"
	// PolicyIdentity is IdentityReplicationPolicy: the target keeps the source's names.
	PolicyIdentity = "identity"
)

// Policy names the target's replica of a source topic, as the replication policy MirrorMaker
// 2 runs with does.
type Policy struct {
	Name        string // PolicyDefault or PolicyIdentity
	SourceAlias string // the source cluster's alias in MirrorMaker 2's configuration
	Separator   string // replication.policy.separator; "" means "."
}

// Validate refuses a policy MirrorMaker 2 would not have run with.
func (p Policy) Validate() error {
	switch p.Name {
	case PolicyDefault:
		if p.SourceAlias == "" {
			return fmt.Errorf("the default replication policy names the target's topics after the source alias: it is empty")
		}
	case PolicyIdentity:
	default:
		return fmt.Errorf("replication policy %q: expected %s or %s", p.Name, PolicyDefault, PolicyIdentity)
	}
	return nil
}

func (p Policy) prefix() string {
	if p.Name == PolicyIdentity {
		return ""
	}
	sep := p.Separator
	if sep == "" {
		sep = "."
	}
	return p.SourceAlias + sep
}

// Topic is the target's name for source topic t.
func (p Policy) Topic(t string) string { return p.prefix() + t }

// Source is the source topic the target topic replicates, false when the policy gives no
// source topic that name.
func (p Policy) Source(target string) (string, bool) {
	t, ok := strings.CutPrefix(target, p.prefix())
	return t, ok && t != ""
}
