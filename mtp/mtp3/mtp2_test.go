package mtp3_test

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp2"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
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
	a, b, sa, sb := twoNodes(t, [2]l2.Link{la[0], la[1]}, [2]l2.Link{lb[0], lb[1]}, la[0], lb[0], la[1], lb[1])
	sa.until(t, "both links up at A", linksUp(a, false))
	sb.until(t, "both links up at B", linksUp(b, false))
	toB := newTraffic(a, 2)
	send(t, 20, toB)
	la[0].Close() // the socket goes: both ends lose link 0
	send(t, 20, toB)
	sa.until(t, "changeover at A", func([]mtp.Message, []mtp.Event) bool { return a.Status()[0].Links[0].Changeovers > 0 })
	send(t, 20, toB)
	toB.arrived(t, "every MSU at B", sb)
	toB.check(t, "B", sb)
}
