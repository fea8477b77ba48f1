package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

// ASPConfig is the M3UA configuration that makes a gateway the ASP of side
// s at osmo-stp over transport k (udp or raw; kernel inside the guest
// only). Other tests and the gateway binary's tests build on it.
func (l *Lab) ASPConfig(s Side, k transport.Kind, dpcs ...uint32) (m3ua.Config, []m3ua.Option) {
	peer := m3ua.Peer{
		Name:            "stp",
		RoutingContexts: []uint32{s.RC},
		TrafficMode:     mtp.Override,
	}
	for _, d := range dpcs {
		peer.DPCs = append(peer.DPCs, mtp.PointCode(d))
	}
	var topts []transport.Option
	switch k {
	case transport.KindUDP:
		// UDP to the guest's tunnel port; inside, SCTP from our fixed
		// port to osmo-stp's.
		peer.Dial = l.STPUDP()
		topts = append(topts, transport.WithLocalAddr(netip.AddrPortFrom(l.HostIP, 0)),
			transport.WithSCTPPorts(s.LocalPort, l.M3UAPort))
	default:
		peer.Dial = l.STPRaw()
		topts = append(topts, transport.WithLocalAddr(l.Local(s)))
	}
	cfg := m3ua.Config{Role: m3ua.RoleASP, Transport: k, Peers: []m3ua.Peer{peer}}
	opts := []m3ua.Option{
		m3ua.WithTransportOptions(topts...),
		m3ua.WithBackoff(100*time.Millisecond, time.Second),
	}
	return cfg, opts
}

// asp is an M3UA endpoint under test with its indications and events
// collected.
type asp struct {
	t    testing.TB
	name string
	ep   *m3ua.Endpoint
	ind  chan mtp.Message

	mu     sync.Mutex
	events []mtp.Event
	notify chan struct{} // closed and replaced on every event
	done   chan struct{}
}

func startASP(t testing.TB, name string, cfg m3ua.Config, opts ...m3ua.Option) *asp {
	t.Helper()
	ep, err := m3ua.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a := &asp{t: t, name: name, ep: ep, ind: make(chan mtp.Message, 1024),
		notify: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case m := <-ep.Indications():
				m.Payload = bytes.Clone(m.Payload)
				select {
				case a.ind <- m:
				default:
					t.Errorf("%s: indication queue full, dropped %v", name, m.Label)
				}
			case <-a.done:
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case ev := <-ep.Events():
				t.Logf("%s: event %v", name, ev)
				a.mu.Lock()
				a.events = append(a.events, ev)
				close(a.notify)
				a.notify = make(chan struct{})
				a.mu.Unlock()
			case <-a.done:
				return
			}
		}
	}()
	if err := ep.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.close()
		wg.Wait()
	})
	return a
}

var closeOnce sync.Map

func (a *asp) close() {
	if _, loaded := closeOnce.LoadOrStore(a, true); loaded {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.ep.Close(ctx); err != nil {
		a.t.Logf("%s: close: %v", a.name, err)
	}
	close(a.done)
}

// waitEvent waits until an event since index from satisfies ok, and
// returns the index after it.
func (a *asp) waitEvent(from int, timeout time.Duration, what string, ok func(mtp.Event) bool) int {
	a.t.Helper()
	deadline := time.After(timeout)
	for {
		a.mu.Lock()
		for i := from; i < len(a.events); i++ {
			if ok(a.events[i]) {
				a.mu.Unlock()
				return i + 1
			}
		}
		from = len(a.events)
		ch := a.notify
		a.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			a.t.Fatalf("%s: no %s within %v (guest console tail:\n%s)", a.name, what, timeout, consoleTail(30))
		}
	}
}

func (a *asp) eventCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.events)
}

func isPeerState(state string) func(mtp.Event) bool {
	return func(e mtp.Event) bool {
		switch p := e.(type) {
		case *mtp.PeerState:
			return p.State == state
		case mtp.PeerState:
			return p.State == state
		}
		return false
	}
}

