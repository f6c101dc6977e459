// Package seed fills the real local stack with a legacy consumer-offset store to migrate: topics
// with records in Kafka and /consumers/<g>/offsets/<t>/<p> znodes in ZooKeeper, exactly as the
// Scala high-level consumer (ZkUtils) wrote them, optionally with live consumer registrations.
//
// It is dev tooling for tests, benchmarks and demos, not an adapter: it talks to sarama and
// go-zookeeper directly. Everything it writes is a pure function of a Spec, so a test can
// recompute any expected offset from the Spec alone, even at a million offsets.
package seed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// Default name prefixes, used when a Spec leaves them empty.
const (
	DefaultGroupPrefix = "seed-group"
	DefaultTopicPrefix = "seed-topic"
)

// Spec describes what to seed. Everything seeded is determined by it: the same Spec gives the
// same names and the same offsets on every run.
type Spec struct {
	Seed           int64 // seeds the offsets (math/rand/v2 PCG)
	Groups         int   // number of consumer groups
	TopicsPerGroup int   // topics each group has offsets for, taken from the pool of Topics
	Topics         int   // size of the shared topic pool
	Partitions     int32 // partitions per topic
	Records        int   // records in each partition, so each log end offset is Records
	GroupPrefix    string
	TopicPrefix    string
	// Chroot is the ZooKeeper chroot above /consumers ("" for none), e.g. "/kafka" when the old
	// consumers shared the brokers' chroot.
	Chroot string
	// LiveGroups is how many groups (the first ones) also get live legacy registrations:
	// ephemeral /ids/<id> and /owners/<t>/<p> znodes that last until Result.Close.
	LiveGroups int
	// SkipKafka writes only the ZooKeeper side: the topics are assumed to exist already, or
	// to be missing on purpose.
	SkipKafka bool
	// Security is how the seeder reaches Kafka (TLS, SASL); the zero value is plaintext.
	Security kafkaconn.Security `json:"-"`
}

// legalName is what Kafka accepts in a topic name; group names here keep to it too so they are
// safe znode names.
var legalName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// WithDefaults returns the Spec with empty prefixes replaced by the defaults.
func (s Spec) WithDefaults() Spec {
	if s.GroupPrefix == "" {
		s.GroupPrefix = DefaultGroupPrefix
	}
	if s.TopicPrefix == "" {
		s.TopicPrefix = DefaultTopicPrefix
	}
	return s
}

// Validate checks the Spec (after WithDefaults) before anything is written.
func (s Spec) Validate() error {
	var errs []error
	if s.Groups < 0 {
		errs = append(errs, fmt.Errorf("groups must be >= 0, got %d", s.Groups))
	}
	if s.Topics < 1 {
		errs = append(errs, fmt.Errorf("topics must be >= 1, got %d", s.Topics))
	}
	if s.TopicsPerGroup < 1 || s.TopicsPerGroup > s.Topics {
		errs = append(errs, fmt.Errorf("topics per group must be in [1, topics=%d], got %d", s.Topics, s.TopicsPerGroup))
	}
	if s.Partitions < 1 {
		errs = append(errs, fmt.Errorf("partitions must be >= 1, got %d", s.Partitions))
	}
	if s.Records < 0 {
		errs = append(errs, fmt.Errorf("records must be >= 0, got %d", s.Records))
	}
	if s.LiveGroups < 0 || s.LiveGroups > s.Groups {
		errs = append(errs, fmt.Errorf("live groups must be in [0, groups=%d], got %d", s.Groups, s.LiveGroups))
	}
	for what, p := range map[string]string{"group prefix": s.GroupPrefix, "topic prefix": s.TopicPrefix} {
		if !legalName.MatchString(p) {
			errs = append(errs, fmt.Errorf("%s %q: want letters, digits, '.', '_' or '-'", what, p))
		}
	}
	if len(s.TopicPrefix)+12 > 249 {
		errs = append(errs, fmt.Errorf("topic prefix %q is too long for a Kafka topic name", s.TopicPrefix))
	}
	if err := checkChroot(s.Chroot); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func checkChroot(c string) error {
	if c == "" {
		return nil
	}
	if !strings.HasPrefix(c, "/") || strings.HasSuffix(c, "/") || strings.Contains(c, "//") {
		return fmt.Errorf("chroot %q: want an absolute znode path like /kafka, no trailing '/'", c)
	}
	return nil
}

// Offsets is the number of offset znodes the Spec describes.
func (s Spec) Offsets() int { return s.Groups * s.TopicsPerGroup * int(s.Partitions) }

// GroupName is the name of group i, zero-padded so names sort in index order.
func (s Spec) GroupName(i int) string {
	return fmt.Sprintf("%s-%0*d", s.GroupPrefix, digits(s.Groups), i)
}

// TopicName is the name of topic i of the pool.
func (s Spec) TopicName(i int) string {
	return fmt.Sprintf("%s-%0*d", s.TopicPrefix, digits(s.Topics), i)
}

// TopicNames lists the whole topic pool.
func (s Spec) TopicNames() []string {
	out := make([]string, s.Topics)
	for i := range out {
		out[i] = s.TopicName(i)
	}
	return out
}

// GroupTopic is the pool index of the j-th topic of group g: a window sliding with the group,
// so every topic of the pool is used once there are enough groups.
func (s Spec) GroupTopic(g, j int) int { return (g + j) % s.Topics }

// Offset is the seeded offset of group g, pool topic t, partition p: a pseudo-random value in
// [0, Records], the next offset to consume. Each key gets its own PCG stream, so any offset
// can be recomputed without the others.
func (s Spec) Offset(g, t int, p int32) int64 {
	if s.Records == 0 {
		return 0
	}
	key := (uint64(g)*uint64(s.Topics)+uint64(t))*uint64(s.Partitions) + uint64(p)
	r := rand.New(rand.NewPCG(uint64(s.Seed), key))
	return int64(r.Uint64N(uint64(s.Records) + 1))
}

// Expected returns the seeded offset of k, and false when the Spec has no such offset.
func (s Spec) Expected(k migrate.Key) (int64, bool) {
	g, ok := parseIndex(k.Group, s.GroupPrefix, s.Groups, s.GroupName)
	if !ok {
		return 0, false
	}
	t, ok := parseIndex(k.Topic, s.TopicPrefix, s.Topics, s.TopicName)
	if !ok || k.Partition < 0 || k.Partition >= s.Partitions {
		return 0, false
	}
	if (t-g%s.Topics+s.Topics)%s.Topics >= s.TopicsPerGroup {
		return 0, false // the topic is in the pool but outside this group's window
	}
	return s.Offset(g, t, k.Partition), true
}

// Each calls fn for every seeded offset in group, topic, partition order until fn returns false.
func (s Spec) Each(fn func(k migrate.Key, offset int64) bool) {
	for g := range s.Groups {
		group := s.GroupName(g)
		for j := range s.TopicsPerGroup {
			t := s.GroupTopic(g, j)
			topic := s.TopicName(t)
			for p := range s.Partitions {
				if !fn(migrate.Key{Group: group, Topic: topic, Partition: p}, s.Offset(g, t, p)) {
					return
				}
			}
		}
	}
}

// parseIndex recovers i from name == nameOf(i), rejecting anything nameOf would not produce.
func parseIndex(name, prefix string, n int, nameOf func(int) string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= n || nameOf(i) != name {
		return 0, false
	}
	return i, true
}

// digits is the width of the largest index below n.
func digits(n int) int { return len(strconv.Itoa(max(n-1, 0))) }
