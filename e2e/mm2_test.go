package e2e_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// replicationWait bounds how long MirrorMaker 2 may take to find a new topic (its refresh is
// 5 s on the mm2 stack), replicate it and write its offset syncs, on a loaded machine.
const replicationWait = 3 * time.Minute

// TestMirrorMakerTranslation is the first proof of the translation on real MirrorMaker 2: a
// source topic whose records below a point were deleted before replication (so the target's
// offsets differ from the source's), replicated into the target as source.<topic>; the offset
// syncs read with mm2log; every source offset of the partitions translated, and the target's
// own records checked: a consumer resumed at the translated offset reads every source record at
// or after the ZooKeeper offset (nothing skipped), and at most the announced number before it.
func TestMirrorMakerTranslation(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	// records per partition, and the log start each gets before replication.
	records, starts := []int{300, 50}, []int64{100, 20}
	topic := e.unreplicatedStart(records, starts)
	target := st.MM2SourceAlias + "." + topic

	tc := e.targetClient()
	for p, n := range records {
		e.waitTargetEnd(tc, target, int32(p), int64(n)-starts[p])
	}
	syncs := e.waitSyncs(topic, records)

	for p, n := range records {
		part := int32(p)
		got := e.targetRecords(tc, target, part)
		if len(got) == 0 || got[0] != starts[p] {
			t.Fatalf("%s/%d: the target's first record is source offset %v, want %d: replication did not start past the deleted records", target, p, got[:min(1, len(got))], starts[p])
		}
		s := syncs.Syncs[migrate.TopicPartition{Topic: topic, Partition: part}]
		classes := map[mm2.Class]int{}
		var worst, announced int64
		translated := false
		for off := starts[p]; off <= int64(n); off++ {
			tr := s.Translate(off, st.MM2OffsetLagMax)
			classes[tr.Class]++
			// MirrorMaker 2 need not sync the first record it replicates: it keeps one pending
			// sync per partition and a newer one replaces it before it is sent (its
			// OffsetSyncWriter), so the first offsets may lie below the first sync. Only those,
			// and nothing after an offset that translated, may be blocked.
			if tr.Class.Blocked() {
				if tr.Class != mm2.BelowFirstSync || translated {
					t.Errorf("%s/%d: offset %d is %s: %s", topic, p, off, tr.Class, tr.Reason)
				}
				continue
			}
			translated = true
			reread, err := checkResume(got, tr.Target, off, int64(n))
			if err != nil {
				t.Errorf("%s/%d: offset %d translated to %d (%s): %v", topic, p, off, tr.Target, tr.Class, err)
			}
			if reread > tr.MaxReread {
				t.Errorf("%s/%d: offset %d translated to %d re-reads %d records, more than the %d announced", topic, p, off, tr.Target, reread, tr.MaxReread)
			}
			worst, announced = max(worst, reread), max(announced, tr.MaxReread)
		}
		t.Logf("%s/%d: %d syncs; source offsets %d..%d: %v; most records re-read %d (most announced %d)",
			topic, p, s.Len(), starts[p], n, classes, worst, announced)
	}
}

// unreplicatedStart creates a topic named for MirrorMaker 2 to replicate, with records[p]
// records in partition p, and deletes those below starts[p] at once. MirrorMaker 2 may find the
// topic between its creation and the deletion (its refresh runs every few seconds); then the
// target starts at source offset 0, which this test exists to avoid, so the topic is made again
// under a new name, at most three times.
func (e *env) unreplicatedStart(records []int, starts []int64) string {
	e.t.Helper()
	tc := e.targetClient()
	for attempt := 1; ; attempt++ {
		topic := e.namedTopic(e.st.MM2TopicPrefix+stacktest.Name(e.t, "t"), records...)
		for p, off := range starts {
			e.raiseLogStart(topic, int32(p), off)
		}
		target := e.st.MM2SourceAlias + "." + topic
		early := false
		for p := range records {
			e.waitTargetEnd(tc, target, int32(p), int64(records[p])-starts[p])
			if got := e.targetRecords(tc, target, int32(p)); len(got) > 0 && got[0] < starts[p] {
				early = true
			}
		}
		if !early {
			return topic
		}
		if attempt == 3 {
			e.t.Fatalf("MirrorMaker 2 replicated %s from before its deleted records three times out of three", topic)
		}
		e.t.Logf("MirrorMaker 2 found %s before its records were deleted: again with a new topic", topic)
	}
}

// checkResume checks a consumer of the target resumed at target offset at, for a legacy
// consumer whose next source offset is off (of a partition whose source end is end): got maps
// each target offset to its record's source offset. Every source record from off to end must
// be read (none skipped); it returns how many records before off are read again.
func checkResume(got []int64, at, off, end int64) (int64, error) {
	if at < 0 || at > int64(len(got)) {
		return 0, fmt.Errorf("target offset outside the target's log [0, %d]", len(got))
	}
	var reread int64
	next := off
	for _, src := range got[at:] {
		switch {
		case src < off:
			reread++
		case src == next:
			next++
		case src > next:
			return reread, fmt.Errorf("source records %d..%d skipped", next, src-1)
		}
	}
	if next != end {
		return reread, fmt.Errorf("source records %d..%d never read", next, end-1)
	}
	return reread, nil
}

