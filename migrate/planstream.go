package migrate

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// DefaultChunkGroups is how many groups a Planner plans at a time: few enough that a chunk of
// 100-partition groups stays a few MB.
const DefaultChunkGroups = 200

// Planner computes the same plan as ReadInputs and Build, a chunk of groups at a time, so that
// memory is bounded by the chunk size, the groups being read and the number of topics, not by
// the number of offsets. The group names are listed and selected first (names alone are
// small); every selected group is then read in one continuous ZooKeeper read, and as each
// chunk's groups are all in, with the chunk's Kafka groups and topics (each topic described
// once, as soon as a group names it), the chunk is planned, handed to the sink in name order
// and dropped, while the read goes on.
type Planner struct {
	Legacy LegacyStore
	Kafka  KafkaState
	Filter Filter
	Policy Policy
	// ChunkGroups is how many groups are planned together (0: DefaultChunkGroups).
	ChunkGroups int
	// Cluster, when known, is recorded in the plan (Plan.Cluster).
	Cluster *ClusterIdentity
}

// PlanSink receives a streamed plan: Head once with every field known before the groups
// (Groups and Fingerprint empty), then Groups once per chunk, in name order across chunks.
type PlanSink interface {
	Head(p Plan) error
	Groups(gs []GroupPlan) error
}

// PlanTail is what a streamed plan knows only at its end.
type PlanTail struct {
	Fingerprint string
	Summary     Summary
}

// Safe reports whether copy may run the plan: no entry is blocked (as Plan.Safe).
func (t PlanTail) Safe() bool { return t.Summary.ByAction[ActionBlock] == 0 }

// Stream plans every selected group and hands the plan to sink. The fingerprint is computed as
// the groups go and equals Fingerprint over the same inputs read at once, so plan files saved
// by either path check against each other. Any error stops the stream: what the sink got so
// far is then not a plan and must not be kept as one.
func (pl *Planner) Stream(ctx context.Context, now time.Time, sink PlanSink) (PlanTail, error) {
	if err := pl.Policy.Validate(); err != nil {
		return PlanTail{}, err
	}
	mapped := *pl
	mapped.Kafka = MapKafka(pl.Kafka, pl.Filter.GroupMap)
	pl = &mapped
	// The retention is read from Kafka while ZooKeeper lists the groups: one round trip less
	// before the first offset is read. A listing or selection that fails stops it: the error is
	// reported at once, not after Kafka's retries.
	kctx, stopKafka := context.WithCancel(ctx)
	defer stopKafka()
	retained := make(chan retentionRead, 1)
	go func() {
		d, err := pl.Kafka.OffsetsRetention(kctx)
		retained <- retentionRead{d, err}
	}()
	names, err := listSelected(ctx, pl.Legacy, pl.Filter)
	if err != nil {
		stopKafka()
		<-retained // no store call outlives Stream
		return PlanTail{}, err
	}
	r := <-retained
	if r.err != nil {
		return PlanTail{}, fmt.Errorf("read offsets retention from kafka: %w", r.err)
	}
	retention := r.d
	head := Plan{SchemaVersion: PlanSchemaVersion, CreatedAt: now.UTC(), Policy: pl.Policy,
		Retention: Duration(retention), Filter: pl.Filter.Spec(), Cluster: pl.Cluster, Groups: []GroupPlan{}}
	if err := sink.Head(head); err != nil {
		return PlanTail{}, err
	}
	fp := newFingerprinter(head.Filter)
	merges := newMergeChecker(pl.Filter.GroupMap, names)
	sum := NewSummary()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := pl.readAhead(rctx, names)
	defer func() {
		cancel()
		for range chunks { // no store call outlives Stream
		}
	}()
	for c := range chunks {
		if c.err != nil {
			return PlanTail{}, c.err
		}
		gps := make([]GroupPlan, 0, len(c.in.Legacy))
		for _, g := range c.in.Legacy {
			if err := merges.add(g); err != nil {
				return PlanTail{}, err
			}
			gp, err := buildGroup(g, c.in, pl.Policy, head.CreatedAt)
			if err != nil {
				return PlanTail{}, err
			}
			fingerprintGroup(fp, g, c.in)
			sum.Add(gp)
			gps = append(gps, gp)
		}
		if len(gps) > 0 {
			if err := sink.Groups(gps); err != nil {
				return PlanTail{}, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return PlanTail{}, err
	}
	if err := checkKept(ctx, pl.Legacy, pl.Filter, len(names), sum.Partitions); err != nil {
		return PlanTail{}, err
	}
	return PlanTail{Fingerprint: fp.sum(), Summary: sum}, nil
}

type retentionRead struct {
	d   time.Duration
	err error
}

// newFingerprinter starts Fingerprint for a streamed plan: fingerprintGroup each group in name
// order, then sum.
func newFingerprinter(f FilterSpec) *fpWriter {
	w := &fpWriter{h: sha256.New()}
	fingerprintHead(w, f)
	return w
}
