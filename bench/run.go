// Package bench is `isupgw bench`: on one machine it starts two gateway
// processes (`isupgw run`, M3UA over SCTP-over-UDP on loopback), an answering
// host (`isupgw load --answer`) on B and load generators (`isupgw load`) on A,
// finds the maximum sustainable full-call rate, runs the overload experiment
// at multiples of it with congestion control on and off, and writes a
// Markdown table, a PNG plot, the machine description and the configurations
// into a results folder.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/loadgen"
)

// Options configure a benchmark run.
type Options struct {
	Exe string // the isupgw binary (default: this executable)
	Out string // results folder (default "results")
	// Capacity skips the search and uses this rate (calls/s).
	Capacity float64
	// Search: the first rate, the growth factor and the steps' length.
	SearchFrom   float64
	SearchStep   time.Duration
	SearchMax    float64
	Multipliers  []float64
	Warm         time.Duration // before the overload, at half the capacity
	Overload     time.Duration
	Recover      time.Duration // after the load drop, at half the capacity
	Hold         time.Duration
	Conns        int
	WaitLoad     float64       // wait for the 1-minute load average to fall below this ...
	WaitMax      time.Duration // ... for at most this long (0: do not wait)
	Log          io.Writer
	Settings     func(mode Mode) Settings
	KeepLogs     bool
	SkipOverload bool
	// ReadyWait is how long a pair may take to come up (0: 30 s).
	ReadyWait time.Duration
	// ConfirmStep is how long the search's rate is held to confirm it
	// (confirm; default the overload's length; negative: not confirmed).
	ConfirmStep time.Duration
	// SearchMode is the control the capacity search runs with (default off:
	// the capacity is what the machine carries, not where an admission
	// begins to refuse).
	SearchMode Mode
	// Modes to run (nil: all, in the order of Modes).
	Modes []Mode
	// Repeat runs each overload this many times and keeps the run with the
	// median goodput (default 1).
	Repeat int
	// Procs is the GOMAXPROCS of each process the bench starts: 0 gives each
	// of the four its share of the CPUs (nproc/4, at least 1) unless
	// GOMAXPROCS is set in the bench's own environment (then that value is
	// inherited); -1 leaves Go's default (every CPU in every process).
	Procs int
}

// childProcs is the GOMAXPROCS the bench's processes run with, or 0 for Go's
// default. On one machine the four processes (two gateways, the load
// generator and the answering host) share the CPUs; with Go's default each
// has as many Ps as the machine has CPUs, and a goroutine woken while another
// P is idle wakes a second thread that spins before it sleeps again, taking
// CPU from the other three (results/notes.md, 2026-12-03 late morning: CPU
// per call at 3x 97-128 us with 2 Ps each on 2 CPUs, 78-86 us with 1). A
// share of the CPUs each is what separate machines would give them.
func childProcs(procs, cpus int, env string) int {
	switch {
	case procs > 0:
		return procs
	case procs < 0:
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(env)); err == nil && n > 0 {
		return n
	}
	return max(1, cpus/4)
}

// childGOMAXPROCS is childProcs for this machine and environment.
func (o *Options) childGOMAXPROCS() int {
	return childProcs(o.Procs, runtime.NumCPU(), os.Getenv("GOMAXPROCS"))
}

// childEnv is the environment of every process the bench starts: its own,
// with GOMAXPROCS set as childProcs says (the same in every mode).
func (o *Options) childEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") })
	if n := o.childGOMAXPROCS(); n > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(n))
	}
	return env
}

func (o *Options) defaults() error {
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Exe = exe
	}
	if o.Out == "" {
		o.Out = "results"
	}
	if o.SearchFrom <= 0 {
		o.SearchFrom = 2000
	}
	if o.SearchStep <= 0 {
		o.SearchStep = 5 * time.Second
	}
	if o.SearchMax <= 0 {
		o.SearchMax = 200000
	}
	if len(o.Multipliers) == 0 {
		o.Multipliers = []float64{1, 2, 3, 5}
	}
	if o.Warm <= 0 {
		o.Warm = 3 * time.Second
	}
	if o.Overload <= 0 {
		o.Overload = 60 * time.Second
	}
	if o.Recover <= 0 {
		o.Recover = 8 * time.Second
	}
	if o.Hold <= 0 {
		o.Hold = 20 * time.Millisecond
	}
	if o.Conns <= 0 {
		o.Conns = 4
	}
	if o.ConfirmStep == 0 {
		o.ConfirmStep = o.Overload
	}
	if o.SearchMode == "" {
		o.SearchMode = ModeOff
	}
	if !slices.Contains(Modes, o.SearchMode) {
		return fmt.Errorf("--search-control %q: want shipped, cooperative, on, throttle or off", o.SearchMode)
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.Settings == nil {
		o.Settings = DefaultSettings
	}
	return nil
}

