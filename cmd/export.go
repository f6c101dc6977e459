package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate"
)

type exportOptions struct {
	filter filterOptions
	from   string
	format string
	file   string
	adjust int64

	flt migrate.Filter
}

func newExportCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export",
		Short: "Archive the selected groups' ZooKeeper (or Kafka) offsets to JSON or CSV",
		Long: `Export writes the offsets of the selected groups (the groups under /consumers, as plan selects
them) to a file, for an archive before ZooKeeper is retired or for "zk2kafka restore":

  --from zk     the ZooKeeper offsets, with each znode's path and mtime (Kafka is not contacted)
  --from kafka  the same groups' committed offsets in Kafka

--format json is the export document (schema_version, source, exported_at, offsets[]); --format
csv is group,topic,partition,offset without a header, the file Kafka's consumer-groups tool takes
with --reset-offsets --from-file. An existing file is never overwritten.

--offset-adjust N (--from zk, command line only) writes each znode's value plus N, what Kafka
should hold for a client that stored the last consumed offset rather than the next; the JSON
keeps the znode's own value beside it and records the adjust, so that restore --to kafka writes it
as it is (and says so in each commit's metadata) and restore --to zk takes it off again. A CSV
cannot record it: restore such a CSV --to zk with the same --offset-adjust.

With --group-map old=new, --from kafka reads each legacy group's offsets from the Kafka group it
maps to and names both in the JSON (group: old, kafka_group: new; the CSV names the Kafka group);
restore --to kafka writes them back into new, restore --to zk into old's znodes. Either export
records the map in its filter.

Exit codes: 0 everything exported, 2 some znodes hold no usable offset and were left out (the
JSON lists them under "invalid"), 1 error.`,
		Example: `  zk2kafka export --file zk-offsets.json
  zk2kafka export --from kafka --group-regex '^billing-' --format csv --file billing.csv
  zk2kafka export --group clicks-lastread --offset-adjust 1 --format csv --file reset.csv`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runExport(c.Context(), d, g, o)
		},
	}
	o.filter.addFlags(c)
	o.filter.addAllowEmpty(c)
	f := c.Flags()
	f.StringVar(&o.from, "from", "zk", "store to export: zk or kafka")
	f.StringVar(&o.format, "format", "json", "file format: json or csv (group,topic,partition,offset)")
	f.StringVar(&o.file, "file", "-", "file to create (never overwritten); - for stdout")
	addArchiveOffsetAdjustFlag(c, &o.adjust, "--from zk: write each znode's value plus N (what Kafka should hold for a client that "+
		"stored the last consumed offset); the JSON records it, a CSV cannot (command line only)")
	return c
}

func (o *exportOptions) validate() error {
	if o.from != string(archive.SourceZK) && o.from != string(archive.SourceKafka) {
		return fmt.Errorf("--from: %q is not one of zk, kafka", o.from)
	}
	if o.format != "json" && o.format != "csv" {
		return fmt.Errorf("--format: %q is not one of json, csv", o.format)
	}
	if o.file == "" {
		return fmt.Errorf("--file: empty path (use - for stdout)")
	}
	if o.adjust != 0 && o.from != string(archive.SourceZK) {
		return fmt.Errorf("--offset-adjust %+d with --from %s: the adjust turns ZooKeeper znode values into Kafka offsets; Kafka's own offsets are exported as they are", o.adjust, o.from)
	}
	var err error
	o.flt, err = o.filter.filter()
	return err
}

func runExport(ctx context.Context, d *deps, g *globalOptions, o *exportOptions) error {
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return err
	}
	defer src.Close()
	legacy := src.Store
	var state migrate.KafkaState = legacyOnly{}
	if o.from == string(archive.SourceKafka) {
		kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
		if err != nil {
			return err
		}
		defer closeKafka()
		state = kafka
	}
	bar := newProgress(d, true)
	defer bar.finish()
	in, err := migrate.ReadInputs(ctx, migrate.WithReadProgress(legacy, bar.reads("export: reading ZooKeeper")), state, o.flt)
	if err != nil {
		return err
	}
	bar.finish()
	now := time.Now()
	var e archive.Export
	if o.from == string(archive.SourceZK) {
		e = archive.FromLegacy(in.Legacy, in.Filter, now, o.adjust)
		for _, lg := range in.Legacy {
			if len(lg.LiveConsumers) > 0 {
				d.logger.Warn("legacy consumers are still registered: the export is a snapshot of offsets that may move on",
					"group", lg.Group, "live", len(migrate.Consumers(lg.LiveConsumers)))
			}
		}
	} else {
		// Under a group map, each legacy group's offsets are read from the Kafka group it lands
		// in and exported under both names (group, kafka_group); of a merged Kafka group, each
		// legacy group takes its own partitions (the others go to the first of them).
		names := make([]string, 0, len(in.Legacy))
		for _, lg := range in.Legacy {
			names = append(names, lg.Group)
		}
		e = archive.FromKafka(names, in.OwnStates(in.Groups), o.flt.MatchTopic, in.Filter, now)
		for i := range e.Offsets {
			if k := o.flt.GroupMap.Kafka(e.Offsets[i].Group); k != e.Offsets[i].Group {
				e.Offsets[i].KafkaGroup = k
			}
		}
	}
	write := func(w io.Writer) error {
		if o.format == "csv" {
			return archive.WriteCSV(w, e)
		}
		return archive.WriteJSON(w, e)
	}
	if o.file == "-" {
		err = write(d.stdout)
	} else {
		err = archive.CreateFile(o.file, write)
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	d.logger.Info("exported", "from", o.from, "groups", len(in.Legacy), "offsets", len(e.Offsets), "file", o.file, "format", o.format)
	if len(e.Invalid) > 0 {
		for _, inv := range limitInvalid(e.Invalid, 20) {
			d.logger.Warn("znode left out of the export: no usable offset", "group", inv.Group, "znode", inv.Znode, "reason", inv.Reason)
		}
		return unsafe("%d znode(s) hold no usable offset and were left out of the export's offsets", len(e.Invalid))
	}
	return nil
}

func limitInvalid(xs []archive.Invalid, n int) []archive.Invalid {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
