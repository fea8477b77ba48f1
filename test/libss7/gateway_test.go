package libss7

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/app"
	"github.com/isupgw/isupgw/internal/lockedbuf"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// gwVariant is one switch type with isupgw's and farend's point codes: in
// both, isupgw's is the higher, so by Q.764 2.9.1.4 (T1.113.4 2.9.1.4 the
// same) isupgw controls the even CICs and libss7 the odd ones.
type gwVariant struct {
	name      string
	farPC     string // farend's point code, as farend and the YAML take it
	gwPC      string // isupgw's
	farPCCode uint32 // farend's as a number (the host API's dpc)
	st        string // how isupgw's host shows the ST digit libss7 appends
}

var gwVariants = []gwVariant{
	{name: "itu", farPC: "1", gwPC: "2", farPCCode: 1, st: "F"},
	{name: "ansi", farPC: "1-1-1", gwPC: "1-1-2", farPCCode: 0x010101},
}

// gwYAML is isupgw with its own MTP3 on one MTP2 lab link to farend: a
// listening AF_UNIX SOCK_SEQPACKET socket (docs/mtp3.md) that the test
// connects and hands to farend as its fd 3.
const gwYAML = `point_code: %q
variant: %s
network_indicator: national
mtp3:
  emergency_alignment: true
  linksets:
    - name: libss7
      adjacent: %q
      links:
        - {slc: 0, type: mtp2-lab-socket, listen_socket: %q}
circuit_groups: [{name: libss7, point_code: %q, cics: [%s]}]
timers: {t22: 2s}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
log: {level: debug}
`

// gw is one isupgw process (in this test binary) linked to one farend.
type gw struct {
	t    *testing.T
	v    gwVariant
	run  *app.Running
	far  *Farend
	logs *lockedbuf.Buffer
	ncic int
	sock string
}

// startGateway runs isupgw (internal/app, the code behind `isupgw run`) with
// the given circuits, then farend on its lab socket with cfg (OPC, DPC and
// variant filled in), and waits until the link is in service both ways and
// both sides' start-up group resets are answered.
//
//lint:ignore U1000 kept for interop tests that start the gateway with an explicit circuit set
func startGateway(t *testing.T, bin string, v gwVariant, gwCICs string, ncic int, far Config) *gw {
	t.Helper()
	g := newGateway(t, v, gwCICs, ncic)
	g.connect(bin, far)
	return g
}

// newGateway runs isupgw alone; connect links farend to it.
func newGateway(t *testing.T, v gwVariant, gwCICs string, ncic int) *gw {
	t.Helper()
	// A socket path must fit sun_path (108 bytes): t.TempDir can be longer.
	dir, err := os.MkdirTemp("", "isupgw-lab-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mtp2.sock")
	cfgPath := filepath.Join(dir, "isupgw.yaml")
	yaml := fmt.Sprintf(gwYAML, v.gwPC, v.name, v.farPC, sock, v.farPC, gwCICs)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &gw{t: t, v: v, logs: &lockedbuf.Buffer{}, ncic: ncic, sock: sock}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *app.Running, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- app.Run(ctx, app.Options{ConfigPath: cfgPath, LogOut: g.logs, DrainTimeout: 200 * time.Millisecond,
			Ready: func(r *app.Running) { ready <- r }})
	}()
	select {
	case g.run = <-ready:
	case err := <-errc:
		cancel()
		t.Fatalf("isupgw did not start: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("isupgw did not start within 10 s")
	}
	t.Cleanup(func() {
		if t.Failed() {
			st := g.run.Gateway.Status()
			snap := g.run.Gateway.Stack.Stats()
			t.Logf("isupgw status: links %+v circuits %v calls %d", st.Links, st.Circuits, st.Calls)
			s := snap.Stats
			t.Logf("isupgw stats: rx IAM %d REL %d RLC %d, tx ACM %d; not for us %d, unknown peer %d, decode errors %d, unexpected %d, shed %d, refused %v",
				s.Received[isup.IAM], s.Received[isup.REL], s.Received[isup.RLC], s.Sent[isup.ACM], s.NotForUs, s.UnknownPeer, s.DecodeErrors, s.Unexpected, s.Shed, s.Refused)
		}
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("isupgw stopped with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("isupgw did not stop within 10 s")
		}
		if t.Failed() {
			s := g.logs.String()
			if len(s) > 12000 {
				s = s[len(s)-12000:]
			}
			t.Logf("isupgw log (tail):\n%s", s)
		}
	})

	return g
}

