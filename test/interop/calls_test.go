package interop

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/lockedbuf"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/app"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp/transport"
)

// Full calls through osmo-stp between isupgw gateways: A (PC 1, SCTP over
// UDP) and B (PC 2, raw SCTP) run here, in the namespace, as the product
// runs them (internal/app.Run is `isupgw run`); C (PC 3) is the isupgw
// binary inside the guest over kernel SCTP. Host applications use the Go
// host client. Each gateway is the ASP of its own AS at osmo-stp.

const hostToken = "interop"

// GatewayYAML is the configuration file of a host-side gateway: side s's
// ASP over transport k (udp or raw) with circuits to the gateways of peers.
func (l *Lab) GatewayYAML(s Side, k transport.Kind, peers ...Side) string {
	return l.gatewayYAML(s, k, gwOptions{HostAPI: "127.0.0.1:0", Metrics: "127.0.0.1:0"}, peers...)
}

// gwOptions are what differs between the gateways of the lab's tests.
type gwOptions struct {
	HostAPI, Metrics string // listen addresses
	PeerExtra        string // more fields of the stp peer, e.g. "asp_id: 1"
	Extra            string // more top-level lines
}

func (l *Lab) gatewayYAML(s Side, k transport.Kind, o gwOptions, peers ...Side) string {
	var b strings.Builder
	fmt.Fprintf(&b, "point_code: %d\nm3ua:\n  role: asp\n  transport: %v\n", s.PC, k)
	// osmo-stp knows the ASP by its SCTP port: m3ua.local fixes it (over UDP
	// the SCTP header carries it, raw binds it).
	fmt.Fprintf(&b, "  local: %q\n", l.Local(s).String())
	if k == transport.KindUDP {
		fmt.Fprintf(&b, "  udp_port: %d\n", l.UDPEncapPort)
	}
	var pcs []string
	for _, p := range peers {
		pcs = append(pcs, fmt.Sprint(p.PC))
	}
	extra := ""
	if o.PeerExtra != "" {
		extra = ", " + o.PeerExtra
	}
	fmt.Fprintf(&b, "  peers:\n    - {name: stp, connect: %q, routing_contexts: [%d], traffic_mode: override, point_codes: [%s]%s}\n",
		l.STPRaw().String(), s.RC, strings.Join(pcs, ", "), extra)
	b.WriteString("circuit_groups:\n")
	for _, p := range peers {
		fmt.Fprintf(&b, "  - {name: %s, point_code: %d, cics: [%q]}\n", groupName(p), p.PC, l.GWCICs)
	}
	fmt.Fprintf(&b, "reset_on_resume: true\ntimers: {t22: 2s}\nhost_api: {tcp: %q, token: %s}\nmetrics: %q\nlog: {level: info}\n",
		o.HostAPI, hostToken, o.Metrics)
	b.WriteString(o.Extra)
	return b.String()
}

// groupName is the circuit group towards a side's gateway: "b" for as-b.
func groupName(s Side) string { return strings.TrimPrefix(s.AS, "as-") }

// circuits is the number of circuits in l.GWCICs ("1-32").
func (l *Lab) circuits(t testing.TB) int {
	var lo, hi int
	if _, err := fmt.Sscanf(l.GWCICs, "%d-%d", &lo, &hi); err != nil {
		t.Fatalf("LAB_GW_CICS %q: %v", l.GWCICs, err)
	}
	return hi - lo + 1
}

// gw is a host-side gateway: app.Run in this process.
type gw struct {
	t    *testing.T
	name string
	run  *app.Running
	sigs chan os.Signal
	err  chan error
	log  *lockedbuf.Buffer
	once sync.Once
}

// lastLines is the last n lines of a log.
func lastLines(log string, n int) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startGateway runs a gateway with configuration yaml until the test ends
// or stop.
func startGateway(t *testing.T, name, yaml string) *gw {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &gw{t: t, name: name, sigs: make(chan os.Signal, 2), err: make(chan error, 1), log: &lockedbuf.Buffer{}}
	ready := make(chan *app.Running, 1)
	go func() {
		g.err <- app.Run(context.Background(), app.Options{ConfigPath: path, LogOut: g.log, Signals: g.sigs,
			DrainTimeout: time.Second, Ready: func(r *app.Running) { ready <- r }})
	}()
	select {
	case g.run = <-ready:
	case err := <-g.err:
		t.Fatalf("gateway %s did not start: %v\n%s", name, err, yaml)
	case <-time.After(15 * time.Second):
		t.Fatalf("gateway %s did not start within 15 s", name)
	}
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			t.Logf("gateway %s log tail:\n%s", name, lastLines(g.log.String(), 40))
		}
	})
	return g
}

