package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// promServer is a real Prometheus server (Debian's prometheus package) on loopback, scraping
// one dual-commit every second, with its data in a temporary folder; stopped by its pid when
// the test ends.
type promServer struct {
	url string // http://127.0.0.1:port
	job string
}

// startPrometheus starts a Prometheus server scraping target (host:port) as job "zk2kafka",
// or returns nil where the prometheus binary is missing (outside CI, which installs it).
func startPrometheus(t *testing.T, target string) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed: .ci/run installs Debian's prometheus package")
		}
		t.Log("prometheus not installed (apt-get install prometheus): the dashboard's queries are not checked")
		return nil
	}
	dir := t.TempDir()
	p := &promServer{url: "http://" + stacktest.ClosedPort(t), job: "zk2kafka"}
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"+
		"  - job_name: %s\n    static_configs:\n      - targets: [%q]\n", p.job, target)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.url[len("http://"):], "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("stop prometheus (pid %d): %v", cmd.Process.Pid, err)
		}
		if err := cmd.Wait(); err != nil {
			t.Logf("prometheus (pid %d) ended: %v", cmd.Process.Pid, err)
		}
		if err := logf.Close(); err != nil {
			t.Error(err)
		}
	})
	for deadline := time.Now().Add(dualWait); ; time.Sleep(200 * time.Millisecond) { // polling interval
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			ok := resp.StatusCode == http.StatusOK
			resp.Body.Close() //nolint:errcheck // status only
			if ok {
				break
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name()) //nolint:errcheck // only for the message
			t.Fatalf("prometheus not ready within %s:\n%s", dualWait, log)
		}
	}
	return p
}

// promResult is the part of a Prometheus API answer the tests read.
type promResult struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"` // matrix
		} `json:"result"`
	} `json:"data"`
}

// queryRange runs expr over [from, to] at a step of a second and returns the series and
// how many of their points are numbers (not NaN).
func (p *promServer) queryRange(expr string, from, to time.Time) (series, numbers int, err error) {
	q := url.Values{"query": {expr}, "start": {unix(from)}, "end": {unix(to)}, "step": {"1"}}
	resp, err := http.Get(p.url + "/api/v1/query_range?" + q.Encode())
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	var r promResult
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, 0, fmt.Errorf("decode %s: %w", b, err)
	}
	if r.Status != "success" {
		return 0, 0, fmt.Errorf("query %s: %s", expr, r.Error)
	}
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			if str, ok := v[1].(string); ok && str != "NaN" {
				numbers++
			}
		}
	}
	return len(r.Data.Result), numbers, nil
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
