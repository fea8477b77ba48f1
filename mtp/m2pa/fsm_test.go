package m2pa

import (
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/internal/q703/q703test"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

// suiteFraming is M2PA for the shared machine tests.
var suiteFraming = q703test.Framing{
	New: func(c *l2test.Clock, t4n time.Duration, out func([]byte)) (*q703.Machine, func([]byte), any) {
		tm := DefaultTimers()
		if t4n > 0 {
			tm.T4N = t4n
		}
		st := &Stats{}
		m := newMachine(c, tm, st, func(b []byte, _ uint16) { out(b) })
		return m.Machine, m.receive, st
	},
	Timers: q703.Timers(DefaultTimers()),
	Encode: func(u q703test.Unit) []byte {
		msg := Message{Type: TypeUserData, BSN: u.BSN, FSN: u.FSN, Data: u.Data}
		if u.Kind == q703test.KindStatus {
			msg.Type, msg.State = TypeLinkStatus, toState[u.Status]
		}
		return msg.Append(nil)
	},
	Decode: func(b []byte) (q703test.Unit, error) {
		msg, err := Decode(b)
		u := q703test.Unit{Header: q703.Header{FSN: msg.FSN, BSN: msg.BSN}, Data: msg.Data}
		switch {
		case msg.Type == TypeLinkStatus:
			u.Kind, u.Status = q703test.KindStatus, fromState[msg.State]
		case msg.Data == nil:
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

func TestT1ExpiresWhenPeerNeverReady(t *testing.T) {
	c := l2test.New()
	tm := DefaultTimers()
	a := q703test.NewEnd(c, suiteFraming, 0)
	b := q703test.NewEnd(c, suiteFraming, tm.T1*10) // b proves for far longer than a waits
	a.M.Start(a.U)
	b.M.Start(b.U)
	q703test.Pump(t, a, b)
	c.Advance(tm.T4N)
	q703test.Pump(t, a, b)
	if a.State() != q703.StAlignedReady {
		t.Fatalf("a %v", a.State())
	}
	c.Advance(tm.T1)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "T1") {
		t.Fatalf("after T1: %v %q", a.State(), a.U.Last())
	}
}

func TestAckEveryForcesImmediateAck(t *testing.T) {
	c := l2test.New()
	a, b := q703test.AlignPair(t, c, suiteFraming)
	for range DefaultTimers().AckEvery {
		_ = a.M.Send(0, []byte{0x85, 1})
	}
	for _, x := range a.Take() {
		b.Receive(x)
	}
	if n := len(b.Take()); n != 1 {
		t.Fatalf("after AckEvery MSUs b sent %d messages, want one ack", n)
	}
	if n := stats(b).SentAcks.Load(); n != 1 {
		t.Fatalf("SentAcks %d", n)
	}
}

// TestFSNGapFailsLink: SCTP delivers in order, so a gap is a protocol error
// (RFC 4165 §4.2), not a loss to recover from as in Q.703 §5.
func TestFSNGapFailsLink(t *testing.T) {
	c := l2test.New()
	a, b := q703test.AlignPair(t, c, suiteFraming)
	_ = a.M.Send(0, []byte{0x85, 1})
	_ = a.M.Send(0, []byte{0x85, 2})
	out := a.Take()
	b.Receive(out[1])
	if b.State() != q703.StOutOfService || !strings.Contains(b.U.Last(), "FSN") {
		t.Fatalf("%v %q", b.State(), b.U.Last())
	}
}

func TestBSNBeyondSentFailsLink(t *testing.T) {
	c := l2test.New()
	a, _ := q703test.AlignPair(t, c, suiteFraming)
	bad := Message{Type: TypeUserData, BSN: 7, FSN: SeqInitial}
	a.Receive(bad.Append(nil))
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "BSN") {
		t.Fatalf("%v %q", a.State(), a.U.Last())
	}
}

func TestMalformedCountedAndIgnored(t *testing.T) {
	c := l2test.New()
	a, _ := q703test.AlignPair(t, c, suiteFraming)
	a.Receive([]byte{1, 0, 11})
	a.Receive([]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	if n := stats(a).Malformed.Load(); n != 2 || a.State() != q703.StInService {
		t.Fatalf("malformed %d state %v", n, a.State())
	}
}

// TestStatusStreams: the statuses that must stay in order with User Data go
// on its stream, the others on the status stream (RFC 4165 §2.1, as Yate).
func TestStatusStreams(t *testing.T) {
	for s, want := range map[q703.Status]uint16{
		q703.Alignment: streamStatus, q703.ProvingNormal: streamStatus, q703.ProvingEmergency: streamStatus,
		q703.Ready: streamStatus, q703.OutOfService: streamStatus,
		q703.ProcessorOutage: streamData, q703.ProcessorRecovered: streamData, q703.Busy: streamData, q703.BusyEnded: streamData,
	} {
		var got uint16 = 99
		framing{stats: &Stats{}, out: func(_ []byte, st uint16) { got = st }}.Status(q703.Header{}, s)
		if got != want {
			t.Errorf("%v on stream %d, want %d", toState[s], got, want)
		}
	}
}

// FuzzMachine feeds arbitrary messages to an in-service link: whatever
// comes, nothing panics and the retransmission buffer stays bounded.
func FuzzMachine(f *testing.F) {
	f.Add((&Message{Type: TypeUserData, BSN: 0, FSN: 0, Data: []byte{0x85, 1}}).Append(nil))
	f.Add((&Message{Type: TypeLinkStatus, State: StateBusy}).Append(nil))
	f.Add((&Message{Type: TypeUserData, BSN: 9, FSN: SeqInitial}).Append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var units [][]byte
		for len(b) >= HeaderLen {
			n := min(len(b), HeaderLen+int(b[len(b)-1]%32))
			msg := append([]byte(nil), b[:n]...)
			if len(msg) >= 8 {
				msg[0], msg[2] = Version, Class
				msg[4], msg[5], msg[6], msg[7] = 0, 0, 0, byte(len(msg))
			}
			units = append(units, msg)
			b = b[n:]
		}
		q703test.FeedInService(t, suiteFraming, units, MaxUnacked, 0)
	})
}
