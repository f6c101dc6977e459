// Package archive is zk2kafka's file formats for keeping and putting back offsets, and the two
// verbs on them: the export document (JSON, with znode paths and mtimes), the consumer-groups
// tool's CSV (group,topic,partition,offset), and reading a copy's backup file
// (copier.ParseBackup); Export, which reads the stores and writes a new file of them; the
// restore plan, a pure function of a parsed file and the current state of the target store;
// and Restore, which executes it (to Kafka through migrate's copy executor). Each verb holds
// every refusal of its command. It reads and writes through migrate's store interfaces and
// imports only migrate, internal/strictjson and the standard library.
package archive

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// SchemaVersion versions the export document; bump it on any incompatible change.
const SchemaVersion = 1

// Source is the store an export was read from.
type Source string

const (
	SourceZK    Source = "zk"
	SourceKafka Source = "kafka"
)

// Offset is one exported offset. Znode and Mtime are set for a ZooKeeper export only.
type Offset struct {
	Group string `json:"group"`
	// KafkaGroup is the Kafka group the offset was read from when a group map renames Group
	// (export --from kafka --group-map): Group is then the legacy group. restore --to kafka
	// writes it back into KafkaGroup, restore --to zk into Group's znodes (the rollback).
	KafkaGroup string `json:"kafka_group,omitempty"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Offset     int64  `json:"offset"`
	// ZnodeOffset is the znode's own value when the export applied an --offset-adjust (Offset
	// is then what Kafka should hold); it is for people, restore reads Offset.
	ZnodeOffset *int64     `json:"znode_offset,omitempty"`
	Znode       string     `json:"znode,omitempty"`
	Mtime       *time.Time `json:"mtime,omitempty"`
}

// Invalid is a znode that held no usable offset: it is listed so the archive says what it
// left out, and ignored by restore.
type Invalid struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Znode     string `json:"znode"`
	Reason    string `json:"reason"`
}

// Document is the export document: what export writes as JSON and restore reads back.
type Document struct {
	SchemaVersion int                `json:"schema_version"`
	Source        Source             `json:"source"`
	ExportedAt    time.Time          `json:"exported_at"`
	Filter        migrate.FilterSpec `json:"filter"`
	// OffsetAdjust is the --offset-adjust a ZooKeeper export applied: each offset is its znode's
	// value plus this, what Kafka should hold for a client that stored something else than the
	// next offset to consume. A restore to ZooKeeper takes it off again.
	OffsetAdjust int64     `json:"offset_adjust,omitempty"`
	Offsets      []Offset  `json:"offsets"`
	Invalid      []Invalid `json:"invalid,omitempty"`
}

// FromLegacy builds a ZooKeeper export of groups, each offset its znode's value plus adjust
// (--offset-adjust). A znode that is not a usable offset, adjust included (and every znode of
// a partition named by two znodes), goes to Invalid, never to Offsets.
func FromLegacy(groups []migrate.LegacyGroup, filter migrate.FilterSpec, now time.Time, adjust int64) Document {
	e := Document{SchemaVersion: SchemaVersion, Source: SourceZK, ExportedAt: now.UTC(), Filter: filter, OffsetAdjust: adjust,
		Offsets: []Offset{}}
	for _, g := range groups {
		count := map[migrate.TopicPartition]int{}
		for _, o := range g.Offsets {
			if o.Invalid == "" && o.Partition >= 0 && o.Offset >= 0 {
				count[migrate.TopicPartition{Topic: o.Topic, Partition: o.Partition}]++
			}
		}
		for _, o := range g.Offsets {
			n := count[migrate.TopicPartition{Topic: o.Topic, Partition: o.Partition}]
			switch {
			case o.Invalid != "":
				e.Invalid = append(e.Invalid, Invalid{g.Group, o.Topic, o.Partition, o.Path, o.Invalid})
			case o.Partition < 0 || o.Offset < 0:
				e.Invalid = append(e.Invalid, Invalid{g.Group, o.Topic, o.Partition, o.Path, "negative partition or offset"})
			case n > 1:
				e.Invalid = append(e.Invalid, Invalid{g.Group, o.Topic, o.Partition, o.Path,
					fmt.Sprintf("%d znodes name the same partition", n)})
			case !adjustable(o.Offset, adjust):
				e.Invalid = append(e.Invalid, Invalid{g.Group, o.Topic, o.Partition, o.Path,
					fmt.Sprintf("offset %d with --offset-adjust %+d is not a valid offset", o.Offset, adjust)})
			default:
				mtime := o.Mtime.UTC()
				out := Offset{Group: g.Group, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset + adjust, Znode: o.Path, Mtime: &mtime}
				if adjust != 0 {
					out.ZnodeOffset = ptr(o.Offset)
				}
				e.Offsets = append(e.Offsets, out)
			}
		}
	}
	sortOffsets(e.Offsets)
	return e
}

// FromKafka builds a Kafka export of the committed offsets of the named groups, keeping the
// topics match selects (nil: all).
func FromKafka(groups []string, states map[string]migrate.GroupState, match func(string) bool, filter migrate.FilterSpec, now time.Time) Document {
	e := Document{SchemaVersion: SchemaVersion, Source: SourceKafka, ExportedAt: now.UTC(), Filter: filter, Offsets: []Offset{}}
	for _, g := range groups {
		for tp, off := range states[g].Committed {
			if match == nil || match(tp.Topic) {
				e.Offsets = append(e.Offsets, Offset{Group: g, Topic: tp.Topic, Partition: tp.Partition, Offset: off})
			}
		}
	}
	sortOffsets(e.Offsets)
	return e
}

func sortOffsets(os []Offset) {
	slices.SortFunc(os, func(a, b Offset) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// WriteJSON writes the export document, indented, one offset per line.
func WriteJSON(w io.Writer, e Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encode export: %w", err)
	}
	return nil
}

// WriteCSV writes the offsets as group,topic,partition,offset without a header (the Kafka
// group, for an offset that names one): the file Kafka's
// consumer-groups tool takes with --reset-offsets --from-file. Invalid znodes are not in it.
func WriteCSV(w io.Writer, e Document) error {
	cw := csv.NewWriter(w)
	for _, o := range e.Offsets {
		group := o.Group
		if o.KafkaGroup != "" {
			group = o.KafkaGroup // the consumer-groups tool works on Kafka's groups
		}
		if err := cw.Write([]string{group, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10)}); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// CreateFile writes a new file at path with write: it never overwrites an existing file (an
// archive or a backup replaced by mistake is lost), syncs it before returning, and removes
// what it wrote when anything fails.
func CreateFile(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	werr := write(f)
	if werr != nil {
		werr = fmt.Errorf("write %s: %w", path, werr)
	} else if serr := f.Sync(); serr != nil {
		werr = fmt.Errorf("sync %s: %w", path, serr)
	}
	if cerr := f.Close(); cerr != nil && werr == nil {
		werr = fmt.Errorf("close %s: %w", path, cerr)
	}
	if werr == nil {
		return nil
	}
	if rerr := os.Remove(path); rerr != nil {
		return fmt.Errorf("%w (and removing the partial file: %w)", werr, rerr)
	}
	return werr
}