// stop is SIGTERM, as a service manager stops isupgw: ASP Inactive, ASP
// Down and SCTP SHUTDOWN towards osmo-stp.
func (g *gw) stop() {
	g.once.Do(func() {
		g.sigs <- syscall.SIGTERM
		select {
		case err := <-g.err:
			if err != nil {
				g.t.Errorf("gateway %s stopped with %v", g.name, err)
			}
		case <-time.After(20 * time.Second):
			g.t.Errorf("gateway %s did not stop within 20 s of SIGTERM", g.name)
		}
	})
}

// status is the gateway's /status, fetched over HTTP as `isupgw status` does.
func (g *gw) status() (gateway.Status, error) {
	st, _, err := app.FetchStatus(g.run.MetricsAddr.String())
	return st, err
}

func (g *gw) host(t *testing.T, app string, incoming bool) *hostApp {
	t.Helper()
	return dialHost(t, g.name+"/"+app, g.run.Host.TCPAddr().String(), hostToken, app, incoming)
}

// poll calls cond until it holds, every 100 ms, at most timeout.
func poll(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s; last: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ready waits until a gateway's association to osmo-stp is active, its
// destination dest is available and all its circuits are idle (reset with
// the far end): the gateway can place calls.
func ready(t *testing.T, name string, status func() (gateway.Status, error), dest string, circuits int, timeout time.Duration) {
	t.Helper()
	poll(t, timeout, name+" ready (stp active, "+dest+" available, circuits idle)", func() (bool, string) {
		st, err := status()
		if err != nil {
			return false, err.Error()
		}
		ok := len(st.Associations) == 1 && st.Associations[0].State == "active" && st.Circuits["idle"] == circuits
		for _, d := range st.Destinations {
			ok = ok && d.Name == dest && d.Available
		}
		return ok, fmt.Sprintf("%+v", st)
	})
}

// hostApp is a host application on a gateway's host API: it keeps every
// event, and answers incoming calls when asked to.
type hostApp struct {
	t      *testing.T
	name   string
	c      *client.Client
	answer bool

	mu     sync.Mutex
	events []client.Event
	notify chan struct{}
	errs   []error
	wg     sync.WaitGroup
	done   chan struct{}
}

func dialHost(t *testing.T, name, addr, token, appName string, answer bool) *hostApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", addr, client.Config{App: appName, Token: token, Incoming: answer})
	if err != nil {
		t.Fatalf("%s: host API at %s: %v", name, addr, err)
	}
	h := &hostApp{t: t, name: name, c: c, answer: answer, notify: make(chan struct{}), done: make(chan struct{})}
	h.wg.Add(1)
	go h.read()
	t.Cleanup(h.close)
	return h
}

func (h *hostApp) close() {
	select {
	case <-h.done:
		return
	default:
	}
	close(h.done)
	_ = h.c.Close()
	h.wg.Wait()
}

func (h *hostApp) read() {
	defer h.wg.Done()
	for {
		select {
		case e := <-h.c.Events():
			h.mu.Lock()
			h.events = append(h.events, e)
			close(h.notify)
			h.notify = make(chan struct{})
			h.mu.Unlock()
			if in, ok := e.(*client.Incoming); ok && h.answer {
				h.wg.Add(1)
				go h.answerCall(in.Call)
			}
		case <-h.c.Done():
			return
		case <-h.done:
			return
		}
	}
}

// answerCall alerts (ACM) and answers (ANM) an incoming call.
func (h *hostApp) answerCall(call uint64) {
	defer h.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := h.c.Alert(ctx, call)
	if err == nil {
		err = h.c.Answer(ctx, call)
	}
	if err != nil {
		h.mu.Lock()
		h.errs = append(h.errs, fmt.Errorf("call %d: %w", call, err))
		h.mu.Unlock()
	}
}

// wait returns the first event (from the start) that ok accepts.
func (h *hostApp) wait(timeout time.Duration, what string, ok func(client.Event) bool) (client.Event, error) {
	deadline := time.After(timeout)
	from := 0
	for {
		h.mu.Lock()
		for ; from < len(h.events); from++ {
			if ok(h.events[from]) {
				e := h.events[from]
				h.mu.Unlock()
				return e, nil
			}
		}
		ch := h.notify
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return nil, fmt.Errorf("%s: no %s within %v", h.name, what, timeout)
		}
	}
}

