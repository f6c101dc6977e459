package offsetlog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
)

// formatted is one record as Kafka's OffsetsMessageFormatter prints it. The key's record type
// is "version" in 3.9 and "type" in 4.x; a deleted offset has "value": null.
type formatted struct {
	Key struct {
		Version *int16 `json:"version"`
		Type    *int16 `json:"type"`
		Data    struct {
			Group     string `json:"group"`
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
		} `json:"data"`
	} `json:"key"`
	Value *struct {
		Version int16 `json:"version"`
		Data    struct {
			Offset          int64  `json:"offset"`
			LeaderEpoch     *int32 `json:"leaderEpoch"`
			Metadata        string `json:"metadata"`
			CommitTimestamp int64  `json:"commitTimestamp"`
		} `json:"data"`
	} `json:"value"`
}

// parseFormatted reads the formatter's output: JSON objects with no separator, among log lines
// the tools print to stdout (4.x prints a log4j2 status line first and a TimeoutException line
// at the end, right after the last object). Text that is not an object is skipped to its line end.
func parseFormatted(out []byte) ([]formatted, error) {
	var recs []formatted
	for i := 0; i < len(out); {
		switch c := out[i]; {
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			i++
		case c == '{':
			dec := json.NewDecoder(bytes.NewReader(out[i:]))
			var r formatted
			if err := dec.Decode(&r); err != nil {
				return nil, fmt.Errorf("formatter output at byte %d: %w", i, err)
			}
			recs = append(recs, r)
			i += int(dec.InputOffset())
		default:
			j := bytes.IndexByte(out[i:], '\n')
			if j < 0 {
				return recs, nil
			}
			i += j + 1
		}
	}
	return recs, nil
}

// TestFormatterAgrees cross-checks the replay with Kafka's own offsets formatter over the
// group's __consumer_offsets partition: both must see the same commits, fields and versions.
func TestFormatterAgrees(t *testing.T) {
	e := openEnv(t)
	topic := e.topic(t, 3)
	group := stacktest.Name(t, "g")
	e.commit(t, group, cm(topic, 0, 3, "a"), cm(topic, 1, 4, ""))
	e.commit(t, group, cm(topic, 0, 8, "b ✓ \"quoted\""), cm(topic, 2, 0, "c"))
	admin, err := sarama.NewClusterAdminFromClient(e.sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteConsumerGroupOffset(group, topic, 1); err != nil {
		t.Fatal(err)
	}
	ours, _ := e.readGroup(t, group)

	part := offsetlog.Partition(group, e.parts)
	out, err := e.st.KafkaTool(testCtx(t, 3*time.Minute), "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", e.st.Kafka, "--topic", offsetlog.Topic, "--partition", strconv.Itoa(int(part)),
		"--offset", "earliest", "--formatter", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter",
		"--consumer-property", "exclude.internal.topics=false", "--timeout-ms", "5000")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseFormatted([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[migrate.TopicPartition]formatted{}
	keyField := map[string]int{}
	for _, r := range recs {
		if r.Key.Version != nil {
			keyField["version"]++
		}
		if r.Key.Type != nil {
			keyField["type"]++
		}
		if r.Key.Data.Group != group {
			continue
		}
		tp := migrate.TopicPartition{Topic: r.Key.Data.Topic, Partition: r.Key.Data.Partition}
		if r.Value == nil {
			delete(theirs, tp) // printed in log order: later records win
			continue
		}
		theirs[tp] = r
	}
	t.Logf("%s stack: formatter printed %d records, key record type field %v", e.st.Profile, len(recs), keyField)
	if len(recs) == 0 || len(theirs) != 2 || len(ours) != 2 {
		t.Fatalf("formatter: %d records, %d left for group %s; replay %v: want partitions 0 and 2 in both", len(recs), len(theirs), group, ours)
	}
	for tp, c := range ours {
		f, ok := theirs[tp]
		if !ok || f.Value.Data.Offset != c.Offset || f.Value.Data.Metadata != c.Metadata ||
			f.Value.Data.CommitTimestamp != c.CommitTimestamp.UnixMilli() || f.Value.Version != c.ValueVersion ||
			f.Value.Data.LeaderEpoch == nil || *f.Value.Data.LeaderEpoch != c.LeaderEpoch {
			t.Errorf("%s: replay %+v, formatter %+v (present %v)", tp, c, f.Value, ok)
		}
	}
}

func TestParseFormatted(t *testing.T) {
	out := "2026-12-02 main ERROR Reconfiguration failed\n" +
		`{"key":{"type":1,"data":{"group":"g","topic":"t","partition":0}},"value":{"version":4,"data":{"offset":1,"leaderEpoch":-1,"metadata":"m","commitTimestamp":5}}}` +
		`{"key":{"version":1,"data":{"group":"g","topic":"t","partition":1}},"value":null}` +
		"18:19:01.798 [main] ERROR Error processing message: \norg.apache.kafka.common.errors.TimeoutException: null\n"
	recs, err := parseFormatted([]byte(out))
	if err != nil || len(recs) != 2 || recs[0].Key.Type == nil || recs[0].Value.Data.Offset != 1 ||
		recs[1].Key.Version == nil || recs[1].Value != nil || recs[1].Key.Data.Partition != 1 {
		t.Fatalf("parseFormatted = %+v, %v", recs, err)
	}
}
