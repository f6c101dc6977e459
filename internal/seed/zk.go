package seed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

const (
	sessionTimeout = 30 * time.Second
	connectTimeout = 30 * time.Second
	// retries of one znode operation after a lost connection: every operation here is
	// idempotent (create-or-set), so repeating one is safe.
	opAttempts = 5
)

// worldACL is what ZkUtils used for consumer znodes on an unsecured cluster (OPEN_ACL_UNSAFE).
var worldACL = zk.WorldACL(zk.PermAll)

// splitServers splits "h1:p1,h2:p2/chroot" into addresses and the chroot: go-zookeeper does
// not understand a chroot in the connect string, so paths are prefixed by hand.
func splitServers(s string) ([]string, string, error) {
	hosts, chroot := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
	}
	if chroot == "/" {
		chroot = ""
	}
	if err := checkChroot(chroot); err != nil {
		return nil, "", fmt.Errorf("zookeeper connect string %q: %w", s, err)
	}
	var out []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("zookeeper connect string %q: no servers, expected host:port[,host:port...][/chroot]", s)
	}
	return out, chroot, nil
}

type silentLogger struct{}

func (silentLogger) Printf(string, ...any) {}

// dial opens one ZooKeeper session and waits until it is established. Session events go to a
// callback because go-zookeeper silently drops them when its event channel is not drained.
func dial(ctx context.Context, servers []string) (*zk.Conn, error) {
	ready := make(chan struct{}, 1)
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	}
	conn, _, err := zk.Connect(servers, sessionTimeout, zk.WithLogger(silentLogger{}), zk.WithEventCallback(cb))
	if err != nil {
		return nil, fmt.Errorf("connect to zookeeper %s: %w", strings.Join(servers, ","), err)
	}
	timer := time.NewTimer(connectTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return conn, nil
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("connect to zookeeper %s: %w", strings.Join(servers, ","), ctx.Err())
	case <-timer.C:
		conn.Close()
		return nil, fmt.Errorf("connect to zookeeper %s: no session after %s", strings.Join(servers, ","), connectTimeout)
	}
}

func closeAll(conns []*zk.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// transient reports errors after which the same idempotent operation may simply be repeated:
// go-zookeeper fails in-flight requests when a connection drops and then reconnects by itself.
func transient(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved)
}

func retry(ctx context.Context, op func() error) error {
	var err error
	for attempt := range opAttempts {
		if err = op(); err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}

// ensure creates a persistent znode with empty data unless it exists, as ZkUtils'
// createParentPath did for the directories above an offset.
func ensure(ctx context.Context, c *zk.Conn, path string) error {
	err := retry(ctx, func() error {
		_, err := c.Create(path, nil, 0, worldACL)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create znode %s: %w", path, err)
	}
	return nil
}

// ensurePath creates path and every missing ancestor, one by one.
func ensurePath(ctx context.Context, c *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if err := ensure(ctx, c, path[:i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// upsert writes data to a persistent znode, creating it or overwriting what is there, as
// ZkUtils.updatePersistentPath did. It reports whether the znode was created.
func upsert(ctx context.Context, c *zk.Conn, path string, data []byte) (bool, error) {
	created := false
	err := retry(ctx, func() error {
		_, err := c.Create(path, data, 0, worldACL)
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		_, err = c.Set(path, data, -1)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("write znode %s: %w", path, err)
	}
	return created, nil
}

// createEphemeral creates an ephemeral znode owned by c's session. A znode already there is
// fine only when this session made it (a retry after a lost reply); one held by another
// session is an error: it is someone else's live registration.
func createEphemeral(ctx context.Context, c *zk.Conn, path string, data []byte) error {
	err := retry(ctx, func() error {
		_, err := c.Create(path, data, zk.FlagEphemeral, worldACL)
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		_, st, err := c.Exists(path)
		if err != nil {
			return err
		}
		if st.EphemeralOwner != c.SessionID() {
			return fmt.Errorf("already held by session 0x%x (ours is 0x%x)", st.EphemeralOwner, c.SessionID())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create ephemeral znode %s: %w", path, err)
	}
	return nil
}
