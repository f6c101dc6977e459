// Command zk2kafka migrates Kafka consumer-group offsets from ZooKeeper into Kafka.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/zk2kafka/zk2kafka/cmd"
)

// envCPUProfile names a file to write a CPU profile of the whole run into: a hidden switch for
// the developers' benchmarks of the built binary, as an operator runs it. No flag.
const envCPUProfile = "ZK2KAFKA_DEV_CPU_PROFILE"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv(envCPUProfile))
	code := cmd.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// startProfile starts a CPU profile into path ("" : none) and returns what ends it. A profile
// that cannot start is reported and the run goes on without it.
func startProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "zk2kafka: %s: %v\n", envCPUProfile, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "zk2kafka: %s: %v\n", envCPUProfile, err)
		}
	}
}