func (h *hostApp) mustWait(timeout time.Duration, what string, ok func(client.Event) bool) client.Event {
	h.t.Helper()
	e, err := h.wait(timeout, what, ok)
	if err != nil {
		h.t.Fatalf("%v (guest console tail:\n%s)", err, consoleTail(20))
	}
	return e
}

// call places one call to dpc and sees it through: IAM, ACM and ANM back,
// then REL from this side and the released event after RLC.
func (h *hostApp) call(dpc uint32, called string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.c.Outseize(ctx, client.Outseize{DPC: dpc, Called: called, Calling: "4940555"})
	if err != nil {
		return fmt.Errorf("outseize %s: %w", called, err)
	}
	e, err := h.wait(10*time.Second, "answer to "+called, func(e client.Event) bool {
		switch x := e.(type) {
		case *client.Answered:
			return x.Call == s.Call
		case *client.Released:
			return x.Call == s.Call
		}
		return false
	})
	if err != nil {
		return err
	}
	if r, ok := e.(*client.Released); ok {
		return fmt.Errorf("call to %s released before the answer: %+v", called, r)
	}
	if err := h.c.Release(ctx, s.Call, 16, 1); err != nil {
		return fmt.Errorf("release %s: %w", called, err)
	}
	_, err = h.wait(10*time.Second, "release of "+called, func(e client.Event) bool {
		r, ok := e.(*client.Released)
		return ok && r.Call == s.Call
	})
	return err
}

// calls places n calls from h to dpc, a few at a time, each to its own
// number, and checks that the answering host saw each of them offered once
// and released by the far end.
func calls(t *testing.T, from, to *hostApp, dpc uint32, n int, prefix string) {
	t.Helper()
	const parallel = 8
	want := map[string]bool{}
	var mu sync.Mutex
	var errs []error
	work := make(chan string)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for num := range work {
				if err := from.call(dpc, num); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		num := fmt.Sprintf("%s%04d", prefix, i)
		want[num] = true
		work <- num
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d calls from %s failed; first: %v (guest console tail:\n%s)", len(errs), n, from.name, errs[0], consoleTail(20))
	}
	// The far host: every number offered once, every call released by the
	// caller (its events may trail the caller's: another connection).
	var missing []string
	poll(t, 10*time.Second, to.name+" saw every call offered and released", func() (bool, string) {
		missing = missing[:0]
		offered := map[string]uint64{}
		released := map[uint64]bool{}
		to.mu.Lock()
		for _, e := range to.events {
			switch x := e.(type) {
			case *client.Incoming:
				if strings.HasPrefix(x.Called, prefix) {
					if _, dup := offered[x.Called]; dup {
						missing = append(missing, x.Called+" offered twice")
					}
					offered[x.Called] = x.Call
				}
			case *client.Released:
				if x.Remote {
					released[x.Call] = true
				}
			}
		}
		to.mu.Unlock()
		for num := range want {
			call, ok := offered[num]
			switch {
			case !ok:
				missing = append(missing, num+" never offered")
			case !released[call]:
				missing = append(missing, fmt.Sprintf("%s (call %d) not released by the far end", num, call))
			}
		}
		if len(offered) != n {
			missing = append(missing, fmt.Sprintf("%d calls offered, want %d", len(offered), n))
		}
		sort.Strings(missing)
		return len(missing) == 0, strings.Join(missing, "; ")
	})
	to.mu.Lock()
	errs = to.errs
	to.errs = nil
	to.mu.Unlock()
	for _, err := range errs {
		t.Errorf("%s: answering: %v", to.name, err)
	}
}

// aspState is our association state as osmo-stp names it.
var aspState = map[string]string{"down": "ASP_DOWN", "inactive": "ASP_INACTIVE", "active": "ASP_ACTIVE"}

// agree waits until osmo-stp's ASP table and our gateways' /status agree:
// for each of osmo-stp's ASPs in ours, the state of the gateway's
// association "stp" (a nil status: the gateway is not running, so
// ASP_DOWN). It returns osmo-stp's table.
func agree(t *testing.T, l *Lab, ours map[string]func() (gateway.Status, error)) map[string]ASPRow {
	t.Helper()
	var asps map[string]ASPRow
	poll(t, 15*time.Second, "osmo-stp's ASP table agrees with the gateways' /status", func() (bool, string) {
		var out string
		var err error
		asps, out, err = l.showASPs()
		if err != nil {
			return false, err.Error()
		}
		var diff []string
		names := make([]string, 0, len(ours))
		for n := range ours {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			want := "ASP_DOWN"
			if f := ours[name]; f != nil {
				st, err := f()
				if err != nil {
					return false, name + ": " + err.Error()
				}
				want = "?"
				for _, a := range st.Associations {
					if a.Name == "stp" {
						want = aspState[a.State]
					}
				}
			}
			if got := asps[name].State; got != want {
				diff = append(diff, fmt.Sprintf("%s: osmo-stp %s, ours %s", name, got, want))
			}
		}
		return len(diff) == 0, strings.Join(diff, "; ") + "\n" + out
	})
	return asps
}

