package stacktest

import (
	"maps"
	"testing"
)

// TestParseDescribe reads consumer-groups --describe as each release prints it: with a GROUP
// column (2.2 and later) and without (2.1), skipping partitions without a commit and other
// groups' lines.
func TestParseDescribe(t *testing.T) {
	cases := []struct {
		name, out string
		want      map[string]int64
	}{
		{"3.9", `
Consumer group 'g' has no active members.

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
g               t               0          2               10              8               -               -               -
g               t               1          -               10              -               -               -               -
other           t               2          5               10              5               -               -               -
`, map[string]int64{"t/0": 2}},
		{"2.1", `
Consumer group 'g' has no active members.

TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
t               0          2               10              8               -               -               -
t               2          10              10              0               -               -               -
`, map[string]int64{"t/0": 2, "t/2": 10}},
	}
	for _, c := range cases {
		got, err := ParseDescribe(c.out, "g")
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
