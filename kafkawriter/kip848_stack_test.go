package kafkawriter

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// A Kafka 4.x consumer using the new protocol (KIP-848, group.protocol=consumer) is invisible
// to DescribeGroups v0-v5, which reports such a group as Dead. Groups must still see it active,
// and an admin commit must be refused as group-active. The member is Kafka's own console
// consumer, since sarama speaks only the classic protocol.
func TestKIP848ConsumerGroupIsActive(t *testing.T) {
	c, s := openStack(t)
	if s.Profile != "kraft" {
		t.Skip("the new consumer protocol needs the KRaft (Kafka 4.x) stack")
	}
	topic := newTopic(t, c, 2)
	group := stacktest.Name(t, "g848")
	before := []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 1}, {TopicPartition: tp(topic, 1), Offset: 2}}
	mustCommit(t, c, group, before)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.KafkaTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
			"--bootstrap-server", s.Kafka, "--topic", topic, "--group", group,
			"--consumer-property", "group.protocol=consumer", "--timeout-ms", "120000")
		done <- err
	}()
	t.Cleanup(func() { cancel(); <-done })

	var st migrate.GroupState
	deadline := time.Now().Add(90 * time.Second)
	for {
		states, err := c.Groups(testCtx(t, time.Minute), []string{group})
		if err != nil {
			t.Fatal(err)
		}
		st = states[group]
		if st.Members > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("console consumer exited before joining: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("KIP-848 member never seen; last state %+v", st)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("KIP-848 group state %q members %d", st.State, st.Members)
	if !st.Active() {
		t.Errorf("state %+v not active", st)
	}
	// The poll's listing sees it too (ListGroups lists every group type).
	active, err := c.ActiveGroups(testCtx(t, time.Minute), []string{group})
	if err != nil || !active[group].Active() {
		t.Errorf("ActiveGroups = %+v, %v; want the KIP-848 group active", active, err)
	}
	// The trap itself: the classic DescribeGroups alone does not see the member.
	b, err := c.coordinator(testCtx(t, time.Minute), group, false)
	if err != nil {
		t.Fatal(err)
	}
	classic, err := b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{group}, Version: describeGroupsVersion(c.Version())})
	if err != nil || len(classic.Groups) != 1 {
		t.Fatalf("classic describe: %v, %v", classic, err)
	}
	// Kafka 4.1.1 answers v5 with state Dead, no error, no members. If this starts failing, the
	// broker changed and the ConsumerGroupDescribe fallback may no longer be needed.
	if d := classic.Groups[0]; d.State != "Dead" || len(d.Members) != 0 {
		t.Errorf("classic DescribeGroups v%d sees the KIP-848 group: state %q err %v members %d", classic.Version, d.State, d.Err, len(d.Members))
	}

	res, err := c.Commit(testCtx(t, time.Minute), group, []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 9}})
	if err != nil {
		t.Fatalf("group error %v, want a per-partition error", err)
	}
	if !IsGroupActive(res[0].Err) {
		t.Errorf("admin commit into a live KIP-848 group: %v, want a group-active error", res[0].Err)
	}
	t.Logf("refused: %v", res[0].Err)
	assertCommitted(t, c, group, before)
}
