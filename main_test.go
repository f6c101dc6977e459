package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyZk2kafkaInstalls: `go install ./...` builds every main package the default build
// tags leave in, so test tooling (scripts/seed, scripts/stackcheck) must sit behind the
// zk2kafkadev tag or it lands in the user's GOBIN next to zk2kafka.
func TestOnlyZk2kafkaInstalls(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	mains := strings.Fields(string(out))
	if want := "github.com/zk2kafka/zk2kafka"; len(mains) != 1 || mains[0] != want {
		t.Errorf("go install ./... would install %v, want only %s", mains, want)
	}
}
