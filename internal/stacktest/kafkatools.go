package stacktest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// KafkaTool runs one of Kafka's own command-line tools (a main class) from the stack's jars:
// an independent checker of what zk2kafka wrote.
func (s *Stack) KafkaTool(ctx context.Context, class string, args ...string) (string, error) {
	jvm := s.ToolJVMOpts
	if s.KRB5Config != "" {
		// Kafka's Java client finds krb5.conf through this property, not KRB5_CONFIG.
		jvm = []string{"-Djava.security.krb5.conf=" + s.KRB5Config}
	}
	return javaTool(ctx, s.KafkaLibs, "", jvm, class, args...)
}

// ZooKeeperShell runs Kafka's zookeeper-shell over TLS with the stack's ZooKeeper TLS file, as
// an operator would (zookeeper-shell.sh -zk-tls-config-file), on the commands given on stdin.
func (s *Stack) ZooKeeperShell(ctx context.Context, server, commands string) (string, error) {
	return javaTool(ctx, s.ZKLibs, commands, nil, "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka",
		"-zk-tls-config-file", s.ZKTLSConfigFile, "-server", server)
}

func javaTool(ctx context.Context, libs, stdin string, jvm []string, class string, args ...string) (string, error) {
	argv := append(append([]string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j.configuration=file:/dev/null", "-Dlog4j2.level=warn"}, jvm...),
		append([]string{"-cp", filepath.Join(libs, "*"), class}, args...)...)
	cmd := exec.CommandContext(ctx, "java", argv...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return string(out), fmt.Errorf("%s %s: %w\n%s", class, strings.Join(args, " "), err, stderr)
	}
	return string(out), nil
}

// ConsumerGroupClass is Kafka's consumer-groups tool (kafka-consumer-groups.sh) in 3.8+ and 4.x.
const ConsumerGroupClass = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

// DescribeOffsets asks Kafka's consumer-groups tool for a group's committed offsets, keyed by
// "topic/partition". A partition without a commit ("-") is absent.
func (s *Stack) DescribeOffsets(t testing.TB, group string) map[string]int64 {
	t.Helper()
	return s.DescribeOffsetsWith(t, group, s.Kafka, s.ClientProperties)
}

// DescribeOffsetsWith is DescribeOffsets through bootstrap with the client.properties props
// ("" for none).
func (s *Stack) DescribeOffsetsWith(t testing.TB, group, bootstrap, props string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The tool's own --timeout defaults to 5 s; on a loaded box its FindCoordinator can take
	// longer, and it then prints "Error: ..." yet exits 0, which read as "no offsets".
	args := []string{"--bootstrap-server", bootstrap, "--describe", "--group", group}
	if !strings.HasPrefix(s.KafkaRelease, "0.") {
		// 0.10.2's tool has no --timeout (it came with 1.0); it waits on its own client's
		// request timeout instead.
		args = append(args, "--timeout", "60000")
	}
	if props != "" {
		args = append(args, "--command-config", props)
	}
	class := s.ConsumerGroupsClass
	if class == "" {
		class = ConsumerGroupClass
	}
	out, err := s.KafkaTool(ctx, class, args...)
	if err != nil {
		t.Fatalf("consumer-groups --describe %s: %v", group, err)
	}
	if strings.Contains(out, "Error:") {
		t.Fatalf("consumer-groups --describe %s failed:\n%s", group, out)
	}
	offsets, err := ParseDescribe(out, group)
	if err != nil {
		t.Fatal(err)
	}
	return offsets
}

// ParseDescribe reads the table of `--describe --group G`:
// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID.
func ParseDescribe(out, group string) (map[string]int64, error) {
	offsets := map[string]int64{}
	// The columns are read from the header: releases before 2.2 print no GROUP column.
	col := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "GROUP" || f[0] == "TOPIC") {
			col = map[string]int{}
			for i, name := range f {
				col[name] = i
			}
			continue
		}
		ti, tok := col["TOPIC"]
		pi, pok := col["PARTITION"]
		ci, cok := col["CURRENT-OFFSET"]
		if !tok || !pok || !cok || len(f) <= max(ti, pi, ci) {
			continue
		}
		if gi, ok := col["GROUP"]; ok && f[gi] != group {
			continue
		}
		if f[ci] == "-" {
			continue
		}
		off, err := strconv.ParseInt(f[ci], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("consumer-groups output line %q: current offset: %w", line, err)
		}
		offsets[f[ti]+"/"+f[pi]] = off
	}
	return offsets, nil
}
