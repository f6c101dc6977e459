package migrate

// Summary counts a plan: what it covers and what copy would do.
type Summary struct {
	Groups      int            `json:"groups"`
	GatedGroups int            `json:"gated_groups"`
	Partitions  int            `json:"partitions"`
	ByClass     map[Class]int  `json:"by_class"`
	ByAction    map[Action]int `json:"by_action"`
	// Suspect counts the entries flagged as suspect (flagged, not blocked).
	Suspect int `json:"suspect"`
}

// Summary counts the plan's groups, entries, classes and actions. Every known class and
// action has a key, zero or not, so a report always shows the same rows.
func (p Plan) Summary() Summary {
	s := NewSummary()
	for _, g := range p.Groups {
		s.Add(g)
	}
	return s
}

// NewSummary returns the summary of no groups, with every class and action at zero.
func NewSummary() Summary {
	s := Summary{ByClass: map[Class]int{}, ByAction: map[Action]int{}}
	for _, c := range Classes() {
		s.ByClass[c] = 0
	}
	for _, a := range Actions() {
		s.ByAction[a] = 0
	}
	return s
}

// Add counts one more group: a streamed plan is summarized as it goes.
func (s *Summary) Add(g GroupPlan) {
	s.Groups++
	if len(g.Gates) > 0 {
		s.GatedGroups++
	}
	for _, e := range g.Entries {
		s.Partitions++
		s.ByClass[e.Class]++
		s.ByAction[e.Action]++
		if e.Suspect != "" {
			s.Suspect++
		}
	}
}

// Safe reports whether copy may run the plan: no entry is blocked.
func (p Plan) Safe() bool {
	for _, g := range p.Groups {
		for _, e := range g.Entries {
			if e.Action == ActionBlock {
				return false
			}
		}
	}
	return true
}

// GroupWrites is what copy writes for one group.
type GroupWrites struct {
	Group   string
	Entries []Entry // the entries with action write, in plan order
}

// Writes returns, per group in plan order, the entries to write; groups with nothing to write
// are left out.
func (p Plan) Writes() []GroupWrites {
	var out []GroupWrites
	for _, g := range p.Groups {
		var w []Entry
		for _, e := range g.Entries {
			if e.Action == ActionWrite {
				w = append(w, e)
			}
		}
		if len(w) > 0 {
			out = append(out, GroupWrites{Group: g.Group, Entries: w})
		}
	}
	return out
}

// Commits turns the writes into commits; metadata gives each its provenance string (nil: "").
func (w GroupWrites) Commits(metadata func(Entry) string) []Commit {
	out := make([]Commit, 0, len(w.Entries))
	for _, e := range w.Entries {
		c := Commit{TopicPartition: TopicPartition{Topic: e.Topic, Partition: e.Partition}, Offset: e.Target}
		if metadata != nil {
			c.Metadata = metadata(e)
		}
		out = append(out, c)
	}
	return out
}

// Classes returns every class, in the order reports list them.
func Classes() []Class {
	return []Class{ClassEqual, ClassZKOnly, ClassZKAhead, ClassKafkaAhead, ClassBelowLogStart,
		ClassAboveLogEnd, ClassTopicMissing, ClassPartitionMissing, ClassInvalidZnode, ClassNoSync, ClassBelowFirstSync, ClassReplicationBehind}
}

// Actions returns every action, in the order reports list them.
func Actions() []Action { return []Action{ActionWrite, ActionSkip, ActionBlock} }

// Gates returns every gate, in the order Build sets them.
func Gates() []Gate { return []Gate{GateLegacyConsumersAlive, GateKafkaGroupActive} }
