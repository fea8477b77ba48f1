package m3ua

import (
	"context"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
)

// waitCount waits (bounded) until f reaches n; counters have no event.
func waitCount(t *testing.T, what string, n uint64, f func() uint64) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for f() < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%d < %d)", what, f(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStandbyPair: two standby ASPs of one AS (routing context 100, override)
// at the SG. The first up finds the AS inactive and activates; the second is
// told AS-Active and stays inactive. The active one killed (ABORT), the SG
// sends AS-Pending (RFC 4666 §4.3.4.4) and the standby activates; traffic
// goes to it. The killed one restarted is told AS-Active and stays standby:
// nobody fights for the AS.
func TestStandbyPair(t *testing.T) {
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
		}})
	cfg := func(id uint32) Config {
		return Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{{Name: "sg", Dial: sg.Addr(), ASPID: id, HasASPID: true,
			RoutingContexts: []uint32{100}, TrafficMode: mtp.Override, Standby: true, DPCs: []mtp.PointCode{1}}}}
	}
	ntfys := func(e *Endpoint) func() uint64 {
		return func() uint64 { return e.Stats().Received(classMGMT, messages.MsgTypeNotify) }
	}
	a, err := New(cfg(1), WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitState(t, a, "sg", "active") // nobody served the AS: AS-Inactive made it take over
	waitState(t, sg, "asp-a", "active")
	if a.Stats().StandbyTakeovers.Load() != 1 {
		t.Fatalf("standby takeovers %d, want 1", a.Stats().StandbyTakeovers.Load())
	}

	b := start(t, cfg(2), WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	waitState(t, b, "sg", "inactive")
	waitCount(t, "NTFY at b", 1, ntfys(b)) // the AS-Active after the ASP Up Ack
	if b.Peer("sg").Available() || b.Stats().StandbyTakeovers.Load() != 0 || !a.Peer("sg").Available() {
		t.Fatal("second standby took over an AS that had an active ASP")
	}

	t0 := time.Now()
	a.Abort()
	waitState(t, b, "sg", "active")
	t.Logf("standby active %v after the active ASP's ABORT", time.Since(t0).Round(time.Millisecond))
	waitState(t, sg, "asp-b", "active")
	if sg.Stats().ASPendingSent.Load() == 0 {
		t.Fatal("SG sent no AS-Pending")
	}
	if err := sg.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: 5, SLS: 3}, Payload: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	if m := <-b.Indications(); m.Payload[0] != 1 {
		t.Fatalf("%v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = a.Close(ctx)
	cancel()

	// b has had three NTFYs: AS-Active after its ASP Up Ack, AS-Pending,
	// and AS-Active after its ASP Active Ack (RFC 4666 §4.3.4.3). The last
	// is written after the Ack that made b active: wait for it, or it would
	// be counted as a disturbance by the restart.
	waitCount(t, "NTFY AS-Active at b after its activation", 3, ntfys(b))
	before := ntfys(b)()
	a2 := start(t, cfg(1), WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	waitState(t, a2, "sg", "inactive")
	waitCount(t, "NTFY at the restarted ASP", 1, ntfys(a2))
	if a2.Peer("sg").Available() || a2.Stats().StandbyTakeovers.Load() != 0 {
		t.Fatal("restarted ASP fought for the AS")
	}
	if !b.Peer("sg").Available() || ntfys(b)() != before {
		t.Fatal("the active ASP was disturbed by the restart")
	}
}

// TestRecoveryTimerAnnouncesASInactive: T(r) expiring with no ASP active
// tells the inactive ASPs AS-Inactive (RFC 4666 §4.3.2). An ASP that is not a
// standby gets AS-Pending then AS-Inactive, and activates on neither.
func TestRecoveryTimerAnnouncesASInactive(t *testing.T) {
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
		}}, WithRecoveryTimer(50*time.Millisecond))
	peer := func(id uint32) Peer {
		return Peer{Name: "sg", Dial: sg.Addr(), ASPID: id, HasASPID: true, RoutingContexts: []uint32{100}, TrafficMode: mtp.Override, DPCs: []mtp.PointCode{1}}
	}
	a, err := New(Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{peer(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitState(t, a, "sg", "active")
	b, err := New(Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{peer(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, "sg", "active") // not a standby: it overrides a
	// The demotion itself, not the "inactive" of a's ASP Up Ack still queued:
	// NTFYs counted before it would be taken for the AS-Pending awaited below.
	waitDemoted(t, a)
	na := a.Stats().Received(classMGMT, messages.MsgTypeNotify)
	b.Abort() // a, inactive, hears AS-Pending, then AS-Inactive when T(r) expires
	waitCount(t, "AS-Pending and AS-Inactive at a", na+2, func() uint64 { return a.Stats().Received(classMGMT, messages.MsgTypeNotify) })
	// The SG counts an AS-Pending once written; a may have read it first.
	waitCount(t, "AS-Pending counted at the SG", 1, sg.Stats().ASPendingSent.Load)
	if got := sg.Stats().ASPendingSent.Load(); got != 1 {
		t.Fatalf("AS-Pending sent %d times, want 1", got)
	}
	if a.Peer("sg").Available() || a.Stats().StandbyTakeovers.Load() != 0 {
		t.Fatal("an ASP that is not a standby activated on NTFY")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.Close(ctx)
	_ = b.Close(ctx)
}

// TestLaggingActivationDoesNotDemoteTheNewerASP: the SG's handling of a's
// ASP Active is held after its ack while b's ASP Active arrives (each
// association has its own goroutine). However the two interleave, the one
// processed last must hold the AS in override and the other be demoted:
// a's takeover, run late, once demoted b too and left the AS with no active
// ASP and nobody told, so b's loss then sent no AS-Pending.
func TestLaggingActivationDoesNotDemoteTheNewerASP(t *testing.T) {
	var (
		held      = make(chan struct{})
		release   = make(chan struct{})
		secondIn  = make(chan struct{})
		holding   atomic.Bool // not a sync.Once: its other callers would wait for the hold
		aspacSeen atomic.Int32
	)
	tap := func(out bool, _, _ netip.AddrPort, _ uint16, b []byte) {
		if len(b) < 8 {
			return
		}
		switch {
		case !out && b[2] == classASPTM && b[3] == messages.MsgTypeAspActive:
			if aspacSeen.Add(1) == 2 {
				close(secondIn)
			}
		case out && b[2] == classMGMT && b[3] == messages.MsgTypeNotify && ntfyInfo(b) == asActive:
			// The first AS-Active NTFY follows the ack of a's ASP Active.
			if holding.CompareAndSwap(false, true) {
				close(held)
				<-release
			}
		}
	}
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
		}}, WithTap(tap), WithRecoveryTimer(time.Minute))
	peer := func(id uint32) Config {
		return Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{{Name: "sg", Dial: sg.Addr(), ASPID: id, HasASPID: true,
			RoutingContexts: []uint32{100}, TrafficMode: mtp.Override, DPCs: []mtp.PointCode{1}}}}
	}
	a := start(t, peer(1))
	waitState(t, a, "sg", "active")
	<-held // the SG sent a's ack and stands before the rest of a's activation
	b := start(t, peer(2))
	select {
	case <-secondIn:
	case <-time.After(waitLimit):
		t.Fatal("b's ASP Active never reached the SG")
	}
	close(release)
	waitState(t, b, "sg", "active")
	waitDemoted(t, a)
	waitCount(t, "both ASP Active acks", 2, func() uint64 { return sg.Stats().Sent(classASPTM, messages.MsgTypeAspActiveAck) })
	waitState(t, sg, "asp-a", "active") // the SG's handling of a's activation resumed
	if got := sg.Peer("asp-b").State(); got != StateActive {
		t.Fatalf("SG holds b %v after both activations, want ACTIVE (b took over last)", got)
	}
	if got := sg.Peer("asp-a").State(); got != StateInactive {
		t.Fatalf("SG holds a %v, want INACTIVE", got)
	}
	b.Abort()
	waitCount(t, "AS-Pending counted at the SG", 1, sg.Stats().ASPendingSent.Load)
}

// waitDemoted waits for e's override demotion (NTFY alternate ASP active).
func waitDemoted(t *testing.T, e *Endpoint) {
	t.Helper()
	waitEvent(t, e, "demoted", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.State == "inactive" && ps.Reason == "alternate ASP active"
	})
}

// ntfyInfo is the status information of a NTFY (0 if it has none).
func ntfyInfo(b []byte) uint16 {
	m, err := messages.ParseNotify(b)
	if err != nil {
		return 0
	}
	status, _ := u32(m.Status)
	return uint16(status)
}
