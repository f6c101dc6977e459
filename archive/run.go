package archive

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// RestoreRequest is one restore: the file, what of it to restore, where, and the stores.
type RestoreRequest struct {
	Path string // the file to restore
	// Owner names the group of a topic,partition,offset CSV: the --group typed on the command
	// line, never one from the environment or a config file (ParseFor).
	Owner []string
	// Filter selects the file's groups and topics; Selection says it in words, for messages.
	Filter    migrate.Filter
	Selection string
	To        Target
	Force     bool
	Execute   bool
	Backup    string // the backup file to create before writing: required with Execute
	// Version is the zk2kafka version, in the commit metadata of a restore to Kafka.
	Version string
	// OffsetAdjust is restore's --offset-adjust: added to a ZooKeeper export's offsets on
	// their way into Kafka (File.ForTarget says what else is refused).
	OffsetAdjust int64

	Legacy migrate.LegacyStore
	Kafka  migrate.KafkaStore   // --to kafka
	Writer migrate.LegacyWriter // --to zk; nil when the legacy source is read-only
	// ReadOnly says why Writer is nil (legacy.Source.ReadOnly), for the refusal of --to zk.
	ReadOnly string
	// LegacyStopped is the operator's word (--legacy-stopped) that the legacy consumers are
	// stopped. The gates of a restore --to kafka read their liveness, which a
	// migrate.SnapshotStore (a copy of ZooKeeper's data directory) cannot show: from such a
	// store, a restore into Kafka is refused without it (migrate.CheckWriteFrom).
	LegacyStopped bool
}

// RestoreResult is what a restore did (or would do): the plan with each partition's outcome,
// and the backup file it wrote ("" when nothing was to be written).
type RestoreResult struct {
	Plan   Plan
	Backup string
}

// Check refuses a request whose values cannot make a restore, before anything is read; the
// messages name the command's flags. Restore calls it first: a command calls it too, on its
// flags before it opens a store, and again once the legacy source is known, so that a refusal
// never waits for a Kafka connection. The stores themselves are not checked here.
func (r RestoreRequest) Check() error {
	switch r.To {
	case TargetKafka, TargetZK:
	case "":
		return errors.New("--to is required: kafka or zk")
	default:
		return fmt.Errorf("--to: %q is not one of kafka, zk", r.To)
	}
	switch {
	case r.Path == "":
		return errors.New("--file is required: the export, CSV or backup to restore")
	case r.Execute && r.Backup == "":
		return errors.New("--backup: empty path: a restore saves what it overwrites before writing")
	case r.To == TargetKafka:
		return migrate.CheckWriteFrom(r.Legacy, r.LegacyStopped)
	}
	return nil
}

// checkStores refuses a request without the stores its target needs.
func (r RestoreRequest) checkStores() error {
	switch {
	case r.Legacy == nil:
		return errors.New("restore: no legacy store")
	case r.To == TargetKafka && r.Kafka == nil:
		return errors.New("restore --to kafka: no Kafka store")
	case r.To == TargetZK && r.Writer == nil:
		return fmt.Errorf("--to zk: %s", cmp.Or(r.ReadOnly, "no ZooKeeper writer"))
	}
	return nil
}

