package zkreader

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseServers(t *testing.T) {
	tests := []struct {
		in      string
		hosts   []string
		chroot  string
		wantErr string // substring; "" means success
	}{
		{in: "127.0.0.1:2181", hosts: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2", hosts: []string{"a:1", "b:2"}},
		{in: " a:1 , b ", hosts: []string{"a:1", "b:2181"}},
		{in: "zk1", hosts: []string{"zk1:2181"}},
		{in: "127.0.0.1:2181,127.0.0.1:2182/chroot", hosts: []string{"127.0.0.1:2181", "127.0.0.1:2182"}, chroot: "/chroot"},
		{in: "h:2181/kafka/cluster-1", hosts: []string{"h:2181"}, chroot: "/kafka/cluster-1"},
		{in: "h:2181/", hosts: []string{"h:2181"}}, // the Java client reads "/" as no chroot
		{in: "[::1]:2181/x", hosts: []string{"[::1]:2181"}, chroot: "/x"},
		{in: "", wantErr: "empty"},
		{in: "   ", wantErr: "empty"},
		{in: "/kafka", wantErr: "empty server address"},
		{in: "a:1,,b:2", wantErr: "empty server address"},
		{in: "a:1,", wantErr: "empty server address"},
		{in: "h:2181/a//b", wantErr: "bad chroot"},
		{in: "h:2181/kafka/", wantErr: "must not end with '/'"},
		{in: "h:2181/a/./b", wantErr: "relative path component"},
		{in: "h:2181/a/..", wantErr: "relative path component"},
		{in: "h:2181/a\x01b", wantErr: "reserved character"},
		{in: "a:1/x,b:2", wantErr: "after the last server"},
		{in: "h:port", wantErr: "port must be a number"},
		{in: "h:0", wantErr: "port must be a number"},
		{in: "h:70000", wantErr: "port must be a number"},
		{in: ":2181", wantErr: "empty host"},
		{in: "::1", wantErr: "IPv6"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			hosts, chroot, err := ParseServers(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseServers(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseServers(%q): %v", tt.in, err)
			}
			if !slices.Equal(hosts, tt.hosts) || chroot != tt.chroot {
				t.Errorf("ParseServers(%q) = %q, %q; want %q, %q", tt.in, hosts, chroot, tt.hosts, tt.chroot)
			}
		})
	}
}

func TestParseAuth(t *testing.T) {
	tests := []struct {
		in         string
		scheme     string
		auth       string
		wantErr    bool
		secretPart string // must never appear in the error
	}{
		{in: ""},
		{in: "digest:alice:s3cret", scheme: "digest", auth: "alice:s3cret"},
		{in: "digest:alice:pa:ss", scheme: "digest", auth: "alice:pa:ss"},
		{in: "digest:alice", wantErr: true, secretPart: "alice"},
		{in: "digest::s3cret", wantErr: true, secretPart: "s3cret"},
		{in: "sasl:alice:s3cret", wantErr: true, secretPart: "s3cret"},
		{in: "alice:s3cret", wantErr: true, secretPart: "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			scheme, auth, err := parseAuth(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseAuth(%q) succeeded, want an error", tt.in)
				}
				if strings.Contains(err.Error(), tt.secretPart) {
					t.Errorf("parseAuth error %q leaks %q", err, tt.secretPart)
				}
				return
			}
			if err != nil || scheme != tt.scheme || string(auth) != tt.auth {
				t.Errorf("parseAuth(%q) = %q, %q, %v; want %q, %q", tt.in, scheme, auth, err, tt.scheme, tt.auth)
			}
		})
	}
}

func TestConfigNeverShowsAuth(t *testing.T) {
	c := Config{Servers: "h:2181", Auth: "digest:alice:s3cret"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), c.LogValue().String()} {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "alice") {
			t.Errorf("formatted config %q shows the credentials", s)
		}
		if !strings.Contains(s, "h:2181") {
			t.Errorf("formatted config %q lacks the servers", s)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionTimeout != DefaultSessionTimeout || c.Connections != 0 || c.InFlight != 0 {
		t.Errorf("defaults = %+v, want the session timeout and the pool left to the read path", c.LogValue())
	}
	if _, err := (Config{InFlight: -1}).withDefaults(); err == nil {
		t.Error("negative InFlight accepted")
	}
}

// TestConfigSizedFor: the pool's zero sizes follow the read path; sizes given are kept.
func TestConfigSizedFor(t *testing.T) {
	tests := []struct {
		name                    string
		in                      Config
		multi                   bool
		conns, inFlight, groups int
	}{
		{"multiRead", Config{}, true, MultiConnections, MultiInFlight, MultiInFlight / 4},
		{"single requests", Config{}, false, SingleConnections, SingleInFlight, SingleInFlight / 4},
		{"given sizes kept", Config{Connections: 3, InFlight: 40, GroupsInFlight: 7}, true, 3, 40, 7},
		{"groups follow the given in-flight", Config{InFlight: 2}, false, SingleConnections, 2, 1},
	}
	for _, tt := range tests {
		c := tt.in.sizedFor(tt.multi)
		if c.Connections != tt.conns || c.InFlight != tt.inFlight || c.GroupsInFlight != tt.groups {
			t.Errorf("%s: sizedFor = %d connections, %d in flight, %d groups; want %d, %d, %d",
				tt.name, c.Connections, c.InFlight, c.GroupsInFlight, tt.conns, tt.inFlight, tt.groups)
		}
	}
}
