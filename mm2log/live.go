package mm2log

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Live is a migrate.Translator over offset syncs read again and again, for a long-running
// mirror (dual-commit): MirrorMaker 2 writes syncs as it replicates, and an offset past the
// syncs of the first read would stay replication-behind for good. Its topic names never change.
type Live struct {
	cur atomic.Pointer[Translator]
}

var _ migrate.Translator = (*Live)(nil)

// NewLive starts from first.
func NewLive(first *Translator) *Live {
	l := &Live{}
	l.cur.Store(first)
	return l
}

// Topic implements migrate.Translator.
func (l *Live) Topic(source string) string { return l.cur.Load().Topic(source) }

// Source implements migrate.Translator.
func (l *Live) Source(target string) (string, bool) { return l.cur.Load().Source(target) }

// Translate implements migrate.Translator, with the syncs of the latest read.
func (l *Live) Translate(group string, tp migrate.TopicPartition, off int64) migrate.Placement {
	return l.cur.Load().Translate(group, tp, off)
}

// Follow calls read every interval until ctx ends and translates with what it returns. A read
// that fails keeps the syncs of the last good one, and is handed to failed: older syncs never
// place an offset past a record it has not read, they only leave more offsets blocked.
func (l *Live) Follow(ctx context.Context, every time.Duration, read func(context.Context) (*Translator, error), failed func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next, err := read(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			failed(fmt.Errorf("read MirrorMaker 2's offset syncs again (the last read's are kept): %w", err))
		case err == nil && next != nil:
			l.cur.Store(next)
		}
	}
}