// connect starts farend on isupgw's lab socket with cfg (variant and point
// codes filled in, --wire and --await-grs added) and waits until farend is
// READY (link in service, its start-up GRS answered and isupgw's received)
// and isupgw has the link in service and every circuit idle.
func (g *gw) connect(bin string, far Config) {
	t := g.t
	t.Helper()
	v, ncic := g.v, g.ncic
	conn, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: g.sock, Net: "unixpacket"})
	if err != nil {
		t.Fatalf("connecting isupgw's lab socket: %v", err)
	}
	file, err := conn.File()
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	far.Variant, far.OPC, far.DPC = v.name, v.farPC, v.gwPC
	far.Args = append([]string{"--wire", "--await-grs"}, far.Args...)
	g.far = Start(t, bin, far, file)

	if _, err := g.far.Log().Wait(15*time.Second, Msg("local", "READY", -1)); err != nil {
		t.Fatalf("farend never ready: %v", err)
	}
	g.eventually("link in service, destination available, circuits idle", func() bool {
		st := g.run.Gateway.Status()
		if len(st.Links) != 1 || st.Links[0].State != "available" || st.Links[0].SLTPassed == 0 {
			return false
		}
		// farend originating starts calling at READY: its circuits may be busy.
		idle := st.Circuits["idle"] == ncic || far.Mode[0] == "originate"
		return len(st.Destinations) == 1 && st.Destinations[0].Available && idle
	})
}

// eventually polls cond (bounded: 10 s): the gateway's status has no event
// to wait on.
func (g *gw) eventually(what string, cond func() bool) {
	g.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			g.t.Fatalf("timed out: %s; status %+v", what, g.run.Gateway.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stats is the stack's counters, taken in its loop.
func (g *gw) stats() stack.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := g.run.Gateway.Stack.Inspect(ctx)
	if err != nil {
		g.t.Fatal(err)
	}
	return snap.Stats
}

// idle waits until every circuit is idle and unblocked at isupgw.
func (g *gw) idle() {
	g.t.Helper()
	g.eventually("all circuits idle at isupgw", func() bool {
		return g.run.Gateway.Status().Circuits["idle"] == g.ncic
	})
}

// farIdle asks farend for its circuit states and checks every one is idle
// (state 0), unblocked and holds no libss7 call structure.
func (g *gw) farIdle() {
	g.t.Helper()
	mark := g.far.Log().Mark()
	if err := g.far.Command("status"); err != nil {
		g.t.Fatal(err)
	}
	evs, err := g.far.Log().waitN(mark, g.ncicFar(), stepTimeout, Msg("local", "STATUS", -1))
	if err != nil {
		g.t.Fatal(err)
	}
	for _, e := range evs {
		for _, f := range []string{"state", "lblk_m", "lblk_h", "rblk_m", "rblk_h", "has_call"} {
			if e.Int(f) != 0 {
				g.t.Errorf("farend CIC %d not idle: %s", e.CIC, e.Line)
				break
			}
		}
	}
}

func (g *gw) ncicFar() int {
	st, _ := g.far.Log().Wait(time.Second, Msg("local", "START", -1))
	return st.Int("cic_last") - st.Int("cic_first") + 1
}

// maintenance submits a supervision request to isupgw's stack (the Go API
// operators' tools use).
func (g *gw) maintenance(m stack.Maintenance) {
	g.t.Helper()
	m.DPC = pcOf(g.v)
	if err := g.run.Gateway.Stack.SubmitContext(context.Background(), m); err != nil {
		g.t.Fatal(err)
	}
}

func pcOf(v gwVariant) mtp.PointCode { return mtp.PointCode(v.farPCCode) }

// host is one host API connection with its events collected.
type host struct {
	t  *testing.T
	c  *client.Client
	mu sync.Mutex
	ev []client.Event
	ch chan struct{}
}

func (g *gw) host(incoming bool) *host {
	g.t.Helper()
	c, err := client.Dial(context.Background(), "tcp", g.run.Host.TCPAddr().String(),
		client.Config{App: "libss7-interop", Token: "secret", Incoming: incoming, EventBuffer: 4096})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { c.Close() })
	h := &host{t: g.t, c: c, ch: make(chan struct{})}
	go func() {
		for e := range c.Events() {
			h.mu.Lock()
			h.ev = append(h.ev, e)
			close(h.ch)
			h.ch = make(chan struct{})
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *host) mark() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ev)
}

