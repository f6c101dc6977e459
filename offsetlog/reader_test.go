package offsetlog

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

func TestOpenRejects(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no bootstrap", Config{}, "no kafka bootstrap servers"},
		{"no port", Config{Bootstrap: []string{"localhost"}}, "expected host:port"},
		{"bad version", Config{Bootstrap: []string{closed}, Version: "three"}, `kafka version "three"`},
		// The floor is the shared one (kafkaconn.MinVersion), as for kafkawriter on the same cluster.
		{"too old", Config{Bootstrap: []string{closed}, Version: "0.10.1.1"}, "at least 0.10.2"},
		{"unreachable", Config{Bootstrap: []string{closed}}, "no kafka broker reachable at [" + closed + "] (PLAINTEXT)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				if r != nil {
					r.Close()
				}
				t.Fatalf("Open(%+v): %v, want an error containing %q", tc.cfg, err, tc.want)
			}
		})
	}
}

func TestReadWithoutOffsetsTopic(t *testing.T) {
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": apiVersions41(t),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()),
	})
	r, err := Open(context.Background(), Config{Bootstrap: []string{b.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Read(context.Background(), nil); !errors.Is(err, ErrNoOffsetsTopic) {
		t.Errorf("Read: %v, want ErrNoOffsetsTopic", err)
	}
	if _, _, err := r.ReadGroups(context.Background(), []string{"g"}); !errors.Is(err, ErrNoOffsetsTopic) {
		t.Errorf("ReadGroups: %v, want ErrNoOffsetsTopic", err)
	}
}
