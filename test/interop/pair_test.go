package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/app"
	"github.com/isupgw/isupgw/mtp/transport"
)

// An active/standby pair behind osmo-stp (docs/deployment.md): gateways P1
// and P2 with one point code (4) and the same circuit group towards B, two
// ASPs of one AS (as-p) in override mode, one state_file; B (PC 2) is the
// far gateway. All three are real `isupgw run` processes (the binary of
// this checkout), so a kill is SIGKILL of a process: no ASP Inactive, no
// SCTP ABORT (their SCTP is userspace, over raw IP), and osmo-stp learns of
// it only when its kernel's SCTP gives up on the association.

// Pair test parameters.
const (
	pairLoadInterval = 100 * time.Millisecond // one call attempt each way per interval
	pairHold         = 500 * time.Millisecond // answered calls are held this long
	pairMaxInFlight  = 24                     // per direction, below the 32 circuits
	pairDetect       = 90 * time.Second       // bound: kill to the first call through the other
)

// The CICs blocked on the active gateway before the first kill.
const pairBlockFirst, pairBlockLast = 30, 31

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// isupgwBinary builds cmd/isupgw once per test binary run.
func isupgwBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		repo := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "isupgw-interop-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "isupgw")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/isupgw")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/isupgw: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is one `isupgw run` process.
type proc struct {
	t            *testing.T
	name         string
	bin, config  string
	api, metrics string
	log          string
	cmd          *exec.Cmd
	done         chan struct{}
}

// startProc runs `isupgw run --config` with yaml; the host API and /status
// listen on the fixed loopback addresses api and metrics (in the namespace).
func startProc(t *testing.T, bin, name, yaml, api, metrics string) *proc {
	t.Helper()
	dir := t.TempDir()
	p := &proc{t: t, name: name, bin: bin, config: filepath.Join(dir, name+".yaml"), api: api, metrics: metrics,
		log: filepath.Join(dir, name+".log")}
	if err := os.WriteFile(p.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p.start()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			// What explains a failure: the MTP and M3UA events and the
			// warnings of the whole run, then the last lines.
			t.Logf("%s events:\n%s", name, grepLines(p.life(), 40, `"m3ua state"`, `"pause `, `"resume `, `"level":"warn"`, `"level":"error"`))
			t.Logf("%s log tail:\n%s", name, p.tail(15))
		}
		t.Logf("%s: warnings and errors logged (count, message): %s", name, p.warnings())
		if dir := os.Getenv("ISUPGW_PAIR_LOGS"); dir != "" { // keep the logs for a look
			if b, err := os.ReadFile(p.log); err == nil {
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, time.Now().UnixNano())), b, 0o600)
			}
		}
	})
	return p
}

func (p *proc) start() {
	p.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "--- start %s\n", time.Now().Format(time.RFC3339Nano))
	p.cmd = exec.Command(p.bin, "run", "--config", p.config)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.done)
	poll(p.t, 20*time.Second, p.name+" answering on /status", func() (bool, string) {
		_, err := p.status()
		return err == nil, fmt.Sprint(err)
	})
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill is kill -9.
func (p *proc) kill() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("%s did not die within 10 s of SIGKILL", p.name)
	}
}

// stop is SIGTERM, as a service manager stops isupgw; SIGKILL after 20 s.
func (p *proc) stop() {
	if p.cmd == nil || !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.t.Errorf("%s did not stop within 20 s of SIGTERM", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) status() (gateway.Status, error) {
	st, _, err := app.FetchStatus(p.metrics)
	return st, err
}

func (p *proc) role() string {
	st, err := p.status()
	if err != nil || st.Redundancy == nil {
		return ""
	}
	return st.Redundancy.Role
}

func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	return lastLines(string(b), n)
}

// life is the log since the last start.
func (p *proc) life() string {
	b, _ := os.ReadFile(p.log)
	s := string(b)
	if i := strings.LastIndex(s, "--- start "); i >= 0 {
		s = s[i:]
	}
	return s
}

