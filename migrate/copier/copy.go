// Package copier is copy's executor: it runs a plan, saved or made afresh, a batch of groups
// at a time, and holds every refusal of the copy verb (Copy), so that a library caller cannot
// skip one. It reads the stores through migrate's interfaces and saved plan files (through
// planfile); it writes a backup line for each write (backup files), the Kafka commits, and a
// temporary plan file when a fresh plan is too large to hold.
package copier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// PartitionStatus is the outcome of one planned write.
type PartitionStatus string

const (
	StatusWritten    PartitionStatus = "written"     // committed and read back equal
	StatusWouldWrite PartitionStatus = "would-write" // dry run
	StatusAlready    PartitionStatus = "already"     // Kafka already held the target (e.g. a resumed copy)
	StatusBlocked    PartitionStatus = "blocked"     // re-check refused it: gate, or a change since the plan
	StatusFailed     PartitionStatus = "failed"      // the commit or its read-back failed

	// Steps a write goes through within a batch; none is left in a returned result.
	statusPending   PartitionStatus = "pending"   // to be committed, after the backup
	statusCommitted PartitionStatus = "committed" // the broker accepted it, not yet read back
	statusInFlight  PartitionStatus = "in-flight" // a stop came while its commit was sent: outcome unknown
)

// inFlightReason says why a partition whose commit was in flight at a stop failed: what Kafka
// held when it was read back (no commit, or another offset), or that it could not be read.
const inFlightReason = "the copy was stopped while its commit was in flight"

// PartitionResult is what copy did with one planned write.
type PartitionResult struct {
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Target    int64           `json:"target"`
	Before    *int64          `json:"kafka_before"`
	ReadBack  *int64          `json:"read_back,omitempty"`
	Status    PartitionStatus `json:"status"`
	Reason    string          `json:"reason,omitempty"`
}

// GroupResult is what copy did with one group's planned writes.
type GroupResult struct {
	Group string `json:"group"`
	// KafkaGroup is the Kafka group written, when a group map renames Group (the legacy group).
	KafkaGroup string            `json:"kafka_group,omitempty"`
	Partitions []PartitionResult `json:"partitions"`
}

// Result is the outcome of a copy, per group and partition. The core never prints it.
type Result struct {
	DryRun bool          `json:"dry_run"`
	Groups []GroupResult `json:"groups"`
}

// Counts returns how many planned writes ended in each status.
func (r Result) Counts() map[PartitionStatus]int {
	n := map[PartitionStatus]int{}
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			n[p.Status]++
		}
	}
	return n
}

// Backup records, durably, what a copy is about to overwrite: it must return only once the
// records are safe on disk, because the commits follow at once. One call covers a whole batch
// of groups, so a copy pays one sync per batch, not one per group.
type Backup interface {
	Record(ctx context.Context, groups []GroupResult) error
}

// DefaultParallel is how many groups copy commits at once. Each group's commit is a request and
// an append of its own at the coordinator, so commits of different groups overlap; 16 copied
// fastest among 8, 16 and 24 (docs/benchmarks.md).
const DefaultParallel = 16

// Copier executes a plan's writes.
type Copier struct {
	Legacy    migrate.LegacyStore
	Kafka     migrate.KafkaState
	Committer migrate.OffsetCommitter
	Backup    Backup // required when executing
	// Metadata gives the provenance string committed with an entry (nil: none).
	Metadata func(group string, e migrate.Entry) string
	// BatchGroups is how many groups are re-checked and committed together (default 32; the CLI uses 128).
	BatchGroups int
	// Parallel bounds concurrent group commits within a batch (0: DefaultParallel).
	Parallel int
	// GatesOnly narrows the re-check before each batch to what the safety rules name: the
	// liveness registrations in ZooKeeper and the Kafka group state and commits (so a live
	// legacy consumer or an active group still blocks, and max still never moves an offset
	// backwards). The ZooKeeper offsets are then taken from the plan, as the caller compared
	// them when the copy started: a znode changed during the copy by something not registered
	// as a consumer is not seen (verify reports it afterwards). It needs a LegacyRechecker.
	GatesOnly bool
	// Progress, when set, is told how many planned writes are done so far.
	Progress func(done int)
	// Replan, when set, decides each batch afresh in place of the plan's policy over the
	// ZooKeeper offsets: for a plan whose targets come from elsewhere (a restore's file). The
	// re-check then reads what the gates read (liveness, the Kafka group state and commits)
	// and the batch's topics, never the ZooKeeper offsets; a group ZooKeeper does not hold
	// has no live consumers. It needs a Legacy that is a LegacyRechecker.
	Replan Replanner
	// Now is the clock that dates a gate read early (earlyGateMaxAge); nil is time.Now. Tests
	// move it instead of sleeping.
	Now func() time.Time

	gmap migrate.GroupMap // the plan's group map (Stream sets it)
}

