package zkreader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// StormLayout names the offsets of one storm-kafka spout (storm_parse.go describes the znodes)
// and the Kafka group they are migrated into.
type StormLayout struct {
	// Root is the spout's SpoutConfig.zkRoot, an absolute path under the connect string's chroot.
	// storm-kafka has no default: every topology sets its own.
	Root string
	// SpoutID is the spout's SpoutConfig.id, the folder under Root.
	SpoutID string
	// Group is the Kafka group the offsets go to: the group.id the operator gives the
	// storm-kafka-client spout that replaces storm-kafka. Storm itself names none.
	Group string
	// Stopped says the operator knows the topology is deactivated or killed. storm-kafka
	// registers nothing in ZooKeeper while it runs, so without it the group is reported with
	// a liveness registration that stands for "unknown" (StormUnknownLiveness), which gates
	// copy as a live consumer does.
	Stopped bool
}

// StormUnknownLiveness is the liveness registration of a Storm spout's group while the operator
// has not said the topology is stopped.
const StormUnknownLiveness = "storm topology: liveness unknown (storm-kafka registers nothing while it runs; pass --legacy-stopped once it is deactivated or killed)"

// Validate checks the layout: an absolute Root without a trailing slash, a SpoutID and a Group
// that are single path components / group names.
func (l StormLayout) Validate() error {
	if l.Root == "" || l.Root[0] != '/' {
		return fmt.Errorf("storm zk root %q: expected an absolute path, e.g. /kafka-spout-offsets", l.Root)
	}
	if l.Root != "/" {
		if strings.HasSuffix(l.Root, "/") {
			return fmt.Errorf("storm zk root %q: remove the trailing '/'", l.Root)
		}
		for _, c := range strings.Split(l.Root[1:], "/") {
			if err := ValidateName(c); err != nil {
				return fmt.Errorf("storm zk root %q: %w", l.Root, err)
			}
		}
	}
	if err := ValidateName(l.SpoutID); err != nil {
		return fmt.Errorf("storm spout id %q: %w", l.SpoutID, err)
	}
	if l.Group == "" {
		return errors.New("storm group: name the Kafka group the spout's offsets go to")
	}
	return nil
}

// dir is the spout's folder relative to the chroot: <Root>/<SpoutID>.
func (l StormLayout) dir() string {
	if l.Root == "/" {
		return "/" + l.SpoutID
	}
	return l.Root + "/" + l.SpoutID
}

func (l StormLayout) liveness() []string {
	if l.Stopped {
		return nil
	}
	return []string{StormUnknownLiveness}
}

// StormStore reads one storm-kafka spout's offsets as one legacy group named Layout.Group
// (migrate.LegacyStore, migrate.LegacyRechecker), over a Reader's pool. It writes nothing:
// restore --to zk, verify --mark and dual-commit --reverse are refused for it.
type StormStore struct {
	r *Reader
	l StormLayout
}

var (
	_ migrate.LegacyStore     = (*StormStore)(nil)
	_ migrate.LegacyRechecker = (*StormStore)(nil)
	_ migrate.LegacyRoots     = (*StormStore)(nil)
)

// OpenStorm opens a Reader (as Open) that reads the spout's layout l.
func OpenStorm(ctx context.Context, cfg Config, l StormLayout) (*StormStore, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	r, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &StormStore{r: r, l: l}, nil
}

// NewStormStore reads the spout's layout l over r, which the caller still closes.
func NewStormStore(r *Reader, l StormLayout) (*StormStore, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &StormStore{r: r, l: l}, nil
}

// Close closes the Reader.
func (s *StormStore) Close() { s.r.Close() }

// ReadOnly says why nothing is written to this store (cmd refuses the writing verbs with it).
func (s *StormStore) ReadOnly() string {
	return "the Storm layout is read-only: zk2kafka does not write storm-kafka's JSON znodes"
}

// GroupsRoot is the spout's folder, where ListGroups looks.
func (s *StormStore) GroupsRoot() string { return s.r.path(s.l.dir()) }

// NearbyRoots is empty: the chroot-level hint is about /consumers.
func (s *StormStore) NearbyRoots(context.Context) ([]migrate.NearbyRoot, error) { return nil, nil }

// ListGroups returns the layout's group when the spout's folder exists, else none (a missing
// chroot is an error, as for /consumers).
func (s *StormStore) ListGroups(ctx context.Context) ([]string, error) {
	p := s.r.path(s.l.dir())
	var groups []string
	err := s.r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		ok, _, err := c.Exists(p)
		switch {
		case err != nil:
			return fmt.Errorf("look for the storm spout folder %s: %w", p, err)
		case !ok:
			return s.r.checkChroot(c)
		}
		groups = []string{s.l.Group}
		return nil
	})
	return groups, err
}

// ReadGroups reads the spout's partition znodes for its group; any other group name has no
// offsets here (as a group missing from /consumers).
func (s *StormStore) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		lg := migrate.LegacyGroup{Group: g}
		if g == s.l.Group {
			var err error
			if lg, err = s.readSpout(ctx); err != nil {
				return err
			}
		}
		if err := emit(lg); err != nil {
			return fmt.Errorf("read group %q: emit: %w", g, err)
		}
	}
	return ctx.Err()
}

// stormRead collects the znodes of one spout read from concurrent calls.
type stormRead struct {
	verb, group string
	mu          sync.Mutex
	offsets     []migrate.LegacyOffset
}

func (g *stormRead) add(o migrate.LegacyOffset) {
	g.mu.Lock()
	g.offsets = append(g.offsets, o)
	g.mu.Unlock()
}