func consoleTail(n int) string {
	if lab == nil {
		return ""
	}
	lines := bytes.Split([]byte(lab.Console()), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// waitVTY polls osmo-stp's ASP table until ok holds for it.
func waitVTY(t testing.TB, l *Lab, timeout time.Duration, what string, ok func(map[string]ASPRow) bool) map[string]ASPRow {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for i := 0; ; i++ {
		asps, out, err := l.showASPs()
		if err == nil && ok(asps) {
			return asps
		}
		if err != nil {
			last = err.Error()
		} else {
			last = out
		}
		if time.Now().After(deadline) || i > 200 {
			t.Fatalf("osmo-stp never showed %s; last answer:\n%s", what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// labASPs brings up A over SCTP-over-UDP and B over raw SCTP and waits
// until both are ASP-ACTIVE on our side.
func labASPs(t *testing.T, l *Lab) (a, b *asp) {
	t.Helper()
	cfgA, optsA := l.ASPConfig(l.A, transport.KindUDP, l.B.PC)
	cfgB, optsB := l.ASPConfig(l.B, transport.KindRaw, l.A.PC)
	a = startASP(t, "A/udp", cfgA, optsA...)
	b = startASP(t, "B/raw", cfgB, optsB...)
	a.waitEvent(0, 30*time.Second, "ASP-ACTIVE", isPeerState("active"))
	b.waitEvent(0, 30*time.Second, "ASP-ACTIVE", isPeerState("active"))
	if st := a.ep.Peer("stp").State(); st != m3ua.StateActive {
		t.Fatalf("A: state %v", st)
	}
	if st := b.ep.Peer("stp").State(); st != m3ua.StateActive {
		t.Fatalf("B: state %v", st)
	}
	return a, b
}

// TestASPsActive: both ASPs reach ASP-ACTIVE at osmo-stp, osmo-stp's VTY
// agrees (ASP and AS tables, from the addresses and ports we used), and a
// closed ASP is shown down there.
func TestASPsActive(t *testing.T) {
	l := needLab(t)
	waitVTY(t, l, 10*time.Second, "asp-a and asp-b down before the test", func(m map[string]ASPRow) bool {
		return m["asp-a"].State == "ASP_DOWN" && m["asp-b"].State == "ASP_DOWN"
	})
	capture(t, l, "show cs7 instance 0 asp", "show-asp-down.txt")
	a, b := labASPs(t, l)
	asps := waitVTY(t, l, 10*time.Second, "asp-a and asp-b ASP_ACTIVE", func(m map[string]ASPRow) bool {
		return m["asp-a"].State == "ASP_ACTIVE" && m["asp-b"].State == "ASP_ACTIVE"
	})
	for _, s := range []Side{l.A, l.B} {
		// osmo-stp 1.6.0 prints "?" in the AS column of every ASP (it
		// fills it in later releases); the AS table below shows the AS.
		r := asps[s.Name]
		if (r.AS != s.AS && r.AS != "?") || r.Type != "m3ua" || r.Remote != l.Local(s).String() {
			t.Errorf("osmo-stp's %s: %+v, want AS %s from %v", s.Name, r, s.AS, l.Local(s))
		}
	}
	ases, out, err := l.showASes()
	if err != nil {
		t.Fatal(err)
	}
	capture(t, l, "show cs7 instance 0 asp", "show-asp-active.txt")
	capture(t, l, "show cs7 instance 0 as all", "show-as-active.txt")
	for _, s := range []Side{l.A, l.B} {
		r := ases[s.AS]
		if r.State != "AS_ACTIVE" || r.RC != fmt.Sprint(s.RC) || r.DPC != fmt.Sprint(s.PC) {
			t.Errorf("osmo-stp's %s: %+v\n%s", s.AS, r, out)
		}
	}
	if st := a.ep.Peer("stp").State(); st != m3ua.StateActive {
		t.Errorf("A: %v while osmo-stp shows it active", st)
	}
	// Closing B (ASP Inactive, ASP Down, SHUTDOWN) shows in osmo-stp.
	b.close()
	waitVTY(t, l, 10*time.Second, "asp-b down while asp-a stays active", func(m map[string]ASPRow) bool {
		return m["asp-b"].State == "ASP_DOWN" && m["asp-a"].State == "ASP_ACTIVE"
	})
}

// capture saves osmo-stp's answer to command as testdata for TestParseVTY
// when ISUPGW_INTEROP_CAPTURE names a folder (to follow a new osmo-stp).
func capture(t *testing.T, l *Lab, command, name string) {
	t.Helper()
	dir := os.Getenv("ISUPGW_INTEROP_CAPTURE")
	if dir == "" {
		return
	}
	out, err := vtyRun(l.VTY(), command, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(out+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func isPC(pause bool, pc uint32) func(mtp.Event) bool {
	return func(e mtp.Event) bool {
		switch x := e.(type) {
		case mtp.Pause:
			return pause && x.PC == mtp.PointCode(pc)
		case mtp.Resume:
			return !pause && x.PC == mtp.PointCode(pc)
		}
		return false
	}
}

// TestDUNAWhenBLeaves: when B's ASP goes away, osmo-stp tells A that PC 2
// is unavailable (DUNA) and A refuses traffic to it; when B comes back,
// DAVA follows and traffic flows again.
func TestDUNAWhenBLeaves(t *testing.T) {
	l := needLab(t)
	a, b := labASPs(t, l)
	a.waitEvent(0, 10*time.Second, "DAVA for PC 2", isPC(false, l.B.PC))
	mark := a.eventCount()
	b.close()
	a.waitEvent(mark, 10*time.Second, "DUNA for PC 2", isPC(true, l.B.PC))
	m := &mtp.Message{Label: mtp.Label{OPC: mtp.PointCode(l.A.PC), DPC: mtp.PointCode(l.B.PC), SI: mtp.SIISUP, NI: 2},
		Payload: iam(t, 1, "123")}
	if err := a.ep.Transfer(m); !errors.Is(err, mtp.ErrUnavailable) {
		t.Fatalf("A: transfer to an unavailable PC 2: %v, want %v", err, mtp.ErrUnavailable)
	}
	mark = a.eventCount()
	cfgB, optsB := l.ASPConfig(l.B, transport.KindRaw, l.A.PC)
	b2 := startASP(t, "B2/raw", cfgB, optsB...)
	b2.waitEvent(0, 30*time.Second, "ASP-ACTIVE", isPeerState("active"))
	a.waitEvent(mark, 10*time.Second, "DAVA for PC 2", isPC(false, l.B.PC))
	if err := a.ep.Transfer(m); err != nil {
		t.Fatalf("A: transfer after DAVA: %v", err)
	}
	select {
	case got := <-b2.ind:
		if got.Label != m.Label || !bytes.Equal(got.Payload, m.Payload) {
			t.Errorf("B2: got %v % x, want %v % x", got.Label, got.Payload, m.Label, m.Payload)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("B2: nothing arrived (console tail:\n%s)", consoleTail(30))
	}
}

// iam is a small ITU IAM on cic.
func iam(t testing.TB, cic uint16, digits string) []byte {
	t.Helper()
	cd, err := isup.NewCalledPartyNumber(3, 1, digits)
	if err != nil {
		t.Fatal(err)
	}
	b, err := isup.Marshal(&isup.InitialAddress{
		Circuit:              isup.Circuit{CIC: cic},
		ForwardCall:          isup.NewForwardCallIndicators(true, 0, false),
		CallingPartyCategory: isup.CategoryOrdinary,
		TransmissionMedium:   isup.TMRSpeech,
		CalledParty:          cd,
	}, isup.ITU)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func acm(t testing.TB, cic uint16) []byte {
	t.Helper()
	b, err := isup.Marshal(&isup.AddressComplete{
		Circuit:      isup.Circuit{CIC: cic},
		BackwardCall: isup.NewBackwardCallIndicators(2, 1, 1, true),
	}, isup.ITU)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTransferThroughSTP: MTP-TRANSFER from A (PC 1) to B (PC 2) through
// osmo-stp and back, one message per SLS value, each arriving with its
// routing label and payload intact.
func TestTransferThroughSTP(t *testing.T) {
	l := needLab(t)
	a, b := labASPs(t, l)
	const n = 16
	send := func(from, to *asp, opc, dpc uint32, payload func(i int) []byte) {
		t.Helper()
		want := map[uint8]mtp.Message{}
		for i := range n {
			m := mtp.Message{Label: mtp.Label{OPC: mtp.PointCode(opc), DPC: mtp.PointCode(dpc),
				SI: mtp.SIISUP, NI: 2, SLS: uint8(i)}, Payload: payload(i)}
			want[m.SLS] = m
			// Routes come up with the association; the first DAVA may
			// trail ASP Active, so allow a short wait for the route.
			deadline := time.Now().Add(5 * time.Second)
			for {
				err := from.ep.Transfer(&m)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: transfer %v: %v", from.name, m.Label, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		timeout := time.After(10 * time.Second)
		for len(want) > 0 {
			select {
			case got := <-to.ind:
				if got.Label.OPC != mtp.PointCode(opc) {
					// Gateway C in the guest (PC 3) resets its circuits
					// towards PC 1 whenever an ASP of as-a comes up.
					t.Logf("%s: from another gateway, not ours: %v % x", to.name, got.Label, got.Payload)
					continue
				}
				w, ok := want[got.SLS]
				if !ok {
					t.Fatalf("%s: unexpected or repeated message %v % x", to.name, got.Label, got.Payload)
				}
				delete(want, got.SLS)
				if got.Label != w.Label || !bytes.Equal(got.Payload, w.Payload) {
					t.Errorf("%s: got %v % x\nwant %v % x", to.name, got.Label, got.Payload, w.Label, w.Payload)
				}
				if _, err := isup.Decode(got.Payload, isup.ITU); err != nil {
					t.Errorf("%s: ISUP does not decode: %v", to.name, err)
				}
			case <-timeout:
				t.Fatalf("%s: %d of %d messages missing (console tail:\n%s)", to.name, len(want), n, consoleTail(30))
			}
		}
	}
	send(a, b, l.A.PC, l.B.PC, func(i int) []byte { return iam(t, uint16(100+i), fmt.Sprintf("4930%04d", i)) })
	send(b, a, l.B.PC, l.A.PC, func(i int) []byte { return acm(t, uint16(100+i)) })
}

// TestUnconfiguredASPRefused: osmo-stp matches associations to its ASPs by
// remote address and SCTP port; from a port it does not know it closes the
// association (no dynamic registration), and our ASP keeps retrying with
// back-off and never counts itself active.
func TestUnconfiguredASPRefused(t *testing.T) {
	l := needLab(t)
	s := l.B
	s.LocalPort = l.B.LocalPort + 10
	cfg, opts := l.ASPConfig(s, transport.KindRaw, l.A.PC)
	x := startASP(t, "X/raw", cfg, opts...)
	next := x.waitEvent(0, 15*time.Second, "refusal", isPeerState("down"))
	x.waitEvent(next, 15*time.Second, "second refusal after a retry", isPeerState("down"))
	x.mu.Lock()
	for _, e := range x.events {
		if isPeerState("active")(e) || isPeerState("inactive")(e) {
			t.Errorf("X: %v from an unconfigured port", e)
		}
	}
	x.mu.Unlock()
	if c := l.Console(); !strings.Contains(c, fmt.Sprintf("r=%v<->", l.Local(s))) ||
		!strings.Contains(c, "without matching ASP definition") {
		t.Errorf("osmo-stp's log does not show the refusal of %v:\n%s", l.Local(s), consoleTail(10))
	}
}