func (c *Copier) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Replanner plans the groups of a batch afresh from what the re-check read: one GroupPlan per
// group of in.Legacy (same names), whose write entries are what may be committed now. An entry
// planned as a write is committed only when the fresh plan still writes the same target.
type Replanner func(in migrate.Inputs) (map[string]migrate.GroupPlan, error)

// decideBatch compares each of the batch's planned writes with its fresh plan and, when
// executing, backs up what the commits will overwrite: after it, the batch is ready to commit.
func (c *Copier) decideBatch(ctx context.Context, chunk []migrate.GroupWrites, fresh map[string]migrate.GroupPlan, execute bool) ([]GroupResult, [][]migrate.Commit, error) {
	results := make([]GroupResult, len(chunk))
	commits := make([][]migrate.Commit, len(chunk))
	for i, w := range chunk {
		results[i], commits[i] = decide(w, fresh[w.Group], c.Metadata, execute)
		if k := c.gmap.Kafka(w.Group); k != w.Group {
			results[i].KafkaGroup = k
		}
	}
	if !execute {
		return results, commits, nil
	}
	var toBackUp []GroupResult
	for i := range chunk {
		if len(commits[i]) > 0 {
			toBackUp = append(toBackUp, GroupResult{Group: chunk[i].Group, KafkaGroup: results[i].KafkaGroup, Partitions: pending(results[i])})
		}
	}
	if len(toBackUp) == 0 {
		return results, commits, nil
	}
	if err := c.Backup.Record(ctx, toBackUp); err != nil {
		settle(results, statusPending, StatusFailed, "not written: the backup failed")
		return results, commits, fmt.Errorf("backup: %w: nothing of this batch was written", err)
	}
	return results, commits, nil
}

// readBackTimeout bounds the read-back of a batch whose commits were sent before a stop.
const readBackTimeout = 10 * time.Second

// earlyGateMaxAge is how old the gate the previous batch's read-back read (readBackGating) may
// be when the batch is committed. Between the two the writer hands the previous batch's results
// to the sink and the progress bar, normally in a few ms; a sink blocked on a full stdout pipe
// (`| less`, a stalled log shipper) or a paused terminal made it minutes, and a consumer's
// commit or registration meanwhile went unseen: an offset could be written backwards, or into a
// live legacy group. An older gate is read again.
const earlyGateMaxAge = 100 * time.Millisecond

// writeBatch gates a decided, backed-up batch once more, commits it and reads the commits back;
// the read-back also gates the batch after it (readBackGating).
func (c *Copier) writeBatch(ctx context.Context, pb *prepared, ahead *lookahead) error {
	results, commits := pb.results, pb.commits
	if !slices.ContainsFunc(commits, func(cs []migrate.Commit) bool { return len(cs) > 0 }) {
		return nil // nothing to commit, nothing to read back
	}
	// The batch was re-checked while the one before it was committed: a consumer may have
	// committed or registered since, so its gates are read again just before the commits,
	// unless the previous batch's read-back just did.
	if !pb.gated || c.now().Sub(pb.gatedAt) > earlyGateMaxAge {
		if err := c.gateBatch(ctx, results, commits); err != nil {
			settle(results, statusPending, StatusFailed, "not written: the last re-check before the commit failed")
			return err
		}
	}
	c.commitAll(ctx, results, commits)
	accepted := hasStatus(results, statusCommitted)
	if !accepted && !hasStatus(results, statusInFlight) {
		return nil // nothing accepted, nothing that may have been: nothing to read back
	}
	// Commits Kafka accepted before a stop are read back all the same, so they are reported
	// as written rather than failed; the read-back is bounded since ctx no longer is.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	if err := c.readBackGating(ctx, rctx, results, ahead); err != nil {
		settle(results, statusCommitted, StatusFailed, "committed, but the read-back failed")
		settle(results, statusInFlight, StatusFailed, inFlightReason+", and the read-back failed: Kafka may hold the target or not (run verify)")
		if !accepted {
			return nil // the stop, which the caller reports, is why these are unknown
		}
		return err
	}
	return nil
}

