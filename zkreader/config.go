// Package zkreader is the ZooKeeper adapter of zk2kafka. Despite its name it reads and writes.
//
// Reads: the legacy consumer-offset store (/consumers/<group>/offsets/<topic>/<partition>) and
// the legacy consumers' liveness registrations (/consumers/<g>/ids, /owners), through a small
// pool of pipelined connections, and watches them (migrate.LegacyStore, LegacyRechecker,
// LegacyWatcher); /brokers/ids to find a ZooKeeper-mode cluster's brokers.
//
// Writes: offset znodes, only ever forward (migrate.LegacyOffsetWriter: dual-commit --reverse,
// restore --to zk), verify's cutover marker /consumers/<g>/zk2kafka-migrated, dual-commit's
// lease (an ephemeral znode under <chroot>/zk2kafka/dual-commit), and test fixtures.
package zkreader

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults applied by Open to zero Config fields.
const (
	DefaultSessionTimeout = 10 * time.Second
	defaultPort           = "2181"
)

// The pool's size when Connections and InFlight are left zero depends on the read path, which
// Open learns from the servers' versions.
const (
	// SingleConnections is 16 on single requests (servers before 3.6, a request per znode):
	// ZooKeeper serves each session's requests in order, so more sessions spread its work over
	// its threads, and a plan over 16 came closest to the raw reader's time of the counts tried
	// (docs/benchmarks.md). ZooKeeper allows 60 sessions per client address by default.
	SingleConnections = 16
	// SingleInFlight is 1024 on single requests: a deeper pipeline keeps ZooKeeper busy while
	// answers travel, and it read faster than 256 (docs/benchmarks.md; the groups in flight
	// follow as InFlight/4). ZooKeeper queues what is above its globalOutstandingLimit (1000)
	// instead of failing; lower --zk-in-flight on an ensemble the brokers need quiet.
	SingleInFlight = 1024
	// MultiConnections and MultiInFlight size the pool on ZooKeeper 3.6+, where a group's reads
	// are three multiRead requests: 4 sessions and 256 requests (64 groups) in flight read a
	// million offsets as fast as 16 and 1024 did, at half the memory. Each session costs two
	// 1.5 MB buffers of go-zookeeper's, and each group in flight is held whole.
	MultiConnections = 4
	MultiInFlight    = 256
)

// Config says how to reach ZooKeeper. The zero value of every field but Servers means "default".
type Config struct {
	// Servers is a ZooKeeper connect string as Kafka and the Java client take it:
	// "host:port[,host:port...][/chroot]". go-zookeeper does not understand the chroot, so the
	// reader strips it and prefixes every path itself.
	Servers string
	// SessionTimeout is the ZooKeeper session timeout, and also how long Open waits for a
	// session before it reports ZooKeeper as unreachable. Default 10s.
	SessionTimeout time.Duration
	// Connections is the pool size: each connection pipelines its own requests, several
	// connections scale further. Default by read path: MultiConnections or SingleConnections.
	Connections int
	// InFlight bounds the requests outstanding at once over the whole pool. Default by read
	// path: MultiInFlight or SingleInFlight.
	InFlight int
	// GroupsInFlight bounds how many groups ReadGroups holds in memory at once.
	// Default InFlight/4 (at least 1).
	GroupsInFlight int
	// TLS, when set, connects over TLS (a server's secureClientPort): each server's certificate
	// is checked against the host as Servers names it, unless TLS.ServerName names another.
	TLS *tls.Config
	// Auth is "digest:user:password" or empty. It is a secret: never logged, never in errors.
	Auth string
	// NoMultiRead keeps the reads on single requests even on ZooKeeper 3.6+, where they go in
	// multiRead batches otherwise. For benchmarks and tests that compare the two paths: no flag
	// or setting reaches it, the path is chosen from the servers' versions.
	NoMultiRead bool
	// NoPersistentWatch keeps dual-commit's watcher on one-shot watches even on ZooKeeper
	// 3.6+, where one persistent recursive watch is set otherwise. For benchmarks and tests
	// that compare the two paths, like NoMultiRead.
	NoPersistentWatch bool
	// Logger receives connection events; go-zookeeper's own log lines are forwarded only when
	// it has debug enabled. Nil means no logging.
	Logger *slog.Logger
}

// LogValue keeps the credentials out of logs when a Config is logged whole.
func (c Config) LogValue() slog.Value {
	auth := ""
	if c.Auth != "" {
		auth = "digest:<redacted>"
	}
	return slog.GroupValue(
		slog.String("servers", c.Servers),
		slog.Duration("session_timeout", c.SessionTimeout),
		slog.Int("connections", c.Connections),
		slog.Int("in_flight", c.InFlight),
		slog.String("auth", auth),
		slog.Bool("tls", c.TLS != nil),
	)
}

// String is LogValue for fmt: a Config printed with %v never shows the password.
func (c Config) String() string { return c.LogValue().String() }