// Restore reads the file whole and strictly, plans it against what the stores hold now and,
// with Execute, writes it. A restore to Kafka runs through copy's executor (copier.Copier):
// a backup of what each batch overwrites first, the gates (live legacy consumers, an active
// Kafka group) and the restore's own rules read again just before each batch is committed,
// every commit read back. A restore to ZooKeeper backs up the znodes as an export document,
// writes them and reads them back.
//
// Every refusal of the command is here (Check): a library caller cannot skip one. A nil
// RestoreResult means nothing was planned (the file, the selection or a store read failed);
// otherwise the error is what stopped the run, and the RestoreResult says what was done. A
// nil error is not a clean restore: the plan's failed and blocked partitions say what was not.
func Restore(ctx context.Context, req RestoreRequest) (*RestoreResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if err := req.checkStores(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(req.Path)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	file, err := ParseFor(data, req.Owner)
	if err != nil {
		return nil, fmt.Errorf("restore file %s: %w: nothing was written", req.Path, err)
	}
	inFile := len(file.Groups())
	if file, err = file.Select(req.Filter); err != nil {
		return nil, fmt.Errorf("restore file %s: %w", req.Path, err)
	}
	if len(file.Entries) == 0 && !req.Filter.AllowEmpty {
		return nil, fmt.Errorf("restore file %s: %w: the selection (%s) matches no offset of its %d group(s); nothing was written (--allow-empty runs on an empty selection)",
			req.Path, migrate.ErrEmptySelection, req.Selection, inFile)
	}
	file, adjust, err := file.ForTarget(req.To, req.OffsetAdjust)
	if err != nil {
		return nil, fmt.Errorf("restore file %s: %w: nothing was written", req.Path, err)
	}
	gm, err := restoreGroupMap(req, file)
	if err != nil {
		return nil, fmt.Errorf("restore file %s: %w: nothing was written", req.Path, err)
	}
	req.Filter.GroupMap = gm
	sum := sha256.Sum256(data)
	fingerprint := "restore:" + hex.EncodeToString(sum[:])
	var kafka migrate.KafkaState
	if req.To == TargetKafka {
		kafka = migrate.MapKafka(req.Kafka, gm) // liveness stays the file's (legacy) groups'
	}
	st, err := readState(ctx, req.Legacy, kafka, file)
	if err != nil {
		return nil, err
	}
	plan, err := PlanRestore(file, req.To, st, Options{Force: req.Force})
	if err != nil {
		return nil, fmt.Errorf("restore file %s: %w", req.Path, err)
	}
	plan.DryRun = !req.Execute
	for i := range plan.Groups {
		if k := gm.Kafka(plan.Groups[i].Group); k != plan.Groups[i].Group {
			plan.Groups[i].KafkaGroup = k
		}
	}
	res := &RestoreResult{Plan: plan}
	if !req.Execute || plan.Counts()[copier.StatusWouldWrite] == 0 {
		return res, nil
	}
	res.Backup = req.Backup
	if req.To == TargetKafka {
		err = restoreKafka(ctx, req, file, adjust, &res.Plan, fingerprint)
	} else {
		err = restoreZK(ctx, req.Legacy, req.Writer, &res.Plan, req.Backup)
	}
	return res, err
}

// readState reads what the file's groups hold now: their ZooKeeper trees (liveness, and the
// offsets for a ZooKeeper target) and, with kafka, their Kafka state and topics.
func readState(ctx context.Context, legacy migrate.LegacyStore, kafka migrate.KafkaState, file File) (State, error) {
	groups := file.Groups()
	st := State{Groups: make(map[string]Current, len(groups))}
	if len(groups) == 0 {
		return st, nil
	}
	zk, err := readExisting(ctx, legacy, groups)
	if err != nil {
		return State{}, err
	}
	var ks map[string]migrate.GroupState
	if kafka != nil {
		if ks, err = kafka.Groups(ctx, groups); err != nil {
			return State{}, fmt.Errorf("read %d groups from kafka: %w", len(groups), err)
		}
		topics := file.Topics()
		if st.Topics, err = kafka.Topics(ctx, topics); err != nil {
			return State{}, fmt.Errorf("describe %d topics in kafka: %w", len(topics), err)
		}
	}
	for _, name := range groups {
		cur := Current{LiveConsumers: zk[name].LiveConsumers, ZK: zk[name].Offsets}
		if kafka != nil {
			s, ok := ks[name]
			if !ok {
				return State{}, fmt.Errorf("read group %q from kafka: no answer for it", name)
			}
			cur.Kafka = s
		}
		st.Groups[name] = cur
	}
	return st, nil
}

// readExisting reads those of groups that exist under /consumers; the others are absent from
// the result (a restore may create a group, and a group that does not exist has no live
// consumers and no offsets).
func readExisting(ctx context.Context, legacy migrate.LegacyStore, groups []string) (map[string]migrate.LegacyGroup, error) {
	all, err := legacy.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list legacy groups: %w", err)
	}
	var names []string
	for _, g := range groups {
		if _, found := slices.BinarySearch(all, g); found {
			names = append(names, g)
		}
	}
	out := make(map[string]migrate.LegacyGroup, len(names))
	if len(names) == 0 {
		return out, nil
	}
	var mu sync.Mutex // the store may call emit from its reader goroutines
	err = legacy.ReadGroups(ctx, names, func(g migrate.LegacyGroup) error {
		mu.Lock()
		defer mu.Unlock()
		out[g.Group] = g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %d legacy groups: %w", len(names), err)
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("read legacy group %q: the store returned nothing for it", n)
		}
	}
	return out, nil
}

