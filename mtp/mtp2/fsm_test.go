package mtp2

import (
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/internal/q703/q703test"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

// suiteFraming is MTP2 for the shared machine tests.
var suiteFraming = q703test.Framing{
	New: func(c *l2test.Clock, t4n time.Duration, out func([]byte)) (*q703.Machine, func([]byte), any) {
		tm := DefaultTimers()
		if t4n > 0 {
			tm.T4N = t4n
		}
		st := &Stats{}
		m := newMachine(c, tm, st, out)
		return m.Machine, m.receive, st
	},
	Timers: DefaultTimers().q703(),
	Encode: func(u q703test.Unit) []byte {
		su := SU{BSN: uint8(u.BSN), BIB: u.BIB, FSN: uint8(u.FSN), FIB: u.FIB, Kind: FISU, Data: u.Data}
		switch u.Kind {
		case q703test.KindStatus:
			su.Kind, su.Status = LSSU, toStatus[u.Status]
		case q703test.KindMSU:
			su.Kind = MSU
		}
		return su.Append(nil)
	},
	Decode: func(b []byte) (q703test.Unit, error) {
		su, err := Decode(b)
		u := q703test.Unit{Header: q703.Header{FSN: uint32(su.FSN), BSN: uint32(su.BSN), FIB: su.FIB, BIB: su.BIB}, Data: su.Data}
		switch su.Kind {
		case LSSU:
			u.Kind, u.Status = q703test.KindStatus, fromStatus[su.Status]
		case FISU:
			u.Kind = q703test.KindAck
		default:
			u.Kind = q703test.KindMSU
		}
		return u, err
	},
	MSU:     func(i int) []byte { return []byte{0x85, byte(i), byte(i >> 8), 0} },
	SeqMask: SeqMask,
}

func TestMachine(t *testing.T) { q703test.Run(t, suiteFraming) }

func stats(e *q703test.End) *Stats { return e.Stats.(*Stats) }

// TestNACKRetransmits: an MSU lost on the way makes the receiver invert
// BIB; the sender inverts FIB and sends again everything after the BSN
// (Q.703 §5.2.2, §5.3).
func TestNACKRetransmits(t *testing.T) {
	c := l2test.New()
	a, b := q703test.AlignPair(t, c, suiteFraming)
	dropped := false
	a.Drop = func(x []byte) bool {
		if su, err := Decode(x); err == nil && su.Kind == MSU && su.FSN == 1 && !dropped {
			if !su.FIB {
				t.Errorf("first transmission with FIB %v, want true after reset", su.FIB)
			}
			dropped = true
			return true
		}
		return false
	}
	for i := range 4 {
		_ = a.M.Send(0, suiteFraming.MSU(i))
	}
	q703test.Pump(t, a, b)
	c.Advance(DefaultTimers().AckDelay)
	q703test.Pump(t, a, b)
	if n, r := stats(b).NACKsSent.Load(), stats(a).Retransmitted.Load(); n != 1 || r != 3 {
		t.Fatalf("NACKs %d, retransmitted %d", n, r)
	}
	got := b.U.ReceivedMSUs()
	if len(got) != 4 {
		t.Fatalf("received %d", len(got))
	}
	for i, m := range got {
		if m[1] != byte(i) {
			t.Fatalf("order: %x", got)
		}
	}
	if n := a.M.Snapshot().Unacked; n != 0 {
		t.Fatalf("%d unacknowledged", n)
	}
}

func TestWindowQueuesBeyond127(t *testing.T) {
	c := l2test.New()
	a, b := q703test.AlignPair(t, c, suiteFraming)
	for i := range 300 {
		if err := a.M.Send(0, suiteFraming.MSU(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s := a.M.Snapshot(); s.Unacked != window || s.Queued != 300-window {
		t.Fatalf("unacked %d queued %d", s.Unacked, s.Queued)
	}
	for range 10 {
		q703test.Pump(t, a, b)
		c.Advance(DefaultTimers().AckDelay)
	}
	got := b.U.ReceivedMSUs()
	if len(got) != 300 {
		t.Fatalf("received %d", len(got))
	}
	for i, m := range got {
		if int(m[1])|int(m[2])<<8 != i {
			t.Fatalf("MSU %d out of order", i)
		}
	}
}

// TestLSSUInServiceNamesIt: the failure reason names the LSSU received.
func TestLSSUInServiceNamesIt(t *testing.T) {
	c := l2test.New()
	a, b := q703test.AlignPair(t, c, suiteFraming)
	b.M.Stop()
	q703test.Pump(t, a, b)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "SIOS") {
		t.Fatalf("%v %q", a.State(), a.U.Last())
	}
}

// FuzzMachine feeds arbitrary signal units to an in-service link: nothing
// panics and the buffers stay bounded.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0xFF, 0x80, 4, 0x85, 1, 2, 3, 0, 0})
	f.Add([]byte{0x7F, 0xFF, 0, 0, 0})
	f.Add([]byte{0xFF, 0xFF, 1, 5, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var units [][]byte
		for len(b) >= FISULen {
			n := min(len(b), FISULen+int(b[len(b)-1]%16))
			units = append(units, b[:n])
			b = b[n:]
		}
		q703test.FeedInService(t, suiteFraming, units, window, MaxQueued)
	})
}
