// Package clientprops reads the Java properties files operators already hold for Kafka's own
// tools: a client.properties (kafka-consumer-groups --command-config) and a ZooKeeper TLS file in
// the zookeeper.ssl.* names (kafka-configs --zk-tls-config-file). A key this package does not
// understand is an error naming it, never ignored: a setting silently dropped could mean a
// connection less secure than the operator asked for.
//
// Reads: the file named, and the key and trust stores it names (through package tlsconf).
// Writes: nothing. Passwords are kept as secret.Secret and never appear in an error.
package clientprops

import (
	"crypto/tls"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
)

// file is one properties file read as Java reads it (ISO-8859-1, no ${} expansion), with the
// keys not yet taken tracked so that what is left over can be refused.
type file struct {
	path string
	p    *properties.Properties
	left map[string]bool
}

func load(path string) (*file, error) {
	l := &properties.Loader{Encoding: properties.ISO_8859_1, DisableExpansion: true}
	p, err := l.LoadFile(path)
	if err != nil {
		return nil, err
	}
	f := &file{path: path, p: p, left: map[string]bool{}}
	for _, k := range p.Keys() {
		f.left[k] = true
	}
	return f, nil
}

// take returns the value of the first of names present (names are alternatives: Kafka's name
// and ZooKeeper's own), trimmed as Java's config parsers trim it.
func (f *file) take(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := f.p.Get(n); ok {
			delete(f.left, n)
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

func (f *file) str(names ...string) string {
	v, _ := f.take(names...)
	return v
}

func (f *file) bool(def bool, names ...string) (bool, error) {
	v, ok := f.take(names...)
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return false, fmt.Errorf("%s: %s: %q is not true or false", f.path, names[0], v)
	}
	return b, nil
}

// unknown refuses what no setting took, naming each key (never its value: it may be a secret).
func (f *file) unknown(what string) error {
	if len(f.left) == 0 {
		return nil
	}
	keys := make([]string, 0, len(f.left))
	for k := range f.left {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Errorf("%s: zk2kafka does not understand %s %s (%s); nothing was read or written",
		f.path, plural(len(keys), "the key", "the keys"), strings.Join(keys, ", "), what)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tlsVersions applies a protocol (ssl.protocol) and a list of enabled protocols to c, in Java's
// names (TLSv1.2, TLSv1.3). Versions below TLS 1.2 are refused: Go does not offer them by
// default and no current server needs them.
func tlsVersions(c *tls.Config, path, protocolKey, protocol, enabledKey, enabled string) error {
	versions := map[string]uint16{"TLSV1.2": tls.VersionTLS12, "TLSV1.3": tls.VersionTLS13}
	if protocol != "" {
		v, ok := versions[strings.ToUpper(protocol)]
		if !ok && strings.ToUpper(protocol) != "TLS" {
			return fmt.Errorf("%s: %s: %q is not one of TLSv1.2, TLSv1.3, TLS", path, protocolKey, protocol)
		}
		if ok && v == tls.VersionTLS13 {
			c.MinVersion = v
		}
	}
	if enabled == "" {
		return nil
	}
	var lo, hi uint16
	for _, p := range strings.Split(enabled, ",") {
		v, ok := versions[strings.ToUpper(strings.TrimSpace(p))]
		if !ok {
			return fmt.Errorf("%s: %s: %q is not one of TLSv1.2, TLSv1.3", path, enabledKey, strings.TrimSpace(p))
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	c.MinVersion, c.MaxVersion = max(c.MinVersion, lo), hi
	return nil
}

// cipherSuites maps Java's suite names, which are the IANA names Go uses too.
func cipherSuites(path, key, list string) ([]uint16, error) {
	if list == "" {
		return nil, nil
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	var out []uint16
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		id, ok := known[name]
		if !ok {
			return nil, fmt.Errorf("%s: %s: %q is not a cipher suite zk2kafka offers (TLS 1.3 suites are not configurable)", path, key, name)
		}
		out = append(out, id)
	}
	return out, nil
}
