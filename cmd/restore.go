package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

type restoreOptions struct {
	filter    filterOptions
	to        string
	file      string
	backup    string
	force     bool
	output    string
	all       bool
	adjust    int64
	writeMode // --execute, --dry-run
	// groupTyped: --group came from the command line (not the environment or a config file).
	groupTyped bool

	flt migrate.Filter
}

func newRestoreCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &restoreOptions{}
	c := &cobra.Command{
		Use:   "restore",
		Short: "Put saved offsets back into Kafka or ZooKeeper (dry run unless --execute)",
		Long: `Restore reads a file and writes its offsets into the chosen store:

  an export document   (zk2kafka export --format json, from either store)
  a CSV                group,topic,partition,offset lines (zk2kafka export --format csv, or
                       the consumer-groups tool's reset file); with exactly one --group, that
                       tool's single-group form too: topic,partition,offset lines
  a copy backup        (migrate copy --backup): puts back the Kafka offsets the copy overwrote

The file is read whole and strictly first: any bad line is reported with its line number and
nothing is written. Then each partition is compared with what the store holds now. The table
lists the partitions the restore changes (or cannot change: blocked, failed); those already
holding the file's offset are only counted, unless --all.

--to kafka runs through copy's executor and its gates: a group with live legacy consumers or
an active Kafka group is not touched, and the gates and Kafka's offsets are read again just
before each batch of groups is committed. A partition that was written by a copy and has moved since is not put back
unless --force. A backup's partitions that had no Kafka commit before the copy cannot be put
back by an offset commit: they are reported, not restorable (delete them with the
consumer-groups tool's --delete-offsets, the group stopped).

--to zk is the rollback path: consumers can go back to ZooKeeper storage at their current
positions (export --from kafka, then restore --to zk). It refuses groups with live legacy
consumers unless --force.

Before writing, what will be overwritten is saved to a new backup file (--backup): a copy-style
backup for Kafka, an export document for ZooKeeper; restoring that file undoes the restore.
Every written offset is read back.

--offset-adjust N (command line only) says the legacy client's znodes hold the Kafka offset
minus N, as copy's does: --to kafka adds N to a ZooKeeper export's znode values; --to zk takes N
off Kafka offsets (an export of Kafka, a CSV), the rollback of such a client. An export made with
--offset-adjust carries its adjust: it is restored into Kafka as it is, and into ZooKeeper as its
znode values. A backup is never adjusted, nor an offset twice.

--group-map old=new (--to kafka, a file of legacy groups: a ZooKeeper export or a CSV) writes
group old's offsets into Kafka group new; the gates read old's liveness and new's state. An
export --from kafka made under a map carries it (kafka_group) and is restored into those groups
without the flag. --group and --group-regex select the file's group names.

Exit codes: 0 everything restored (or nothing to do), 2 something was blocked or is not
restorable, 1 an error or a partition that failed.`,
		Example: `  zk2kafka restore --to kafka --file zk-offsets.json               # dry run
  zk2kafka restore --to kafka --file zk-offsets.json --execute
  zk2kafka restore --to kafka --group orders --file reset.csv       # topic,partition,offset lines
  zk2kafka restore --to kafka --file zk2kafka-backup-20250101T000000Z.jsonl --execute   # undo a copy
  zk2kafka export --from kafka --file kafka.json && zk2kafka restore --to zk --file kafka.json --execute`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.groupTyped = c.Flags().Changed("group")
			if err := o.validate(); err != nil {
				return err
			}
			return runRestore(c.Context(), d, g, o)
		},
	}
	o.filter.addFlags(c)
	o.filter.addAllowEmpty(c)
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "store to write: kafka or zk (required)")
	f.StringVar(&o.file, "file", "", "export (JSON), CSV or copy backup to restore (required)")
	o.writeMode.addFlags(c, "really write (without it, a dry run)")
	f.StringVar(&o.backup, "backup", "", "backup file to create before writing (default zk2kafka-restore-backup-<time>.jsonl or .json)")
	f.BoolVar(&o.all, "all", false, "the table lists every partition of the file, those already holding its offset too (JSON always has them all)")
	f.BoolVar(&o.force, "force", false, "--to zk despite live legacy consumers, and a new znode whose group or topic name has spaces around it; a backup's partitions despite Kafka having moved since the copy")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	// A migration's shared map would make the undo of a copy (its backup) and every rollback
	// --to zk refuse to run: restore takes it from its command line alone.
	markCommandLineOnly(c, "group-map")
	markCommandLineOnly(c, "group-map-file")
	addArchiveOffsetAdjustFlag(c, &o.adjust, "the legacy client's znodes are the Kafka offset minus N: --to kafka adds N to a "+
		"ZooKeeper export's values, --to zk takes N off Kafka offsets (an export of Kafka, a CSV) (command line only)")
	return c
}

func (o *restoreOptions) validate() error {
	if err := o.writeMode.check(); err != nil {
		return err
	}
	// --to and --file first, as archive.Restore refuses them; the backup is named below.
	if err := (archive.RestoreRequest{To: archive.Target(o.to), Path: o.file}).Check(); err != nil {
		return err
	}
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	if o.execute && o.backup == "" {
		ext := ".jsonl"
		if o.to == string(archive.TargetZK) {
			ext = ".json"
		}
		o.backup = "zk2kafka-restore-backup-" + time.Now().UTC().Format("20060102T150405Z") + ext
	}
	var err error
	o.flt, err = o.filter.filter()
	return err
}

func runRestore(ctx context.Context, d *deps, g *globalOptions, o *restoreOptions) error {
	req := archive.RestoreRequest{Path: o.file, Filter: o.flt, Selection: o.filter.describe(), To: archive.Target(o.to),
		Force: o.force, Execute: o.execute, Backup: o.backup, Version: d.build.Version, OffsetAdjust: o.adjust,
		LegacyStopped: g.legacyStopped}
	// Kafka's 3-column form names no group: only a --group typed on this command line may
	// supply it, never one left in the environment or a config file for other runs.
	if o.groupTyped {
		req.Owner = o.flt.Groups
	}
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return err
	}
	defer src.Close()
	req.Legacy, req.Writer, req.ReadOnly = src.Store, src.Writer, src.ReadOnly
	if req.To == archive.TargetKafka {
		if err := req.Check(); err != nil { // before connecting to Kafka: Restore would refuse it anyway
			return err
		}
		kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
		if err != nil {
			return err
		}
		defer closeKafka()
		req.Kafka = kafka
	}
	res, runErr := archive.Restore(ctx, req)
	if res == nil {
		return runErr
	}
	if err := renderRestore(d.stdout, o.output, o.file, res.Backup, res.Plan, o.all); err != nil {
		return errors.Join(runErr, err)
	}
	return restoreExit(res.Plan, runErr)
}

// restoreExit maps a restore's outcome to the exit codes of --help.
func restoreExit(plan archive.Plan, runErr error) error {
	n := plan.Counts()
	switch {
	case runErr != nil:
		return runErr
	case n[copier.StatusFailed] > 0:
		return fmt.Errorf("%d partition(s) failed (see above)", n[copier.StatusFailed])
	case n[copier.StatusBlocked] > 0:
		return unsafe("%d partition(s) blocked or not restorable (see the reasons above)", n[copier.StatusBlocked])
	}
	return nil
}