// warnings counts the distinct messages of the warn and error lines of the
// whole log (every start).
func (p *proc) warnings() string {
	b, _ := os.ReadFile(p.log)
	n := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct{ Level, Message string }
		if json.Unmarshal([]byte(line), &rec) == nil && (rec.Level == "warn" || rec.Level == "error") {
			n[rec.Level+": "+rec.Message]++
		}
	}
	msgs := make([]string, 0, len(n))
	for m, c := range n {
		msgs = append(msgs, fmt.Sprintf("%d %q", c, m))
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

// resetCounters are a gateway's GRS and GRA counts, T22 expiries and
// messages M3UA had no route for, from /metrics (a GRS repeated at T22, or a
// GRA sent towards a destination still paused, shows there).
func resetCounters(metrics string) string {
	if metrics == "" {
		return "?"
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + metrics + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		reset := strings.HasPrefix(line, "isupgw_isup_") && (strings.Contains(line, `"GRS"`) || strings.Contains(line, `"GRA"`) || strings.Contains(line, `"T22"`))
		if reset || strings.HasPrefix(line, `isupgw_m3ua_errors_total{kind="no_route"}`) {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(line, "isupgw_isup_"), "isupgw_"))
		}
	}
	return strings.Join(out, ", ")
}

// cli runs an isupgw subcommand against this gateway's host API.
func (p *proc) cli(args ...string) (string, error) {
	args = append(args, "--host-api", p.api, "--token", hostToken)
	out, err := exec.Command(p.bin, args...).CombinedOutput()
	return string(out), err
}

// callKey names a call on a party: the gateway (index in a Multi, 0 for a
// single connection) and its handle there.
type callKey struct {
	gw   int
	call uint64
}

// party is a host application: on a Multi (the pair's side: calls go to the
// active gateway) or on one gateway (B). It answers every incoming call and
// keeps every event by call.
type party struct {
	t      *testing.T
	name   string
	multi  *client.Multi
	single *client.Client
	// metricsAddr is the single gateway's /metrics address, if known.
	metricsAddr string

	mu       sync.Mutex
	byCall   map[callKey][]client.Event
	notify   chan struct{}
	offered  map[string]callKey // called number: incoming call
	inRel    map[callKey]*client.Released
	alarms   []timedAlarm
	answerEr []error
	wg       sync.WaitGroup
}

type timedAlarm struct {
	at time.Time
	gw int
	a  *client.Alarm
}

func newParty(t *testing.T, name string, multi *client.Multi, single *client.Client) *party {
	p := &party{t: t, name: name, multi: multi, single: single, byCall: map[callKey][]client.Event{},
		notify: make(chan struct{}), offered: map[string]callKey{}, inRel: map[callKey]*client.Released{}}
	p.wg.Add(1)
	go p.read()
	t.Cleanup(p.close)
	return p
}

// dialPair attaches a party to the gateways at addrs (DialMulti).
func dialPair(t *testing.T, name string, addrs ...string) *party {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := client.DialMulti(ctx, "tcp", addrs, client.Config{App: name, Token: hostToken, Incoming: true})
	if err != nil {
		t.Fatalf("%s: DialMulti %v: %v", name, addrs, err)
	}
	return newParty(t, name, m, nil)
}

// dialOne attaches a party to one gateway.
func dialOne(t *testing.T, name, addr string) *party {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", addr, client.Config{App: name, Token: hostToken, Incoming: true})
	if err != nil {
		t.Fatalf("%s: host API at %s: %v", name, addr, err)
	}
	return newParty(t, name, nil, c)
}

func (p *party) close() {
	if p.multi != nil {
		_ = p.multi.Close()
	} else {
		_ = p.single.Close()
	}
	p.wg.Wait()
}

func (p *party) client(gw int) *client.Client {
	if p.multi != nil {
		return p.multi.Client(gw)
	}
	return p.single
}

func (p *party) read() {
	defer p.wg.Done()
	if p.multi != nil {
		for ge := range p.multi.Events() {
			p.event(ge.Gateway, ge.Event)
		}
		return
	}
	for {
		select {
		case e := <-p.single.Events():
			p.event(0, e)
		case <-p.single.Done():
			return
		}
	}
}

