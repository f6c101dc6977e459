package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Request is one verify run: the stores, already opened by the caller, the selection, the
// tolerances, and what to do with a passing group. Run checks it before reading anything.
type Request struct {
	// Legacy is the legacy (ZooKeeper) store compared; Kafka gives the groups' states and
	// commits (OffsetFetch) and the topics' log ranges. Both are required.
	Legacy migrate.LegacyStore
	Kafka  migrate.KafkaState
	// Filter selects the groups and topics read and compared, and maps legacy groups to Kafka
	// groups. Run sets Options.MatchTopic and Options.GroupMap from it: a comparison under
	// another selection than the read's would report every unselected commit as missing-in-zk.
	Filter  migrate.Filter
	Options Options
	// Translator is set when Kafka is a cluster MirrorMaker 2 replicates the znodes' cluster
	// into and Legacy is read through it (migrate.Translated): the topic filter names the
	// source's topics, and a Kafka commit is selected by the source topic its topic replicates.
	Translator migrate.Translator
	// ViaTopic compares the commits Committed reads (verify --via-topic: decoded from
	// __consumer_offsets) instead of those Kafka's OffsetFetch gave. Committed is required
	// with ViaTopic and not read without it.
	ViaTopic  bool
	Committed migrate.CommittedSource
	// Mark writes the cutover marker (Marker) of every group that passes, has offsets and has no
	// live legacy consumers, through Writer (required with Mark). Marking is refused under a
	// topic filter: a marker says the whole group was verified.
	Mark   bool
	Writer migrate.LegacyWriter
	// Version is this tool's version, written into each marker as "zk2kafka <Version>".
	Version string
	// Now stamps the report (CheckedAt) and the markers; nil is time.Now.
	Now func() time.Time
	// Logger receives the warnings (nothing selected, a passing group left unmarked) and a line
	// per marked group; nil discards them.
	Logger *slog.Logger
	// ReadProgress is told how the read of the legacy store advances (migrate.WithReadProgress);
	// ReadDone is called once when both stores have been read, before anything else is (a
	// progress display ends there). Either may be nil.
	ReadProgress migrate.ReadProgressFunc
	ReadDone     func()
}

// MarkError is Run's error when the comparison completed but writing a cutover marker failed.
// Run returns the report with it: the groups marked before the failure stay marked (and are
// Marked in the report), the failing group and those after it are not.
type MarkError struct {
	Group string // the group whose marker could not be written
	Err   error
}

func (e *MarkError) Error() string {
	return fmt.Sprintf("--mark: stopped at group %q (the groups before it are marked): %v", e.Group, e.Err)
}

func (e *MarkError) Unwrap() error { return e.Err }

// Validate refuses tolerances that contradict each other or mean nothing.
func (o Options) Validate() error {
	switch {
	case o.MaxKafkaLead != nil && *o.MaxKafkaLead < 0:
		return fmt.Errorf("--max-kafka-lead: %d is negative, expected 0 or more (no limit: leave MaxKafkaLead unset)", *o.MaxKafkaLead)
	case o.MaxKafkaLead != nil && o.Strict:
		return errors.New("--max-kafka-lead with --strict: --strict already allows no lead")
	}
	return nil
}

// CheckMark refuses to mark groups under f: a marker says the whole group was verified, but
// under a topic filter the group's other topics are never compared.
func CheckMark(f migrate.Filter) error {
	if f.Spec().TopicRegex != "" {
		return errors.New("--mark with --topic-regex: a marker says the whole group is migrated, but only the selected topics are verified; verify without --topic-regex to mark")
	}
	return nil
}

// check refuses a request before anything is read.
func (r Request) check() error {
	switch {
	case r.Legacy == nil:
		return errors.New("verify: no legacy store")
	case r.Kafka == nil:
		return errors.New("verify: no Kafka state")
	case r.ViaTopic && r.Committed == nil:
		return errors.New("--via-topic: no source of __consumer_offsets commits")
	case r.Mark && r.Writer == nil:
		return errors.New("--mark: the legacy store cannot write the cutover markers")
	}
	if err := r.Options.Validate(); err != nil {
		return err
	}
	if r.Mark {
		return CheckMark(r.Filter)
	}
	return nil
}

