package copier

import (
	"fmt"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// GroupDrift lists how one group present in both a saved and a fresh plan changed, one line
// per group or partition. A Kafka commit that now equals the planned target is not drift: it is
// an earlier (interrupted) copy of this very plan, so a re-run resumes instead of refusing.
func GroupDrift(sg, fg migrate.GroupPlan) []string {
	var out []string
	if fmt.Sprint(sg.Gates) != fmt.Sprint(fg.Gates) {
		out = append(out, fmt.Sprintf("group %q: gates %v, planned %v", sg.Group, fg.Gates, sg.Gates))
	}
	return append(out, entryDrift(sg, fg)...)
}

// DriftGone and DriftNew are the drift lines for a group in only one of the two plans.
func DriftGone(group string) string { return fmt.Sprintf("group %q: gone from ZooKeeper", group) }
func DriftNew(group string) string  { return fmt.Sprintf("group %q: new since the plan", group) }

func entryDrift(sg, fg migrate.GroupPlan) []string {
	var out []string
	now := map[migrate.TopicPartition]migrate.Entry{}
	for _, e := range fg.Entries {
		now[migrate.TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e
	}
	for _, se := range sg.Entries {
		tp := migrate.TopicPartition{Topic: se.Topic, Partition: se.Partition}
		fe, ok := now[tp]
		if !ok {
			out = append(out, fmt.Sprintf("group %q %s: ZooKeeper offset gone", sg.Group, tp))
			continue
		}
		delete(now, tp)
		resumed := se.Action == migrate.ActionWrite && fe.Kafka != nil && *fe.Kafka == se.Target
		switch {
		case !sameOffset(se.ZK, fe.ZK):
			out = append(out, fmt.Sprintf("group %q %s: ZooKeeper offset %s, planned %s", sg.Group, tp, show(fe.ZK), show(se.ZK)))
		case !resumed && !sameOffset(se.Kafka, fe.Kafka):
			out = append(out, fmt.Sprintf("group %q %s: Kafka offset %s, planned %s", sg.Group, tp, show(fe.Kafka), show(se.Kafka)))
		case !resumed && (se.Class != fe.Class || se.Action != fe.Action || se.Target != fe.Target):
			out = append(out, fmt.Sprintf("group %q %s: now %s/%s, planned %s/%s", sg.Group, tp, fe.Class, fe.Action, se.Class, se.Action))
		}
	}
	for _, fe := range fg.Entries {
		if tp := (migrate.TopicPartition{Topic: fe.Topic, Partition: fe.Partition}); now[tp].Topic != "" {
			out = append(out, fmt.Sprintf("group %q %s: new since the plan", sg.Group, tp))
		}
	}
	return out
}

func sameOffset(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}
