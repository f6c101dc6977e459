package migrate

import (
	"context"
	"fmt"
	"sync"
)

// topicDescriber describes the topics a plan's groups use while the groups are still being
// read. A group read names its topics (those of its valid offsets: an invalid znode names no
// partition to describe), and the first groups usually name the topics most groups share:
// describing them then, rather than after a chunk's last group, takes the description's round
// trips (metadata, then ListOffsets per leader) off the plan's critical path: otherwise a
// chunk waits for them after its last ZooKeeper answer. Each topic is described once per plan.
//
// Log offsets read early are no older than they were when one description served every later
// chunk, as it still does: a log end only grows, so an early one can only make an offset look
// above-log-end (blocked, or clamped lower: data read twice, never skipped).
type topicDescriber struct {
	ctx   context.Context
	kafka KafkaState

	mu      sync.Mutex
	changed sync.Cond            // a description came back, or describing stopped
	known   map[string]TopicInfo // described
	asked   map[string]bool      // described, being described or pending
	pending []string             // to describe, not asked of Kafka yet
	running bool                 // describe is running
	err     error                // the first failure: nothing more is asked after it
	wg      sync.WaitGroup
}

func newTopicDescriber(ctx context.Context, kafka KafkaState) *topicDescriber {
	d := &topicDescriber{ctx: ctx, kafka: kafka, known: map[string]TopicInfo{}, asked: map[string]bool{}}
	d.changed.L = &d.mu
	return d
}

// add notes the topics of one group read in used (the set of its chunk) and starts describing
// those not asked yet. It never waits for Kafka.
func (d *topicDescriber) add(g LegacyGroup, used map[string]bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	last := ""
	for _, o := range g.Offsets {
		if o.Invalid != "" || o.Topic == last {
			continue // a group's offsets come sorted by topic: most repeats end here
		}
		last = o.Topic
		used[o.Topic] = true
		if !d.asked[o.Topic] {
			d.asked[o.Topic] = true
			d.pending = append(d.pending, o.Topic)
		}
	}
	d.startLocked()
}

func (d *topicDescriber) startLocked() {
	if len(d.pending) > 0 && !d.running && d.err == nil {
		d.running = true
		d.wg.Add(1)
		go d.describe()
	}
}

// describe asks Kafka about the pending topics, one request at a time, until none is left.
func (d *topicDescriber) describe() {
	defer d.wg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.changed.Broadcast()
	for len(d.pending) > 0 && d.err == nil {
		batch := d.pending // never empty: a metadata request without topics means all topics
		d.pending = nil
		d.mu.Unlock()
		got, err := d.kafka.Topics(d.ctx, batch)
		d.mu.Lock()
		if err != nil {
			d.err = fmt.Errorf("describe %d topics in kafka: %w", len(batch), err)
			break
		}
		for _, t := range batch {
			ti, ok := got[t]
			if !ok {
				d.err = fmt.Errorf("describe topic %q in kafka: no answer for it", t)
				break
			}
			d.known[t] = ti
		}
		d.changed.Broadcast()
	}
	d.running = false
}

// describedAll waits until every topic of used is described and returns their descriptions:
// a map of the chunk's own, since later chunks' descriptions keep arriving meanwhile.
func (d *topicDescriber) describedAll(used map[string]bool) (map[string]TopicInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.err != nil {
			return nil, d.err
		}
		missing := false
		for t := range used {
			if _, ok := d.known[t]; !ok {
				missing = true
				break
			}
		}
		if !missing {
			out := make(map[string]TopicInfo, len(used))
			for t := range used {
				out[t] = d.known[t]
			}
			return out, nil
		}
		// Every used topic was asked (add): pending ones are described by a running describe.
		d.startLocked()
		d.changed.Wait()
	}
}

// stop waits for a running describe to end; the caller cancels its context first when the
// plan is abandoned.
func (d *topicDescriber) stop() { d.wg.Wait() }