// phase prints how long a phase took (to stderr, so it shows without -v).
func phase(t *testing.T, name string, start time.Time) {
	t.Helper()
	fmt.Fprintf(os.Stderr, "lab: phase %-22s %6.1f s\n", name, time.Since(start).Seconds())
}

// TestCallsThroughSTP: gateways A (SCTP over UDP) and B (raw SCTP) reach
// ASP-ACTIVE at osmo-stp, and 100 calls from a host on A to a host on B
// complete through it, and 100 the other way; osmo-stp's ASP table agrees
// with the gateways' /status.
//
// Then B stops (SIGTERM): osmo-stp sends DUNA for PC 2 to A, whose host
// gets the destination alarm and whose new calls to B are refused with
// the unavailable status. B restarts: DAVA clears the alarm and calls
// flow again.
func TestCallsThroughSTP(t *testing.T) {
	l := needLab(t)
	n := l.circuits(t)
	t0 := time.Now()
	a := startGateway(t, "A", l.GatewayYAML(l.A, transport.KindUDP, l.B))
	b := startGateway(t, "B", l.GatewayYAML(l.B, transport.KindRaw, l.A))
	ready(t, "A", a.status, groupName(l.B), n, 30*time.Second)
	ready(t, "B", b.status, groupName(l.A), n, 30*time.Second)
	asps := agree(t, l, map[string]func() (gateway.Status, error){l.A.Name: a.status, l.B.Name: b.status})
	for _, s := range []Side{l.A, l.B} {
		if r := asps[s.Name]; r.Remote != l.Local(s).String() {
			t.Errorf("osmo-stp's %s is %v, want from %v", s.Name, r.Remote, l.Local(s))
		}
	}
	phase(t, "gateways A, B active", t0)

	hostA, hostB := a.host(t, "a", true), b.host(t, "b", true)
	t1 := time.Now()
	calls(t, hostA, hostB, l.B.PC, 100, "4920")
	phase(t, "100 calls A to B", t1)
	t1 = time.Now()
	calls(t, hostB, hostA, l.A.PC, 100, "4910")
	phase(t, "100 calls B to A", t1)
	for _, g := range []*gw{a, b} {
		poll(t, 10*time.Second, g.name+": no calls left, all circuits idle", func() (bool, string) {
			st, err := g.status()
			return err == nil && st.Calls == 0 && st.Circuits["idle"] == n, fmt.Sprintf("%+v %v", st, err)
		})
	}

	// B leaves: DUNA for PC 2 at A.
	t1 = time.Now()
	b.stop()
	hostB.close()
	// Two alarms: 0x17 from the ISUP stack (MTP pause), 0x18 from
	// congestion control (destination out of service).
	for _, num := range []uint16{alarmUnavailable, alarmOutOfService} {
		alarm := hostA.mustWait(15*time.Second, fmt.Sprintf("alarm 0x%02X for PC 2", num), isDestAlarm(num, l.B.PC, false)).(*client.Alarm)
		t.Logf("A's host: alarm 0x%02X %q %v", alarm.Number, alarm.Text, alarm.Data)
	}
	agree(t, l, map[string]func() (gateway.Status, error){l.A.Name: a.status, l.B.Name: nil})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := hostA.c.Outseize(ctx, client.Outseize{DPC: l.B.PC, Called: "49209999"})
	var nak *client.Nak
	switch {
	case !errors.As(err, &nak):
		t.Fatalf("A: a call to B while B is gone: %v, want a nak", err)
	case uint16(nak.Status) != uint16(stack.StatusDestinationUnavailable) && uint16(nak.Status) != uint16(stack.StatusDestinationOutOfService):
		t.Fatalf("A: a call to B while B is gone: %v, want 0x%04X or 0x%04X", nak,
			uint16(stack.StatusDestinationUnavailable), uint16(stack.StatusDestinationOutOfService))
	}
	t.Logf("A's host: call to PC %d refused: %v", l.B.PC, nak)
	phase(t, "B gone: DUNA, refusal", t1)

	// B back: DAVA clears the alarm and calls flow again.
	t1 = time.Now()
	b2 := startGateway(t, "B2", l.GatewayYAML(l.B, transport.KindRaw, l.A))
	for _, num := range []uint16{alarmUnavailable, alarmOutOfService} {
		hostA.mustWait(30*time.Second, fmt.Sprintf("alarm 0x%02X cleared for PC 2", num), isDestAlarm(num, l.B.PC, true))
	}
	ready(t, "A", a.status, groupName(l.B), n, 30*time.Second)
	ready(t, "B2", b2.status, groupName(l.A), n, 30*time.Second)
	agree(t, l, map[string]func() (gateway.Status, error){l.A.Name: a.status, l.B.Name: b2.status})
	hostB2 := b2.host(t, "b2", true)
	calls(t, hostA, hostB2, l.B.PC, 20, "4921")
	calls(t, hostB2, hostA, l.A.PC, 20, "4911")
	phase(t, "B back: DAVA, 40 calls", t1)
}

