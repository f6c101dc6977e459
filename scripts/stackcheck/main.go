//go:build zk2kafkadev

// Command stackcheck waits until a Kafka broker is really ready: a Metadata request lists a
// broker and a FindCoordinator for a probe group succeeds (which also creates __consumer_offsets).
// Log lines are only hints; this is what a client sees. Used by scripts/stack.
//
// For the secure profile it connects through TLS and SASL (-tls-ca, -sasl-*) and, once the
// broker is ready, creates the test user's ACLs (-acl-user, see acl.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

func main() {
	kafka := flag.String("kafka", "", "bootstrap server host:port")
	pid := flag.Int("pid", 0, "give up early when this process exits")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait")
	ca := flag.String("tls-ca", "", "connect over TLS trusting this PEM CA file")
	mech := flag.String("sasl-mechanism", "", "SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
	user := flag.String("sasl-user", "", "SASL user")
	pwFile := flag.String("sasl-password-file", "", "file holding the SASL password")
	aclUser := flag.String("acl-user", "", "once ready, grant this user what a migration needs")
	denyPrefix := flag.String("acl-deny-group-prefix", "", "and deny it READ (commit) on groups with this prefix")
	denyTopicPrefix := flag.String("acl-deny-topic-prefix", "", "and deny it READ (commit) on topics with this prefix")
	topic := flag.String("topic", "", "once ready, also wait until this topic exists (MirrorMaker 2's offset syncs: its replication started)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("stackcheck: ")
	sarama.Logger = log.New(io.Discard, "", 0)
	sec := kafkaconn.Security{TLS: *ca != "", CAFile: *ca, Mechanism: *mech, User: *user}
	if *pwFile != "" {
		b, err := os.ReadFile(*pwFile)
		if err != nil {
			log.Fatal(err)
		}
		sec.Password = kafkaconn.Secret(strings.TrimSpace(string(b)))
	}
	cfg := sarama.NewConfig()
	if err := sec.Apply(cfg); err != nil {
		log.Fatal(err)
	}
	if err := waitReady(cfg, *kafka, *pid, *timeout); err != nil {
		log.Print(err)
		os.Exit(1)
	}
	if *topic != "" {
		if err := waitTopic(cfg, *kafka, *topic, *pid, *timeout); err != nil {
			log.Print(err)
			os.Exit(1)
		}
	}
	if *aclUser != "" {
		if err := createACLs(cfg, *kafka, *aclUser, *denyPrefix, *denyTopicPrefix); err != nil {
			log.Print(err)
			os.Exit(1)
		}
	}
}

func waitReady(cfg *sarama.Config, addr string, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			return fmt.Errorf("kafka process %d exited before it was ready (last error: %v)", pid, last)
		}
		if last = probe(cfg, addr); last == nil {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("kafka %s not ready after %s: %w", addr, timeout, last)
}

func probe(cfg *sarama.Config, addr string) error {
	cfg.Version = sarama.V2_1_0_0
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Metadata.Retry.Max = 0
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	defer client.Close()
	if len(client.Brokers()) == 0 {
		return errors.New("metadata lists no broker")
	}
	if _, err := client.Coordinator("zk2kafka-stack-probe"); err != nil {
		return fmt.Errorf("find coordinator: %w", err)
	}
	return nil
}

// waitTopic waits until the broker's metadata lists topic with a partition. pid is the process
// expected to create it (MirrorMaker 2), not the broker.
func waitTopic(cfg *sarama.Config, addr, topic string, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			return fmt.Errorf("process %d exited before %s existed (last error: %v)", pid, topic, last)
		}
		if last = hasTopic(cfg, addr, topic); last == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("topic %s not on %s after %s: %w", topic, addr, timeout, last)
}

func hasTopic(cfg *sarama.Config, addr, topic string) error {
	cfg.Version = sarama.V2_1_0_0
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	defer client.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		return err
	}
	if len(parts) == 0 {
		return errors.New("no partition yet")
	}
	return nil
}
