package cmd

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// systemdUnit is a unit file's settings: section, then key, then every value in order.
type systemdUnit map[string]map[string][]string

func readUnit(t *testing.T, file string) systemdUnit {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := systemdUnit{}
	section, pending := "", ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || line[0] == '#' || line[0] == ';') {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending += cont + " "
			continue
		}
		line, pending = pending+line, ""
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s: not a setting: %q", file, line)
		}
		u[section][k] = append(u[section][k], v)
	}
	return u
}

// one is the single value of a setting.
func (u systemdUnit) one(t *testing.T, section, key string) string {
	t.Helper()
	if v := u[section][key]; len(v) == 1 {
		return v[0]
	}
	t.Fatalf("[%s] %s: want exactly one value, got %q", section, key, u[section][key])
	return ""
}

// readEnvFile reads KEY=value lines, the format of systemd's EnvironmentFile without quoting.
func readEnvFile(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(v, `"'\ `) {
			t.Fatalf("%s: want KEY=value without quotes, backslashes or spaces, got %q", file, line)
		}
		env[k] = v
	}
	return env
}

// envFlag is the flag an environment variable sets (applyConfig's mapping backwards).
func envFlag(key string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(key, envPrefix+"_"), "_", "-"))
}

func TestDeploySystemdUnit(t *testing.T) {
	u := readUnit(t, "../deploy/systemd/zk2kafka-dual-commit.service")
	exec := strings.Fields(u.one(t, "Service", "ExecStart"))
	if !path.IsAbs(exec[0]) {
		t.Errorf("ExecStart: %q is not an absolute path", exec[0])
	}

	// The example environment file: every key a flag of dual-commit, none command-line only.
	clearEnv(t)
	env := readEnvFile(t, "../deploy/systemd/dual-commit.env")
	for k, v := range env {
		switch flag := envFlag(k); {
		case k == envSASLPassword:
			t.Errorf("dual-commit.env: %s: the password belongs in the credential file, not here", k)
		case !strings.HasPrefix(k, envPrefix+"_"):
			t.Errorf("dual-commit.env: %s lacks the %s_ prefix", k, envPrefix)
		case commandLineOnly[flag]:
			t.Errorf("dual-commit.env: %s is ignored: --%s is taken only from the command line", k, flag)
		}
		t.Setenv(k, v)
	}
	c := dualCommitLine(t, exec[1:])
	for k := range env {
		// applyConfig has set (and checked) every variable that names a flag; this finds the others.
		if flag := envFlag(k); c.Flags().Lookup(flag) == nil {
			t.Errorf("dual-commit.env: %s is ignored: dual-commit has no --%s", k, flag)
		}
	}
	if flagValue(t, c, "execute") != "true" {
		t.Error("ExecStart lacks --execute: the service would be a dry run")
	}
	metricsPort(t, c)

	// The password: a credential systemd hands over, never a setting.
	cred, file, _ := strings.Cut(u.one(t, "Service", "LoadCredential"), ":")
	if want := "${CREDENTIALS_DIRECTORY}/" + cred; flagValue(t, c, "kafka-sasl-password-file") != want || !path.IsAbs(file) {
		t.Errorf("--kafka-sasl-password-file %q, LoadCredential %s:%s: want %s from an absolute path",
			flagValue(t, c, "kafka-sasl-password-file"), cred, file, want)
	}

	for _, s := range []struct{ key, want string }{
		{"Restart", "on-failure"}, {"KillSignal", "SIGTERM"}, {"DynamicUser", "yes"}, {"User", "zk2kafka"},
		{"NoNewPrivileges", "yes"}, {"ProtectSystem", "strict"}, {"ProtectHome", "yes"}, {"CapabilityBoundingSet", ""},
	} {
		if got := u.one(t, "Service", s.key); got != s.want {
			t.Errorf("[Service] %s=%s, want %s", s.key, got, s.want)
		}
	}
	if u.one(t, "Service", "EnvironmentFile") != "/etc/zk2kafka/dual-commit.env" {
		t.Errorf("EnvironmentFile=%s: deploy/systemd/dual-commit.env says /etc/zk2kafka/dual-commit.env",
			u.one(t, "Service", "EnvironmentFile"))
	}
	if stop, err := time.ParseDuration(u.one(t, "Service", "TimeoutStopSec")); err != nil || stop <= stopBudget {
		t.Errorf("TimeoutStopSec=%s: want a duration above the %s SIGTERM may take (%v)",
			u.one(t, "Service", "TimeoutStopSec"), stopBudget, err)
	}
}

func TestDeploySystemdUnitParser(t *testing.T) {
	// The parser above must see a setting continued over lines, or the ExecStart checks read half a line.
	file := filepath.Join(t.TempDir(), "x.service")
	body := "[Service]\n# c\nExecStart=/bin/x a \\\n    b \\\n    c\nUser=u\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	u := readUnit(t, file)
	if got := strings.Fields(u.one(t, "Service", "ExecStart")); !slices.Equal(got, []string{"/bin/x", "a", "b", "c"}) {
		t.Errorf("ExecStart = %q", got)
	}
	if u.one(t, "Service", "User") != "u" {
		t.Errorf("User = %q", u["Service"]["User"])
	}
}
