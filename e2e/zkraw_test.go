package e2e_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// The raw ZooKeeper session: what the adapters must not be trusted to do for the test (write
// garbage into an offset znode, create and delete the test's chroot).

type silentZK struct{}

func (silentZK) Printf(string, ...any) {}

// dialZK opens a session on the real root (no chroot) and waits until it is established.
// Session events go to a callback: go-zookeeper drops them when its channel is not drained.
func dialZK(t *testing.T, server string) *zk.Conn {
	t.Helper()
	return dialZKWith(t, server, nil)
}

// dialZKWith is dialZK over TLS with cfg when it is set.
func dialZKWith(t *testing.T, server string, cfg *tls.Config) *zk.Conn {
	t.Helper()
	ready := make(chan struct{})
	var once sync.Once
	dialer := zk.WithDialer(net.DialTimeout)
	if cfg != nil {
		dialer = zk.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			c := cfg.Clone()
			c.ServerName, _, _ = net.SplitHostPort(addr)
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, c)
		})
	}
	conn, _, err := zk.Connect([]string{server}, 10*time.Second, zk.WithLogger(silentZK{}), dialer,
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
				once.Do(func() { close(ready) })
			}
		}))
	if err != nil {
		t.Fatalf("connect to zookeeper %s: %v", server, err)
	}
	t.Cleanup(conn.Close)
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("zookeeper %s: no session within 30s", server)
	}
	return conn
}

// ensure creates p and its missing parents as empty persistent znodes.
func (e *env) ensure(p string) {
	e.t.Helper()
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		_, err := e.raw.Create(p[:i], nil, 0, worldACL())
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			e.t.Fatalf("create znode %s: %v", p[:i], err)
		}
	}
}

// deleteTree removes p and everything below it; a missing p is fine.
func deleteTree(c *zk.Conn, p string) error {
	// A running dual-commit --reverse creates a missing partition znode of a group that still
	// exists: one can come back between the deletion of the children and of their parent, as it
	// would for an operator deleting the group by hand. Walk again, as the operator would.
	var err error
	for range 5 {
		if err = deleteTreeOnce(c, p); !errors.Is(err, zk.ErrNotEmpty) {
			return err
		}
	}
	return err
}

func deleteTreeOnce(c *zk.Conn, p string) error {
	kids, _, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", p, err)
	}
	for _, k := range kids {
		if err := deleteTreeOnce(c, p+"/"+k); err != nil {
			return err
		}
	}
	if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", p, err)
	}
	return nil
}

// worldACL is what the Scala consumer used for its znodes on an unsecured cluster.
func worldACL() []zk.ACL { return zk.WorldACL(zk.PermAll) }

// protect makes path readable only with the digest identity user:pass until the test ends; the
// cleanup opens it again before the chroot's deletion, which lists every znode.
func (e *env) protect(t *testing.T, path, user, pass string) {
	t.Helper()
	if _, err := e.raw.SetACL(path, zk.DigestACL(zk.PermAll, user, pass), -1); err != nil {
		t.Fatalf("protect %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := e.raw.AddAuth("digest", []byte(user+":"+pass)); err != nil {
			t.Errorf("zookeeper auth: %v", err)
		}
		if _, err := e.raw.SetACL(path, worldACL(), -1); err != nil {
			t.Errorf("unprotect %s: %v", path, err)
		}
	})
}