// waitN returns the first n events from index mark on that match.
func (h *host) waitN(mark, n int, timeout time.Duration, m func(client.Event) bool) []client.Event {
	h.t.Helper()
	evs, err := h.find(mark, n, timeout, m)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

// find is waitN for any goroutine: it returns an error instead of failing.
func (h *host) find(mark, n int, timeout time.Duration, m func(client.Event) bool) ([]client.Event, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		var found []client.Event
		for i := mark; i < len(h.ev) && len(found) < n; i++ {
			if m(h.ev[i]) {
				found = append(found, h.ev[i])
			}
		}
		ch := h.ch
		h.mu.Unlock()
		if len(found) >= n {
			return found, nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil, fmt.Errorf("host: timed out with %d of %d events wanted; last: %s", len(found), n, h.tail(10))
		}
	}
}

// findNow returns the matching events so far.
func (h *host) findNow(m func(client.Event) bool) []client.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []client.Event
	for _, e := range h.ev {
		if m(e) {
			out = append(out, e)
		}
	}
	return out
}

func (h *host) wait(mark int, m func(client.Event) bool) client.Event {
	h.t.Helper()
	return h.waitN(mark, 1, stepTimeout, m)[0]
}

func (h *host) tail(n int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := h.ev
	if len(ev) > n {
		ev = ev[len(ev)-n:]
	}
	var b strings.Builder
	for _, e := range ev {
		fmt.Fprintf(&b, "\n  %T %+v", e, e)
	}
	return b.String()
}

// Event matchers for the host side.
func progressOf(call uint64, msg string) func(client.Event) bool {
	return func(e client.Event) bool {
		p, ok := e.(*client.Progress)
		return ok && p.Call == call && p.Message == msg
	}
}

func answeredOf(call uint64) func(client.Event) bool {
	return func(e client.Event) bool { a, ok := e.(*client.Answered); return ok && a.Call == call }
}

func releasedOf(call uint64) func(client.Event) bool {
	return func(e client.Event) bool { r, ok := e.(*client.Released); return ok && r.Call == call }
}

func incomingOn(cic int) func(client.Event) bool {
	return func(e client.Event) bool {
		in, ok := e.(*client.Incoming)
		return ok && (cic < 0 || int(in.CIC) == cic)
	}
}

func alarmOf(number uint16) func(client.Event) bool {
	return func(e client.Event) bool { a, ok := e.(*client.Alarm); return ok && a.Number == number && !a.Cleared }
}

func u8(v uint8) *uint8 { return &v }

// outseize places a call from the host; cic < 0 lets isupgw hunt.
func (h *host) outseize(dpc uint32, cic int, called, calling string, calledNAI, callingNAI uint8) (client.Seized, error) {
	o := client.Outseize{DPC: dpc, Called: called, Calling: calling, CalledNAI: u8(calledNAI), CallingNAI: u8(callingNAI)}
	if cic >= 0 {
		o.CIC = &cic
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	return h.c.Outseize(ctx, o)
}

func (h *host) do(what string, f func(ctx context.Context) error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		h.t.Fatalf("host %s: %v", what, err)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
