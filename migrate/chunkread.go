package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// chunkRead is one chunk's inputs: Legacy sorted by name, Groups for each of them, Topics for
// every topic of their valid offsets.
type chunkRead struct {
	in  Inputs
	err error
}

// readAhead reads every selected group in one ZooKeeper read and hands the groups on a chunk
// at a time, in name order, each with its Kafka groups and topics. One continuous read rather
// than one ReadGroups per chunk: each of those ended with its pipeline draining (the chunk's
// last groups' last answers) before the next began, and a large plan has many chunks.
// The channel ends after the last chunk or the first error. It holds one chunk; while the
// consumer is behind, handing over the next one waits, and the read with it.
func (pl *Planner) readAhead(ctx context.Context, names []string) <-chan chunkRead {
	out := make(chan chunkRead, 1)
	size := pl.ChunkGroups
	if size <= 0 {
		size = DefaultChunkGroups
	}
	go func() {
		defer close(out)
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := newChunkReader(rctx, pl, names, size, out)
		err := pl.Legacy.ReadGroups(rctx, names, r.emit)
		cancel() // ends the Kafka reads of chunks never completed
		r.stop()
		if err = r.result(err); err != nil {
			select { // the caller's ctx: the read's own is cancelled by now
			case out <- chunkRead{err: err}:
			case <-ctx.Done():
			}
		}
	}()
	return out
}

// chunkReader sorts the groups of one continuous read into chunks (the store emits them as
// they complete, in any order) and hands each chunk on once all its groups are in, after the
// chunks before it.
type chunkReader struct {
	ctx      context.Context
	pl       *Planner
	out      chan<- chunkRead
	describe *topicDescriber
	chunkOf  map[string]int // group -> index of its chunk

	mu     sync.Mutex      // the store may call emit from its reader goroutines
	chunks []*chunkPending // by index; nil once handed on
	next   int             // the next chunk to hand on
	failed error           // why emit refused: reported instead of the store's wrapping of it
	kafka  sync.WaitGroup
}

// chunkPending is one chunk being read.
type chunkPending struct {
	names []string
	seen  map[string]bool
	kept  []LegacyGroup // with the selected topics' offsets
	used  map[string]bool
	kafka chan groupsRead // the chunk's Kafka groups, read from its first group on
	asked bool
}

// allIn reports whether every group of the chunk has been emitted.
func (c *chunkPending) allIn() bool { return len(c.seen) == len(c.names) }

type groupsRead struct {
	m   map[string]GroupState
	err error
}

// errStopRead stops the store's read from emit; the reason is in chunkReader.failed.
var errStopRead = errors.New("plan read stopped")

func newChunkReader(ctx context.Context, pl *Planner, names []string, size int, out chan<- chunkRead) *chunkReader {
	r := &chunkReader{ctx: ctx, pl: pl, out: out, describe: newTopicDescriber(ctx, pl.Kafka),
		chunkOf: make(map[string]int, len(names))}
	for part := range slices.Chunk(names, size) {
		i := len(r.chunks)
		c := &chunkPending{names: part, seen: make(map[string]bool, len(part)),
			used: map[string]bool{}, kafka: make(chan groupsRead, 1)}
		for _, n := range part {
			r.chunkOf[n] = i
		}
		r.chunks = append(r.chunks, c)
	}
	if len(r.chunks) > 0 {
		r.askKafka(r.chunks[0])
	}
	return r
}

// askKafka starts reading a chunk's groups from Kafka (state and commits), once.
func (r *chunkReader) askKafka(c *chunkPending) {
	if c.asked {
		return
	}
	c.asked = true
	r.kafka.Go(func() {
		m, err := r.pl.Kafka.Groups(r.ctx, c.names)
		c.kafka <- groupsRead{m, err}
	})
}

// emit takes one group from the store and hands on every chunk now complete, in order.
func (r *chunkReader) emit(g LegacyGroup) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed != nil {
		return errStopRead
	}
	fail := func(err error) error {
		r.failed = err
		return errStopRead
	}
	i, ok := r.chunkOf[g.Group]
	if !ok {
		return fail(errNotAsked(g.Group))
	}
	c := r.chunks[i]
	if c == nil || c.seen[g.Group] {
		return fail(errTwice(g.Group))
	}
	c.seen[g.Group] = true
	r.askKafka(c)
	if i+1 < len(r.chunks) {
		// The read has reached this chunk: the next one's Kafka read may start, so that it is
		// back before that chunk is complete.
		r.askKafka(r.chunks[i+1])
	}
	if kept, ok := keepGroup(g, r.pl.Filter); ok {
		c.kept = append(c.kept, kept)
		r.describe.add(kept, c.used)
	}
	for r.next < len(r.chunks) && r.chunks[r.next].allIn() {
		in, err := r.complete(r.chunks[r.next])
		if err != nil {
			return fail(err)
		}
		select {
		case r.out <- chunkRead{in: in}:
		case <-r.ctx.Done():
			return fail(r.ctx.Err())
		}
		r.chunks[r.next] = nil
		r.next++
	}
	return nil
}

// complete waits for a chunk's Kafka groups and topics and returns its inputs, with the
// completeness checks of ReadInputs: a missing answer is an error, never a guess.
func (r *chunkReader) complete(c *chunkPending) (Inputs, error) {
	k := <-c.kafka
	if k.err != nil {
		return Inputs{}, fmt.Errorf("read %d groups from kafka (%s to %s): %w", len(c.names), c.names[0], c.names[len(c.names)-1], k.err)
	}
	topics, err := r.describe.describedAll(c.used)
	if err != nil {
		return Inputs{}, err
	}
	slices.SortFunc(c.kept, func(a, b LegacyGroup) int { return cmp.Compare(a.Group, b.Group) })
	groups, err := groupStates(c.kept, k.m)
	if err != nil {
		return Inputs{}, err
	}
	return Inputs{Filter: r.pl.Filter.Spec(), Legacy: c.kept, Topics: topics, Groups: groups}, nil
}

// stop waits for the Kafka reads and descriptions started; the caller has cancelled them.
func (r *chunkReader) stop() {
	r.kafka.Wait()
	r.describe.stop()
}

// result is the read's outcome given the store's: emit's own reason when emit stopped it, the
// store's error, or a group the store never answered for.
func (r *chunkReader) result(readErr error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.failed != nil:
		return r.failed
	case readErr != nil:
		return fmt.Errorf("read %d legacy groups: %w", len(r.chunkOf), readErr)
	}
	for _, c := range r.chunks[r.next:] {
		for _, n := range c.names {
			if !c.seen[n] {
				return errNothingFor(n)
			}
		}
	}
	return nil
}