func (p *party) event(gw int, e client.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch x := e.(type) {
	case *client.Incoming:
		k := callKey{gw, x.Call}
		if _, dup := p.offered[x.Called]; dup {
			p.answerEr = append(p.answerEr, fmt.Errorf("%s offered twice", x.Called))
		}
		p.offered[x.Called] = k
		p.wg.Add(1)
		go p.answer(k)
	case *client.Progress:
		k := callKey{gw, x.Call}
		p.byCall[k] = append(p.byCall[k], e)
	case *client.Answered:
		k := callKey{gw, x.Call}
		p.byCall[k] = append(p.byCall[k], e)
	case *client.Released:
		k := callKey{gw, x.Call}
		p.byCall[k] = append(p.byCall[k], e)
		p.inRel[k] = x
	case *client.Alarm:
		p.alarms = append(p.alarms, timedAlarm{at: time.Now(), gw: gw, a: x})
	}
	close(p.notify)
	p.notify = make(chan struct{})
}

func (p *party) answer(k callKey) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := p.client(k.gw)
	err := c.Alert(ctx, k.call)
	if err == nil {
		err = c.Answer(ctx, k.call)
	}
	// A call released meanwhile (a failover) is no answering error.
	if err != nil && !errors.Is(err, client.ErrClosed) {
		var nak *client.Nak
		if !errors.As(err, &nak) {
			p.mu.Lock()
			p.answerEr = append(p.answerEr, fmt.Errorf("answer %v: %w", k, err))
			p.mu.Unlock()
		}
	}
}

// waitCall returns the first event of call k (from index from) that ok
// accepts; gone: the gateway's connection closed first; nil, false: timeout.
func (p *party) waitCall(k callKey, from *int, timeout time.Duration, ok func(client.Event) bool) (e client.Event, gone bool) {
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		evs := p.byCall[k]
		for ; *from < len(evs); *from++ {
			if ok(evs[*from]) {
				e := evs[*from]
				*from++
				p.mu.Unlock()
				return e, false
			}
		}
		ch := p.notify
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.client(k.gw).Done():
			return nil, true
		case <-deadline:
			return nil, false
		}
	}
}

func (p *party) outseize(ctx context.Context, o client.Outseize) (callKey, error) {
	if p.multi != nil {
		c, err := p.multi.Outseize(ctx, o)
		return callKey{c.Gateway, c.Call}, err
	}
	s, err := p.single.Outseize(ctx, o)
	return callKey{0, s.Call}, err
}

// outcome is what became of one call attempt.
type outcome struct {
	called   string
	start    time.Time
	gw       int
	refused  error     // the outseize was refused (nak, no active gateway)
	answered time.Time // zero: never answered
	end      time.Time
	// completed: answered, held, released by us and RLC seen.
	completed bool
	// Otherwise how it ended: released by the network (with cause), the
	// gateway's connection lost, or nothing within the bounds (stuck).
	released *client.Released
	lostConn bool
	stuck    string
}

func (o outcome) String() string {
	switch {
	case o.completed:
		return "completed"
	case o.refused != nil:
		return "refused: " + o.refused.Error()
	case o.lostConn:
		return "gateway connection lost"
	case o.released != nil:
		return fmt.Sprintf("released cause %d (%s)", o.released.Cause, o.released.Reason)
	}
	return "stuck: " + o.stuck
}

var isAnswerOrRelease = func(e client.Event) bool {
	switch e.(type) {
	case *client.Answered, *client.Released:
		return true
	}
	return false
}

var isRelease = func(e client.Event) bool { _, ok := e.(*client.Released); return ok }

// call places one call to dpc, holds it hold once answered, and releases it.
func (p *party) call(dpc uint32, called string, hold time.Duration) (o outcome) {
	o = outcome{called: called, start: time.Now()}
	defer func() { o.end = time.Now() }() // o is the named result: the defer sets what is returned
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := p.outseize(ctx, client.Outseize{DPC: dpc, Called: called, Calling: "4940555"})
	if err != nil {
		o.refused = err
		return o
	}
	o.gw = k.gw
	from := 0
	// Bounds: the far end's answer is immediate; an IAM lost with a dead
	// gateway ends by the new active's GRS (or T7, 20-30 s, at the latest).
	e, gone := p.waitCall(k, &from, 40*time.Second, isAnswerOrRelease)
	switch r := e.(type) {
	case nil:
		if gone {
			o.lostConn = true
		} else {
			o.stuck = "no answer nor release within 40 s"
		}
		return o
	case *client.Released:
		o.released = r
		return o
	}
	o.answered = time.Now()
	if e, gone := p.waitCall(k, &from, hold, isRelease); e != nil || gone {
		o.lostConn = gone
		if e != nil {
			o.released = e.(*client.Released)
		}
		return o
	}
	if err := p.client(k.gw).Release(ctx, k.call, 16, 1); err != nil {
		e, gone := p.waitCall(k, &from, time.Second, isRelease)
		switch {
		case gone:
			o.lostConn = true
		case e != nil:
			o.released = e.(*client.Released)
		default:
			o.stuck = "release: " + err.Error()
		}
		return o
	}
	e, gone = p.waitCall(k, &from, 40*time.Second, isRelease)
	switch {
	case gone:
		o.lostConn = true
	case e == nil:
		o.stuck = "no RLC within 40 s"
	default:
		o.completed = true
	}
	return o
}

