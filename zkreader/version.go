package zkreader

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A server before 3.6 answers a request with an unknown opcode (multiRead) by closing the
// connection, which would cost go-zookeeper's session its requests in flight: the version is
// asked first, never found by trial. The `srvr` four-letter word names it ("Zookeeper version:
// 3.8.4-<git hash>, built on ...") and is whitelisted by default from 3.5 on (3.4 answers every
// word); it goes over a connection of its own, through the same dialer, so TLS servers are
// asked over TLS.

// versionRE finds the version in srvr's answer.
var versionRE = regexp.MustCompile(`(?m)^Zookeeper version: (\d+)\.(\d+)\.(\d+)`)

// parseSrvr returns the major and minor version srvr's answer names; ok is false when it names
// none (a word not whitelisted is answered "srvr is not executed because it is not in the
// whitelist.").
func parseSrvr(answer string) (major, minor int, ok bool) {
	m := versionRE.FindStringSubmatch(answer)
	if m == nil {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	return major, minor, err1 == nil && err2 == nil
}

// hasMultiRead says whether a server of that version serves multiRead (ZOOKEEPER-3402, 3.6.0).
func hasMultiRead(major, minor int) bool { return major > 3 || major == 3 && minor >= 6 }

// askSrvr sends srvr to addr and returns the answer (the server closes the connection after it).
func askSrvr(ctx context.Context, addr, name string, timeout time.Duration, tlsCfg *tls.Config) (string, error) {
	var c net.Conn
	var err error
	if tlsCfg != nil {
		c, err = dialTLS("tcp", addr, name, timeout, tlsCfg)
	} else {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, timeout)
		c, err = d.DialContext(dctx, "tcp", addr)
		cancel()
	}
	if err != nil {
		return "", err
	}
	defer c.Close() // read to the end already: nothing left to lose
	// Open gives up on the versions when it fails: the question must not outlive it.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() }) // an error says it was closed already
	defer stop()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte("srvr")); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 64<<10))
	if len(b) > 0 {
		err = nil // the server closes at the end of the answer, over TLS sometimes with a reset
	}
	return string(b), err
}

// readPath is the verdict on a connect string: multiRead on every server, or not.
type readPath struct {
	multi  bool
	reason string // why, for the debug log
}

// detectReadPath asks every address of every host for its version. The fast path only when
// every server answers 3.6 or later: go-zookeeper may move the session to any of them. An
// address that refuses the connection is passed over when another address of the same host
// answered (a "localhost" that resolves to ::1 as well, where the server listens on 127.0.0.1
// only): no session can go there now, and should a server older than 3.6 come up there later,
// its refusal of the first multiRead turns the fast path off (Reader.multiRead).
func detectReadPath(ctx context.Context, hosts []string, timeout time.Duration, tlsCfg *tls.Config) readPath {
	type addr struct{ host, addr string }
	var addrs []addr
	for _, h := range hosts {
		name, port, err := net.SplitHostPort(h)
		if err != nil {
			return readPath{reason: fmt.Sprintf("server %s: %v", h, err)}
		}
		lctx, cancel := context.WithTimeout(ctx, timeout)
		ips, err := net.DefaultResolver.LookupHost(lctx, name)
		cancel()
		if err != nil || len(ips) == 0 {
			return readPath{reason: fmt.Sprintf("server %s: cannot resolve: %v", h, err)}
		}
		for _, ip := range ips {
			addrs = append(addrs, addr{h, net.JoinHostPort(ip, port)})
		}
	}
	verdicts := make([]string, len(addrs)) // "": serves multiRead
	refused := make([]bool, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() {
			name, _, _ := net.SplitHostPort(a.host) // checked above
			answer, err := askSrvr(ctx, a.addr, name, timeout, tlsCfg)
			major, minor, ok := parseSrvr(answer)
			switch {
			case err != nil:
				verdicts[i], refused[i] = fmt.Sprintf("%s: srvr: %v", a.addr, err), errors.Is(err, syscall.ECONNREFUSED)
			case !ok:
				verdicts[i] = fmt.Sprintf("%s: srvr names no version (not whitelisted?): %.80q", a.addr, answer)
			case !hasMultiRead(major, minor):
				verdicts[i] = fmt.Sprintf("%s is ZooKeeper %d.%d, before 3.6", a.addr, major, minor)
			}
		})
	}
	wg.Wait()
	answered := map[string]bool{}
	for i, a := range addrs {
		if verdicts[i] == "" {
			answered[a.host] = true
		}
	}
	for i, a := range addrs {
		if verdicts[i] != "" && !(refused[i] && answered[a.host]) {
			return readPath{reason: verdicts[i]}
		}
	}
	return readPath{multi: true, reason: fmt.Sprintf("every server is ZooKeeper 3.6 or later (%d addresses asked)", len(addrs))}
}