// targetClient is a client of the target cluster, closed at the end of the test.
func (e *env) targetClient() sarama.Client {
	e.t.Helper()
	c, err := sarama.NewClient([]string{e.st.KafkaTarget}, e.saramaConfig())
	if err != nil {
		e.t.Fatalf("target kafka %s: %v", e.st.KafkaTarget, err)
	}
	e.t.Cleanup(func() {
		if err := c.Close(); err != nil {
			e.t.Errorf("close target client: %v", err)
		}
	})
	return c
}

// waitTargetEnd waits until the target's partition holds n records from offset 0.
func (e *env) waitTargetEnd(c sarama.Client, topic string, p int32, n int64) {
	e.t.Helper()
	deadline := time.Now().Add(replicationWait)
	var last string
	for time.Now().Before(deadline) {
		if err := c.RefreshMetadata(topic); err != nil {
			last = err.Error()
		} else if end, err := c.GetOffset(topic, p, sarama.OffsetNewest); err != nil {
			last = err.Error()
		} else if end >= n {
			return
		} else {
			last = fmt.Sprintf("%d records so far", end)
		}
		time.Sleep(500 * time.Millisecond)
	}
	e.t.Fatalf("%s/%d on the target: not %d records within %s (%s); MirrorMaker 2's log: %s", topic, p, n, replicationWait, last, e.st.MM2Log)
}

// targetRecords reads the target partition whole and returns, per target offset, the source
// offset of its record (its value "r<source offset>", as namedTopic writes them).
func (e *env) targetRecords(c sarama.Client, topic string, p int32) []int64 {
	e.t.Helper()
	end, err := c.GetOffset(topic, p, sarama.OffsetNewest)
	if err != nil {
		e.t.Fatal(err)
	}
	cons, err := sarama.NewConsumerFromClient(c)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() {
		if err := cons.Close(); err != nil {
			e.t.Errorf("close consumer: %v", err)
		}
	}()
	pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
	if err != nil {
		e.t.Fatalf("consume %s/%d: %v", topic, p, err)
	}
	defer pc.AsyncClose()
	out := make([]int64, 0, end)
	timeout := time.After(callTimeout)
	for int64(len(out)) < end {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(len(out)) {
				e.t.Fatalf("%s/%d: record at offset %d after %d records: the target's log has a gap", topic, p, m.Offset, len(out))
			}
			src, err := strconv.ParseInt(strings.TrimPrefix(string(m.Value), "r"), 10, 64)
			if err != nil {
				e.t.Fatalf("%s/%d offset %d: value %q is not a test record", topic, p, m.Offset, m.Value)
			}
			out = append(out, src)
		case err := <-pc.Errors():
			e.t.Fatalf("consume %s/%d: %v", topic, p, err)
		case <-timeout:
			e.t.Fatalf("consume %s/%d: %d of %d records within %s", topic, p, len(out), end, callTimeout)
		}
	}
	return out
}

// waitSyncs reads the offset syncs with mm2log until each partition's last record translates
// (MirrorMaker 2 writes them as it replicates, behind the records).
func (e *env) waitSyncs(topic string, records []int) mm2log.Log {
	e.t.Helper()
	return e.waitSyncsIn(e.mm2Reader(e.st.Kafka, "source"), mm2log.Topic(e.st.MM2TargetAlias), topic, records, e.st.MM2OffsetLagMax)
}

// waitSyncsIn is waitSyncs reading syncsTopic through r, under offset.lag.max lagMax.
func (e *env) waitSyncsIn(r *mm2log.Reader, syncsTopic, topic string, records []int, lagMax int64) mm2log.Log {
	e.t.Helper()
	deadline := time.Now().Add(replicationWait)
	for {
		got, err := r.Read(e.ctx(), syncsTopic)
		var behind []string
		switch {
		case errors.Is(err, mm2log.ErrNoTopic) && time.Now().Before(deadline):
			// A MirrorMaker 2 just started makes the topic with its first sync.
			time.Sleep(time.Second)
			continue
		case err != nil:
			e.t.Fatal(err)
		}
		for p, n := range records {
			s := got.Syncs[migrate.TopicPartition{Topic: topic, Partition: int32(p)}]
			if tr := s.Translate(int64(n)-1, lagMax); tr.Class.Blocked() {
				behind = append(behind, fmt.Sprintf("partition %d: %s", p, tr.Reason))
			}
		}
		if len(behind) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("offset syncs of %s not up to its end within %s: %s", topic, replicationWait, strings.Join(behind, "; "))
		}
		time.Sleep(time.Second)
	}
}