// settle moves every partition still would-write to status to.
func settle(plan *Plan, to copier.PartitionStatus, reason string) {
	for i := range plan.Groups {
		for j := range plan.Groups[i].Items {
			if it := &plan.Groups[i].Items[j]; it.Status == copier.StatusWouldWrite {
				it.Status, it.Reason = to, reason
			}
		}
	}
}

// restoreGroupMap is the group map a restore follows. --group-map renames legacy groups into
// Kafka: it is for a restore --to kafka of a file that names legacy groups (a ZooKeeper export,
// or a CSV). An export --from kafka made under a map names both groups of each offset: --to
// kafka writes the Kafka groups it was read from (its own map), --to zk the legacy groups'
// znodes (no map: the rollback). Two of the file's groups landing in one Kafka group must not
// hold the same partition.
func restoreGroupMap(req RestoreRequest, file File) (migrate.GroupMap, error) {
	gm := req.Filter.GroupMap
	given := gm.Renames()
	switch {
	case given && req.To != TargetKafka:
		return nil, fmt.Errorf("--group-map renames legacy groups into Kafka: a restore --to zk writes the file's groups under their own names")
	case given && file.Format == FormatBackup:
		return nil, fmt.Errorf("--group-map: a copy backup names the Kafka groups it was taken from: restore it without a map")
	case given && file.Source == SourceKafka:
		return nil, fmt.Errorf("--group-map: a Kafka export names the Kafka groups it was read from: restore it without a map")
	case req.To != TargetKafka:
		return nil, nil
	case file.GroupMap != nil:
		gm = file.GroupMap
	case file.Source == SourceZK && file.Recorded.Renames() && given && !maps.Equal(gm, file.Recorded):
		return nil, fmt.Errorf("--group-map: the export was made under another group map (%s); restore it with that map or none",
			file.Recorded)
	case file.Source == SourceZK && file.Recorded.Renames():
		gm = file.Recorded // the map it was exported under: its offsets land where that copy would put them
	}
	if !gm.Renames() {
		return nil, nil
	}
	return gm, checkMergedFile(gm, file)
}

// checkMergedFile refuses two of the file's groups that land in one Kafka group with the same
// partition.
func checkMergedFile(gm migrate.GroupMap, file File) error {
	byGroup := map[string]*migrate.LegacyGroup{}
	var groups []migrate.LegacyGroup
	for _, name := range file.Groups() {
		groups = append(groups, migrate.LegacyGroup{Group: name})
	}
	for i := range groups {
		byGroup[groups[i].Group] = &groups[i]
	}
	for _, e := range file.Entries {
		if g := byGroup[e.Group]; g != nil {
			g.Offsets = append(g.Offsets, migrate.LegacyOffset{Topic: e.Topic, Partition: e.Partition})
		}
	}
	return gm.CheckOverlap(groups)
}
