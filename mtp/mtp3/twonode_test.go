package mtp3_test

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp3"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// The two-node harness: the same MTP3 node pair over whichever link layer
// (M2PA, MTP2) a test gives it.

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

// closer is a link that can be closed.
type closer interface{ Close() error }

// twoNodes builds node A (PC 1) over la and node B (PC 2) over lb, one
// linkset of two links each (SLC 0 and 1), starts them and, at the end of
// the test, closes the nodes and then links.
func twoNodes(t *testing.T, la, lb [2]l2.Link, links ...closer) (a, b *mtp3.Node, sa, sb *sink) {
	t.Helper()
	mk := func(opc, adj mtp.PointCode, l [2]l2.Link) *mtp3.Node {
		n, err := mtp3.New(mtp3.Config{Variant: mtp3.ITU, OPC: opc, NI: 2, Timers: nodeTimers(),
			Linksets: []mtp3.LinksetConfig{{Name: "ls", Adjacent: adj,
				Links: []mtp3.LinkConfig{{SLC: 0, Link: l[0]}, {SLC: 1, Link: l[1]}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b = mk(1, 2, la), mk(2, 1, lb)
	sa, sb = drain(a), drain(b)
	a.Start()
	b.Start()
	t.Cleanup(func() {
		a.Close()
		b.Close()
		for _, l := range links {
			l.Close()
		}
	})
	return a, b, sa, sb
}

// linksUp holds when all of n's links are available and carry all 8 SLSs
// (and, with tested, have passed SLTM).
func linksUp(n *mtp3.Node, tested bool) func([]mtp.Message, []mtp.Event) bool {
	return func([]mtp.Message, []mtp.Event) bool {
		for _, l := range n.Status()[0].Links {
			if l.State != "available" || l.SLS != 8 || (tested && l.SLTPassed == 0) {
				return false
			}
		}
		return true
	}
}

// traffic numbers the MSUs one node sends to another per SLS, so the
// receiver can check none is lost, repeated or reordered.
type traffic struct {
	n   *mtp3.Node
	dpc mtp.PointCode
	seq map[uint8]int
}

func newTraffic(n *mtp3.Node, dpc mtp.PointCode) *traffic {
	return &traffic{n: n, dpc: dpc, seq: map[uint8]int{}}
}

// send sends rounds of one MSU on each of 16 SLSs from every tr in turn.
func send(t *testing.T, rounds int, trs ...*traffic) {
	t.Helper()
	for range rounds {
		for s := range uint8(16) {
			for _, x := range trs {
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

func (x *traffic) total() int {
	n := 0
	for _, v := range x.seq {
		n += v
	}
	return n
}

// arrived waits until s holds as many MSUs as x sent.
func (x *traffic) arrived(t *testing.T, what string, s *sink) {
	t.Helper()
	s.until(t, what, func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= x.total() })
}

// check verifies that s received x's MSUs, each SLS complete and in order,
// then forgets them and starts x's numbering again.
func (x *traffic) check(t *testing.T, who string, s *sink) {
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
	for sls, n := range x.seq {
		if next[sls] != n {
			t.Fatalf("%s: SLS %d: %d of %d", who, sls, next[sls], n)
		}
	}
	s.msgs = nil
	x.seq = map[uint8]int{}
}