// burst places n calls, parallel at a time, and returns their outcomes.
func (p *party) burst(dpc uint32, prefix string, n, parallel int) []outcome {
	out := make([]outcome, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = p.call(dpc, fmt.Sprintf("%s%04d", prefix, i), 0)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// load offers calls at a steady rate: one attempt per interval, at most max
// in flight (an attempt with max in flight is not made, and counted).
type load struct {
	p        *party
	dpc      uint32
	prefix   string
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	outcomes []outcome
	skipped  int
}

func startLoad(p *party, dpc uint32, prefix string) *load {
	l := &load{p: p, dpc: dpc, prefix: prefix, stop: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(pairLoadInterval)
		defer tick.Stop()
		inflight := make(chan struct{}, pairMaxInFlight)
		for seq := 0; ; seq++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			select {
			case inflight <- struct{}{}:
			default:
				l.mu.Lock()
				l.skipped++
				l.mu.Unlock()
				continue
			}
			l.wg.Add(1)
			go func(called string) {
				defer l.wg.Done()
				o := p.call(dpc, called, pairHold)
				<-inflight
				l.mu.Lock()
				l.outcomes = append(l.outcomes, o)
				l.mu.Unlock()
			}(fmt.Sprintf("%s%05d", prefix, seq))
		}
	}()
	return l
}

// halt stops new attempts and waits for the calls in flight.
func (l *load) halt(t *testing.T) []outcome {
	t.Helper()
	close(l.stop)
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("load %s: calls still in flight 2 min after the stop", l.prefix)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Slice(l.outcomes, func(i, j int) bool { return l.outcomes[i].start.Before(l.outcomes[j].start) })
	return l.outcomes
}

// firstAnswered is the first answer of a call placed after t0 (zero: none).
func (l *load) firstAnswered(t0 time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, o := range l.outcomes {
		if o.start.After(t0) && !o.answered.IsZero() && (first.IsZero() || o.answered.Before(first)) {
			first = o.answered
		}
	}
	return first
}

// failoverFigures sums up one direction's calls around a kill at t0.
type failoverFigures struct {
	// Calls started before the kill: completed, lost (seized, then ended
	// by the failure) and refused (the outseize itself).
	before, completedBefore, lost, refusedBefore int
	// Calls started after it: completed, refused, and failed (seized, then
	// released before the answer).
	after, completedAfter, refused, failed int
	firstAnswer                            time.Duration
	firstCompleted                         time.Duration // its release done (held pairHold)
	gateways                               map[int]int   // completed calls after the kill by gateway
	how                                    map[string]int
	stuck                                  []string
}

func figures(outs []outcome, t0, firstAnswer time.Time) failoverFigures {
	f := failoverFigures{gateways: map[int]int{}, how: map[string]int{}}
	if !firstAnswer.IsZero() {
		f.firstAnswer = firstAnswer.Sub(t0)
	}
	// An outcome without its details, to count kinds.
	kind := func(o outcome) string {
		s := o.String()
		if i := strings.Index(s, " ("); i > 0 {
			s = s[:i]
		}
		if i := strings.Index(s, " no circuit"); i > 0 {
			s = s[:i]
		}
		return s
	}
	for _, o := range outs {
		if o.completed && o.start.After(t0) && (f.firstCompleted == 0 || o.end.Sub(t0) < f.firstCompleted) {
			f.firstCompleted = o.end.Sub(t0)
		}
		if o.stuck != "" {
			f.stuck = append(f.stuck, o.called+": "+o.stuck)
		}
		before := o.start.Before(t0)
		if !o.completed {
			when := "after"
			if before {
				when = "before"
			}
			f.how[when+": "+kind(o)]++
		}
		switch {
		case before && o.completed:
			f.before++
			f.completedBefore++
		case before && o.refused != nil:
			f.before++
			f.refusedBefore++
		case before:
			f.before++
			f.lost++
		case o.completed:
			f.after++
			f.completedAfter++
			f.gateways[o.gw]++
		case o.refused != nil:
			f.after++
			f.refused++
		default:
			f.after++
			f.failed++
		}
	}
	return f
}

func (f failoverFigures) String() string {
	return fmt.Sprintf("first call answered %v after the kill (completed %v); started before the kill %d (completed %d, lost %d, refused %d), after %d (completed %d by gateway %v, refused %d, failed %d); not completed: %v",
		f.firstAnswer.Round(time.Millisecond), f.firstCompleted.Round(time.Millisecond), f.before, f.completedBefore, f.lost, f.refusedBefore,
		f.after, f.completedAfter, f.gateways, f.refused, f.failed, f.how)
}

// TestActiveStandbyPairThroughSTP is issue 20's check against osmo-stp 1.6.0.
func TestActiveStandbyPairThroughSTP(t *testing.T) {
	l := needLab(t)
	n := l.circuits(t)
	bin := isupgwBinary(t)
	t0 := time.Now()
	state := filepath.Join(t.TempDir(), "blocks.json")
	pairYAML := func(s Side, aspID int, api, metrics string) string {
		return l.gatewayYAML(s, transport.KindRaw, gwOptions{HostAPI: api, Metrics: metrics,
			PeerExtra: fmt.Sprintf("asp_id: %d", aspID),
			Extra:     fmt.Sprintf("state_file: %q\nredundancy: {mode: active-standby}\n", state)}, l.B)
	}
	const (
		apiP1, metricsP1 = "127.0.0.1:17701", "127.0.0.1:19701"
		apiP2, metricsP2 = "127.0.0.1:17702", "127.0.0.1:19702"
		apiB, metricsB   = "127.0.0.1:17703", "127.0.0.1:19703"
	)
	p1 := startProc(t, bin, "P1", pairYAML(l.P1, 1, apiP1, metricsP1), apiP1, metricsP1)
	bOpts := gwOptions{HostAPI: apiB, Metrics: metricsB}
	if dir := os.Getenv("ISUPGW_PAIR_LOGS"); dir != "" {
		bOpts.Extra = fmt.Sprintf("capture: %q\n", filepath.Join(dir, fmt.Sprintf("B-%d.pcap", time.Now().UnixNano())))
	}
	b := startProc(t, bin, "B", l.gatewayYAML(l.B, transport.KindRaw, bOpts, l.P1), apiB, metricsB)
	ready(t, "P1", p1.status, groupName(l.B), n, 60*time.Second)
	ready(t, "B", b.status, groupName(l.P1), n, 60*time.Second)
	if r := p1.role(); r != gateway.RoleActive {
		t.Fatalf("P1 is %q, want active (first of its AS)", r)
	}
	p2 := startProc(t, bin, "P2", pairYAML(l.P2, 2, apiP2, metricsP2), apiP2, metricsP2)
	poll(t, 30*time.Second, "P2 standby with its association up (ASP-INACTIVE)", func() (bool, string) {
		st, err := p2.status()
		return err == nil && st.Redundancy != nil && st.Redundancy.Role == gateway.RoleStandby &&
			len(st.Associations) == 1 && st.Associations[0].State == "inactive", fmt.Sprintf("%+v %v", st, err)
	})
	waitSTP(t, l, "P1 active, P2 inactive", map[string]string{l.P1.Name: "ASP_ACTIVE", l.P2.Name: "ASP_INACTIVE"})
	phase(t, "pair P1, P2 and B up", t0)

	pa := dialPair(t, "pair-host", apiP1, apiP2)
	pb := dialOne(t, "b-host", apiB)
	pb.metricsAddr = metricsB
	t1 := time.Now()
	mustComplete(t, "100 calls pair to B", pa.burst(l.B.PC, "4920", 100, 8), 0)
	mustComplete(t, "100 calls B to pair", pb.burst(l.P1.PC, "4940", 100, 8), -1)
	phase(t, "100 calls each way via P1", t1)
	incomingOn(t, pa, "4940", 0)

	// A maintenance block on the active one (the CLI, as an operator sets it).
	cics := fmt.Sprintf("%d-%d", pairBlockFirst, pairBlockLast)
	if out, err := p1.cli("circuits", "block", "--dpc", fmt.Sprint(l.B.PC), "--cic", cics); err != nil {
		t.Fatalf("isupgw circuits block on P1: %v\n%s", err, out)
	} else {
		t.Logf("P1: isupgw circuits block --cic %s: %s", cics, strings.TrimSpace(out))
	}
	blockedAtB(t, pb, "P1's block")

	// First failover: P1 killed under load, P2 takes over.
	fig1 := failover(t, l, pa, pb, p1, p2, 1, "1")
	blockedAtB(t, pb, "P1's block after P2 took over")
	blockedLocally(t, p2.api, "P2")

	// P1 back: standby, traffic stays on P2.
	t1 = time.Now()
	p1.start()
	poll(t, 30*time.Second, "P1 restarted as standby (ASP-INACTIVE)", func() (bool, string) {
		st, err := p1.status()
		return err == nil && st.Redundancy != nil && st.Redundancy.Role == gateway.RoleStandby &&
			len(st.Associations) == 1 && st.Associations[0].State == "inactive", fmt.Sprintf("%+v %v", st, err)
	})
	waitSTP(t, l, "P2 active, P1 inactive", map[string]string{l.P1.Name: "ASP_INACTIVE", l.P2.Name: "ASP_ACTIVE"})
	pa.close()
	pa = dialPair(t, "pair-host-2", apiP1, apiP2) // attached again: not resting on the client redialling
	mustComplete(t, "20 calls pair to B, P1 standby", pa.burst(l.B.PC, "4921", 20, 4), 1)
	mustComplete(t, "20 calls B to pair, P1 standby", pb.burst(l.P1.PC, "4941", 20, 4), -1)
	incomingOn(t, pa, "4941", 1)
	if r := p1.role(); r != gateway.RoleStandby {
		t.Fatalf("P1 is %q after the calls, want standby", r)
	}
	if st, err := p1.status(); err != nil || st.Calls != 0 {
		t.Fatalf("P1 (standby) has calls: %+v %v", st, err)
	}
	phase(t, "P1 back as standby", t1)

	// Second failover: P2 killed, P1 takes over.
	fig2 := failover(t, l, pa, pb, p2, p1, 0, "2")
	blockedAtB(t, pb, "P1's block after P1 took back")
	blockedLocally(t, p1.api, "P1")
	t.Logf("FIGURES osmo-stp SCTP %s; load %v per attempt each way, held %v", l.SCTP, pairLoadInterval, pairHold)
	t.Logf("FIGURES kill P1: %s", fig1)
	t.Logf("FIGURES kill P2: %s", fig2)
}

// failover kills dead under load both ways and checks that alive takes
// over: calls through it (Multi index aliveGW) complete, B's circuits end
// idle or blocked, none stuck. It logs and returns the figures.
func failover(t *testing.T, l *Lab, pa, pb *party, dead, alive *proc, aliveGW int, tag string) string {
	t.Helper()
	st0, err := alive.status()
	if err != nil || st0.Redundancy == nil || st0.Redundancy.Role != gateway.RoleStandby {
		t.Fatalf("%s before the kill: %+v %v, want standby", alive.name, st0, err)
	}
	toB := startLoad(pa, l.B.PC, "4922"+tag)
	fromB := startLoad(pb, l.P1.PC, "4942"+tag)
	time.Sleep(3 * time.Second) // steady load before the kill (load, not synchronisation)
	t0 := time.Now()
	dead.kill()
	var tActive time.Time
	poll(t, pairDetect, alive.name+" active", func() (bool, string) {
		r := alive.role()
		if r == gateway.RoleActive {
			tActive = time.Now()
		}
		return r == gateway.RoleActive, r
	})
	poll(t, pairDetect, "a call each way answered through "+alive.name+" after the kill", func() (bool, string) {
		a, b := toB.firstAnswered(t0), fromB.firstAnswered(t0)
		return !a.IsZero() && !b.IsZero(), fmt.Sprintf("to B %v, from B %v", a, b)
	})
	time.Sleep(3 * time.Second) // steady load after the takeover
	firstTo, firstFrom := toB.firstAnswered(t0), fromB.firstAnswered(t0)
	outTo, outFrom := toB.halt(t), fromB.halt(t)
	fTo, fFrom := figures(outTo, t0, firstTo), figures(outFrom, t0, firstFrom)
	for _, f := range []failoverFigures{fTo, fFrom} {
		if len(f.stuck) > 0 {
			t.Errorf("calls stuck: %v", f.stuck)
		}
		if f.completedAfter == 0 {
			t.Errorf("no call completed after the kill: %s", f)
		}
	}
	if got := fTo.gateways; got[aliveGW] != fTo.completedAfter {
		t.Errorf("calls to B after the kill completed by gateway %v, want all by %d (%s)", got, aliveGW, alive.name)
	}
	// Hosts told: every call B was offered during the load, and every call
	// B placed, ended at B with a release (none left half-open at B).
	poll(t, 60*time.Second, "every call of the load released at B's host", func() (bool, string) {
		open := openCalls(pb, "4922"+tag, outFrom)
		return len(open) == 0, strings.Join(open, "; ")
	})
	idleAtB(t, pb)
	st, _ := alive.status()
	aspRow := ""
	if asps, _, err := l.showASPs(); err == nil {
		aspRow = fmt.Sprintf("%s %s, %s %s", dead.name, asps[sideOf(l, dead).Name].State, alive.name, asps[sideOf(l, alive).Name].State)
	}
	sum := fmt.Sprintf("kill %s at %s: %s active after %v (role alarm at the host: %v); to B: %s; from B: %s; %s calls=%d takeovers=%d; osmo-stp: %s",
		dead.name, t0.Format("15:04:05.000"), alive.name, tActive.Sub(t0).Round(time.Millisecond), roleAlarmAfter(pa, aliveGW, t0),
		fTo, fFrom, alive.name, st.Calls, takeovers(st), aspRow)
	t.Logf("failover %s: %s", tag, sum)
	t.Logf("failover %s: resets: %s %s; B %s", tag, alive.name, resetCounters(alive.metrics), resetCounters(pb.metricsAddr))
	t.Logf("failover %s: %s: %s", tag, alive.name, grepLines(alive.life(), 3, "takes over", "takeover"))
	t.Logf("failover %s: osmo-stp:\n%s", tag, grepLines(consoleTail(400), 12, "NOTIFY Type", "connection closed", "as-p", "ASP_ACTIVE"))
	return sum
}

func sideOf(l *Lab, p *proc) Side {
	if p.name == "P1" {
		return l.P1
	}
	return l.P2
}

func takeovers(st gateway.Status) uint64 {
	if st.Redundancy == nil {
		return 0
	}
	return st.Redundancy.Takeovers
}

// roleAlarmAfter is when the pair's host heard gateway gw take over (alarm
// 0x40 cleared) after t0, as a duration from t0; -1 if it did not.
func roleAlarmAfter(p *party, gw int, t0 time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.alarms {
		if a.gw == gw && a.a.Number == wire.AlarmStandby && a.a.Cleared && a.at.After(t0) {
			return a.at.Sub(t0).Round(time.Millisecond)
		}
	}
	return -1
}

// openCalls lists the calls of B's host not ended there: those offered to
// it with a number starting with prefix (placed by the pair's host), and
// those it placed (outs) and saw seized.
func openCalls(pb *party, prefix string, outs []outcome) []string {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	var open []string
	for num, k := range pb.offered {
		if strings.HasPrefix(num, prefix) && pb.inRel[k] == nil {
			open = append(open, "offered "+num)
		}
	}
	for _, o := range outs {
		if o.refused == nil && !o.completed && o.released == nil {
			open = append(open, "placed "+o.called+": "+o.String())
		}
	}
	sort.Strings(open)
	return open
}

// mustComplete checks a burst: every call completed and, for gw >= 0, on
// that gateway of the Multi.
func mustComplete(t *testing.T, what string, outs []outcome, gw int) {
	t.Helper()
	var bad []string
	for _, o := range outs {
		if !o.completed || gw >= 0 && o.gw != gw {
			bad = append(bad, fmt.Sprintf("%s on %d: %s", o.called, o.gw, o))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%s: %d of %d not completed as wanted; first: %v (guest console tail:\n%s)", what, len(bad), len(outs), bad[0], consoleTail(20))
	}
}

// incomingOn checks that the pair's host was offered the calls numbered
// prefix... by gateway gw only.
func incomingOn(t *testing.T, pa *party, prefix string, gw int) {
	t.Helper()
	pa.mu.Lock()
	defer pa.mu.Unlock()
	n := 0
	for num, k := range pa.offered {
		if strings.HasPrefix(num, prefix) {
			n++
			if k.gw != gw {
				t.Errorf("call %s offered by gateway %d, want %d", num, k.gw, gw)
			}
		}
	}
	if n == 0 {
		t.Errorf("no call %s... offered to the pair's host", prefix)
	}
	for _, err := range pa.answerEr {
		t.Errorf("%s: %v", pa.name, err)
	}
	pa.answerEr = nil
}

// circuitsAt lists a gateway's circuits (the host API circuits request).
func circuitsAt(c *client.Client) ([]client.Circuit, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, _, err := c.Circuits(ctx, client.CircuitFilter{})
	return list, err
}

func isBlockedCIC(cic uint16) bool { return cic >= pairBlockFirst && cic <= pairBlockLast }

// blockedAtB waits until B sees exactly the blocked CICs blocked by the far end.
func blockedAtB(t *testing.T, pb *party, what string) {
	t.Helper()
	poll(t, 60*time.Second, what+": B sees CICs blocked remotely", func() (bool, string) {
		list, err := circuitsAt(pb.single)
		if err != nil {
			return false, err.Error()
		}
		var diff []string
		for _, c := range list {
			if (c.Remote != "") != isBlockedCIC(c.CIC) {
				diff = append(diff, fmt.Sprintf("CIC %d remote %q", c.CIC, c.Remote))
			}
		}
		return len(diff) == 0 && len(list) > 0, strings.Join(diff, "; ")
	})
}

// blockedLocally checks that the gateway at api holds the block itself.
func blockedLocally(t *testing.T, api, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", api, client.Config{App: "check", Token: hostToken})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer c.Close()
	list, err := circuitsAt(c)
	if err != nil {
		t.Fatalf("%s: circuits: %v", name, err)
	}
	for _, ci := range list {
		if (ci.Local != "") != isBlockedCIC(ci.CIC) {
			t.Errorf("%s: CIC %d local blocking %q", name, ci.CIC, ci.Local)
		}
	}
}

// idleAtB waits until every circuit at B is idle (the blocked ones too: idle
// and blocked), none in a call, releasing or awaiting an acknowledgement.
func idleAtB(t *testing.T, pb *party) {
	t.Helper()
	poll(t, 60*time.Second, "B's circuits idle, none stuck", func() (bool, string) {
		list, err := circuitsAt(pb.single)
		if err != nil {
			return false, err.Error()
		}
		var busy []string
		for _, c := range list {
			if c.State != "idle" || c.Awaiting != "" || c.Call != 0 {
				busy = append(busy, fmt.Sprintf("CIC %d %s awaiting %q call %d for %d ms", c.CIC, c.State, c.Awaiting, c.Call, c.InStateMS))
			}
		}
		return len(busy) == 0 && len(list) > 0, strings.Join(busy, "; ")
	})
}

// waitSTP waits until osmo-stp shows the ASPs in the states given.
func waitSTP(t *testing.T, l *Lab, what string, want map[string]string) {
	t.Helper()
	poll(t, 30*time.Second, "osmo-stp: "+what, func() (bool, string) {
		asps, out, err := l.showASPs()
		if err != nil {
			return false, err.Error()
		}
		for name, st := range want {
			if asps[name].State != st {
				return false, out
			}
		}
		return true, ""
	})
}

// grepLines returns the last n lines of text holding any of words.
func grepLines(text string, n int, words ...string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, line)
				break
			}
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}
