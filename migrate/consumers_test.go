package migrate_test

import (
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestConsumers(t *testing.T) {
	const c1 = "billing_host1-1700000000000-1a2b3c4d" // a Scala consumer id: hyphens of its own
	cases := []struct {
		name string
		live []string
		want []string
	}{
		{"none", nil, []string{}},
		{"one consumer owning four partitions is one", []string{
			"ids/" + c1, "owners/t/0=" + c1 + "-0", "owners/t/1=" + c1 + "-0", "owners/t/2=" + c1 + "-1", "owners/u/0=" + c1 + "-12",
		}, []string{c1}},
		{"owners only: the consumer from the data", []string{"owners/t/0=c2-0", "owners/t/1=c2-3"}, []string{"c2"}},
		{"two consumers", []string{"ids/c1", "ids/c2", "owners/t/0=c1-0", "owners/t/1=c2-0"}, []string{"c1", "c2"}},
		{"owner without a thread suffix", []string{"owners/t/0=odd", "owners/t/1=odd-x"}, []string{"odd", "odd-x"}},
		{"empty owner data: the registration", []string{"owners/t/0="}, []string{"owners/t/0="}},
		{"denied registrations stand for one each", []string{"ids: permission denied", "owners/t/0: permission denied", "ids/c1"},
			[]string{"c1", "ids: permission denied", "owners/t/0: permission denied"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := migrate.Consumers(tc.live); !slices.Equal(got, tc.want) {
				t.Errorf("Consumers(%q) = %q, want %q", tc.live, got, tc.want)
			}
		})
	}
}

func TestGateReasonCountsConsumersOncePerGroup(t *testing.T) {
	gp := migrate.GroupPlan{Group: "g", KafkaState: "Stable", KafkaMembers: 1,
		LiveConsumers: []string{"ids/a", "owners/t/0=a-0", "owners/t/1=a-0", "owners/t/2=a-0", "owners/t/3=a-0", "ids/b", "ids/c", "ids/d", "ids/e"},
		Gates:         []migrate.Gate{migrate.GateLegacyConsumersAlive, migrate.GateKafkaGroupActive}}
	want := "legacy-consumers-alive (5 live legacy consumers: a, b, c and 2 more) and kafka-group-active (Kafka group Stable, 1 member)"
	if got := migrate.GateReason(gp); got != want {
		t.Errorf("GateReason =\n %q, want\n %q", got, want)
	}
	if got := migrate.GateReason(migrate.GroupPlan{Group: "g"}); got != "" {
		t.Errorf("GateReason of an ungated group = %q, want empty", got)
	}
}
