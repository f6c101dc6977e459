package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var updateArchitecture = flag.Bool("update-architecture", false, "rewrite the generated part of docs/architecture.md")

const module = "github.com/zk2kafka/zk2kafka"

// arrows is the whole set of imports between the project's packages that the layering allows:
// for each package, the project packages its non-test code may import. A package missing here
// fails the test, so a new package has to take its place in the layers (and in
// docs/architecture.md) before it lands. The rules it encodes:
//   - the core (migrate and its subpackages, verify, archive) reaches the stores only through the
//     interfaces of migrate/stores.go, never an adapter;
//   - the adapters (zkreader, kafkawriter, offsetlog, mm2log) import the core for its types, never each
//     other; what two share lives in internal/;
//   - only cmd opens adapters (and legacy, which opens the legacy ones), and nothing imports cmd;
//   - test support (contract suites, fakes, the stack) is imported by tests alone.
var arrows = map[string][]string{
	"":                     {"cmd"},
	"cmd":                  {"archive", "internal/clientprops", "internal/kafkaconn", "internal/tlsconf", "kafkawriter", "legacy", "migrate", "migrate/copier", "migrate/mirror", "migrate/mm2", "migrate/planfile", "mm2log", "offsetlog", "verify", "zkreader", "zkreader/datadir"},
	"archive":              {"internal/strictjson", "migrate", "migrate/copier"},
	"verify":               {"migrate"},
	"migrate":              nil,
	"migrate/planfile":     {"internal/durable", "internal/strictjson", "migrate"},
	"migrate/mm2":          {}, // pure: MirrorMaker 2 records and the offset translation
	"migrate/copier":       {"internal/durable", "internal/strictjson", "migrate", "migrate/planfile"},
	"migrate/mirror":       {"migrate"},
	"legacy":               {"migrate", "zkreader", "zkreader/datadir"},
	"zkreader":             {"migrate"},
	"zkreader/datadir":     {"migrate", "zkreader"},
	"kafkawriter":          {"internal/kafkaconn", "migrate"},
	"offsetlog":            {"internal/kafkaconn", "internal/logbatch", "migrate"},
	"mm2log":               {"internal/kafkaconn", "internal/logbatch", "migrate", "migrate/mm2"},
	"internal/kafkaconn":   {"internal/secret", "internal/tlsconf"},
	"internal/clientprops": {"internal/kafkaconn", "internal/secret", "internal/tlsconf"},
	"internal/tlsconf":     {"internal/secret"},
	"internal/logbatch":    {},
	"internal/secret":      nil,
	"internal/durable":     nil,
	"internal/strictjson":  nil,
	"internal/refdocs":     nil,
	// Used by the benchmarks, the demo and the stack tests to fill the stack.
	"internal/seed": {"internal/kafkaconn", "migrate"},
	// Test support: imported by tests only (checked below).
	"migrate/contract":    {"migrate"},
	"migrate/migratetest": {"migrate", "migrate/copier", "migrate/planfile"},
	"internal/stacktest":  nil,
	// Packages of tests alone: no non-test code to hold to the layers.
	"bench": nil,
	"e2e":   nil,
}

var testSupport = []string{"migrate/contract", "migrate/migratetest", "internal/stacktest"}

type listedPackage struct {
	ImportPath string
	Doc        string
	Imports    []string
	GoFiles    []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		p.ImportPath = rel(p.ImportPath)
		var own []string
		for _, imp := range p.Imports {
			if r, ok := projectPackage(imp); ok {
				own = append(own, r)
			}
		}
		p.Imports = own
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func projectPackage(path string) (string, bool) {
	if path != module && !strings.HasPrefix(path, module+"/") {
		return "", false
	}
	return rel(path), true
}

func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

func TestImportArrows(t *testing.T) {
	for _, p := range listPackages(t) {
		allowed, known := arrows[p.ImportPath]
		if !known {
			t.Errorf("package %q has no place in the layers: add it to arrows in architecture_test.go and to docs/architecture.md", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case slices.Contains(testSupport, imp) && !slices.Contains(testSupport, p.ImportPath):
				t.Errorf("%s imports test support %s outside its tests", show(p.ImportPath), imp)
			case !slices.Contains(allowed, imp):
				t.Errorf("%s imports %s, an arrow the layers do not allow (allowed: %s)", show(p.ImportPath), imp, strings.Join(allowed, ", "))
			}
		}
		if len(p.GoFiles) > 0 && strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package comment: say what it reads and writes", show(p.ImportPath))
		}
	}
}

func show(p string) string {
	if p == "" {
		return "the main package"
	}
	return p
}

const (
	generatedStart = "<!-- arrows: generated by `go test -run TestArchitectureDoc . -update-architecture`; do not edit -->"
	generatedEnd   = "<!-- end of arrows -->"
)

// TestArchitectureDoc holds docs/architecture.md to the code: its list of arrows is generated from
// go list, and its table of what each package reads and writes names every package with code.
func TestArchitectureDoc(t *testing.T) {
	const path = "docs/architecture.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := listPackages(t)
	var b strings.Builder
	b.WriteString(generatedStart + "\n\n")
	b.WriteString("| package | imports of the project's own packages (non-test code) |\n|---|---|\n")
	for _, p := range pkgs {
		if len(p.GoFiles) == 0 || p.ImportPath == "" {
			continue
		}
		imports := "—"
		if len(p.Imports) > 0 {
			imports = "`" + strings.Join(p.Imports, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", p.ImportPath, imports)
	}
	b.WriteString("\n" + generatedEnd)
	start, end := bytes.Index(doc, []byte(generatedStart)), bytes.Index(doc, []byte(generatedEnd))
	if start < 0 || end < start {
		t.Fatalf("%s: the markers of the generated arrows are missing", path)
	}
	want := string(doc[:start]) + b.String() + string(doc[end+len(generatedEnd):])
	if *updateArchitecture {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		doc = []byte(want)
	} else if want != string(doc) {
		t.Errorf("%s: the generated arrows differ from the code; run go test -run TestArchitectureDoc . -update-architecture", path)
	}
	for _, p := range pkgs {
		if len(p.GoFiles) == 0 || p.ImportPath == "" || slices.Contains(testSupport, p.ImportPath) {
			continue
		}
		if !bytes.Contains(doc[:start], []byte("| `"+p.ImportPath+"`")) {
			t.Errorf("%s: the table of what each package reads and writes has no row for %s", path, p.ImportPath)
		}
	}
}
