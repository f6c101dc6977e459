// Command stackcheck waits until a Kafka broker is really ready: a Metadata request lists a
// broker and a FindCoordinator for a probe group succeeds (which also creates __consumer_offsets).
// Log lines are only hints; this is what a client sees. Used by scripts/stack.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

func main() {
	kafka := flag.String("kafka", "", "bootstrap server host:port")
	pid := flag.Int("pid", 0, "give up early when this process exits")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("stackcheck: ")
	sarama.Logger = log.New(io.Discard, "", 0)
	if err := waitReady(*kafka, *pid, *timeout); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func waitReady(addr string, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			return fmt.Errorf("kafka process %d exited before it was ready (last error: %v)", pid, last)
		}
		if last = probe(addr); last == nil {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("kafka %s not ready after %s: %w", addr, timeout, last)
}

func probe(addr string) error {
	cfg := sarama.NewConfig()
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
