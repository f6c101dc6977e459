package contract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LeaseSetup is one case's line of contenders for a migrate.WriteLease: every contender Open
// returns competes for the same lease, on overlapping selections, in the order opened.
type LeaseSetup struct {
	Open func(t *testing.T) Contender
}

// Contender is one instance in the line.
type Contender struct {
	Lease migrate.WriteLease
	// Close gives the lease up as an instance that stops does: at once, to the next in line.
	Close func()
	// Cut cuts the instance off its backend silently (no reset, no event: packets dropped),
	// until its session could expire and the lease pass on without it knowing.
	Cut func()
}

// TestWriteLease runs the clauses of migrate.WriteLease on the contenders setup opens.
func TestWriteLease(t *testing.T, setup func(t *testing.T) LeaseSetup) {
	t.Run("LoneContenderHolds", func(t *testing.T) {
		a := setup(t).Open(t)
		gained(t, a, "a lone contender")
		parent, cancelParent := context.WithCancel(ctx(t))
		wctx, cancel, err := a.Lease.Hold(parent)
		if err != nil {
			t.Fatalf("Hold of the lone contender: %v", err)
		}
		defer cancel()
		if wctx.Err() != nil {
			t.Fatalf("Hold returned a context already ended: %v", context.Cause(wctx))
		}
		cancelParent()
		if wctx.Err() == nil {
			t.Error("the write context did not end with the context it was derived from")
		}
	})
	t.Run("SecondDoesNotHold", func(t *testing.T) {
		s := setup(t)
		a := s.Open(t)
		gained(t, a, "the first contender")
		b := s.Open(t)
		notHeld(t, b, "the second contender while the first holds")
		if _, cancel, err := a.Lease.Hold(ctx(t)); err != nil {
			t.Errorf("the first contender lost the lease to a later one: %v", err)
		} else {
			cancel()
		}
	})
	t.Run("CloseHandsOver", func(t *testing.T) {
		s := setup(t)
		a := s.Open(t)
		gained(t, a, "the first contender")
		b := s.Open(t)
		notHeld(t, b, "the second contender")
		wctx, cancel, err := a.Lease.Hold(ctx(t))
		if err != nil {
			t.Fatalf("Hold of the holder: %v", err)
		}
		defer cancel()
		a.Close()
		select {
		case <-wctx.Done():
		case <-time.After(wait):
			t.Error("a write context of the holder still runs after it closed the lease")
		}
		if _, _, err := a.Lease.Hold(ctx(t)); !errors.Is(err, migrate.ErrLeaseNotHeld) {
			t.Errorf("Hold after Close: %v, want ErrLeaseNotHeld", err)
		}
		gained(t, b, "the next in line after the holder closed")
		if _, cancel, err := b.Lease.Hold(ctx(t)); err != nil {
			t.Errorf("Hold of the new holder: %v", err)
		} else {
			cancel()
		}
	})
	t.Run("CutHolderStopsBeforeTakeover", func(t *testing.T) {
		s := setup(t)
		a := s.Open(t)
		gained(t, a, "the first contender")
		b := s.Open(t)
		notHeld(t, b, "the second contender")
		// No deadline of the test's own: any deadline is the lease's.
		parent, stop := context.WithCancel(context.Background())
		defer stop()
		wctx, cancel, err := a.Lease.Hold(parent)
		if err != nil {
			t.Fatalf("Hold of the holder: %v", err)
		}
		defer cancel()
		a.Cut()
		gained(t, b, "the standby after the holder was cut off")
		// The standby may write from now on: nothing the cut holder handed out may still run,
		// and it must refuse new writes.
		if wctx.Err() == nil {
			t.Error("a write context of the cut-off holder still runs when the standby holds the lease")
		}
		if d, ok := wctx.Deadline(); ok && d.After(time.Now()) {
			t.Errorf("the cut-off holder's write deadline %s is after the takeover", d)
		}
		if _, cancel, err := a.Lease.Hold(ctx(t)); !errors.Is(err, migrate.ErrLeaseNotHeld) {
			t.Errorf("Hold of the cut-off holder after the takeover: %v, want ErrLeaseNotHeld", err)
			if cancel != nil {
				cancel()
			}
		}
	})
}

// gained waits for c's Gained channel to close, bounded by wait.
func gained(t *testing.T, c Contender, what string) {
	t.Helper()
	select {
	case <-c.Lease.Gained():
	case <-time.After(wait):
		t.Fatalf("%s never gained the lease", what)
	}
}

// notHeld checks that c neither holds nor says it gained the lease.
func notHeld(t *testing.T, c Contender, what string) {
	t.Helper()
	if _, cancel, err := c.Lease.Hold(ctx(t)); !errors.Is(err, migrate.ErrLeaseNotHeld) {
		t.Errorf("Hold of %s: %v, want ErrLeaseNotHeld", what, err)
		if cancel != nil {
			cancel()
		}
	}
	select {
	case <-c.Lease.Gained():
		t.Errorf("Gained of %s is closed", what)
	default:
	}
}
