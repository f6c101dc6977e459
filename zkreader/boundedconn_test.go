package zkreader

import (
	"net"
	"testing"
	"time"
)

// deadlineConn records the read deadline it is given.
type deadlineConn struct {
	net.Conn
	read time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error { c.read = t; return nil }

func TestBoundedConnCapsOnlyFarDeadlines(t *testing.T) {
	const max = time.Second
	tests := []struct {
		name   string
		in     time.Duration // from now; 0 = no deadline
		capped bool
	}{
		{"no deadline", 0, true},
		{"handshake: 10 x 2/3 of the session timeout", 6667 * time.Millisecond, true},
		{"receive loop of a raised 4 s session: 2/3 of it", 2667 * time.Millisecond, false},
		{"short", 500 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &deadlineConn{}
			c := boundedConn{Conn: inner, max: max}
			var want time.Time
			now := time.Now()
			if tt.in > 0 {
				want = now.Add(tt.in)
			}
			if err := c.SetReadDeadline(want); err != nil {
				t.Fatal(err)
			}
			if tt.capped {
				if d := inner.read.Sub(now); d < max-100*time.Millisecond || d > max+100*time.Millisecond {
					t.Fatalf("deadline %v from now, want about %v", d, max)
				}
			} else if !inner.read.Equal(want) {
				t.Fatalf("deadline changed to %v from now, want %v", inner.read.Sub(now), tt.in)
			}
		})
	}
}
