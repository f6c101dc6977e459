// Command zk2kafka migrates Kafka consumer-group offsets from ZooKeeper into Kafka.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zk2kafka/zk2kafka/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
