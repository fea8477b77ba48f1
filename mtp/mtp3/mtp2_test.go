package mtp3_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp2"
	"github.com/isupgw/isupgw/mtp/mtp3"
)

// TestTwoNodesOverMTP2Sockets: the same node over two MTP2 lab links
// (socketpairs). The links align and pass SLTM; closing one socket
// mid-traffic changes over (COO/COA with 7-bit FSNs) to the other link with
// nothing lost or reordered per SLS.
func TestTwoNodesOverMTP2Sockets(t *testing.T) {
	tm := mtp2.DefaultTimers()
	tm.T4N = 30 * time.Millisecond
	tm.Repeat = 100 * time.Millisecond
	var la, lb [2]*mtp2.Link
	for i := range 2 {
		ca, cb, err := mtp2.Socketpair()
		if err != nil {
			t.Fatal(err)
		}
		la[i], _ = mtp2.New(mtp2.Config{Name: "a" + string(rune('0'+i)), Conn: ca, Timers: tm})
		lb[i], _ = mtp2.New(mtp2.Config{Name: "b" + string(rune('0'+i)), Conn: cb, Timers: tm})
		if err := la[i].Open(); err != nil {
			t.Fatal(err)
		}
		if err := lb[i].Open(); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(opc, adj mtp.PointCode, l [2]*mtp2.Link) *mtp3.Node {
		n, err := mtp3.New(mtp3.Config{Variant: mtp3.ITU, OPC: opc, NI: 2, Timers: nodeTimers(),
			Linksets: []mtp3.LinksetConfig{{Name: "ls", Adjacent: adj,
				Links: []mtp3.LinkConfig{{SLC: 0, Link: l[0]}, {SLC: 1, Link: l[1]}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := mk(1, 2, la), mk(2, 1, lb)
	sa, sb := drain(a), drain(b)
	a.Start()
	b.Start()
	defer func() {
		a.Close()
		b.Close()
		for i := range 2 {
			la[i].Close()
			lb[i].Close()
		}
	}()
	up := func(n *mtp3.Node) func([]mtp.Message, []mtp.Event) bool {
		return func([]mtp.Message, []mtp.Event) bool {
			for _, l := range n.Status()[0].Links {
				if l.State != "available" || l.SLS != 8 {
					return false
				}
			}
			return true
		}
	}
	sa.until(t, "both links up at A", up(a))
	sb.until(t, "both links up at B", up(b))
	seq := map[uint8]int{}
	send := func(rounds int) {
		for range rounds {
			for s := range uint8(16) {
				p := make([]byte, 8)
				p[0] = s
				binary.BigEndian.PutUint32(p[4:], uint32(seq[s]))
				if err := a.Transfer(&mtp.Message{Label: mtp.Label{DPC: 2, SI: mtp.SIISUP, SLS: s}, Payload: p}); err != nil {
					t.Fatalf("transfer: %v", err)
				}
				seq[s]++
			}
		}
	}
	send(20)
	la[0].Close() // the socket goes: both ends lose link 0
	send(20)
	sa.until(t, "changeover at A", func([]mtp.Message, []mtp.Event) bool { return a.Status()[0].Links[0].Changeovers > 0 })
	send(20)
	total := 0
	for _, v := range seq {
		total += v
	}
	sb.until(t, "every MSU at B", func(m []mtp.Message, _ []mtp.Event) bool { return len(m) >= total })
	sb.mu.Lock()
	defer sb.mu.Unlock()
	next := map[uint8]int{}
	for _, m := range sb.msgs {
		s, v := m.Payload[0], int(binary.BigEndian.Uint32(m.Payload[4:]))
		if v != next[s] {
			t.Fatalf("SLS %d: %d when %d was due", s, v, next[s])
		}
		next[s]++
	}
	if len(sb.msgs) != total {
		t.Fatalf("%d received, %d sent", len(sb.msgs), total)
	}
}
