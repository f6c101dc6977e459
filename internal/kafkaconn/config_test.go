package kafkaconn

import (
	"slices"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

func TestParseBootstrap(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "127.0.0.1:9092", want: []string{"127.0.0.1:9092"}},
		{in: "a:9092, b:9093 ,", want: []string{"a:9092", "b:9093"}},
		{in: "[::1]:9092", want: []string{"[::1]:9092"}},
		{in: "", wantErr: "expected host:port"},
		{in: " , ", wantErr: "expected host:port"},
		{in: "kafka", wantErr: `"kafka": expected host:port`},
		{in: ":9092", wantErr: "missing host"},
		{in: "a:0", wantErr: "not a number in 1-65535"},
		{in: "a:http", wantErr: "not a number in 1-65535"},
		{in: "a:9092,b", wantErr: `"b": expected host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBootstrap(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseBootstrap(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseBootstrap(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{Bootstrap: []string{"h:1"}}, ""},
		{"explicit version", Config{Bootstrap: []string{"h:1"}, Version: "3.9.0"}, ""},
		{"no bootstrap", Config{}, "no kafka bootstrap"},
		{"bad server", Config{Bootstrap: []string{"h"}}, "expected host:port"},
		{"too old", Config{Bootstrap: []string{"h:1"}, Version: "0.10.1.1"}, "at least 0.10.2"},
		{"garbage version", Config{Bootstrap: []string{"h:1"}, Version: "latest"}, `expected "auto" or X.Y.Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.WithDefaults().Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Bootstrap: []string{"h:1"}}.WithDefaults()
	if c.ClientID != "zk2kafka" || c.Version != VersionAuto || c.DialTimeout <= 0 || c.Logger == nil {
		t.Fatalf("defaults not applied: %+v", c)
	}
	conf, err := SaramaConfig(Config{Bootstrap: []string{"h:1"}}, sarama.V3_9_0_0)
	if err != nil {
		t.Fatal(err)
	}
	if conf.Metadata.AllowAutoTopicCreation {
		t.Error("metadata requests would auto-create topics")
	}
	if conf.Metadata.RefreshFrequency != 0 || conf.Metadata.Full {
		t.Error("sarama would fetch metadata of every topic")
	}
	if conf.ClientID != "zk2kafka" || conf.Net.DialTimeout != DefaultDialTimeout || conf.Version != sarama.V3_9_0_0 {
		t.Errorf("client id %q, dial timeout %s, version %s", conf.ClientID, conf.Net.DialTimeout, conf.Version)
	}
	if conf.Admin.Timeout >= conf.Net.ReadTimeout {
		t.Errorf("admin timeout %s not below the read timeout %s: a slow CreateTopics would drop the connection", conf.Admin.Timeout, conf.Net.ReadTimeout)
	}
	if err := conf.Validate(); err != nil {
		t.Errorf("sarama refuses the config: %v", err)
	}
}
