//go:build linux

package fault

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/internal/app"
)

const (
	token    = "fault-suite-token"
	sctpPort = 2905 // over UDP the SCTP port only travels in the header
	circuits = 300  // CICs between A and B
	// cGroup is A's second destination, point code 3, behind a peer that
	// never connects: always paused, the flooding host's target.
	cGroup = 31
)

// buildBinary builds cmd/isupgw (without -race: it is the product under
// test, not the test) into dir, or skips the suite. ISUPGW_FAULT_BIN names
// a binary to test instead (another build or release).
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("ISUPGW_FAULT_BIN"); bin != "" {
		t.Logf("fault suite: testing %s (ISUPGW_FAULT_BIN)", bin)
		return bin
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("fault suite: no go tool to build cmd/isupgw: %v", err)
	}
	bin := filepath.Join(dir, "isupgw")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/isupgw/isupgw/cmd/isupgw")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("fault suite: cannot build cmd/isupgw: %v\n%s", err, out)
	}
	return bin
}

// freePort returns a port the kernel just gave out on loopback (tcp or udp).
func freePort(t *testing.T, network string) int {
	t.Helper()
	switch network {
	case "udp":
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	default:
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
}

// gw is one gateway process.
type gw struct {
	name     string
	bin      string
	config   string
	logPath  string
	hostAddr string // host API, TCP
	metrics  string // /metrics and /status
	udpPort  int    // SCTP over UDP
	total    int    // circuits it has
	cmd      *exec.Cmd
	exited   chan struct{}
}

// configs writes A's and B's configuration files. A (point code 1) accepts
// B (point code 2) from 127.0.0.1, and has a second peer, c, that never
// comes (point code 3, from 127.0.0.3). Congestion control on A reacts
// within a second, so a flood that reached the shared queue would show as
// refusals; Code Yellow is set well above a loaded CI machine's probe delay.
func configs(t *testing.T, bin, dir string) (a, b *gw) {
	a = &gw{name: "A", bin: bin, udpPort: freePort(t, "udp"), hostAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp")),
		metrics: fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp")), total: circuits + cGroup}
	b = &gw{name: "B", bin: bin, udpPort: freePort(t, "udp"), hostAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp")),
		metrics: fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp")), total: circuits}
	// The adaptive admission runs as shipped (on): its edge counts only the
	// destination's own queued requests, so one host flooding a paused
	// destination does not get another host's calls refused.
	common := fmt.Sprintf(`congestion:
  probe_interval: 100ms
  average_over: 5
  level1_delay: 1s
  level1_average: 500ms
  clear_average: 100ms
code_yellow:
  entry_latency: 500ms
  sample_size: 5
  dump_dir: %s
log:
  level: info
  format: json
`, dir)
	aYAML := fmt.Sprintf(`point_code: 1
m3ua:
  role: ipsp
  transport: udp
  listen: 127.0.0.1:%d
  udp_port: %d
  peers:
    - name: b
      accept_from: 127.0.0.1
      point_codes: [2]
    - name: c
      accept_from: 127.0.0.3
      point_codes: [3]
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-%d"]
  - name: c
    point_code: 3
    cics: ["1-%d"]
host_api:
  tcp: %s
  token: %s
metrics: %s
`, sctpPort, a.udpPort, circuits, cGroup, a.hostAddr, token, a.metrics) + common
	bYAML := fmt.Sprintf(`point_code: 2
m3ua:
  role: ipsp
  transport: udp
  udp_port: %d
  peers:
    - name: a
      connect: 127.0.0.1:%d
      udp_port: %d
      point_codes: [1]
circuit_groups:
  - name: a
    point_code: 1
    cics: ["1-%d"]
host_api:
  tcp: %s
  token: %s
metrics: %s
`, b.udpPort, sctpPort, a.udpPort, circuits, b.hostAddr, token, b.metrics) + common
	for _, g := range []struct {
		gw   *gw
		yaml string
	}{{a, aYAML}, {b, bYAML}} {
		g.gw.config = filepath.Join(dir, g.gw.name+".yaml")
		g.gw.logPath = filepath.Join(dir, g.gw.name+".log")
		if err := os.WriteFile(g.gw.config, []byte(g.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// start runs the gateway; its log is appended to its file. The process is
// killed when the test ends, and dies with the test binary.
func (g *gw) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(g.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(g.bin, "run", "--config", g.config)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", g.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	g.cmd, g.exited = cmd, exited
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := g.status(); err == nil {
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s exited at start:\n%s", g.name, g.logTail(30))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer /status after 15 s:\n%s", g.name, g.logTail(30))
		}
	}
}

// kill is kill -9, waited for.
func (g *gw) kill(t *testing.T) {
	t.Helper()
	if err := g.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.exited
}

func (g *gw) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := g.cmd.Process.Signal(s); err != nil {
		t.Fatalf("%s: %v: %v", g.name, s, err)
	}
}

func (g *gw) status() (gateway.Status, error) {
	st, _, err := app.FetchStatus(g.metrics)
	return st, err
}

// assoc is the state of the association named peer ("" when absent).
func assoc(st gateway.Status, peer string) string {
	for _, a := range st.Associations {
		if a.Name == peer {
			return a.State
		}
	}
	return ""
}

func destination(st gateway.Status, pc uint32) gateway.DestinationStatus {
	for _, d := range st.Destinations {
		if d.PointCode == pc {
			return d
		}
	}
	return gateway.DestinationStatus{}
}

// notIdle counts the circuits in any state but plain idle.
func notIdle(st gateway.Status) int {
	n := 0
	for s, c := range st.Circuits {
		if s != "idle" {
			n += c
		}
	}
	return n
}

// metricValues reads unlabelled gauges from /metrics.
func (g *gw) metricValues(names ...string) (map[string]float64, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + g.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = v
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return out, fmt.Errorf("%s/metrics has no %s", g.metrics, n)
		}
	}
	return out, nil
}

func (g *gw) logTail(lines int) string {
	b, _ := os.ReadFile(g.logPath)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return g.name + "'s log (last lines):\n" + strings.Join(all, "\n")
}

// pairHealthy waits until A and B have each other's association active and
// destination available and every circuit idle; it returns how long it took.
func pairHealthy(t *testing.T, a, b *gw, within time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	var last string
	for time.Since(t0) < within {
		sa, errA := a.status()
		sb, errB := b.status()
		if errA == nil && errB == nil {
			if assoc(sa, "b") == "active" && assoc(sb, "a") == "active" && destination(sa, 2).Available &&
				destination(sb, 1).Available && notIdle(sa) == 0 && notIdle(sb) == 0 &&
				sa.Circuits["idle"] == a.total && sb.Circuits["idle"] == b.total {
				return time.Since(t0)
			}
			last = fmt.Sprintf("A: assoc %q, dest 2 available %v, circuits %v; B: assoc %q, dest 1 available %v, circuits %v",
				assoc(sa, "b"), destination(sa, 2).Available, sa.Circuits, assoc(sb, "a"), destination(sb, 1).Available, sb.Circuits)
		} else {
			last = fmt.Sprintf("status: A %v, B %v", errA, errB)
		}
		time.Sleep(100 * time.Millisecond) // polling another process's state: no signal to wait on
	}
	t.Fatalf("pair not healthy after %v: %s\n%s\n%s", within, last, a.logTail(20), b.logTail(20))
	return 0
}

// waitIdle waits until every circuit of g is idle and returns how long it
// took and the circuits not idle at the end (0 when it returned in time).
func waitIdle(g *gw, within time.Duration) (took time.Duration, stuck int, states map[string]int) {
	t0 := time.Now()
	for {
		st, err := g.status()
		if err == nil {
			stuck, states = notIdle(st), st.Circuits
			if stuck == 0 && st.Circuits["idle"] == g.total {
				return time.Since(t0), 0, states
			}
		}
		if time.Since(t0) > within {
			return time.Since(t0), stuck, states
		}
		time.Sleep(100 * time.Millisecond)
	}
}
