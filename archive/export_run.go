package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// ExportRequest is one export: what to read, from which store, and the file to create.
type ExportRequest struct {
	// From is the store whose offsets are exported: SourceZK (the znodes, Kafka is not read)
	// or SourceKafka (the same groups' committed offsets in Kafka).
	From Source
	// Format is FormatJSON (the export document) or FormatCSV (group,topic,partition,offset).
	Format Format
	// Path is the file to create, never an existing one; "-" writes to Out.
	Path string
	Out  io.Writer
	// Filter selects the legacy groups and topics, as plan does; its group map names the
	// Kafka group each legacy group is read from (--from kafka).
	Filter migrate.Filter
	// OffsetAdjust is added to each znode's value (--from zk only): what Kafka should hold for
	// a client that stored something else than the next offset to consume.
	OffsetAdjust int64

	Legacy migrate.LegacyStore
	Kafka  migrate.KafkaState // --from kafka; never read --from zk
	// Progress is told how the read of Legacy goes; nil: not.
	Progress migrate.ReadProgressFunc
	// Now is the document's exported_at; zero: the time the read ended.
	Now time.Time
}

// ExportResult is what an export wrote.
type ExportResult struct {
	Groups  int // legacy groups selected and read
	Offsets int // offsets written
	// Invalid are the znodes that hold no usable offset: left out of the offsets (the JSON
	// lists them). An export with any is incomplete, for the caller to say so.
	Invalid []Invalid
	// Live are the groups of a ZooKeeper export whose legacy consumers are still registered:
	// the export is a snapshot of offsets that may move on.
	Live []LiveGroup
}

// LiveGroup is a group with registered legacy consumers.
type LiveGroup struct {
	Group     string
	Consumers int // distinct consumers (migrate.Consumers)
}

// Check refuses a request whose values cannot make an export, before anything is read; the
// messages name the command's flags. Export calls it first: a command calls it too, to refuse
// its flags before it opens a store.
func (r ExportRequest) Check() error {
	switch {
	case r.From != SourceZK && r.From != SourceKafka:
		return fmt.Errorf("--from: %q is not one of zk, kafka", r.From)
	case r.Format != FormatJSON && r.Format != FormatCSV:
		return fmt.Errorf("--format: %q is not one of json, csv", r.Format)
	case r.Path == "":
		return errors.New("--file: empty path (use - for stdout)")
	case r.OffsetAdjust != 0 && r.From != SourceZK:
		return fmt.Errorf("--offset-adjust %+d with --from %s: the adjust turns ZooKeeper znode values into Kafka offsets; Kafka's own offsets are exported as they are", r.OffsetAdjust, r.From)
	}
	return nil
}

// checkStores refuses a request without the stores or the writer it needs.
func (r ExportRequest) checkStores() error {
	switch {
	case r.Legacy == nil:
		return errors.New("export: no legacy store")
	case r.From == SourceKafka && r.Kafka == nil:
		return errors.New("export --from kafka: no Kafka store")
	case r.Path == "-" && r.Out == nil:
		return errors.New("export to -: no output writer")
	}
	return nil
}

// Export reads the selected groups (migrate.ReadInputs, as plan selects them) and writes their
// offsets to a new file: a ZooKeeper export with each znode's path and mtime, or, --from kafka,
// the committed offsets of the Kafka groups they map to. It never overwrites a file
// (CreateFile). The znodes that hold no usable offset are left out of the offsets and returned
// in ExportResult.Invalid: the export is then incomplete, which is not an error here.
func Export(ctx context.Context, req ExportRequest) (ExportResult, error) {
	if err := req.Check(); err != nil {
		return ExportResult{}, err
	}
	if err := req.checkStores(); err != nil {
		return ExportResult{}, err
	}
	var state migrate.KafkaState = migrate.NoKafka{}
	if req.From == SourceKafka {
		state = req.Kafka
	}
	in, err := migrate.ReadInputs(ctx, migrate.WithReadProgress(req.Legacy, req.Progress), state, req.Filter)
	if err != nil {
		return ExportResult{}, err
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	doc, live := exportDocument(req, in, now)
	res := ExportResult{Groups: len(in.Legacy), Offsets: len(doc.Offsets), Invalid: doc.Invalid, Live: live}
	if err := writeDocument(req, doc); err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	return res, nil
}

// exportDocument builds the document of what was read, and the groups with live consumers.
func exportDocument(req ExportRequest, in migrate.Inputs, now time.Time) (Document, []LiveGroup) {
	if req.From == SourceZK {
		var live []LiveGroup
		for _, lg := range in.Legacy {
			if len(lg.LiveConsumers) > 0 {
				live = append(live, LiveGroup{Group: lg.Group, Consumers: len(migrate.Consumers(lg.LiveConsumers))})
			}
		}
		return FromLegacy(in.Legacy, in.Filter, now, req.OffsetAdjust), live
	}
	// Under a group map, each legacy group's offsets are read from the Kafka group it lands
	// in and exported under both names (group, kafka_group); of a merged Kafka group, each
	// legacy group takes its own partitions (the others go to the first of them).
	names := make([]string, 0, len(in.Legacy))
	for _, lg := range in.Legacy {
		names = append(names, lg.Group)
	}
	doc := FromKafka(names, in.OwnStates(in.Groups), req.Filter.MatchTopic, in.Filter, now)
	for i := range doc.Offsets {
		if k := req.Filter.GroupMap.Kafka(doc.Offsets[i].Group); k != doc.Offsets[i].Group {
			doc.Offsets[i].KafkaGroup = k
		}
	}
	return doc, nil
}

// writeDocument writes the document in the request's format to its new file, or to Out.
func writeDocument(req ExportRequest, doc Document) error {
	write := func(w io.Writer) error {
		if req.Format == FormatCSV {
			return WriteCSV(w, doc)
		}
		return WriteJSON(w, doc)
	}
	if req.Path == "-" {
		return write(req.Out)
	}
	return CreateFile(req.Path, write)
}
