package cmd

import (
	"context"

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
	if err := o.request().Check(); err != nil {
		return err
	}
	var err error
	o.flt, err = o.filter.filter()
	return err
}

// request is the export the options ask for, without its stores.
func (o *exportOptions) request() archive.ExportRequest {
	return archive.ExportRequest{From: archive.Source(o.from), Format: archive.Format(o.format), Path: o.file,
		Filter: o.flt, OffsetAdjust: o.adjust}
}

func runExport(ctx context.Context, d *deps, g *globalOptions, o *exportOptions) error {
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return err
	}
	defer src.Close()
	req := o.request()
	req.Legacy, req.Out = src.Store, d.stdout
	if req.From == archive.SourceKafka {
		kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
		if err != nil {
			return err
		}
		defer closeKafka()
		req.Kafka = kafka
	}
	bar := newProgress(d, true)
	defer bar.finish()
	reads := bar.reads("export: reading ZooKeeper")
	req.Progress = func(r migrate.ReadProgress) {
		reads(r)
		if r.Groups == r.GroupsTotal {
			bar.finish() // the read is over: the line is gone before the file goes to stdout
		}
	}
	res, err := archive.Export(ctx, req)
	for _, lg := range res.Live {
		d.logger.Warn("legacy consumers are still registered: the export is a snapshot of offsets that may move on",
			"group", lg.Group, "live", lg.Consumers)
	}
	if err != nil {
		return err
	}
	d.logger.Info("exported", "from", o.from, "groups", res.Groups, "offsets", res.Offsets, "file", o.file, "format", o.format)
	if len(res.Invalid) > 0 {
		for _, inv := range limitInvalid(res.Invalid, 20) {
			d.logger.Warn("znode left out of the export: no usable offset", "group", inv.Group, "znode", inv.Znode, "reason", inv.Reason)
		}
		return unsafe("%d znode(s) hold no usable offset and were left out of the export's offsets", len(res.Invalid))
	}
	return nil
}

func limitInvalid(xs []archive.Invalid, n int) []archive.Invalid {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