// hasStatus reports whether any partition of results is in step st.
func hasStatus(results []GroupResult, st PartitionStatus) bool {
	for _, g := range results {
		if slices.ContainsFunc(g.Partitions, func(p PartitionResult) bool { return p.Status == st }) {
			return true
		}
	}
	return false
}

// settle moves every partition still in step from to the final status to.
func settle(results []GroupResult, from, to PartitionStatus, reason string) {
	for i := range results {
		for j := range results[i].Partitions {
			if p := &results[i].Partitions[j]; p.Status == from {
				p.Status, p.Reason = to, reason
			}
		}
	}
}

// decide compares each planned write with the fresh plan of its group.
func decide(w migrate.GroupWrites, fresh migrate.GroupPlan, metadata func(string, migrate.Entry) string, execute bool) (GroupResult, []migrate.Commit) {
	now := map[migrate.TopicPartition]migrate.Entry{}
	for _, e := range fresh.Entries {
		now[migrate.TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e
	}
	gr := GroupResult{Group: w.Group}
	var commits []migrate.Commit
	for _, planned := range w.Entries {
		pr := PartitionResult{Topic: planned.Topic, Partition: planned.Partition, Target: planned.Target}
		e, ok := now[migrate.TopicPartition{Topic: planned.Topic, Partition: planned.Partition}]
		pr.Before = e.Kafka
		switch {
		case !ok:
			pr.Status, pr.Reason = StatusBlocked, "the ZooKeeper offset is gone since the plan"
		case e.Kafka != nil && *e.Kafka == planned.Target:
			pr.Status, pr.Reason = StatusAlready, "Kafka already holds the target"
		case e.Action != migrate.ActionWrite && e.Class == "":
			pr.Status, pr.Reason = StatusBlocked, "changed since the plan: "+e.Reason
		case e.Action != migrate.ActionWrite:
			pr.Status, pr.Reason = StatusBlocked, "changed since the plan: now "+string(e.Class)+": "+e.Reason
		case e.Target != planned.Target:
			pr.Status, pr.Reason = StatusBlocked, fmt.Sprintf("changed since the plan: target %d, planned %d (re-run plan)", e.Target, planned.Target)
		case !execute:
			pr.Status = StatusWouldWrite
		default:
			md := ""
			if metadata != nil {
				md = metadata(w.Group, e)
			}
			commits = append(commits, migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: e.Topic, Partition: e.Partition}, Offset: e.Target, Metadata: md})
			pr.Status = statusPending
		}
		gr.Partitions = append(gr.Partitions, pr)
	}
	return gr, commits
}

func (c *Copier) commitAll(ctx context.Context, results []GroupResult, commits [][]migrate.Commit) {
	parallel := c.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range results {
		if len(commits[i]) == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs, err := c.Committer.Commit(ctx, results[i].Group, commits[i])
			applyCommit(&results[i], errs, err)
		}(i)
	}
	wg.Wait()
}

func pending(gr GroupResult) []PartitionResult {
	var out []PartitionResult
	for _, p := range gr.Partitions {
		if p.Status == statusPending {
			out = append(out, p)
		}
	}
	return out
}

// stoppedMidCommit reports whether a commit error is the run's stop (its context ended) rather
// than an answer: the committer gives up waiting, and the commit may still have been applied.
func stoppedMidCommit(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// applyCommit records per-partition commit outcomes: never one verdict for the whole group
// unless the whole request failed.
func applyCommit(gr *GroupResult, errs []migrate.CommitError, err error) {
	byTP := map[migrate.TopicPartition]error{}
	for _, ce := range errs {
		byTP[ce.TopicPartition] = ce.Err
	}
	for i := range gr.Partitions {
		p := &gr.Partitions[i]
		if p.Status != statusPending {
			continue
		}
		// A per-partition answer wins over the group error: the writer sets the group error when
		// ctx ended even though earlier chunks were accepted, and those must be read back.
		switch cerr, ok := byTP[migrate.TopicPartition{Topic: p.Topic, Partition: p.Partition}]; {
		case !ok && stoppedMidCommit(err), ok && stoppedMidCommit(cerr):
			// The request may have reached the broker before the stop, and be applied: read back.
			p.Status = statusInFlight
		case !ok && err != nil:
			p.Status, p.Reason = StatusFailed, "commit failed: "+err.Error()
		case !ok:
			p.Status, p.Reason = StatusFailed, "the commit answered nothing for this partition"
		case cerr != nil:
			p.Status, p.Reason = StatusFailed, "commit failed: "+cerr.Error()
		default:
			p.Status = statusCommitted
		}
	}
}
