package mirror

import (
	"maps"
	"slices"
	"testing"
)

// TestHotGroups: the poll reads the commits of the groups Kafka consumers own or share, and of
// every group under Reverse, but never of a group not synced yet: its first sync reads Kafka
// anyway, and at start the selection is every group (at a million offsets, a fetch of all of
// them every poll interval until the first sync ends).
func TestHotGroups(t *testing.T) {
	tests := []struct {
		name    string
		reverse bool
		want    []string
	}{
		{"forward", false, []string{"active", "kafka-primary", "switching"}},
		{"reverse", true, []string{"active", "idle", "kafka-primary", "switching"}},
	}
	for _, tt := range tests {
		l := &loop{m: &Mirror{Reverse: tt.reverse},
			groups: []string{"active", "idle", "kafka-primary", "switching", "unsynced"},
			phase: map[string]Phase{"active": PhaseZKPrimary, "idle": PhaseZKPrimary,
				"kafka-primary": PhaseKafkaPrimary, "switching": PhaseSwitching},
			kafka: map[string]kafkaSeen{"active": {state: "Stable", members: 1}, "idle": {state: "Empty"}}}
		if got := slices.Sorted(maps.Keys(l.hotGroups())); !slices.Equal(got, tt.want) {
			t.Errorf("%s: hot groups %v, want %v", tt.name, got, tt.want)
		}
	}
}