// pair is two gateway processes and the answering host.
type pair struct {
	s        Settings
	ports    Ports
	dir      string
	procs    []*exec.Cmd
	ans      *exec.Cmd
	ansOut   *bytes.Buffer
	aCfg     string
	bCfg     string
	logFiles []*os.File
	// cpu is each gateway's CPU time (user plus system) over its life,
	// read from the ended process's accounting by stop.
	cpu []time.Duration
}

func freePort(network string) (int, error) {
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts() (Ports, error) {
	var p Ports
	for _, x := range []struct {
		dst *int
		net string
	}{{&p.AUDP, "udp"}, {&p.BUDP, "udp"}, {&p.AHost, "tcp"}, {&p.BHost, "tcp"}, {&p.AMetric, "tcp"}, {&p.BMetr, "tcp"}} {
		port, err := freePort(x.net)
		if err != nil {
			return p, err
		}
		*x.dst = port
	}
	return p, nil
}

// startPair writes the configurations, starts both gateways and the
// answering host, and waits until every circuit is idle on both sides.
func startPair(ctx context.Context, o *Options, s Settings, dir string) (*pair, error) {
	ports, err := freePorts()
	if err != nil {
		return nil, err
	}
	p := &pair{s: s, ports: ports, dir: dir}
	p.aCfg, p.bCfg = Configs(s, ports)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, y := range map[string]string{"a.yaml": p.aCfg, "b.yaml": p.bCfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(y), 0o644); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"a", "b"} {
		lf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			return nil, err
		}
		p.logFiles = append(p.logFiles, lf)
		cmd := exec.Command(o.Exe, "run", "--config", filepath.Join(dir, name+".yaml"), "--drain-timeout", "1s")
		cmd.Stdout, cmd.Stderr = lf, lf
		cmd.Env = o.childEnv()
		if err := cmd.Start(); err != nil {
			p.stop()
			return nil, err
		}
		p.procs = append(p.procs, cmd)
	}
	deadline := time.Now().Add(o.readyWait())
	for {
		okA := p.ready(ports.AMetric, s.CICs)
		okB := p.ready(ports.BMetr, s.CICs)
		if okA && okB {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("bench: %w within %v (logs in %s)", errNotReady, o.readyWait(), dir)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.ansOut = &bytes.Buffer{}
	p.ans = exec.Command(o.Exe, "load", "--answer", "--json", "--quiet", "--addr", fmt.Sprintf("127.0.0.1:%d", ports.BHost),
		"--token", s.Token, "--conns", fmt.Sprint(o.Conns))
	p.ans.Stdout, p.ans.Stderr = p.ansOut, p.ansOut
	p.ans.Env = o.childEnv()
	if err := p.ans.Start(); err != nil {
		p.stop()
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // its hellos
	return p, nil
}

// errNotReady is a pair whose circuits were not all idle on both sides in
// time (a start-up reset racing the peer's ASP Active, a port taken
// between freePorts and the gateway's bind).
var errNotReady = errors.New("the gateways did not come up")

func (o *Options) readyWait() time.Duration {
	if o.ReadyWait > 0 {
		return o.ReadyWait
	}
	return 30 * time.Second
}

// startPairAgain is startPair with one more try, on new ports, when the
// pair does not come up: one failed start should not end a table of
// seventy minutes. The first try's log tails go to the bench's log.
func startPairAgain(ctx context.Context, o *Options, s Settings, dir string, logf func(string, ...any)) (*pair, error) {
	p, err := startPair(ctx, o, s, dir)
	if !errors.Is(err, errNotReady) || ctx.Err() != nil {
		return p, err
	}
	logf("%v; starting them again on new ports. Last lines of a.log:\n%s\nof b.log:\n%s",
		err, logTail(filepath.Join(dir, "a.log"), 5), logTail(filepath.Join(dir, "b.log"), 5))
	return startPair(ctx, o, s, dir+"-again")
}

// logTail is the last n lines of a file, or why it cannot be read.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (p *pair) ready(port, cics int) bool {
	st, err := status(port)
	return err == nil && len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == cics
}

func (p *pair) stop() {
	var all []*exec.Cmd
	if p.ans != nil {
		all = append(all, p.ans)
	}
	all = append(all, p.procs...)
	for _, c := range all {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range all {
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	p.cpu = p.cpu[:0]
	for _, c := range p.procs {
		var t time.Duration
		if st := c.ProcessState; st != nil {
			t = st.UserTime() + st.SystemTime()
		}
		p.cpu = append(p.cpu, t)
	}
	for _, f := range p.logFiles {
		f.Close()
	}
}

var httpc = http.Client{Timeout: 2 * time.Second}

func status(port int) (gateway.Status, error) {
	var st gateway.Status
	resp, err := httpc.Get(fmt.Sprintf("http://127.0.0.1:%d/status", port))
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// congested reports whether a gateway is in any congestion state, a
// destination's slow alarm included.
func congested(st gateway.Status) bool {
	for _, d := range st.Destinations {
		if d.Slow {
			return true
		}
	}
	c := st.Congestion
	return c != nil && (c.InboundLevel > 0 || c.OutboundLevel > 0 || c.CodeYellow || c.Admission != nil && c.Admission.Level > 0)
}

// readMetrics reads a gateway's /metrics (served from snapshots, so it
// costs the call path nothing).
func readMetrics(port int) (look, error) {
	resp, err := httpc.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return look{limit: -1, inSetup: -1}, err
	}
	defer resp.Body.Close()
	return parseLook(resp.Body)
}

// look is what one read of a gateway's /metrics found: whether any
// congestion level, Code Yellow or a destination's slow alarm is set, and
// the admission's limit and calls in set-up to the bench's destination (-1:
// not exposed, the admission off).
type look struct {
	congested      bool
	limit, inSetup int
}

// parseLook finds isupgw_sprc_level, isupgw_sprc_admission_level,
// isupgw_sprc_code_yellow and isupgw_sprc_destination_slow (the admission
// limiting calls to a far end that answers slowly, alarm 0x1C), and the
// destination's admission limit and calls in set-up, in a Prometheus text
// exposition.
func parseLook(r io.Reader) (look, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	l := look{limit: -1, inSetup: -1}
	found := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v := f[len(f)-1]
		switch {
		case strings.HasPrefix(line, "isupgw_sprc_destination_admission_limit{"):
			l.limit = atoiOr(v, -1)
		case strings.HasPrefix(line, "isupgw_sprc_destination_in_setup{"):
			l.inSetup = atoiOr(v, -1)
		case strings.HasPrefix(line, "isupgw_sprc_level{"), strings.HasPrefix(line, "isupgw_sprc_code_yellow "),
			strings.HasPrefix(line, "isupgw_sprc_admission_level "), strings.HasPrefix(line, "isupgw_sprc_destination_slow{"):
			found = true
			l.congested = l.congested || v != "0"
		}
	}
	if !found {
		return l, errors.New("metrics: no isupgw_sprc_level")
	}
	return l, sc.Err()
}

// atoiOr parses a gauge's value (Prometheus writes whole numbers without a
// point) or gives or.
func atoiOr(v string, or int) int {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return or
	}
	return int(f)
}

// sample is one look at both gateways' congestion. unread: a gateway's
// /metrics could not be read (an error, a timeout under the overload), so
// the sample does not show it calm. limit and inSetup are gateway A's
// admission limit and calls in set-up to B (-1: not read or not exposed).
type sample struct {
	at             time.Time
	congested      bool
	unread         bool
	limit, inSetup int
}

// watch polls both gateways' /metrics every slow until fastFrom, then every
// fast, until ctx ends.
func watch(ctx context.Context, p *pair, slow, fast time.Duration, fastFrom time.Time) func() []sample {
	var mu sync.Mutex
	var out []sample
	done := make(chan struct{})
	go func() {
		defer close(done)
		fastNow, period := !time.Now().Before(fastFrom), slow
		if fastNow {
			period = fast
		}
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !fastNow && !time.Now().Before(fastFrom) {
				fastNow = true
				t.Reset(fast)
			}
			x := sample{at: time.Now(), limit: -1, inSetup: -1}
			for i, port := range []int{p.ports.AMetric, p.ports.BMetr} {
				l, err := readMetrics(port)
				x.congested = x.congested || l.congested
				x.unread = x.unread || err != nil
				if i == 0 {
					x.limit, x.inSetup = l.limit, l.inSetup
				}
			}
			mu.Lock()
			out = append(out, x)
			mu.Unlock()
		}
	}()
	return func() []sample {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// load runs one `isupgw load --json` against A and parses its report.
func (p *pair) load(ctx context.Context, o *Options, schedule string, raw io.Writer) ([]loadgen.Second, *loadgen.Final, error) {
	args := []string{"load", "--json", "--addr", fmt.Sprintf("127.0.0.1:%d", p.ports.AHost), "--token", p.s.Token,
		"--dpc", "2", "--conns", fmt.Sprint(o.Conns), "--hold", o.Hold.String(), "--steps", schedule, "--drain", "15s"}
	if p.s.Mode == ModeCooperative {
		args = append(args, "--cooperative")
	}
	cmd := exec.CommandContext(ctx, o.Exe, args...)
	cmd.Env = o.childEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 2) { // 2: it did not keep up, reported
		return nil, nil, fmt.Errorf("load %s: %v: %s", schedule, err, strings.TrimSpace(errb.String()))
	}
	if raw != nil {
		raw.Write(out.Bytes())
	}
	return loadgen.ParseReport(bufio.NewReader(&out))
}

// settle waits until A has no calls and neither gateway is congested.
func (p *pair) settle(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		a, errA := status(p.ports.AMetric)
		b, errB := status(p.ports.BMetr)
		if errA == nil && errB == nil && a.Calls == 0 && b.Calls == 0 && !congested(a) && !congested(b) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