// withDefaults returns c with its session timeout defaulted, or an error for a negative field.
// The pool's sizes are left to sizedFor, once the read path is known.
func (c Config) withDefaults() (Config, error) {
	if c.SessionTimeout < 0 || c.Connections < 0 || c.InFlight < 0 || c.GroupsInFlight < 0 {
		return c, errors.New("zookeeper config: session timeout, connections and in-flight limits must not be negative")
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	return c, nil
}

// sizedFor returns c with the pool's zero sizes replaced by the defaults of its read path.
func (c Config) sizedFor(multi bool) Config {
	conns, inFlight := SingleConnections, SingleInFlight
	if multi {
		conns, inFlight = MultiConnections, MultiInFlight
	}
	if c.Connections == 0 {
		c.Connections = conns
	}
	if c.InFlight == 0 {
		c.InFlight = inFlight
	}
	if c.GroupsInFlight == 0 {
		c.GroupsInFlight = max(1, c.InFlight/4)
	}
	return c
}

// parseAuth splits "digest:user:password" into the scheme and the bytes ZooKeeper's AddAuth
// wants. Errors never quote the value: it holds a password.
func parseAuth(s string) (scheme string, auth []byte, err error) {
	if s == "" {
		return "", nil, nil
	}
	scheme, creds, ok := strings.Cut(s, ":")
	if !ok || scheme != "digest" {
		return "", nil, errors.New(`zookeeper auth: expected "digest:user:password"`)
	}
	user, _, ok := strings.Cut(creds, ":")
	if !ok || user == "" {
		return "", nil, errors.New(`zookeeper auth: expected "digest:user:password" (user and password separated by ':')`)
	}
	return scheme, []byte(creds), nil
}

// ParseServers splits a ZooKeeper connect string "h1:p1,h2:p2/chroot" into "host:port"
// addresses (port 2181 when absent) and the chroot ("" for none). The chroot is everything
// after the first '/', as in the Java client; "/" alone means no chroot.
func ParseServers(s string) (hosts []string, chroot string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, "", errors.New("zookeeper connect string is empty, expected host:port[,host:port...][/chroot]")
	}
	hostPart := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hostPart, chroot = s[:i], s[i:]
		if strings.Contains(chroot, ",") {
			return nil, "", fmt.Errorf("zookeeper connect string %q: the chroot %q contains ',': a chroot comes once, after the last server", s, chroot)
		}
		if chroot == "/" {
			chroot = ""
		} else if err := ValidatePath(chroot); err != nil {
			return nil, "", fmt.Errorf("zookeeper connect string %q: bad chroot: %w", s, err)
		}
	}
	for h := range strings.SplitSeq(hostPart, ",") {
		addr, err := normalizeHost(strings.TrimSpace(h))
		if err != nil {
			return nil, "", fmt.Errorf("zookeeper connect string %q: %w", s, err)
		}
		hosts = append(hosts, addr)
	}
	return hosts, chroot, nil
}

// normalizeHost checks one "host[:port]" entry and adds the default port.
func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty server address")
	}
	if !strings.Contains(h, ":") {
		return net.JoinHostPort(h, defaultPort), nil
	}
	if strings.Count(h, ":") > 1 && !strings.HasPrefix(h, "[") {
		return "", fmt.Errorf("server %q: write an IPv6 address in brackets, as [addr]:port", h)
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return "", fmt.Errorf("server %q: %w", h, err)
	}
	if host == "" {
		return "", fmt.Errorf("server %q: empty host", h)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return "", fmt.Errorf("server %q: port must be a number from 1 to 65535", h)
	}
	return net.JoinHostPort(host, port), nil
}

// ValidatePath applies ZooKeeper's own path rules (PathUtils.validatePath): absolute, no empty,
// "." or ".." component, no trailing '/', no control or reserved characters. The server would
// refuse such a path anyway; checking first gives an error that names it.
func ValidatePath(p string) error {
	if p == "" || p[0] != '/' {
		return fmt.Errorf("path %q must start with '/'", p)
	}
	if p == "/" {
		return nil
	}
	if strings.HasSuffix(p, "/") {
		return fmt.Errorf("path %q must not end with '/'", p)
	}
	for c := range strings.SplitSeq(p[1:], "/") {
		if err := ValidateName(c); err != nil {
			return fmt.Errorf("path %q: %w", p, err)
		}
	}
	return nil
}

// ValidateName checks one path component (a group, topic or child name) against ZooKeeper's rules.
func ValidateName(c string) error {
	switch c {
	case "":
		return errors.New("empty path component (\"//\")")
	case ".", "..":
		return fmt.Errorf("relative path component %q", c)
	}
	if !utf8.ValidString(c) {
		return fmt.Errorf("name %q is not valid UTF-8", c)
	}
	for _, r := range c {
		switch {
		case r == '/':
			return fmt.Errorf("name %q contains '/'", c)
		case r <= 0x1f, r >= 0x7f && r <= 0x9f, r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0 && r <= 0xffff:
			return fmt.Errorf("name %q contains the reserved character %U", c, r)
		}
	}
	return nil
}
