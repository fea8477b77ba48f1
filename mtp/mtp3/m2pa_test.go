package mtp3_test

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m2pa"
	"github.com/isupgw/isupgw/mtp/mtp3"
	"github.com/isupgw/isupgw/mtp/transport"
)

// sink collects a node's indications and events on its own goroutine.
type sink struct {
	mu     sync.Mutex
	msgs   []mtp.Message
	events []mtp.Event
	notify chan struct{}
}

func drain(n *mtp3.Node) *sink {
	s := &sink{notify: make(chan struct{}, 1)}
	poke := func() {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
	go func() {
		for m := range n.Indications() {
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			s.mu.Unlock()
			poke()
		}
	}()
	go func() {
		for e := range n.Events() {
			s.mu.Lock()
			s.events = append(s.events, e)
			s.mu.Unlock()
			poke()
		}
	}()
	return s
}

// until waits (bounded) for cond over the sink's contents.
func (s *sink) until(t *testing.T, what string, cond func(msgs []mtp.Message, evs []mtp.Event) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		ok := cond(s.msgs, s.events)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.notify:
		case <-time.After(20 * time.Millisecond): // conditions on node state too (status)
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func lastReach(evs []mtp.Event, pc mtp.PointCode) string {
	st := ""
	for _, e := range evs {
		switch x := e.(type) {
		case mtp.Pause:
			if x.PC == pc {
				st = "pause"
			}
		case mtp.Resume:
			if x.PC == pc {
				st = "resume"
			}
		}
	}
	return st
}

func nodeTimers() mtp3.Timers {
	return mtp3.Timers{T2: time.Second, T4: 500 * time.Millisecond, T5: 500 * time.Millisecond,
		T17: 100 * time.Millisecond, SLTT1: 2 * time.Second, SLTT2: 30 * time.Second, Restart: time.Second}
}

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
	mk := func(opc, adj mtp.PointCode, links [2]*m2pa.Link) *mtp3.Node {
		n, err := mtp3.New(mtp3.Config{Variant: mtp3.ITU, OPC: opc, NI: 2, Timers: nodeTimers(),
			Linksets: []mtp3.LinksetConfig{{Name: "ls", Adjacent: adj,
				Links: []mtp3.LinkConfig{{SLC: 0, Link: links[0]}, {SLC: 1, Link: links[1]}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := mk(1, 2, srv), mk(2, 1, cli)
	sa, sb := drain(a), drain(b)
	a.Start()
	b.Start()
	defer func() {
		a.Close()
		b.Close()
		for i := range 2 {
			cli[i].Close()
			srv[i].Close()
		}
	}()
	sa.until(t, "resume of PC 2 at A", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 2) == "resume" })
	sb.until(t, "resume of PC 1 at B", func(_ []mtp.Message, e []mtp.Event) bool { return lastReach(e, 1) == "resume" })
	allUp := func(n *mtp3.Node) func([]mtp.Message, []mtp.Event) bool {
		return func([]mtp.Message, []mtp.Event) bool {
			for _, l := range n.Status()[0].Links {
				if l.State != "available" || l.SLTPassed == 0 || l.SLS != 8 {
					return false
				}
			}
			return true
		}
	}
	sa.until(t, "both links available and tested at A", allUp(a))
	sb.until(t, "both links available and tested at B", allUp(b))

	seqA, seqB := map[uint8]int{}, map[uint8]int{} // sent by A, by B
	send := func(rounds int) {
		t.Helper()
		for range rounds {
			for s := range uint8(16) {
				for _, x := range []struct {
					n   *mtp3.Node
					dpc mtp.PointCode
					seq map[uint8]int
				}{{a, 2, seqA}, {b, 1, seqB}} {
					p := make([]byte, 8)
					p[0] = s
					binary.BigEndian.PutUint32(p[4:], uint32(x.seq[s]))
					if err := x.n.Transfer(&mtp.Message{Label: mtp.Label{DPC: x.dpc, SI: mtp.SIISUP, SLS: s}, Payload: p}); err != nil {
						t.Fatalf("transfer SLS %d: %v", s, err)
					}
					x.seq[s]++
				}
			}
		}
	}
	total := func(m map[uint8]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	send(50)
	// Mid-traffic: abort link 0's association while MSUs are in flight.
	done := make(chan struct{})
	go func() { defer close(done); srv[0].Abort() }()
	send(50)
	<-done
	send(50)
	sa.until(t, "link 0 changed over at A", func(_ []mtp.Message, _ []mtp.Event) bool {
		return a.Status()[0].Links[0].Changeovers > 0
	})
	sa.until(t, "link 0 back and changed back at A", func(_ []mtp.Message, _ []mtp.Event) bool {
		l := a.Status()[0].Links[0]
		return l.State == "available" && l.SLS == 8
	})
	send(50)
	sb.until(t, "every MSU from A at B", func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= total(seqA) })
	sa.until(t, "every MSU from B at A", func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= total(seqB) })
	check := func(who string, s *sink, want map[uint8]int) {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		next := map[uint8]int{}
		for _, m := range s.msgs {
			sls := m.Payload[0]
			seq := int(binary.BigEndian.Uint32(m.Payload[4:]))
			if seq != next[sls] {
				t.Fatalf("%s: SLS %d: message %d when %d was due (lost, repeated or reordered)", who, sls, seq, next[sls])
			}
			next[sls]++
		}
		for sls, n := range want {
			if next[sls] != n {
				t.Fatalf("%s: SLS %d: %d of %d", who, sls, next[sls], n)
			}
		}
		s.msgs = nil
	}
	check("B", sb, seqA)
	check("A", sa, seqB)
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
	seqA, seqB = map[uint8]int{}, map[uint8]int{}
	send(5)
	sb.until(t, "MSUs after the resume at B", func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= total(seqA) })
	sa.until(t, "MSUs after the resume at A", func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= total(seqB) })
	check("B after resume", sb, seqA)
	check("A after resume", sa, seqB)
	if l := a.Status()[0].Links[1]; l.State != "available" || a.Status()[0].Links[0].State == "available" {
		t.Fatalf("after resume: %+v / %+v", a.Status()[0].Links[0], l)
	}
}