// Host API alarms (docs/host-api.md).
const (
	alarmUnavailable  = 0x17 // destination unavailable: the stack, on MTP pause
	alarmOutOfService = 0x18 // destination out of service: congestion control
)

// isDestAlarm matches alarm number num (or its clearing) for dpc.
func isDestAlarm(num uint16, dpc uint32, cleared bool) func(client.Event) bool {
	return func(e client.Event) bool {
		a, ok := e.(*client.Alarm)
		if !ok || a.Cleared != cleared || a.Number != num {
			return false
		}
		v, ok := a.Data["dpc"].(float64)
		return ok && uint32(v) == dpc
	}
}

// TestGuestGatewayCalls: gateway C, the isupgw binary in the guest over
// kernel SCTP (the only place that path runs), is ASP-ACTIVE at osmo-stp as
// asp-c from the guest's address and port 2913; calls go between a host on
// gateway A (here) and a host on C (through C's host API across the tap),
// both ways; osmo-stp's view agrees with both gateways' /status.
func TestGuestGatewayCalls(t *testing.T) {
	l := needLab(t)
	n := l.circuits(t)
	t0 := time.Now()
	cStatus := func() (gateway.Status, error) {
		st, _, err := app.FetchStatus(l.GWMetrics.String())
		return st, err
	}
	// C has been running since the boot; its circuits to A are reset once A
	// is up.
	poll(t, 60*time.Second, "gateway C (guest) answering on /status with stp active", func() (bool, string) {
		st, err := cStatus()
		return err == nil && len(st.Associations) == 1 && st.Associations[0].State == "active", fmt.Sprintf("%+v %v", st, err)
	})
	a := startGateway(t, "A", l.GatewayYAML(l.A, transport.KindUDP, l.C))
	ready(t, "A", a.status, groupName(l.C), n, 30*time.Second)
	ready(t, "C", cStatus, groupName(l.A), n, 60*time.Second)
	asps := agree(t, l, map[string]func() (gateway.Status, error){l.A.Name: a.status, l.C.Name: cStatus})
	if r, want := asps[l.C.Name].Remote, netip.AddrPortFrom(l.GuestIP, l.C.LocalPort).String(); r != want {
		t.Errorf("osmo-stp's %s is %v, want from %v", l.C.Name, r, want)
	}
	phase(t, "gateways A, C active", t0)

	hostA := a.host(t, "a", true)
	hostC := dialHost(t, "C/c", l.GWAPI.String(), l.GWToken, "c", true)
	t1 := time.Now()
	calls(t, hostA, hostC, l.C.PC, 100, "4930")
	phase(t, "100 calls A to C", t1)
	t1 = time.Now()
	calls(t, hostC, hostA, l.A.PC, 100, "4913")
	phase(t, "100 calls C to A", t1)
	poll(t, 10*time.Second, "C: no calls left, all circuits idle", func() (bool, string) {
		st, err := cStatus()
		return err == nil && st.Calls == 0 && st.Circuits["idle"] == n, fmt.Sprintf("%+v %v", st, err)
	})
	// From C's /status, not its start-up line on the console: the serial
	// console once lost that line (CI, 2026-12-03) while C ran.
	if st, err := cStatus(); err != nil || st.Transport != "kernel" {
		t.Errorf("gateway C runs on transport %q (%v), want kernel", st.Transport, err)
	}
	c := l.Console()
	if strings.Contains(c, "unknown PPID") {
		t.Errorf("osmo-stp dropped messages with a wrong PPID:\n%s", consoleTail(20))
	}
}
