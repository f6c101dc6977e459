package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// filterOptions are the flags that choose which groups and topics a run covers. Every command
// that reads offsets shares them, so one selection means the same thing everywhere.
type filterOptions struct {
	groups       []string
	groupRegex   string
	topicRegex   string
	excludeRegex string
	allowEmpty   bool
	groupMap     []string
	groupMapFile string
}

func (s *filterOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringSliceVar(&s.groups, "group", nil, "only this legacy (ZooKeeper) group (repeat or comma-separate for several; "+
		"the name before any --group-map)")
	f.StringVar(&s.groupRegex, "group-regex", "", "only legacy groups whose name matches this regular expression (RE2, unanchored)")
	f.StringVar(&s.topicRegex, "topic-regex", "", "only topics matching this regular expression")
	f.StringVar(&s.excludeRegex, "exclude-group-regex", "", "leave out legacy groups matching this regular expression (wins over --group)")
	f.StringSliceVar(&s.groupMap, "group-map", nil, "old=new: legacy group old lands in Kafka group new (repeat or comma-separate; "+
		"unmapped groups keep their name; see Group mapping in zk2kafka migrate --help)")
	f.StringVar(&s.groupMapFile, "group-map-file", "", "CSV file of old,new lines, as --group-map (no header; # comments)")
}

// addAllowEmpty adds --allow-empty, for the verbs that read offsets once (plan, copy, verify,
// export, restore); dual-commit waits for groups instead and has no use for it.
func (s *filterOptions) addAllowEmpty(c *cobra.Command) {
	c.Flags().BoolVar(&s.allowEmpty, "allow-empty", false,
		"run on a selection that matches no group (otherwise an error: a gate on nothing would pass)")
}

// filter checks the options before any network call; the group map file is read here.
func (s *filterOptions) filter() (migrate.Filter, error) {
	f, err := migrate.NewFilter(s.groups, s.groupRegex, s.topicRegex, s.excludeRegex)
	if err != nil {
		return f, err
	}
	f.AllowEmpty = s.allowEmpty
	f.GroupMap, err = s.parseGroupMap()
	return f, err
}

// parseGroupMap reads --group-map and --group-map-file (nil when neither is given).
func (s *filterOptions) parseGroupMap() (migrate.GroupMap, error) {
	if s.groupMapFile == "" {
		return migrate.ParseGroupMap(s.groupMap, "", nil)
	}
	file, err := os.Open(s.groupMapFile)
	if err != nil {
		return nil, fmt.Errorf("--group-map-file: %w", err)
	}
	defer file.Close()
	return migrate.ParseGroupMap(s.groupMap, s.groupMapFile, file)
}

// selectionOptions are the filter flags plus how conflicts are decided; plan and copy share
// them so that a fresh copy plans exactly as plan does.
type selectionOptions struct {
	filterOptions
	onConflict   string
	outOfRange   string
	offsetAdjust int64
}

func (s *selectionOptions) addFlags(c *cobra.Command) {
	s.filterOptions.addFlags(c)
	f := c.Flags()
	f.StringVar(&s.onConflict, "on-conflict", string(migrate.ConflictMax),
		"when both stores hold an offset: max (never backwards), zk, kafka, or fail")
	f.StringVar(&s.outOfRange, "out-of-range", string(migrate.RangeFail),
		"when the ZooKeeper offset is outside the partition's log: fail, clamp, or skip")
	addOffsetAdjustFlag(c, &s.offsetAdjust)
}

// addOffsetAdjustFlag is --offset-adjust, one text for every verb that compares or writes.
// plan, copy, verify and dual-commit of one migration share it, from a config file or the
// environment too; export and restore take it from their command line alone
// (addArchiveOffsetAdjustFlag).
func addOffsetAdjustFlag(c *cobra.Command, v *int64) {
	c.Flags().Int64Var(v, "offset-adjust", 0,
		"add N to every ZooKeeper offset, for clients that stored the last consumed offset (e.g. 1)")
}

// policy checks the options before any network call.
func (s *selectionOptions) policy() (migrate.Policy, error) {
	p := migrate.Policy{
		OnConflict:   migrate.ConflictPolicy(s.onConflict),
		OutOfRange:   migrate.RangePolicy(s.outOfRange),
		OffsetAdjust: s.offsetAdjust,
	}
	if err := p.Validate(); err != nil {
		return migrate.Policy{}, fmt.Errorf("--on-conflict/--out-of-range: %w", err)
	}
	return p, nil
}

// addArchiveOffsetAdjustFlag is export's and restore's --offset-adjust, command line only: the
// adjust a migration's shared config gives plan, copy and verify would shift an export of Kafka
// or refuse the undo of a copy (its backup holds Kafka offsets), far from where it was set.
func addArchiveOffsetAdjustFlag(c *cobra.Command, v *int64, usage string) {
	c.Flags().Int64Var(v, "offset-adjust", 0, usage)
	markCommandLineOnly(c, "offset-adjust")
}
