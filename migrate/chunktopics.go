package migrate

import (
	"context"
	"fmt"
	"maps"
	"sync"
)

// chunkTopics describes the topics of one chunk's groups while the chunk is still being read.
// ReadGroups hands over each group as it completes, and the first one usually names the topics
// most groups share: describing them then, rather than after the chunk's last group, takes the
// description's round trips (metadata, then ListOffsets per leader) off the plan's critical
// path. A 10k-offset plan (one chunk) spent 15-25 ms of its ~260 ms waiting for them after
// its last ZooKeeper answer (bench timeline, 2-core box).
//
// Log offsets read this early are no older than those of the Planner's description cache,
// which every later chunk already uses: a log end only grows, so an early one can only make
// an offset look above-log-end (blocked, or clamped lower: data read twice, never skipped).
type chunkTopics struct {
	ctx   context.Context
	kafka KafkaState
	cache map[string]TopicInfo // the Planner's descriptions: read here, extended only by wait

	mu      sync.Mutex
	used    map[string]bool      // every topic of the chunk's valid offsets
	got     map[string]TopicInfo // described for this chunk
	pending []string             // to describe, not asked yet
	running bool                 // describe is running
	err     error                // the first failure: nothing more is asked after it
	wg      sync.WaitGroup
}

func newChunkTopics(ctx context.Context, kafka KafkaState, cache map[string]TopicInfo) *chunkTopics {
	return &chunkTopics{ctx: ctx, kafka: kafka, cache: cache, used: map[string]bool{}, got: map[string]TopicInfo{}}
}

// add notes the topics of one group read (its valid offsets: an invalid znode names no
// partition to describe) and starts describing those not known yet. It never waits for Kafka.
func (ct *chunkTopics) add(g LegacyGroup) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	last := ""
	for _, o := range g.Offsets {
		if o.Invalid != "" || o.Topic == last {
			continue // a group's offsets come sorted by topic: most repeats end here
		}
		last = o.Topic
		if ct.used[o.Topic] {
			continue
		}
		ct.used[o.Topic] = true
		if _, ok := ct.cache[o.Topic]; !ok {
			ct.pending = append(ct.pending, o.Topic)
		}
	}
	if len(ct.pending) > 0 && !ct.running && ct.err == nil {
		ct.running = true
		ct.wg.Add(1)
		go ct.describe()
	}
}

// describe asks Kafka about the pending topics, one request at a time, until none is left.
func (ct *chunkTopics) describe() {
	defer ct.wg.Done()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	for len(ct.pending) > 0 && ct.err == nil {
		batch := ct.pending // never empty: a metadata request without topics means all topics
		ct.pending = nil
		ct.mu.Unlock()
		got, err := ct.kafka.Topics(ct.ctx, batch)
		ct.mu.Lock()
		if err != nil {
			ct.err = fmt.Errorf("describe %d topics in kafka: %w", len(batch), err)
			break
		}
		for _, t := range batch {
			ti, ok := got[t]
			if !ok {
				ct.err = fmt.Errorf("describe topic %q in kafka: no answer for it", t)
				break
			}
			ct.got[t] = ti
		}
	}
	ct.running = false
}

// wait is called once the chunk's read has returned (no add runs any more). It waits for the
// descriptions asked for, adds them to the cache and returns the description of every topic
// the chunk uses: the chunk gets its own map, since the next chunk's read extends the cache
// while this one is planned.
func (ct *chunkTopics) wait() (map[string]TopicInfo, error) {
	ct.wg.Wait()
	if ct.err != nil {
		return nil, ct.err
	}
	maps.Copy(ct.cache, ct.got)
	out := make(map[string]TopicInfo, len(ct.used))
	for t := range ct.used {
		out[t] = ct.cache[t]
	}
	return out, nil
}
