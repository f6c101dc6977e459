package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

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