// readSpout reads the spout's folder as one pipelined tree: its listing; as it answers, a Get
// of each partition_<N> child and a listing of each other child (a wildcard spout's topic
// folder); as those answer, a Get of each of their partition_<N> children.
func (s *StormStore) readSpout(ctx context.Context) (migrate.LegacyGroup, error) {
	g := &stormRead{verb: "read", group: s.l.Group}
	base := s.r.path(s.l.dir())
	p := s.r.newPipe(ctx)
	get := func(path string, partition int32, topic string) {
		p.run(func(c *zk.Conn) (func() error, error) { return nil, g.get(c, path, partition, topic) })
	}
	var list func(dir, topic string)
	list = func(dir, topic string) {
		p.run(func(c *zk.Conn) (func() error, error) {
			l, err := listChildren(c, g.verb, g.group, dir)
			if err != nil {
				return nil, err
			}
			return func() error {
				if l.denied {
					g.add(migrate.LegacyOffset{Topic: topic, Partition: -1, Path: dir,
						Invalid: denied + ": cannot list the storm spout's partitions"})
					return nil
				}
				for _, name := range l.names {
					path := dir + "/" + name
					part, perr := ParseStormPartition(name)
					switch {
					case perr == nil:
						get(path, part, topic)
					case topic == "":
						list(path, name) // a wildcard spout's topic folder
					default:
						g.add(migrate.LegacyOffset{Topic: topic, Partition: -1, Path: path, Invalid: perr.Error()})
					}
				}
				return nil
			}, nil
		})
	}
	list(base, "")
	if err := p.wait(); err != nil {
		return migrate.LegacyGroup{}, err
	}
	return s.result(g), nil
}

// get reads one partition znode; one gone since it was listed is absent.
func (g *stormRead) get(c *zk.Conn, path string, partition int32, topic string) error {
	data, stat, err := c.Get(path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case errors.Is(err, zk.ErrNoAuth):
		g.add(migrate.LegacyOffset{Topic: topic, Partition: partition, Path: path, Invalid: denied})
		return nil
	case err != nil:
		return fmt.Errorf("%s group %q: get %s: %w", g.verb, g.group, path, err)
	}
	g.add(stormOffset(path, partition, topic, data, stat))
	return nil
}

// stormOffset is the LegacyOffset of one partition znode's data.
func stormOffset(path string, partition int32, topic string, data []byte, stat *zk.Stat) migrate.LegacyOffset {
	o := migrate.LegacyOffset{Partition: partition, Path: path, Mtime: time.UnixMilli(stat.Mtime).UTC()}
	so, err := ParseStormOffset(data, partition, topic)
	o.Topic = cmp.Or(so.Topic, topic) // data unread: a wildcard spout's folder still names the topic
	if err != nil {
		o.Invalid = err.Error()
		return o
	}
	o.Offset = so.Offset
	return o
}

func (s *StormStore) result(g *stormRead) migrate.LegacyGroup {
	slices.SortFunc(g.offsets, compareOffsets)
	return migrate.LegacyGroup{Group: s.l.Group, Offsets: g.offsets, LiveConsumers: s.l.liveness()}
}

// RecheckGroups implements migrate.LegacyRechecker: a Get of each requested znode, which must
// lie in the spout's folder, read as ReadGroups reads it (the topic of a znode directly under
// the spout's folder must still be the one planned).
func (s *StormStore) RecheckGroups(ctx context.Context, reqs []migrate.RecheckRequest) ([]migrate.LegacyGroup, error) {
	out := make([]migrate.LegacyGroup, len(reqs))
	base := s.r.path(s.l.dir()) + "/"
	for i, req := range reqs {
		out[i] = migrate.LegacyGroup{Group: req.Group}
		if req.Group != s.l.Group {
			if len(req.Offsets) > 0 {
				return nil, fmt.Errorf("recheck group %q: not the storm spout's group %q", req.Group, s.l.Group)
			}
			continue
		}
		g := &stormRead{verb: "recheck", group: req.Group}
		type want struct {
			path      string
			partition int32
			topic     string
		}
		wants := make([]want, len(req.Offsets))
		for j, o := range req.Offsets {
			rel, ok := strings.CutPrefix(o.Path, base)
			dir, name, nested := strings.Cut(rel, "/") // <topic>/partition_<N> (wildcard)
			if !nested {
				dir, name = "", rel // partition_<N>
			}
			part, err := ParseStormPartition(name)
			if !ok || err != nil || strings.Contains(name, "/") || (nested && dir != o.Topic) {
				return nil, fmt.Errorf("recheck group %q: znode %s is not a storm-kafka partition znode of topic %q under %s",
					req.Group, o.Path, o.Topic, base)
			}
			wants[j] = want{o.Path, part, dir}
		}
		err := s.r.fanOut(ctx, len(wants), func(c *zk.Conn, j int) error {
			w := wants[j]
			data, stat, err := c.Get(w.path)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil
			case errors.Is(err, zk.ErrNoAuth):
				g.add(migrate.LegacyOffset{Topic: req.Offsets[j].Topic, Partition: w.partition, Path: w.path, Invalid: denied})
				return nil
			case err != nil:
				return fmt.Errorf("recheck group %q: get %s: %w", req.Group, w.path, err)
			}
			o := stormOffset(w.path, w.partition, w.topic, data, stat)
			if o.Invalid == "" && o.Topic != req.Offsets[j].Topic {
				o.Invalid = fmt.Sprintf("storm JSON: field \"topic\" is now %q, was %q when planned", o.Topic, req.Offsets[j].Topic)
				o.Topic = req.Offsets[j].Topic
			}
			g.add(o)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[i] = s.result(g)
	}
	return out, nil
}
