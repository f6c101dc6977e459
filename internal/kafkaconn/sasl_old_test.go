package kafkaconn

import (
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestSASLAgainstOldBroker: a SASL probe that fails against a broker without SaslAuthenticate
// (Kafka before 1.0) is refused naming the release its ApiVersions show; against a broker that
// has it, the failure keeps its own explanation (here the refused handshake).
func TestSASLAgainstOldBroker(t *testing.T) {
	withSASL := apisOf([3]int16{8, 0, 3}, [3]int16{9, 0, 3}, [3]int16{18, 0, 1}, [3]int16{3, 0, 5}, [3]int16{1, 0, 7},
		[3]int16{apiSaslAuthenticate, 0, 0})
	tests := []struct {
		name    string
		apis    map[int16]apiRange
		want    string
		notWant string
	}{
		{"0.10.2", kafka0102, "is Kafka 0.10.2.0 (from its ApiVersions, asked without SASL)", ""},
		{"0.11", kafka011, "is Kafka 0.11.0.0 (from its ApiVersions, asked without SASL)", ""},
		{"1.1 with SaslAuthenticate", withSASL, "does not enable SASL mechanism PLAIN", "asked without SASL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mb := sarama.NewMockBroker(t, 1)
			defer mb.Close()
			mb.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(apiKeys(tt.apis)),
				// The handshake is refused: an old broker has no v1, a new one here no PLAIN.
				"SaslHandshakeRequest": sarama.NewMockSaslHandshakeResponse(t).SetError(sarama.ErrUnsupportedSASLMechanism),
			})
			cfg := Config{Bootstrap: []string{mb.Addr()}, DialTimeout: 5 * time.Second,
				Security: Security{Mechanism: MechanismPlain, User: "u", Password: "p"}}
			_, err := Negotiate(testCtx(t, time.Minute), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.notWant != "" && strings.Contains(err.Error(), tt.notWant)) {
				t.Fatalf("Negotiate = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