// Run reads both stores for the selected groups (migrate.ReadInputs), swaps in the commits of
// Committed under ViaTopic, describes the topics only Kafka has commits for (so every commit is
// checked against its partition's log), compares (Compare) and, under Mark, writes the markers of
// the groups that may be marked. It writes nothing but the markers.
//
// An error before the comparison returns the zero Report. A failure to write a marker returns
// the complete report with a *MarkError. A report that fails is not an error: see Report.Pass.
func Run(ctx context.Context, req Request) (Report, error) {
	if err := req.check(); err != nil {
		return Report{}, err
	}
	opts := req.Options
	opts.MatchTopic, opts.GroupMap = req.Filter.CommitTopics(req.Translator), req.Filter.GroupMap
	log := req.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	in, err := migrate.ReadInputs(ctx, migrate.WithReadProgress(req.Legacy, req.ReadProgress), req.Kafka, req.Filter)
	if err != nil {
		return Report{}, err
	}
	if req.ReadDone != nil {
		req.ReadDone()
	}
	states := in.Groups
	if req.ViaTopic {
		if states, err = readViaTopic(ctx, req.Committed, in, req.Filter.GroupMap); err != nil {
			return Report{}, err
		}
	}
	// Legacy groups merged into one Kafka group are each compared with their own partitions.
	states = in.OwnStates(states)
	topics, err := describeCommitted(ctx, req.Kafka, in, states, opts.MatchTopic)
	if err != nil {
		return Report{}, err
	}
	report := Compare(in.Legacy, states, topics, opts)
	now := req.Now
	if now == nil {
		now = time.Now
	}
	report.CheckedAt = now().UTC()
	if len(report.Groups) == 0 {
		log.Warn("no group selected: nothing was verified")
	}
	if req.Mark {
		err = markPassed(ctx, req.Writer, "zk2kafka "+req.Version, log, &report)
	}
	return report, err
}

// describeCommitted returns the log ranges of every partition the groups have a Kafka commit
// for, so that Compare can fail a commit outside its log: in.Topics covers the topics of the
// legacy offsets (read after the OffsetFetch commits, so a log end is never older than a
// commit); the selected topics only Kafka has a commit for are described here.
func describeCommitted(ctx context.Context, kafka migrate.KafkaState, in migrate.Inputs, states map[string]migrate.GroupState,
	matchTopic func(string) bool) (map[string]migrate.TopicInfo, error) {
	topics := maps.Clone(in.Topics)
	if topics == nil {
		topics = map[string]migrate.TopicInfo{}
	}
	var more []string
	for _, lg := range in.Legacy {
		for tp := range states[lg.Group].Committed {
			if _, ok := topics[tp.Topic]; !ok && matchTopic(tp.Topic) {
				more = append(more, tp.Topic)
			}
		}
	}
	if len(more) == 0 { // never an empty metadata request: it means "all topics"
		return topics, nil
	}
	slices.Sort(more)
	more = slices.Compact(more)
	described, err := kafka.Topics(ctx, more)
	if err != nil {
		return nil, fmt.Errorf("describe %d topics in kafka for their log ranges: %w", len(more), err)
	}
	maps.Copy(topics, described)
	return topics, nil
}

// readViaTopic replaces the OffsetFetch commits of in.Groups with those src reads, asking for
// the Kafka group each legacy group is compared with. A group src does not answer for is an
// error: taking it for a group without commits would report every partition missing-in-kafka,
// or worse, hide a commit a consumer would start from.
func readViaTopic(ctx context.Context, src migrate.CommittedSource, in migrate.Inputs, gm migrate.GroupMap) (map[string]migrate.GroupState, error) {
	names := make([]string, 0, len(in.Legacy))
	for _, lg := range in.Legacy {
		names = append(names, gm.Kafka(lg.Group))
	}
	slices.Sort(names)
	committed, err := src.Committed(ctx, slices.Compact(names))
	if err != nil {
		return nil, fmt.Errorf("--via-topic: %w", err)
	}
	out := make(map[string]migrate.GroupState, len(in.Groups))
	for _, lg := range in.Legacy {
		n := lg.Group
		c, ok := committed[gm.Kafka(n)]
		if !ok {
			return nil, fmt.Errorf("--via-topic: no answer for group %q", gm.Kafka(n))
		}
		s := in.Groups[n]
		s.Committed, s.Metadata = c.Committed, c.Metadata
		out[n] = s
	}
	return out, nil
}
