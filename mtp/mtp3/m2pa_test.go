package mtp3_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m2pa"
	"github.com/isupgw/isupgw/mtp/mtp3"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
	"github.com/isupgw/isupgw/mtp/transport"
)

func linkTimers() m2pa.Timers {
	tm := m2pa.DefaultTimers()
	tm.T4N = 50 * time.Millisecond
	tm.T4E = 20 * time.Millisecond
	tm.Repeat = 100 * time.Millisecond
	tm.T7 = 2 * time.Second
	return tm
}

// TestTwoNodesOverM2PA: two MTP3 nodes, one linkset of two M2PA links over
// the userspace SCTP-over-UDP transport on loopback. The links align and
// pass SLTM; MSUs flow both ways on all SLSs; aborting one link's
// association mid-traffic changes its traffic over to the other link and,
// once it returns, back, with no MSU lost, repeated or reordered per SLS;
// both links down pauses the destination, one link back resumes it.
func TestTwoNodesOverM2PA(t *testing.T) {
	lo := netip.MustParseAddrPort("127.0.0.1:0")
	var srv, cli [2]*m2pa.Link
	for i := range 2 {
		var err error
		srv[i], err = m2pa.New(m2pa.Config{Name: "a" + string(rune('0'+i)), Transport: transport.KindUDP, Listen: lo, Timers: linkTimers()})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv[i].Open(); err != nil {
			t.Fatal(err)
		}
		cli[i], err = m2pa.New(m2pa.Config{Name: "b" + string(rune('0'+i)), Transport: transport.KindUDP, Dial: srv[i].Addr(),
			Timers: linkTimers(), Redial: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := cli[i].Open(); err != nil {
			t.Fatal(err)
		}
	}
	a, b, sa, sb := twoNodes(t, [2]l2.Link{srv[0], srv[1]}, [2]l2.Link{cli[0], cli[1]}, cli[0], srv[0], cli[1], srv[1])
	sa.until(t, "resume of PC 2 at A", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 2) == "resume" })
	sb.until(t, "resume of PC 1 at B", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 1) == "resume" })
	sa.until(t, "both links available and tested at A", linksUp(a, true))
	sb.until(t, "both links available and tested at B", linksUp(b, true))

	toB, toA := newTraffic(a, 2), newTraffic(b, 1)
	send(t, 50, toB, toA)
	// Mid-traffic: abort link 0's association while MSUs are in flight.
	done := make(chan struct{})
	go func() { defer close(done); srv[0].Abort() }()
	send(t, 50, toB, toA)
	<-done
	send(t, 50, toB, toA)
	sa.until(t, "link 0 changed over at A", func(_ []mtp.Message, _ []mtp.Event) bool {
		return a.Status()[0].Links[0].Changeovers > 0
	})
	sa.until(t, "link 0 back and changed back at A", func(_ []mtp.Message, _ []mtp.Event) bool {
		l := a.Status()[0].Links[0]
		return l.State == "available" && l.SLS == 8
	})
	send(t, 50, toB, toA)
	toB.arrived(t, "every MSU from A at B", sb)
	toA.arrived(t, "every MSU from B at A", sa)
	toB.check(t, "B", sb)
	toA.check(t, "A", sa)
	st := a.Status()[0].Links
	t.Logf("A link 0: %+v", st[0])
	t.Logf("A link 1: %+v", st[1])
	if st[0].Changebacks == 0 {
		t.Fatal("no changeback recorded on link 0")
	}

	// Both links down: the destination pauses and traffic is refused.
	cli[0].Hold(true)
	cli[1].Hold(true)
	sa.until(t, "pause of PC 2 at A", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 2) == "pause" })
	sb.until(t, "pause of PC 1 at B", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 1) == "pause" })
	if err := a.Transfer(&mtp.Message{Label: mtp.Label{DPC: 2, SI: mtp.SIISUP}, Payload: []byte{0}}); !errors.Is(err, mtp.ErrUnavailable) {
		t.Fatalf("transfer with both links down: %v", err)
	}
	// One link back: resume.
	cli[1].Hold(false)
	sa.until(t, "resume of PC 2 at A", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 2) == "resume" })
	sb.until(t, "resume of PC 1 at B", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 1) == "resume" })
	send(t, 5, toB, toA)
	toB.arrived(t, "MSUs after the resume at B", sb)
	toA.arrived(t, "MSUs after the resume at A", sa)
	toB.check(t, "B after resume", sb)
	toA.check(t, "A after resume", sa)
	if l := a.Status()[0].Links[1]; l.State != "available" || a.Status()[0].Links[0].State == "available" {
		t.Fatalf("after resume: %+v / %+v", a.Status()[0].Links[0], l)
	}
}

// TestCloseWithUndrainedIndications: a node whose user stopped reading
// holds its M2PA link's reader back (back-pressure); Close must still
// return, which needs the queues to open before the links stop.
func TestCloseWithUndrainedIndications(t *testing.T) {
	srv, _ := m2pa.New(m2pa.Config{Name: "a0", Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"), Timers: linkTimers()})
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, _ := m2pa.New(m2pa.Config{Name: "b0", Transport: transport.KindUDP, Dial: srv.Addr(), Timers: linkTimers(), Redial: 50 * time.Millisecond})
	if err := cli.Open(); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	mk := func(opc, adj mtp.PointCode, l *m2pa.Link, q int) *mtp3.Node {
		n, err := mtp3.New(mtp3.Config{Variant: mtp3.ITU, OPC: opc, NI: 2, Timers: nodeTimers(), IndicationQueue: q,
			Linksets: []mtp3.LinksetConfig{{Name: "ls", Adjacent: adj, Links: []mtp3.LinkConfig{{SLC: 0, Link: l}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := mk(1, 2, srv, 1), mk(2, 1, cli, 0)
	defer b.Close()
	go func() {
		for range b.Indications() {
		}
	}()
	sb := drain(b)
	a.Start()
	b.Start()
	sb.until(t, "resume at B", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 1) == "resume" })
	for i := range 200 {
		if err := b.Transfer(&mtp.Message{Label: mtp.Label{DPC: 1, SI: mtp.SIISUP, SLS: uint8(i)}, Payload: []byte{1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
	}
	// A's user reads nothing: its link reader ends up waiting for room.
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().ReceivedMSU.Load() < 6 && time.Now().Before(deadline) { // SLTM, SLTA, TRA, then 3 ISUP: the third waits for room
		time.Sleep(10 * time.Millisecond) // polling a counter of another goroutine's progress
	}
	t.Logf("A's link received %d MSUs", srv.Stats().ReceivedMSU.Load())
	done := make(chan struct{})
	go func() { a.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung behind a link reader waiting for the user")
	}
}
