package mm2log

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

func translatorOf(t *testing.T, pairs ...[2]int64) *Translator {
	t.Helper()
	tr, err := NewTranslator(logOf(map[migrate.TopicPartition][][2]int64{orders0: pairs}), mm2.Policy{Name: mm2.PolicyDefault, SourceAlias: "source"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The live translator passes the Translator suite too.
func TestLiveContract(t *testing.T) {
	contract.TestTranslator(t, NewLive(testTranslator(t)), []migrate.TopicPartition{orders0, orders1, other0}, 200)
}

// Follow takes each read's syncs, keeps the last good ones when a read fails (reporting it),
// and stops with its context.
func TestLiveFollow(t *testing.T) {
	reads := []struct {
		tr  *Translator
		err error
	}{
		{tr: translatorOf(t, [2]int64{100, 0}, [2]int64{200, 90})},
		{err: errors.New("broker down")},
		{}, // the last: it stops the follow, and Follow keeps what it had for a nil translator
	}
	live := NewLive(translatorOf(t, [2]int64{100, 0}))
	if got := live.Translate("g", orders0, 200); got.Blocked != migrate.ClassReplicationBehind {
		t.Fatalf("before any read again: %+v, want replication-behind", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var failures []error
	i := 0
	go func() {
		defer close(done)
		live.Follow(ctx, time.Millisecond, func(context.Context) (*Translator, error) {
			r := reads[i]
			if i++; i == len(reads) {
				cancel() // no read after the last: the test then looks at what it left
			}
			return r.tr, r.err
		}, func(err error) { failures = append(failures, err) })
	}()
	<-done
	if got := live.Translate("g", orders0, 200); got.Blocked != "" || got.Offset != 90 {
		t.Errorf("after a read and a failed one: %+v, want 200 at 90 (the good read's syncs kept)", got)
	}
	if len(failures) != 1 || !errors.Is(failures[0], reads[1].err) {
		t.Errorf("failures %v, want the failed read's", failures)
	}
}
