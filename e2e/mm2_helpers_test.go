package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// produceFrom appends n records to partition 0 of topic, valued r<from>..r<from+n-1> (their
// source offsets, as namedTopic writes them).
func (e *env) produceFrom(topic string, from int64, n int) {
	e.t.Helper()
	prod, err := sarama.NewSyncProducer([]string{e.st.Kafka}, e.producerConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() {
		if err := prod.Close(); err != nil {
			e.t.Errorf("close producer: %v", err)
		}
	}()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("r" + strconv.FormatInt(from+int64(i), 10))}
	}
	if err := prod.SendMessages(msgs); err != nil {
		e.t.Fatalf("produce to %s: %v", topic, err)
	}
}

// runMirrorMaker runs a MirrorMaker 2 of the test's own, from the stack's source to its target
// under the aliases given, replicating the topics topics matches, with the extra configuration
// lines given, until the test ends. It dies with the test process.
func (e *env) runMirrorMaker(srcAlias, tgtAlias, topics string, extra ...string) {
	e.t.Helper()
	props := filepath.Join(e.dir, "mm2.properties")
	cfg := fmt.Sprintf(`clusters = %[1]s, %[2]s
%[1]s.bootstrap.servers = %[3]s
%[2]s.bootstrap.servers = %[4]s
%[1]s->%[2]s.enabled = true
%[2]s->%[1]s.enabled = false
%[1]s->%[2]s.topics = %[5]s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
refresh.topics.interval.seconds = 2
refresh.groups.interval.seconds = 2
emit.checkpoints.enabled = true
emit.checkpoints.interval.seconds = 2
sync.group.offsets.enabled = false
emit.heartbeats.enabled = false
offset.lag.max = 10
dedicated.mode.enable.internal.rest = false
`, srcAlias, tgtAlias, e.st.Kafka, e.st.KafkaTarget, topics) + strings.Join(extra, "\n") + "\n"
	if err := os.WriteFile(props, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	logPath := filepath.Join(e.st.Logs, stacktest.Name(e.t, "mm2")+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
		"-Dlog4j.configuration=file:"+e.st.MM2Log4j, "-cp", filepath.Join(e.st.MM2Libs, "*"),
		"org.apache.kafka.connect.mirror.MirrorMaker", props)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start MirrorMaker 2: %v", err)
	}
	e.t.Logf("MirrorMaker 2 (%s->%s) pid %d, log %s", srcAlias, tgtAlias, cmd.Process.Pid, logPath)
	e.t.Cleanup(func() {
		if err := cmd.Process.Kill(); err != nil {
			e.t.Errorf("stop MirrorMaker 2: %v", err)
		}
		if err := cmd.Wait(); err == nil {
			e.t.Error("MirrorMaker 2 exited cleanly before it was stopped")
		}
		if err := logFile.Close(); err != nil {
			e.t.Error(err)
		}
	})
}

// targetReader reads MirrorMaker 2's records on the target until the test ends.
func (e *env) targetReader() *mm2log.Reader { return e.mm2Reader(e.st.KafkaTarget, "target") }

// mm2Reader reads MirrorMaker 2's records on the cluster at bootstrap (named cluster in errors)
// until the test ends.
func (e *env) mm2Reader(bootstrap, cluster string) *mm2log.Reader {
	e.t.Helper()
	r, err := mm2log.Open(e.ctx(), mm2log.Config{Bootstrap: []string{bootstrap}, Cluster: cluster})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := r.Close(); err != nil {
			e.t.Errorf("close mm2log reader: %v", err)
		}
	})
	return r
}

// consumeTargetAsSource is consumeTargetGroup with each record read named by its source offset
// (its value, as namedTopic writes it), per partition, in the order read.
func (e *env) consumeTargetAsSource(c sarama.Client, g, topic string, partitions int) map[int32][]int64 {
	e.t.Helper()
	read := e.consumeTargetGroup(c, g, topic, partitions)
	out := map[int32][]int64{}
	for p, offs := range read {
		src := e.targetRecords(c, topic, p) // target offset -> source offset
		for _, off := range offs {
			out[p] = append(out[p], src[off])
		}
	}
	return out
}

// consumeTargetGroup runs a current consumer of group g on the target's topic: it starts from
// the group's committed offsets (a partition without one would start at the end, so a missing
// commit shows as records never read), reads each partition up to its high watermark, and
// returns the target offsets read per partition.
func (e *env) consumeTargetGroup(c sarama.Client, g, topic string, partitions int) map[int32][]int64 {
	e.t.Helper()
	cfg := e.saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetNewest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cg, err := sarama.NewConsumerGroup([]string{e.st.KafkaTarget}, g, cfg)
	if err != nil {
		e.t.Fatalf("target consumer group %s: %v", g, err)
	}
	defer func() {
		if err := cg.Close(); err != nil {
			e.t.Errorf("close consumer group: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	h := &readAll{out: map[int32][]int64{}, want: partitions, done: cancel}
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
			e.t.Fatalf("consume %s as %s: %v", topic, g, err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished != partitions {
		e.t.Fatalf("consume %s as %s: %d of %d partitions read to their end within %s", topic, g, h.finished, partitions, callTimeout)
	}
	return h.out
}

// readAll is a consumer group handler that reads every claim to its high watermark.
type readAll struct {
	mu       sync.Mutex
	out      map[int32][]int64
	finished int
	want     int
	done     context.CancelFunc
}

func (h *readAll) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *readAll) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *readAll) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	end := claim.HighWaterMarkOffset()
	var offs []int64
	if claim.InitialOffset() < end {
		timeout := time.After(callTimeout)
	loop:
		for {
			select {
			case m, ok := <-claim.Messages():
				if !ok {
					return nil // a rebalance: the claim is read again from the start
				}
				offs = append(offs, m.Offset)
				if m.Offset+1 >= end {
					break loop
				}
			case <-timeout:
				return fmt.Errorf("partition %d: not read to %d within %s", claim.Partition(), end, callTimeout)
			case <-s.Context().Done():
				return nil
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, seen := h.out[claim.Partition()]; !seen {
		h.out[claim.Partition()] = offs
		h.finished++
	}
	if h.finished == h.want {
		h.done()
	}
	return nil
}
