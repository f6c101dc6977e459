package kafkawriter

import (
	"slices"
	"strings"
	"testing"
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
		{"too old", Config{Bootstrap: []string{"h:1"}, Version: "2.0.0"}, "at least 2.1.0"},
		{"garbage version", Config{Bootstrap: []string{"h:1"}, Version: "latest"}, `expected "auto" or X.Y.Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.withDefaults().validate()
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
	c := Config{Bootstrap: []string{"h:1"}}.withDefaults()
	if c.ClientID != "zk2kafka" || c.Version != VersionAuto || c.ChunkSize != 2000 || c.Parallel != 8 || c.Connections != 8 ||
		c.DialTimeout <= 0 || c.RetryTimeout <= 0 || c.Logger == nil {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if got := (Config{Parallel: 3, Connections: 10}).withDefaults().Connections; got != 3 {
		t.Errorf("Connections above Parallel: got %d, want 3", got)
	}
	conf, err := baseConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if conf.Metadata.AllowAutoTopicCreation {
		t.Error("metadata requests would auto-create topics")
	}
	if conf.Metadata.RefreshFrequency != 0 {
		t.Error("sarama would refresh metadata of every topic in the background")
	}
	if conf.ClientID != "zk2kafka" {
		t.Errorf("client id %q", conf.ClientID)
	}
}
