package m3ua

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestRecoveryQueue: RFC 4666 §4.3.4.4. The active ASP of an AS (override,
// routing context 100, point code 2) goes inactive; while the AS is pending
// the SG queues the DATA for it (at most 3 messages here: the fourth is
// dropped and counted) and delivers them, in order (one SLS), to the ASP that becomes
// active within T(r), after its ASP Active Ack. Then that one goes inactive
// too and T(r) expires (fake clock): the messages queued meanwhile are
// discarded and counted, and later ones find no route.
func TestRecoveryQueue(t *testing.T) {
	clk := newFakeClock()
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
		}}, WithClock(clk), WithHeartbeat(0, 0), WithRecoveryTimer(2*time.Second), WithRecoveryQueue(3, 1<<10),
		// No time-controlled changeover in the routing table: it would hold
		// the messages after the queue on the fake clock (the queue goes
		// out first anyway, straight to the new active ASP).
		WithRerouteDelay(0))
	override := params.NewTrafficModeType(uint32(mtp.Override))
	a, b := dialRaw(t, sg.Addr()), dialRaw(t, sg.Addr())
	upAndActive(a, marshal(messages.NewAspUp(params.NewAspIdentifier(1), nil)))
	b.send(marshal(messages.NewAspUp(params.NewAspIdentifier(2), nil)), 0)
	b.next(classASPSM, 4) // ASP Up Ack; b stays inactive
	waitState(t, sg, "asp-a", "active")

	// One SLS: SCTP keeps order per stream, and the order that matters to
	// ISUP is per SLS (one CIC, one SLS).
	send := func(n byte) error {
		return sg.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: mtp.SIISUP, SLS: 3}, Payload: []byte{n}})
	}
	data := func(p *rawPeer) byte {
		t.Helper()
		var d dataFields
		if err := decodeData(p.next(classTransfer, messages.MsgTypePayloadData), &d); err != nil || len(d.Payload) != 1 {
			t.Fatalf("DATA: %+v %v", d, err)
		}
		return d.Payload[0]
	}
	// notify waits for the NTFY of an AS state change with this information.
	notify := func(p *rawPeer, info uint16) {
		t.Helper()
		for {
			m, err := messages.ParseNotify(p.next(classMGMT, messages.MsgTypeNotify))
			if err != nil {
				t.Fatal(err)
			}
			if st, ok := u32(m.Status); ok && st == uint32(statusASChange)<<16|uint32(info) {
				return
			}
		}
	}
	if err := send(1); err != nil {
		t.Fatal(err)
	}
	if got := data(a); got != 1 {
		t.Fatalf("DATA %d at a", got)
	}

	a.send(marshal(messages.NewAspInactive(nil, nil)), 0)
	a.next(classASPTM, 4) // ASP Inactive Ack
	notify(b, asPending)
	for n := byte(10); n < 13; n++ {
		if err := send(n); err != nil {
			t.Fatalf("DATA %d while the AS is pending: %v", n, err)
		}
	}
	if err := send(13); !errors.Is(err, ErrRecoveryQueueFull) {
		t.Fatalf("a fourth message with room for 3: %v", err)
	}
	b.send(marshal(messages.NewAspActive(override, nil, nil)), 0)
	// The ASP Active Ack goes out first, then the queue; the ack is on stream
	// 0 and DATA on the SLS's stream, so b may read them in either order.
	var got []byte
	for acked := false; !acked || len(got) < 3; {
		select {
		case m, ok := <-b.msgs:
			if !ok {
				t.Fatal("association closed")
			}
			switch {
			case m.b[2] == classASPTM && m.b[3] == 3:
				acked = true
			case m.b[2] == classTransfer && m.b[3] == messages.MsgTypePayloadData:
				var d dataFields
				if err := decodeData(m.b, &d); err != nil || len(d.Payload) != 1 {
					t.Fatalf("DATA: %+v %v", d, err)
				}
				got = append(got, d.Payload[0])
			}
		case <-time.After(waitLimit):
			t.Fatalf("ack %v, queued DATA %v", acked, got)
		}
	}
	if string(got) != string([]byte{10, 11, 12}) {
		t.Fatalf("queued DATA reached b as %v, want 10 11 12", got)
	}
	if err := send(14); err != nil {
		t.Fatal(err)
	}
	if got := data(b); got != 14 {
		t.Fatalf("DATA %d after the queue", got)
	}
	// 14 may still have gone through the queue: b can read the last queued
	// DATA before deliverRecovery has seen the queue empty, and a message
	// sent meanwhile goes out in the same loop, in order (as.go). So 3 or 4
	// queued, every one delivered.
	st := sg.Stats()
	queued := st.RecoveryQueued.Load()
	if queued < 3 || queued > 4 || st.RecoveryDelivered.Load() != queued || st.RecoveryDropped.Load() != 1 || st.RecoveryDiscarded.Load() != 0 {
		t.Fatalf("queued %d delivered %d dropped %d discarded %d", st.RecoveryQueued.Load(), st.RecoveryDelivered.Load(),
			st.RecoveryDropped.Load(), st.RecoveryDiscarded.Load())
	}

	// b goes inactive too; nobody takes over within T(r).
	b.send(marshal(messages.NewAspInactive(nil, nil)), 0)
	b.next(classASPTM, 4)
	notify(a, asPending)
	for n := byte(20); n < 22; n++ {
		if err := send(n); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Second)
	notify(a, asInactive)
	if got := st.RecoveryDiscarded.Load(); got != 2 {
		t.Fatalf("discarded %d at T(r) expiry, want 2", got)
	}
	if err := send(22); !errors.Is(err, mtp.ErrUnavailable) {
		t.Fatalf("DATA after T(r): %v, want no route", err)
	}
	// a activates later: nothing of what was discarded reaches it.
	a.send(marshal(messages.NewAspActive(override, nil, nil)), 0)
	a.next(classASPTM, 3) // nothing queued now: no DATA can be skipped here
	if err := send(23); err != nil {
		t.Fatal(err)
	}
	if got := data(a); got != 23 {
		t.Fatalf("DATA %d at a after T(r), want only 23", got)
	}
	if st.RecoveryDelivered.Load() != queued || st.RecoveryQueued.Load() != queued+2 {
		t.Fatalf("delivered %d queued %d", st.RecoveryDelivered.Load(), st.RecoveryQueued.Load())
	}
}
