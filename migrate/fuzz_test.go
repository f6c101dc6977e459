package migrate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// FuzzDecodePlan feeds arbitrary bytes to the plan decoder. It must never panic, and whatever
// it accepts must be a valid plan that encodes and decodes back to the same bytes. Seeds are
// in testdata/fuzz/FuzzDecodePlan; run with: go test ./migrate -run '^$' -fuzz FuzzDecodePlan
func FuzzDecodePlan(f *testing.F) {
	var buf bytes.Buffer
	p, err := migratetest.Build(migratetest.GateInputs([]string{"c1"}, "Empty", 0), migrate.DefaultPolicy(), migratetest.Now)
	if err != nil {
		f.Fatal(err)
	}
	if err := migratetest.EncodePlan(&buf, p); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := migratetest.DecodePlan(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("DecodePlan accepted a plan Validate rejects: %v", err)
		}
		var first, second bytes.Buffer
		if err := migratetest.EncodePlan(&first, p); err != nil {
			t.Fatalf("EncodePlan of an accepted plan: %v", err)
		}
		q, err := migratetest.DecodePlan(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("DecodePlan of a re-encoded plan: %v\n%s", err, first.Bytes())
		}
		if err := migratetest.EncodePlan(&second, q); err != nil {
			t.Fatalf("EncodePlan: %v", err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("plan changed in a round trip:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}

// TestFuzzSeedsStayMeaningful keeps the committed corpus honest: the seeds named valid-* must
// still be accepted (else the fuzzer never reaches past the first check), the others rejected.
func TestFuzzSeedsStayMeaningful(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodePlan")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 5 {
		t.Fatalf("only %d seeds in %s", len(ents), dir)
	}
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(string(raw), "go test fuzz v1\n[]byte(")
		body, ok2 := strings.CutSuffix(strings.TrimSpace(body), ")")
		data, err := strconv.Unquote(body)
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s: not a fuzz corpus file of one []byte: %v", e.Name(), err)
		}
		_, err = migratetest.DecodePlan(strings.NewReader(data))
		if valid := strings.HasPrefix(e.Name(), "valid-"); valid != (err == nil) {
			t.Errorf("%s: DecodePlan error %v", e.Name(), err)
		}
	}
}
