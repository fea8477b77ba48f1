// Package deploy holds the operators' files (systemd unit, Grafana dashboard,
// Prometheus alert rules, docker compose lab); its tests keep them true to
// the gateway.
package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/app"
	"github.com/isupgw/isupgw/internal/config"
)

// metricName finds the metric names in a PromQL expression: ours, the Go and
// process collectors' that the gateway also exports, and Prometheus's `up`.
var metricName = regexp.MustCompile(`\b((?:isupgw|process|go)_[a-z0-9_]+|up)\b`)

// Every metric the dashboard and the alert rules use exists in /metrics of a
// running gateway (the embedded default, on free loopback ports).
func TestDashboardAndRulesUseExistingMetrics(t *testing.T) {
	used := map[string][]string{} // metric: where
	for _, e := range dashboardExprs(t) {
		for _, m := range metricName.FindAllString(e, -1) {
			used[m] = append(used[m], "dashboard")
		}
	}
	for _, r := range alertRules(t) {
		for _, m := range metricName.FindAllString(r.Expr, -1) {
			used[m] = append(used[m], "alert "+r.Alert)
		}
	}
	if len(used) < 15 {
		t.Fatalf("only %d metrics found in the dashboard and the rules: %v", len(used), used)
	}
	names := make([]string, 0, len(used))
	for m := range used {
		if m != "up" { // Prometheus's own, per scrape target
			names = append(names, m)
		}
	}
	for _, m := range scrape(t, names) {
		t.Errorf("%s (used by %s) is not in the gateway's /metrics", m, strings.Join(slices.Compact(used[m]), ", "))
	}
}

func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("grafana", "isupgw-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(d)
	return out
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("prometheus", "isupgw-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("alert rules: %v", err)
	}
	var out []rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("rule %+v: want alert, expr, summary and description", r)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
				t.Errorf("rule %s: severity %q, want critical, warning or info", r.Alert, s)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("rule %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// scrape runs the embedded default configuration (A, point code 1) and a
// second gateway B (point code 2) that dials it, on free loopback ports;
// once B is available to A, one outseize is refused (a CIC that does not
// exist) and one call goes to B, which has no host and releases it, so that
// the call, refusal and message counters have samples. It returns the names
// missing from A's /metrics.
func scrape(t *testing.T, names []string) (missing []string) {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	udp.Close()
	a := strings.NewReplacer(
		"transport: auto ", "transport: udp  ",
		"listen: 127.0.0.1:2905 ", fmt.Sprintf("listen: 127.0.0.1:2905\n  udp_port: %d\n  #", udpPort),
		"tcp: 127.0.0.1:7700", "tcp: 127.0.0.1:0",
		"metrics: 127.0.0.1:9700", "metrics: 127.0.0.1:0",
	).Replace(string(config.DefaultYAML()))
	b := fmt.Sprintf(`point_code: 2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
circuit_groups: [{name: a, point_code: 1, cics: ["1-31"]}]
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, udpPort)
	runA := start(t, a)
	runB := start(t, b)
	// Both ends reset the group when they first see each other (GRS each
	// way): the call waits until neither has a reset in flight.
	settled := func(r *app.Running) bool {
		st := r.Gateway.Status()
		return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 31
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if settled(runA) && settled(runB) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A and B not available to each other with their circuits reset within 10 s: A %+v, B %+v", runA.Gateway.Status(), runB.Gateway.Status())
		}
		time.Sleep(10 * time.Millisecond) // polling a start-up, bounded; no event says "reset done"
	}

	c, err := client.Dial(context.Background(), "tcp", runA.Host.TCPAddr().String(), client.Config{App: "deploy-test", Token: runA.Config.Host.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	octx, ocancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ocancel()
	// A circuit that does not exist: refused by the stack.
	badCIC := 999
	if _, err := c.Outseize(octx, client.Outseize{DPC: 2, CIC: &badCIC, Called: "4930123456"}); err == nil {
		t.Fatal("outseize on CIC 999 of a group of 31 was accepted")
	}
	// A call B has no host for: IAM out, REL back.
	seized, err := c.Outseize(octx, client.Outseize{DPC: 2, Called: "4930123456"})
	if err != nil {
		t.Fatal(err)
	}
	for released := false; !released; {
		select {
		case e := <-c.Events():
			if r, ok := e.(*client.Released); ok && r.Call == seized.Call {
				released = true
			}
		case <-octx.Done():
			t.Fatal("the call to B was not released within 10 s")
		}
	}

	// The stack publishes its counters periodically: scrape until every
	// name is there (bounded).

	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		families := metricFamilies(t, runA.MetricsAddr.String())
		missing = missing[:0]
		for _, n := range names {
			if !families[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			break
		}
	}
	slices.Sort(missing)
	return missing
}

func metricFamilies(t *testing.T, addr string) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			families[f[2]] = true
		}
	}
	if !families["isupgw_calls_active"] {
		t.Fatalf("/metrics has no isupgw metrics:\n%s", body)
	}
	return families
}

// start runs a gateway with configuration y until the test ends.
func start(t *testing.T, y string) *app.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "isupgw.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	ready := make(chan *app.Running, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{ConfigPath: path, LogOut: io.Discard, Ready: func(r *app.Running) { ready <- r }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
	})
	select {
	case r := <-ready:
		return r
	case err := <-done:
		t.Fatalf("gateway did not start: %v\n%s", err, y)
	case <-time.After(10 * time.Second):
		t.Fatal("gateway did not start within 10 s")
	}
	return nil
}

// The lab's gateway configurations are valid, and every file the compose
// file mounts exists.
func TestLabFiles(t *testing.T) {
	t.Setenv(config.TokenEnv, "lab")
	for _, f := range []string{"gateway-a.yaml", "gateway-b.yaml"} {
		if _, err := config.Load(filepath.Join("lab", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join("lab", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	if len(compose.Services) != 4 {
		t.Errorf("%d services, want gateway-a, gateway-b, prometheus, grafana", len(compose.Services))
	}
	for name, s := range compose.Services {
		if s.Image != "isupgw" && !regexp.MustCompile(`:v?\d+\.\d+\.\d+$`).MatchString(s.Image) {
			t.Errorf("service %s: image %q is not pinned to an exact version", name, s.Image)
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(src, ".") {
				continue // a named volume
			}
			if _, err := os.Stat(filepath.Join("lab", src)); err != nil {
				t.Errorf("service %s mounts %s: %v", name, src, err)
			}
		}
	}
}
