package zkreader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The storm-kafka spout (Storm 1.x, org.apache.storm.kafka; storm.kafka in 0.9/0.10) keeps one
// znode per partition, written by PartitionManager.commit through ZkState.writeJSON:
//
//	<zkRoot>/<spoutId>/partition_<N>            (one topic)
//	<zkRoot>/<spoutId>/<topic>/partition_<N>    (wildcard topics)
//
// holding {"topology":{"id":..,"name":..},"offset":O,"partition":N,
// "broker":{"host":..,"port":..},"topic":T}. O is PartitionManager.lastCompletedOffset(): the
// lowest emitted offset not yet acked, or, with nothing pending, the offset after the last one
// emitted. It is the next offset to process, as a Kafka commit is, and the spout resumes at it
// (its constructor sets _emittedToOffset = _committedTo = O): it is copied unadjusted.

// stormPartitionPrefix starts the name of a storm-kafka partition znode (Partition.getId).
const stormPartitionPrefix = "partition_"

// ParseStormPartition parses the name of a storm-kafka partition znode, "partition_<N>" with N
// a non-negative int32 in canonical form, as Partition.getId writes it.
func ParseStormPartition(name string) (int32, error) {
	n, ok := strings.CutPrefix(name, stormPartitionPrefix)
	if !ok {
		return 0, fmt.Errorf("znode name %s is not a storm-kafka partition_<N> name", quote([]byte(name)))
	}
	p, err := ParsePartition(n)
	if err != nil {
		return 0, fmt.Errorf("znode name %s: %w", quote([]byte(name)), err)
	}
	return p, nil
}

// StormOffset is what zk2kafka takes from a storm-kafka partition znode.
type StormOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ParseStormOffset parses the JSON of a storm-kafka partition znode strictly: an object whose
// "offset" is a non-negative integer, "partition" an int32 equal to partition (the N of the
// znode's partition_<N> name), and "topic" a non-empty string, equal to topic when topic is not
// empty (the directory of a wildcard spout's znode). Other fields ("topology", "broker") are
// Storm's bookkeeping and are not read. Each error names the field at fault and is meant as
// the Invalid reason of a LegacyOffset. The topic is returned whenever it could be read, even
// with an error about another field, so that the plan can name it.
func ParseStormOffset(data []byte, partition int32, topic string) (StormOffset, error) {
	var out StormOffset
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(data)) == 0 {
		return out, errors.New("storm JSON: empty znode data")
	}
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return out, fmt.Errorf("storm JSON: data %s is not a JSON object", quote(data))
	}
	t, terr := stormTopic(obj["topic"], topic)
	out.Topic = t
	if terr != nil {
		return out, terr
	}
	p, err := stormInt(obj, "partition", math.MaxInt32)
	if err != nil {
		return out, err
	}
	if int32(p) != partition {
		return out, fmt.Errorf("storm JSON: field \"partition\" is %d, but the znode is %s%d", p, stormPartitionPrefix, partition)
	}
	out.Partition = int32(p)
	if out.Offset, err = stormInt(obj, "offset", math.MaxInt64); err != nil {
		return out, err
	}
	return out, nil
}

// stormTopic reads the "topic" field; dir is the wildcard layout's topic directory, or "".
func stormTopic(raw json.RawMessage, dir string) (string, error) {
	if raw == nil {
		return dir, errors.New(`storm JSON: field "topic" is missing`)
	}
	var t string
	if err := json.Unmarshal(raw, &t); err != nil {
		return dir, fmt.Errorf("storm JSON: field \"topic\" is %s, not a string", quote(raw))
	}
	switch {
	case t == "":
		return dir, errors.New(`storm JSON: field "topic" is empty`)
	case dir != "" && t != dir:
		return dir, fmt.Errorf("storm JSON: field \"topic\" is %q, but the znode is under the topic directory %q", t, dir)
	}
	return t, nil
}

// stormInt reads a required integer field in [0, limit]. json-simple writes Java longs and ints
// as plain decimal integers: a fraction, an exponent or a quoted number is not one.
func stormInt(obj map[string]json.RawMessage, field string, limit int64) (int64, error) {
	raw, ok := obj[field]
	if !ok {
		return 0, fmt.Errorf("storm JSON: field %q is missing", field)
	}
	s := string(raw)
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return 0, fmt.Errorf("storm JSON: field %q is %s, not a number", field, quote(raw))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("storm JSON: field %q is %s, beyond the int64 range", field, quote(raw))
	case err != nil:
		return 0, fmt.Errorf("storm JSON: field %q is %s, not an integer", field, quote(raw))
	case v < 0:
		return 0, fmt.Errorf("storm JSON: field %q is %d, negative", field, v)
	case v > limit:
		return 0, fmt.Errorf("storm JSON: field %q is %d, beyond the int32 range", field, v)
	}
	return v, nil
}
